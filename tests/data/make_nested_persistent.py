"""Writes nested_persistent.sdfg: a nested SDFG whose transient `tmp[N]` is Persistent, as DaCe's
auto_optimize (make_transients_persistent) leaves transients of nested SDFGs. Its first state
copies tmp[0] into `prev` (the value the previous call left: it must persist between calls), the
second writes tmp = 2 * A, the third B = tmp + 1.

    source ../shared/third_party/env.sh && python3 tests/data/make_nested_persistent.py \
        tests/data/nested_persistent.sdfg tests/data/nested_persistent_in_map.sdfg

and nested_persistent_in_map.sdfg, the same nested SDFG called inside a map.
"""
import sys

import dace

N = dace.symbol("N")


def inner_sdfg():
    s = dace.SDFG("inner")
    s.add_array("A", [N], dace.float64)
    s.add_array("B", [N], dace.float64)
    s.add_array("prev", [1], dace.float64)
    s.add_array("tmp", [N], dace.float64, transient=True, lifetime=dace.AllocationLifetime.Persistent)
    before = s.add_state("previous")
    t = before.add_tasklet("keep", {"t": None}, {"p": None}, "p = t")
    before.add_edge(before.add_read("tmp"), None, t, "t", dace.Memlet("tmp[0]"))
    before.add_edge(t, "p", before.add_write("prev"), None, dace.Memlet("prev[0]"))
    first = s.add_state_after(before, "double")
    first.add_mapped_tasklet("twice", {"i": "0:N"}, {"a": dace.Memlet("A[i]")}, "t = 2 * a",
                             {"t": dace.Memlet("tmp[i]")}, external_edges=True)
    second = s.add_state_after(first, "plus_one")
    second.add_mapped_tasklet("plus", {"i": "0:N"}, {"t": dace.Memlet("tmp[i]")}, "b = t + 1",
                              {"b": dace.Memlet("B[i]")}, external_edges=True)
    return s


def main(path):
    sdfg = dace.SDFG("nested_persistent")
    sdfg.add_array("A", [N], dace.float64)
    sdfg.add_array("B", [N], dace.float64)
    sdfg.add_array("prev", [1], dace.float64)
    state = sdfg.add_state("call")
    node = state.add_nested_sdfg(inner_sdfg(), {"A": None}, {"B": None, "prev": None}, {"N": "N"})
    state.add_edge(state.add_read("A"), None, node, "A", dace.Memlet("A[0:N]"))
    state.add_edge(node, "B", state.add_write("B"), None, dace.Memlet("B[0:N]"))
    state.add_edge(node, "prev", state.add_write("prev"), None, dace.Memlet("prev[0]"))
    sdfg.validate()
    sdfg.save(path)


def main_in_map(path):
    """The same nested SDFG called in each iteration of a map over M: its persistent transient
    would be shared by the iterations (sdfc refuses it)."""
    M = dace.symbol("M")
    sdfg = dace.SDFG("nested_persistent_in_map")
    sdfg.add_array("A", [M, N], dace.float64)
    sdfg.add_array("B", [M, N], dace.float64)
    sdfg.add_array("prev", [M], dace.float64)
    state = sdfg.add_state("call")
    entry, exit_ = state.add_map("rows", {"r": "0:M"})
    node = state.add_nested_sdfg(inner_sdfg(), {"A": None}, {"B": None, "prev": None}, {"N": "N"})
    state.add_memlet_path(state.add_read("A"), entry, node, dst_conn="A", memlet=dace.Memlet("A[r, 0:N]"))
    state.add_memlet_path(node, exit_, state.add_write("B"), src_conn="B", memlet=dace.Memlet("B[r, 0:N]"))
    state.add_memlet_path(node, exit_, state.add_write("prev"), src_conn="prev", memlet=dace.Memlet("prev[r]"))
    sdfg.validate()
    sdfg.save(path)


if __name__ == "__main__":
    main(sys.argv[1])
    if len(sys.argv) > 2:
        main_in_map(sys.argv[2])
