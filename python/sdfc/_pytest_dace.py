"""A pytest plugin that makes sdfc DaCe's compiler for a whole test run (DaCe's or GT4Py's suites):

    PYTHONPATH=/path/to/sdfc/python:$PYTHONPATH python3 -m pytest -p sdfc._pytest_dace ...

``$SDFC_DACE_OPTIONS`` may hold the options of ``sdfc.dace.enable`` as a JSON object, e.g.
``{"transients": "external", "fuse_maps": true}``; the sdfc executable is found as usual
(``$SDFC``, ``PATH``, ``build/sdfc``).
"""

import json
import os


def _options():
    text = os.environ.get("SDFC_DACE_OPTIONS", "").strip()
    if not text:
        return {}
    options = json.loads(text)
    if not isinstance(options, dict):
        raise ValueError(f"$SDFC_DACE_OPTIONS must be a JSON object, not {text!r}")
    return options


def pytest_configure(config):
    import sdfc.dace

    sdfc.dace.enable(**_options())


def pytest_report_header(config):
    import sdfc

    return f"sdfc is DaCe's compiler: {sdfc.find_compiler()} with options {_options() or '(defaults)'}"


def pytest_unconfigure(config):
    import sdfc.dace

    sdfc.dace.disable()


# A GPU fault (a kernel's illegal access, a launch failure) leaves the process's CUDA context
# unusable: every later test of that process would fail with the same error. Under pytest-xdist the
# worker ends after the test that faulted, so that the test is reported (as the one whose worker
# crashed) and the next tests run in a fresh worker.
_STICKY_GPU_ERRORS = (
    "cudaErrorLaunchFailure",
    "CUDA_ERROR_LAUNCH_FAILED",
    "cudaErrorIllegalAddress",
    "CUDA_ERROR_ILLEGAL_ADDRESS",
    "an illegal memory access was encountered",
    "unspecified launch failure",
)


def pytest_runtest_logreport(report):
    if report.failed and os.environ.get("PYTEST_XDIST_WORKER"):
        text = str(report.longrepr)
        if any(error in text for error in _STICKY_GPU_ERRORS):
            print(f"\nsdfc._pytest_dace: {report.nodeid} left a GPU fault; this worker ends", flush=True)
            os._exit(3)
