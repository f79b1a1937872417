"""Writes NumPy's argmin and argmax as DaCe's frontend builds them (DaCe 2.0.0a6), for sdfc's tests:
a transient of DaCe's struct dtype `_val_and_idx` (value and index), initialized by a map, reduced
by a map whose write-conflict resolution is a lambda over two structs, and read field by field.

- argmin_axis1.sdfg: np.argmin(A, axis=1) with A float64[10, 5, 3] -> int32[10, 3];
- argmax_int32.sdfg: np.argmax(A) with A int32[7, 4] (whole array) -> int32 scalar result.

And DaCe's `Structure` descriptors (a C struct of pointers to arrays, nested structures and scalar
values, passed by pointer), as DaCe's own structure tests write them:

- csr_to_dense.sdfg: a CSR matrix (indptr, indices, data) to a dense float32[M, N]: the structure
  passed whole into nested SDFGs, its members read in interstate assignments and by memlets;
- struct_recursive.sdfg: a structure holding a structure (an array and a scalar) and an array,
  copied member by member into another;
- dense_to_csr_local.sdfg: a dense matrix to CSR through a transient structure (its members
  allocated as arrays of their own), copied into the argument's members;
- for_with_field.sdfg: a loop bounded by a scalar member (`range(S.length)`).

    source ../shared/third_party/env.sh && python3 tests/data/structs/make_structs.py tests/data/structs
"""
import os
import sys

import dace
import numpy as np


@dace.program
def argmin_axis1(A: dace.float64[10, 5, 3]):
    return np.argmin(A, axis=1)


@dace.program
def argmax_int32(A: dace.int32[7, 4]):
    return np.argmax(A)


M, N, nnz = (dace.symbol(s) for s in ('M', 'N', 'nnz'))
CSR = dace.data.Structure(dict(indptr=dace.int32[M + 1], indices=dace.int32[nnz], data=dace.float32[nnz]),
                          name='CSRMatrix')
Nested = dace.data.Structure(
    {
        'x': dace.data.Structure({
            'a': dace.float32[20],
            'b': dace.int32
        }, name='InnerStruct'),
        'y': dace.float64[10, 10]
    },
    name='OuterStruct')
Bounded = dace.data.Structure({'data': dace.float64[20], 'length': dace.int32}, name='BoundedArray')


@dace.program
def csr_to_dense(A: CSR, B: dace.float32[M, N]):
    for i in dace.map[0:M]:
        for idx in dace.map[A.indptr[i]:A.indptr[i + 1]]:
            B[i, A.indices[idx]] = A.data[idx]


@dace.program
def struct_recursive(A: Nested, B: Nested, C: dace.int32[1]):
    B.x.a[:] = A.x.a[:]
    B.x.b = A.x.b + 1
    C[0] = B.x.b
    B.y[:] = A.y[:]


@dace.program
def dense_to_csr_local(A: dace.float32[M, N], B: CSR):
    tmp = dace.define_local_structure(CSR)
    idx = 0
    for i in range(M):
        tmp.indptr[i] = idx
        for j in range(N):
            if A[i, j] != 0:
                tmp.data[idx] = A[i, j]
                tmp.indices[idx] = j
                idx += 1
    tmp.indptr[M] = idx
    B.indptr[:] = tmp.indptr[:]
    B.indices[:] = tmp.indices[:]
    B.data[:] = tmp.data[:]


@dace.program
def for_with_field(S: Bounded):
    for i in range(S.length):
        S.data[i] = S.data[i] + 1.0


def main(out):
    for program in (argmin_axis1, argmax_int32, csr_to_dense, struct_recursive, dense_to_csr_local, for_with_field):
        program.to_sdfg().save(os.path.join(out, program.name + ".sdfg"))


if __name__ == "__main__":
    main(sys.argv[1])
