"""GPU programs through the package: the corpus's program_gpu*.sdfg with host arrays called with
NumPy; those with device-pointer arguments (GT4Py's program_gpu.sdfg, d2h_symbol_s's handbuilt
file) called with CuPy arrays and PyTorch tensors, on the default stream and on the caller's
stream (set_stream), with external workspaces given as CuPy device buffers. Each test skips,
saying why, without nvcc, a GPU, CuPy or PyTorch."""

import ctypes
import os
import shutil
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import sdfc
from _corpus import arrays_of, call_arguments, case_json, gpu_programs, known_unsupported, mismatches, typed

KNOWN = known_unsupported()
SUPPORTED = [f for f in gpu_programs() if f not in KNOWN]
# Files whose array arguments are device pointers (GPU_Global): GT4Py's GPU translation and the
# handbuilt d2h file. The others keep host arrays and copy them to the GPU themselves.
DEVICE_ARGUMENT_FILES = [f for f in SUPPORTED if f.startswith("gt4py_") or f.endswith("_handbuilt.sdfg")]
HOST_ARGUMENT_FILES = [f for f in SUPPORTED if f not in DEVICE_ARGUMENT_FILES]


def _gpu_count():
    """The number of CUDA devices the driver sees (0 without a driver)."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    count = ctypes.c_int(0)
    if driver.cuInit(0) != 0 or driver.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


# Without a GPU nothing here can run: skip before any CUDA program is built.
pytestmark = pytest.mark.skipif(_gpu_count() == 0, reason="no CUDA GPU (or driver) on this machine")


def _cupy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("CuPy sees no GPU")
    except cupy.cuda.runtime.CUDARuntimeError as e:
        pytest.skip(f"CuPy sees no GPU ({e})")
    return cupy


def _torch():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no GPU")
    return torch


def _have_nvcc():
    return bool(shutil.which("nvcc") or shutil.which("/usr/local/cuda/bin/nvcc"))


@pytest.fixture(scope="module", autouse=True)
def _build_in_parallel(corpus, compiler):
    """Builds every program the tests below compile, all at once (nvcc dominates; sdfc's build
    cache then serves each test's compile). A failure is left to the test that meets it."""
    if not _have_nvcc():
        return
    builds = [(f, {}) for f in SUPPORTED] + [(f, {"transients": "external"}) for f in SUPPORTED]

    def build(job):
        try:
            sdfc.compile(corpus / job[0], compiler=compiler, target="cuda", **job[1]).close()
        except sdfc.Error:
            pass

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(build, builds))


def _compile(corpus, compiler, file, **options):
    """``file`` compiled for CUDA; skips without nvcc."""
    if not _have_nvcc():
        pytest.skip("nvcc not found: CUDA programs cannot be built here")
    return sdfc.compile(corpus / file, compiler=compiler, target="cuda", **options)


def _call(program, **kwargs):
    try:
        program(**kwargs)
    except sdfc.Error as e:
        if "no GPU device found" in str(e):
            pytest.skip("no GPU: compiled for CUDA, not run")
        raise


def _device_arrays(program, arrays, to_device):
    """``arrays`` with those of GPU_Global arguments moved to the device by ``to_device``."""
    device = {a["name"] for a in program.info["args"] if a.get("storage") == "GPU_Global"}
    assert device, f"{program.name} has no device-pointer argument"
    return {k: to_device(v) if k in device else v for k, v in arrays.items()}


def _compare(file, arrays, to_host):
    expected = case_json(file, "expected.json")
    problems = mismatches(expected, {k: to_host(v) for k, v in arrays.items()})
    assert not problems, f"{file}: " + "; ".join(problems)


def _init_symbols(program, file):
    symbols = case_json(file, "inputs.json")["symbols"]
    return {s: typed(symbols[s]) for s in program.info["init_symbols"]}


# ------------------------------------------------------------------------------- host arrays
@pytest.mark.parametrize("file", HOST_ARGUMENT_FILES)
def test_gpu_program_with_host_arrays(file, corpus, compiler):
    with _compile(corpus, compiler, file) as program:
        assert all(a.get("storage") != "GPU_Global" for a in program.info["args"] if a["kind"] == "array")
        inputs = case_json(file, "inputs.json")
        for infer in (False, True):
            arrays = arrays_of(inputs)
            _call(program, **call_arguments(program, inputs, arrays, infer))
            _compare(file, arrays, lambda a: a)


@pytest.mark.parametrize("file", [f for f in HOST_ARGUMENT_FILES if f.startswith("external_ws_s/")])
def test_host_array_program_refuses_device_arrays(file, corpus, compiler):
    cupy = _cupy()
    with _compile(corpus, compiler, file) as program:
        inputs = case_json(file, "inputs.json")
        arrays = {k: cupy.asarray(v) for k, v in arrays_of(inputs).items()}
        with pytest.raises(sdfc.Error, match="is host memory .* but the array given is device memory"):
            program(**call_arguments(program, inputs, arrays, infer=True))


# ----------------------------------------------------------------------- device-pointer arguments
@pytest.mark.parametrize("file", DEVICE_ARGUMENT_FILES)
def test_device_arguments_with_cupy(file, corpus, compiler):
    cupy = _cupy()
    with _compile(corpus, compiler, file) as program:
        inputs = case_json(file, "inputs.json")
        for infer in (False, True):
            arrays = _device_arrays(program, arrays_of(inputs), cupy.asarray)
            _call(program, **call_arguments(program, inputs, arrays, infer))
            _compare(file, arrays, cupy.asnumpy)


