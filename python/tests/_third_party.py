"""DaCe and GT4Py, test dependencies: from the environment, or from the sources in
``$SDFC_THIRD_PARTY`` (default ``../shared/third_party`` beside the repository; see its
README.md) put on the path as its ``env.sh`` does; without them the calling module is skipped,
saying so."""

import importlib
import os
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
THIRD_PARTY = pathlib.Path(os.environ.get("SDFC_THIRD_PARTY", REPO.parent / "shared" / "third_party"))


def import_third_party(module, what):
    """``module`` (say "dace" or "gt4py.next") imported, or the calling test module skipped;
    ``what`` names the tests in the skip message."""
    try:
        return importlib.import_module(module)
    except ImportError:
        pass
    if not (THIRD_PARTY / "dace" / "dace").is_dir():
        pytest.skip(
            f"{module} is not importable and {THIRD_PARTY} has no dace/ (set SDFC_THIRD_PARTY or PYTHONPATH): "
            f"{what} skipped",
            allow_module_level=True,
        )
    # What env.sh does: DaCe, GT4Py and their pure-Python extras first on the path.
    for folder in reversed(("gt4py/src", "dace", "pydeps")):
        if str(THIRD_PARTY / folder) not in sys.path:
            sys.path.insert(0, str(THIRD_PARTY / folder))
    os.environ.setdefault("DACE_compiler_cpu_executable", "g++")
    os.environ.setdefault("GT4PY_BUILD_JOBS_MODE", "serial")
    try:
        return importlib.import_module(module)
    except ImportError as e:
        pytest.skip(f"cannot import {module} from {THIRD_PARTY} ({e}): {what} skipped", allow_module_level=True)


def bench_environment(compiler, tmp_path):
    """The environment a benchmark script (bench/*.py) runs DaCe and sdfc in from a test: this sdfc,
    the third-party packages on PYTHONPATH, DaCe's builds under tmp_path."""
    env = dict(os.environ, SDFC=str(compiler), TMPDIR=str(tmp_path))
    path = [str(THIRD_PARTY / p) for p in ("dace", "gt4py/src", "pydeps")]
    env["PYTHONPATH"] = os.pathsep.join(path + [env.get("PYTHONPATH", "")])
    env.setdefault("DACE_compiler_cpu_executable", "g++")
    env["DACE_default_build_folder"] = str(tmp_path / "dacecache")
    return env
