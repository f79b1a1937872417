#!/usr/bin/env python3
"""The per-call overhead of the Python package's binding (python/sdfc).

Builds a 10-argument CPU program (eight input arrays a0..a7 and the output out, float64[N], and
the symbol N; one map out[i] = a0[i] + ... + a7[i]), compiles it with sdfc, and times with
N = 1, in alternating rounds:

  raw      the library's __sdfc_call through ctypes with a prebuilt argument array
  binding  Program(**kwargs) with the same arrays every call (N given, so checked too)

It prints the median time per call of each (over the rounds) and their difference, the
binding's overhead, whose target is under 15 us. OMP_NUM_THREADS defaults to 1 here: waking
OpenMP threads for a one-element map costs more, and more variably, than what is measured.

  bench/python_call_overhead.py [--sdfc PATH] [--rounds 31] [--calls 2000]
"""

import argparse
import ctypes
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before the program's OpenMP runtime starts
REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY / "python"))

import numpy as np  # noqa: E402

import sdfc  # noqa: E402

INPUTS = [f"a{k}" for k in range(8)]
TARGET_US = 15.0


def _range(start, end):
    return {"type": "Range", "ranges": [{"start": start, "end": end, "step": "1", "tile": "1"}]}


def _memlet(data, subset, into_node):
    """A memlet of ``data`` over ``subset``; ``into_node`` when it is written (the destination)."""
    volume = "$N" if subset["ranges"][0]["start"] == "0" else "1"
    return {
        "type": "Memlet",
        "attributes": {
            "volume": volume,
            "subset": subset,
            "data": data,
            "src_subset": None if into_node else subset,
            "dst_subset": subset if into_node else None,
            "is_data_src": not into_node,
            "num_accesses": volume,
        },
    }


def _edge(src, dst, memlet, src_connector=None, dst_connector=None):
    return {
        "type": "MultiConnectorEdge",
        "attributes": {"data": memlet},
        "src": str(src),
        "dst": str(dst),
        "src_connector": src_connector,
        "dst_connector": dst_connector,
    }


def sum8_sdfg():
    """The SDFG (as a dict) of out[i] = a0[i] + ... + a7[i], i in 0:N."""
    array = {
        "type": "Array",
        "attributes": {"strides": ["1"], "total_size": "$N", "offset": ["0"], "dtype": "float64", "shape": ["$N"]},
    }
    whole, element = _range("0", "-1 + $N"), _range("$i", "$i")
    n_inputs = len(INPUTS)
    access_ids = {name: 3 + k for k, name in enumerate(INPUTS + ["out"])}
    nodes = [
        {
            "type": "MapEntry",
            "label": "sum8[i=0:N]",
            "attributes": {
                "label": "sum8",
                "params": ["i"],
                "range": whole,
                "in_connectors": {f"IN_{a}": None for a in INPUTS},
                "out_connectors": {f"OUT_{a}": None for a in INPUTS},
            },
            "id": 0,
            "scope_entry": None,
            "scope_exit": "1",
        },
        {
            "type": "MapExit",
            "label": "sum8[i=0:N]",
            "attributes": {"in_connectors": {"IN_out": None}, "out_connectors": {"OUT_out": None}},
            "id": 1,
            "scope_entry": "0",
            "scope_exit": "1",
        },
        {
            "type": "Tasklet",
            "label": "sum8",
            "attributes": {
                "code": {"string_data": "o = " + " + ".join(f"i{k}" for k in range(n_inputs)), "language": "Python"},
                "label": "sum8",
                "in_connectors": {f"i{k}": None for k in range(n_inputs)},
                "out_connectors": {"o": None},
            },
            "id": 2,
            "scope_entry": "0",
            "scope_exit": "1",
        },
    ]
    nodes += [
        {"type": "AccessNode", "label": n, "attributes": {"data": n}, "id": i, "scope_entry": None, "scope_exit": None}
        for n, i in access_ids.items()
    ]
    edges = []
    for k, a in enumerate(INPUTS):
        edges.append(_edge(access_ids[a], 0, _memlet(a, whole, False), dst_connector=f"IN_{a}"))
        edges.append(_edge(0, 2, _memlet(a, element, False), src_connector=f"OUT_{a}", dst_connector=f"i{k}"))
    edges.append(_edge(2, 1, _memlet("out", element, True), src_connector="o", dst_connector="IN_out"))
    edges.append(_edge(1, access_ids["out"], _memlet("out", whole, True), src_connector="OUT_out"))
    code = {"frame": {"string_data": "", "language": "CPP"}}
    return {
        "type": "SDFG",
        "attributes": {
            "name": "sum8",
            "_arrays": {name: array for name in INPUTS + ["out"]},
            "symbols": {"N": "int32"},
            "global_code": code,
            "init_code": code,
            "exit_code": code,
        },
        "nodes": [
            {
                "type": "SDFGState",
                "label": "compute",
                "id": 0,
                "collapsed": False,
                "scope_dict": {"-1": [0] + list(access_ids.values()), "0": [1, 2]},
                "nodes": nodes,
                "edges": edges,
                "attributes": {},
            }
        ],
        "edges": [],
        "collapsed": False,
        "label": "",
        "id": None,
        "cfg_list_id": 0,
        "start_block": 0,
    }


