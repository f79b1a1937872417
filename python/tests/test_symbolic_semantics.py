"""Programs made by DaCe's own frontend (tests/data/dace_frontend, saved from DaCe 2.0.0a6's
tests) whose symbolic arithmetic C++ gets wrong unless sdfc keeps SymPy's meaning:

- `ceiling(1/2*$N)` (a rational): once printed as C++'s `1 / 2 * N` == 0, so the copy ran zero
  times and the result stayed unwritten, with exit 0 (copies_and_views_test.py);
- symbols of type uint32 (`A_row[i]:A_row[i+1]` slice bounds of a CSR matrix) in `stop - start - 1`:
  once computed in unsigned arithmetic, 4294967295 for an empty row, and the loop ran off the
  arrays (indirections_test.py::test_spmv crashed).
"""

import numpy as np
import pytest

import sdfc
from _corpus import REPOSITORY

DATA = REPOSITORY / "tests" / "data" / "dace_frontend"


def _strided_reference():
    src = np.ones(40, dtype=np.uint32)
    dst = np.full(20, 3, dtype=np.uint32)
    ref = dst.copy()
    ref[0:20:2] = src[0:40:4]
    return src, dst, ref


@pytest.mark.parametrize("name", ["strided_copy_symbolic_0", "strided_copy_symbolic_0_nosimplify"])
@pytest.mark.parametrize("n", [20, 19, 1])
def test_rational_slice_length(compiler, name, n):
    # dst[0:N:2] = src[0:2N:4]: ceil(N / 2) elements, N odd and even
    program = sdfc.compile(DATA / f"{name}.sdfg", compiler=compiler)
    src = np.arange(1, 2 * n + 1, dtype=np.uint32)
    dst = np.full(n, 3, dtype=np.uint32)
    ref = dst.copy()
    ref[0:n:2] = src[0 : 2 * n : 4]
    program(src=src, dst=dst, N=n)
    np.testing.assert_array_equal(dst, ref)


@pytest.mark.parametrize("name", ["strided_copy_map_symbolic_1", "strided_copy_map_symbolic_1_nosimplify"])
def test_rational_slice_length_in_a_map(compiler, name):
    program = sdfc.compile(DATA / f"{name}.sdfg", compiler=compiler)
    src, dst, ref = _strided_reference()
    program(src=src, dst=dst, M=10, N=2)
    np.testing.assert_array_equal(dst, ref)


def _csr(rows, cols, nnz, seed):
    """A random CSR matrix with many empty rows (and an empty last row)."""
    rng = np.random.default_rng(seed)
    positions = np.sort(rng.choice(rows * cols, size=nnz, replace=False))
    row_of, col_of = positions // cols, positions % cols
    indptr = np.zeros(rows + 1, dtype=np.uint32)
    np.add.at(indptr, row_of + 1, 1)
    return np.cumsum(indptr).astype(np.uint32), col_of.astype(np.uint32), rng.random(nnz), rng.random(cols)


def test_spmv_with_uint32_slice_bounds(compiler):
    program = sdfc.compile(DATA / "spmv_uint32.sdfg", compiler=compiler)
    for seed in (1, 2):
        indptr, indices, values, x = _csr(1000, 1000, 100, seed)
        dense = np.zeros((1000, 1000))
        for i in range(1000):
            dense[i, indices[indptr[i] : indptr[i + 1]]] = values[indptr[i] : indptr[i + 1]]
        y = np.full(1000, np.nan)
        program(A_row=indptr, A_col=indices, A_val=values, x=x, __return=y)
        np.testing.assert_allclose(y, dense @ x, rtol=1e-12, atol=0)