@pytest.mark.parametrize("file", DEVICE_ARGUMENT_FILES)
def test_device_arguments_with_torch(file, corpus, compiler):
    torch = _torch()
    with _compile(corpus, compiler, file) as program:
        inputs = case_json(file, "inputs.json")
        arrays = _device_arrays(program, arrays_of(inputs), lambda a: torch.from_numpy(a).cuda())
        _call(program, **call_arguments(program, inputs, arrays, infer=True))
        _compare(file, arrays, lambda t: t.cpu().numpy() if isinstance(t, torch.Tensor) else t)


@pytest.mark.parametrize("file", DEVICE_ARGUMENT_FILES)
def test_device_arguments_refuse_host_arrays(file, corpus, compiler):
    with _compile(corpus, compiler, file) as program:
        inputs = case_json(file, "inputs.json")
        with pytest.raises(sdfc.Error, match=r"is in device memory \(GPU_Global\) but the array given is host memory"):
            program(**call_arguments(program, inputs, arrays_of(inputs), infer=True))


@pytest.mark.parametrize("file", DEVICE_ARGUMENT_FILES)
def test_on_a_cupy_stream(file, corpus, compiler):
    cupy = _cupy()
    with _compile(corpus, compiler, file) as program:
        inputs = case_json(file, "inputs.json")
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            arrays = _device_arrays(program, arrays_of(inputs), cupy.asarray)
            program.set_stream(stream)
            _call(program, **call_arguments(program, inputs, arrays, infer=True))
            stream.synchronize()  # the call returned once its work was queued on the stream
        _compare(file, arrays, cupy.asnumpy)


@pytest.mark.parametrize("file", DEVICE_ARGUMENT_FILES)
def test_on_a_torch_stream(file, corpus, compiler):
    torch = _torch()
    with _compile(corpus, compiler, file) as program:
        inputs = case_json(file, "inputs.json")
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            arrays = _device_arrays(program, arrays_of(inputs), lambda a: torch.from_numpy(a).cuda())
            program.set_stream(stream)
            _call(program, **call_arguments(program, inputs, arrays, infer=True))
        stream.synchronize()
        _compare(file, arrays, lambda t: t.cpu().numpy() if isinstance(t, torch.Tensor) else t)


@pytest.mark.parametrize("file", DEVICE_ARGUMENT_FILES)
def test_arrays_made_on_another_stream_are_waited_for(file, corpus, compiler):
    """Arrays given inside ``with stream:`` name that stream in their CUDA array interface; the
    program, on the default stream, waits for it before it starts."""
    cupy = _cupy()
    with _compile(corpus, compiler, file) as program:
        inputs = case_json(file, "inputs.json")
        with cupy.cuda.Stream(non_blocking=True):
            arrays = _device_arrays(program, arrays_of(inputs), cupy.asarray)
            _call(program, **call_arguments(program, inputs, arrays, infer=True))
        _compare(file, arrays, cupy.asnumpy)


@pytest.mark.parametrize("file", SUPPORTED)
def test_external_workspaces_as_cupy_buffers(file, corpus, compiler):
    """Every transient in a workspace of the caller's: GPU_Global ones CuPy device buffers, host
    ones NumPy arrays (GT4Py's GPU programs keep theirs in registers: they have none)."""
    cupy = _cupy()
    with _compile(corpus, compiler, file, transients="external") as program:
        inputs = case_json(file, "inputs.json")
        try:
            sizes = program.workspace_sizes(**_init_symbols(program, file))
        except sdfc.Error as e:
            if "no GPU device found" in str(e):
                pytest.skip("no GPU: compiled for CUDA, not run")
            raise
        assert list(sizes) == program.storages
        pattern = 0xAB  # what the device buffer holds before the call
        buffers = {
            s: cupy.full(max(n, 1), pattern, dtype=cupy.uint8) if s == "GPU_Global" else np.zeros(max(n, 1), np.uint8)
            for s, n in sizes.items()
        }
        if sizes.get("GPU_Global", 0) > 0:
            with pytest.raises(sdfc.Error, match="GPU_Global workspace has"):
                program.set_workspace("GPU_Global", cupy.zeros(sizes["GPU_Global"] - 1, dtype=cupy.uint8))
            with pytest.raises(sdfc.Error, match="must be a device array"):
                program.set_workspace("GPU_Global", np.zeros(sizes["GPU_Global"], np.uint8))
        for storage, buffer in buffers.items():
            program.set_workspace(storage, buffer)
        arrays = arrays_of(inputs)
        if file in DEVICE_ARGUMENT_FILES:
            arrays = _device_arrays(program, arrays, cupy.asarray)
        _call(program, **call_arguments(program, inputs, arrays, infer=True))
        _compare(file, arrays, lambda a: a if isinstance(a, np.ndarray) else cupy.asnumpy(a))
        if sizes.get("GPU_Global", 0) > 0:
            changed = int(cupy.count_nonzero(buffers["GPU_Global"] != pattern))
            assert changed > 0, "the program did not write into the CuPy workspace"
