"""Writes the reshaping views and copies of DaCe's tests/numpy/reshape_test.py as DaCe builds them
(DaCe 2.0.0a6), for sdfc's tests:

- reshape_copy.sdfg: A[2, 3] -> view Av[6] -> B[6] (the copy's memlet names the view);
- reshape_copy_dst.sdfg: the same with the copy's memlet naming B;
- reshape_subset.sdfg: the block A[1, 0:3, 0:4] of A[2, 3, 4] viewed as Av[12], read in a map
  (B[i] += Av[i]);
- reshape_dst.sdfg: numpy's `C = np.reshape(B, [2, 3, 4]); C[:] = A` with B[8, 3];
- reshape_strided_part.sdfg: A[0:2, 0:2] of A[2, 3] viewed as Av[4] (stride 1) and copied to B[4]:
  the view's elements are A's memory from A[0, 0] on (DaCe's view is a pointer), not the part's
  elements in C order;
- reshape_cpp_tasklet.sdfg: A[2, 3] viewed as Av[6] and passed whole to a C++ tasklet's pointer
  connector (as DaCe's CBLAS expansions take NPBench's lenet reshapes): s = sum of (k + 1) * Av[k];
- reshape_not_one_block.sdfg: A[0:2, 0:2] of A[2, 4] viewed as Av[2, 2] with strides (2, 1) (a
  reshape: no dimension of A has stride 2) and copied whole to B[2, 2]: the part is not one block of
  A's memory, so a copy in C order would pair other elements than the view's (sdfc refuses it).

    source ../shared/third_party/env.sh && python3 tests/data/reshapes/make_reshapes.py tests/data/reshapes
"""
import os
import sys

import dace
import numpy as np


def copy_through_view(name, memlet_dst, part=None, shape=(2, 3), n=6):
    sdfg = dace.SDFG(name)
    sdfg.add_array("A", list(shape), dace.float64)
    sdfg.add_array("B", [n], dace.float64)
    sdfg.add_view("Av", [n], dace.float64)
    state = sdfg.add_state()
    r = state.add_read("A")
    v = state.add_access("Av")
    w = state.add_write("B")
    state.add_edge(r, None, v, "views", dace.Memlet(data="A", subset=part) if part else dace.Memlet(data="A"))
    state.add_nedge(v, w, dace.Memlet(data="B" if memlet_dst else "Av"))
    return sdfg


def not_one_block():
    sdfg = dace.SDFG("reshape_not_one_block")
    sdfg.add_array("A", [2, 4], dace.float64)
    sdfg.add_array("B", [2, 2], dace.float64)
    sdfg.add_view("Av", [2, 2], dace.float64, strides=[2, 1])
    state = sdfg.add_state()
    v = state.add_access("Av")
    state.add_edge(state.add_read("A"), None, v, "views", dace.Memlet("A[0:2, 0:2]"))
    state.add_nedge(v, state.add_write("B"), dace.Memlet("Av[0:2, 0:2]"))
    return sdfg


def cpp_tasklet():
    sdfg = dace.SDFG("reshape_cpp_tasklet")
    sdfg.add_array("A", [2, 3], dace.float64)
    sdfg.add_array("s", [1], dace.float64)
    sdfg.add_view("Av", [6], dace.float64)
    state = sdfg.add_state()
    v = state.add_access("Av")
    state.add_edge(state.add_read("A"), None, v, "views", dace.Memlet("A[0:2, 0:3]"))
    t = state.add_tasklet("weighted", {"a": dace.pointer(dace.float64)}, {"out": dace.float64},
                          "double sum = 0;\nfor (int k = 0; k < 6; ++k) sum += (k + 1) * a[k];\nout = sum;",
                          language=dace.Language.CPP)
    state.add_edge(v, None, t, "a", dace.Memlet("Av[0:6]"))
    state.add_edge(t, "out", state.add_write("s"), None, dace.Memlet("s[0]"))
    return sdfg


def subset_in_map():
    sdfg = dace.SDFG("reshape_subset")
    sdfg.add_array("A", [2, 3, 4], dace.float64)
    sdfg.add_array("B", [12], dace.float64)
    sdfg.add_view("Av", [12], dace.float64)
    state = sdfg.add_state()
    state.add_mapped_tasklet("compute", dict(i="0:12"), dict(a=dace.Memlet("Av[i]"), b=dace.Memlet("B[i]")),
                             "out = a + b", dict(out=dace.Memlet("B[i]")), external_edges=True)
    v = next(n for n in state.source_nodes() if n.data == "Av")
    state.add_nedge(state.add_read("A"), v, dace.Memlet("A[1, 0:3, 0:4]"))
    return sdfg


@dace.program
def reshape_dst(A: dace.float64[2, 3, 4], B: dace.float64[8, 3]):
    C = np.reshape(B, [2, 3, 4])
    C[:] = A


def main(folder):
    sdfgs = {
        "reshape_copy": copy_through_view("reshape_copy", False),
        "reshape_copy_dst": copy_through_view("reshape_copy_dst", True),
        "reshape_subset": subset_in_map(),
        "reshape_dst": reshape_dst.to_sdfg(),
        "reshape_strided_part": copy_through_view("reshape_strided_part", False, "0:2, 0:2", (2, 3), 4),
        "reshape_not_one_block": not_one_block(),
        "reshape_cpp_tasklet": cpp_tasklet(),
    }
    for name, sdfg in sdfgs.items():
        sdfg.validate()
        sdfg.save(os.path.join(folder, name + ".sdfg"))


if __name__ == "__main__":
    main(sys.argv[1])
