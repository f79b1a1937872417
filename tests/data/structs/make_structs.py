"""Writes NumPy's argmin and argmax as DaCe's frontend builds them (DaCe 2.0.0a6), for sdfc's tests:
a transient of DaCe's struct dtype `_val_and_idx` (value and index), initialized by a map, reduced
by a map whose write-conflict resolution is a lambda over two structs, and read field by field.

- argmin_axis1.sdfg: np.argmin(A, axis=1) with A float64[10, 5, 3] -> int32[10, 3];
- argmax_int32.sdfg: np.argmax(A) with A int32[7, 4] (whole array) -> int32 scalar result.

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


def main(out):
    for program in (argmin_axis1, argmax_int32):
        program.to_sdfg().save(os.path.join(out, program.name + ".sdfg"))


if __name__ == "__main__":
    main(sys.argv[1])
