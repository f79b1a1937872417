"""bench/gpu_vs_dace.py (DaCe's compiler against sdfc on the GPU): the SDFGs with device arguments (no copy-in
state), the size scaling of a plain and of a GT4Py case (shapes, strides and symbols agree), and ``--no-run`` on
one small case, where both compilers build and load a CUDA library (no GPU needed; nvcc is)."""

import collections
import importlib.util
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest
from _third_party import bench_environment, import_third_party

dace = import_third_party("dace", "the GPU benchmark's tests")

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "gpu_vs_dace.py"


def _load_bench():
    spec = importlib.util.spec_from_file_location("gpu_vs_dace", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _load_bench()


def _inputs(corpus, case):
    return json.loads((corpus / case / "inputs.json").read_text())


def _arguments(sdfg):
    return {n: d for n, d in sdfg.arrays.items() if not d.transient and isinstance(d, dace.data.Array)}


def _argument_copies(sdfg):
    """(source, destination) of the access-node-to-access-node edges that touch an argument."""
    arguments = _arguments(sdfg)
    return ((e.src.data, e.dst.data) for state in sdfg.all_states() for e in state.edges()
                  if isinstance(e.src, dace.nodes.AccessNode) and isinstance(e.dst, dace.nodes.AccessNode)
                  and (e.src.data in arguments or e.dst.data in arguments))


@pytest.mark.parametrize("case", ["smooth1d_s", "cond_datadep_s", "d2h_symbol_s", "fe_softmax_keepdims_s"])
def test_plain_case_gets_device_arguments_without_copy_in(corpus, case):
    sdfg, how = bench.device_sdfg(corpus / case)
    assert how.startswith("program.sdfg")
    original = dace.SDFG.from_file(str(corpus / case / "program.sdfg"))
    assert set(_arguments(sdfg)) == set(_arguments(original))
    for name, desc in _arguments(sdfg).items():
        assert desc.storage == dace.StorageType.GPU_Global, name
        assert f"gpu_{name}" not in sdfg.arrays  # what a copy-in state copies the argument into
    # No state was added for copies, and no copy to or from an argument was added (the program's own copies
    # and views may stay, or become GPU maps).
    assert len(list(sdfg.all_states())) == len(list(original.all_states()))
    assert not collections.Counter(_argument_copies(sdfg)) - collections.Counter(_argument_copies(original))
    assert bench.check_device_arguments(sdfg) == []


def test_gt4py_case_uses_its_gpu_file(corpus):
    sdfg, how = bench.device_sdfg(corpus / "gt4py_lap3d_s")
    assert how == "program_gpu.sdfg"
    assert bench.check_device_arguments(sdfg) == ["gt_compute_time"]  # GT4Py's metrics output, on the host


def test_a_gpu_file_with_copy_in_states_is_refused(corpus):
    sdfg = dace.SDFG.from_file(str(corpus / "smooth1d_s" / "program_gpu.sdfg"))  # host arguments, copied in
    with pytest.raises(RuntimeError, match="copy-in|GPU_Global"):
        bench.check_device_arguments(sdfg)


def _check_layout(plan, arrays):
    """The NumPy stand-ins of the device arrays have the plan's shapes, strides and tiled contents."""
    for name, a in plan["arrays"].items():
        array = arrays[name]
        assert list(array.shape) == a["shape"], name
        if a["device"]:
            assert [s // array.itemsize for s in array.strides] == a["strides"], name
        # dense: every element has its own place
        span = 1 + sum((n - 1) * s for n, s in zip(a["shape"], a["strides"]))
        assert span == math.prod(a["shape"]), name


def test_plain_case_scales_its_shape_symbols(corpus):
    inputs = _inputs(corpus, "blur_sep_s")  # img[N, M], out[N - 2, M - 2]
    sdfg, _ = bench.device_sdfg(corpus / "blur_sep_s")
    small = bench.size_plan(sdfg, inputs, "small")
    assert small["factor"] == 1.0
    for name, a in small["arrays"].items():
        assert a["shape"] == inputs["arrays"][name]["shape"]
    assert {k: small["symbols"][k] for k in ("N", "M")} == {"N": 26, "M": 31}

    plan = bench.size_plan(sdfg, inputs, "large", elements=1 << 16)
    n, m, f = plan["symbols"]["N"], plan["symbols"]["M"], plan["factor"]
    assert (n, m) == (round(26 * f), round(31 * f))
    assert plan["arrays"]["img"]["shape"] == [n, m] and plan["arrays"]["img"]["strides"] == [m, 1]
    assert plan["arrays"]["out"]["shape"] == [n - 2, m - 2] and plan["arrays"]["out"]["strides"] == [m - 2, 1]
    assert plan["largest"] == "img" and abs(plan["elements"] / (1 << 16) - 1) < 0.02

    host = bench.tiled_arrays(plan, inputs, np)
    arrays = bench.make_arrays(plan, host, np, np)
    _check_layout(plan, arrays)
    corpus_img = np.array(inputs["arrays"]["img"]["data"], dtype=np.float64)
    assert np.array_equal(arrays["img"].ravel()[: corpus_img.size], corpus_img)  # tiled in C order
    assert np.array_equal(arrays["img"].ravel()[corpus_img.size: 2 * corpus_img.size], corpus_img)

    heat, _ = bench.device_sdfg(corpus / "heat2d_loop_s")
    loop = bench.size_plan(heat, _inputs(corpus, "heat2d_loop_s"), "large", elements=1 << 16)
    assert loop["symbols"]["NSTEPS"] == 4  # in no shape: a loop count keeps its value


@pytest.mark.parametrize("layout", ["corpus", "reversed"])
def test_gt4py_case_scales_extents_strides_and_domain(corpus, layout):
    inputs = _inputs(corpus, "gt4py_lap3d_s")  # u, lap: I x J x K (8 x 7 x 6), domain (1, nx-1) ...
    sdfg, _ = bench.device_sdfg(corpus / "gt4py_lap3d_s")
    plan = bench.size_plan(sdfg, inputs, "large", elements=1 << 15, layout=layout, gt4py=True)
    symbols = plan["symbols"]
    extents = {}
    for field in ("u", "lap"):
        a = plan["arrays"][field]
        for i, dim in enumerate("IJK"):
            assert symbols[f"__{field}_{dim}_range_1"] - symbols[f"__{field}_{dim}_range_0"] == a["shape"][i]
            assert symbols[f"__{field}_{dim}_stride"] == a["strides"][i]
            extents[dim] = a["shape"][i]
        expected = [a["shape"][1] * a["shape"][2], a["shape"][2], 1]  # the corpus's: K fastest
        if layout == "reversed":
            expected = [1, a["shape"][0], a["shape"][0] * a["shape"][1]]  # I fastest
        assert a["strides"] == expected
    assert (symbols["nx"], symbols["ny"], symbols["nz"]) == (extents["I"], extents["J"], extents["K"])
    assert extents["I"] > 8 and plan["elements"] == extents["I"] * extents["J"] * extents["K"]
    assert plan["arrays"]["gt_compute_time"]["device"] is False
    host = bench.tiled_arrays(plan, inputs, np)
    arrays = bench.make_arrays(plan, host, np, np)
    _check_layout(plan, arrays)
    assert np.array_equal(arrays["u"], host["u"])


def test_gt4py_connectivity_and_domain_bounds_stay_in_range(corpus):
    inputs = _inputs(corpus, "gt4py_c2e_reduce_s")  # C2E: Cell -> 3 Edges
    sdfg, _ = bench.device_sdfg(corpus / "gt4py_c2e_reduce_s")
    plan = bench.size_plan(sdfg, inputs, "large", elements=1 << 16, gt4py=True)
    cells, edges = plan["arrays"]["q_avg"]["shape"][0], plan["arrays"]["q_e"]["shape"][0]
    assert plan["symbols"]["__gt_conn_C2E_source_size"] == cells == plan["arrays"]["w"]["shape"][0]
    assert plan["arrays"]["gt_conn_C2E"]["shape"] == [cells, 3]
    table = bench.tiled_arrays(plan, inputs, np)["gt_conn_C2E"]
    assert table.min() >= 0 and table.max() < edges

    inputs = _inputs(corpus, "gt4py_mixed_scalars_s")  # domain I: (i_start, i_end), K: (0, k_end)
    sdfg, _ = bench.device_sdfg(corpus / "gt4py_mixed_scalars_s")
    plan = bench.size_plan(sdfg, inputs, "large", elements=1 << 16, gt4py=True)
    i_extent, _, k_extent = plan["arrays"]["x"]["shape"]
    assert plan["symbols"]["i_start"] == 2 < plan["symbols"]["i_end"] <= i_extent
    assert 5 < plan["symbols"]["k_end"] <= k_extent
    assert plan["symbols"]["nsub"] == 3  # no extent: kept


def _nvcc():
    return shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.isfile("/usr/local/cuda/bin/nvcc") else None)


def test_no_run_compiles_one_case_with_both(compiler, corpus, tmp_path):
    if _nvcc() is None:
        pytest.skip("no nvcc: the CUDA builds are not possible here")
    results = tmp_path / "report.json"
    env = bench_environment(compiler, tmp_path)
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--corpus", str(corpus), "--only", "smooth1d_s", "--size", "large,small",
         "--no-run", "--no-warm-up", "--json", str(results)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert run.returncode == 0, run.stdout
    report = json.loads(results.read_text())
    case = report["cases"]["smooth1d_s"]
    assert case["source"].startswith("program.sdfg")
    assert case["dace"].get("compile_s") is not None, case["dace"]
    assert case["sdfc"].get("compile_s") is not None, case["sdfc"]
    assert [r["size_name"] for r in report["rows"]] == ["large", "small"]
    assert report["rows"][0]["size"] == "x[16777216]" and report["rows"][1]["size"] == "x[101]"
    assert report["summaries"]["compiled_by_both"] == 1
    assert "compiles: 1 programs by both" in run.stdout


def _ran(dace_times, sdfc_times):
    return {"description": "x[8]", "mismatches": [], "bytes": 1000, "dace": dace_times, "sdfc": sdfc_times}


def test_rows_take_fast_calls_in_the_main_columns_and_python_calls_in_the_py_columns():
    compiled = {"p": {"dace": {"compile_s": 1.0}, "sdfc": {"compile_s": 2.0}, "plans": {"large": {}}}}
    both = _ran({"call": "fast", "us": 10.0, "python_us": 300.0}, {"call": "fast", "us": 5.0, "python_us": 295.0})
    row, = bench.build_rows(["p"], ["large"], compiled, {"p/large": both}, 1e9, False)
    assert (row["dace_us"], row["sdfc_us"], row["ratio"]) == (10.0, 5.0, 0.5)
    assert (row["dace_python_us"], row["sdfc_python_us"]) == (300.0, 295.0)
    assert row["sdfc_roofline"] == pytest.approx(1.0 / 5.0)
    assert "295.0" in bench.table_row(row)
    python = _ran({"call": "python", "us": 300.0}, {"call": "python", "us": 295.0})
    row, = bench.build_rows(["p"], ["large"], compiled, {"p/large": python}, None, False)
    assert (row["dace_us"], row["dace_python_us"], row["sdfc_python_us"]) == (300.0, 300.0, 295.0)
    fast = _ran({"call": "fast", "us": 10.0}, {"call": "fast", "us": 5.0})
    row, = bench.build_rows(["p"], ["large"], compiled, {"p/large": fast}, None, False)
    assert row["dace_python_us"] is None and bench.table_row(row).split()[-3:] == ["-", "-", "yes"]
