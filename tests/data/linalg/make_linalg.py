"""Writes numpy.linalg's inv, solve and cholesky as DaCe's frontend builds them (DaCe 2.0.0a6: its
linalg library nodes Inv, Solve and Cholesky, which DaCe computes with LAPACK), for sdfc's tests:

- inv.sdfg: np.linalg.inv(A), A float64[N, N];
- solve.sdfg: np.linalg.solve(A, B) with A float64[N, N], B float64[N, 3];
- solve_vector.sdfg: np.linalg.solve(A, b) with b float64[N];
- cholesky.sdfg: np.linalg.cholesky(A), A float64[N, N];
- inv_complex.sdfg: np.linalg.inv(A[1]) of A complex128[2, N, N] (a slice of a 3D array).

    source ../shared/third_party/env.sh && python3 tests/data/linalg/make_linalg.py tests/data/linalg
"""
import os
import sys

import dace
import numpy as np

N = dace.symbol('N')


@dace.program
def inv(A: dace.float64[N, N]):
    return np.linalg.inv(A)


@dace.program
def solve(A: dace.float64[N, N], B: dace.float64[N, 3]):
    return np.linalg.solve(A, B)


@dace.program
def solve_vector(A: dace.float64[N, N], b: dace.float64[N]):
    return np.linalg.solve(A, b)


@dace.program
def cholesky(A: dace.float64[N, N]):
    return np.linalg.cholesky(A)


@dace.program
def inv_complex(A: dace.complex128[2, N, N]):
    return np.linalg.inv(A[1])


def main(out):
    for program in (inv, solve, solve_vector, cholesky, inv_complex):
        program.to_sdfg().save(os.path.join(out, program.name + ".sdfg"))


if __name__ == "__main__":
    main(sys.argv[1])
