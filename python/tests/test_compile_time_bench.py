"""bench/compile_time.py (time to a loaded library, sdfc against DaCe): the script runs on a small
set, times both compilers on the same program and reports the ratios. Timings themselves are not
asserted (a benchmark, not a test); that both compilers produced a loaded library is."""

import json
import pathlib
import subprocess
import sys

import pytest
from _third_party import bench_environment, import_third_party

import_third_party("dace", "the compile-time benchmark's test")

REPO = pathlib.Path(__file__).resolve().parents[2]
SETS = REPO / "bench" / "data" / "gt4py_suite_sdfgs.tar.gz"


def test_both_compilers_time_the_same_programs(compiler, tmp_path):
    results = tmp_path / "times.json"
    env = bench_environment(compiler, tmp_path)
    run = subprocess.run(
        [sys.executable, str(REPO / "bench" / "compile_time.py"), "--set", str(SETS), "--limit", "2", "--cold", "1",
         "--json", str(results)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert run.returncode == 0, run.stdout
    report = json.loads(results.read_text())
    assert len(report["rows"]) == 2 and len(report["cold"]) == 1
    for row in report["rows"] + report["cold"]:
        assert row["dace"] is not None and row["sdfc"] is not None, run.stdout
    assert report["summaries"]["warm"]["programs"] == 2
    assert "worst ratio" in run.stdout and "sdfc slower on" in run.stdout


def test_a_set_that_is_not_there_is_an_error(tmp_path):
    run = subprocess.run([sys.executable, str(REPO / "bench" / "compile_time.py"), "--set", str(tmp_path / "none")],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert run.returncode != 0 and "not a folder" in run.stdout