def per_call_seconds(call, calls):
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sdfc", help="the sdfc compiler (default: $SDFC, PATH, build/sdfc)")
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--calls", type=int, default=2000, help="calls per round")
    options = parser.parse_args()

    program = sdfc.compile(json.dumps(sum8_sdfg()), compiler=options.sdfc)
    arrays = {name: np.full(1, k + 1.0) for k, name in enumerate(INPUTS)}
    arrays["out"] = np.zeros(1)
    kwargs = dict(arrays, N=1)
    program(**kwargs)
    assert arrays["out"][0] == sum(range(1, 9)), arrays["out"]

    # The raw path: the same library, its own instance, one argument array made once.
    library = ctypes.CDLL(program.library_path)
    init, call, exit_ = library["__sdfc_init"], library["__sdfc_call"], library[f"__dace_exit_{program.name}"]
    init.restype, init.argtypes = ctypes.c_void_p, [ctypes.c_void_p]
    n = ctypes.c_int32(1)
    state = ctypes.c_void_p(init(ctypes.cast(ctypes.pointer(ctypes.pointer(n)), ctypes.c_void_p)))
    names = [a["name"] for a in program.info["args"]]
    pointers = [ctypes.c_void_p(arrays[name].ctypes.data) for name in names if name != "N"]
    holders = iter(pointers)
    argv = (ctypes.c_void_p * len(names))(
        *[ctypes.addressof(n if name == "N" else next(holders)) for name in names]
    )

    def raw():
        call(state, argv)

    def binding():
        program(**kwargs)

    raw_times, binding_times = [], []
    for _ in range(options.rounds):
        raw_times.append(per_call_seconds(raw, options.calls))
        binding_times.append(per_call_seconds(binding, options.calls))
    exit_.argtypes = [ctypes.c_void_p]
    exit_(state)
    program.close()

    raw_us, binding_us = statistics.median(raw_times) * 1e6, statistics.median(binding_times) * 1e6
    overhead = binding_us - raw_us
    print(
        f"10-argument program, N = 1, OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}, {options.rounds} rounds of "
        f"{options.calls} calls (medians per call):"
    )
    print(f"  raw __sdfc_call via ctypes   {raw_us:8.2f} us")
    print(f"  Program(**kwargs)            {binding_us:8.2f} us")
    verdict = "met" if overhead < TARGET_US else "NOT met"
    print(f"  binding overhead             {overhead:8.2f} us (target < {TARGET_US:.0f} us: {verdict})")


if __name__ == "__main__":
    main()
