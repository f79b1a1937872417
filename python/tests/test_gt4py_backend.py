"""sdfc as GT4Py's compiler (sdfc.gt4py): GT4Py's DaCe backend with its SDFGs compiled by sdfc.

GT4Py and DaCe are test dependencies (tests/_third_party.py finds them; without them these tests
are skipped). The GPU tests need CuPy and a GPU (they run on the GPU machine).
"""

import numpy as np
import pytest
from _third_party import import_third_party

gtx = import_third_party("gt4py.next", "sdfc.gt4py tests")

import sdfc  # noqa: E402
import sdfc.dace  # noqa: E402
import sdfc.gt4py  # noqa: E402
from gt4py._core import definitions as core_defs  # noqa: E402
from gt4py.next import config as gtx_config  # noqa: E402
from gt4py.next.program_processors.runners.dace import transformations as gtx_transformations  # noqa: E402
from gt4py.next.program_processors.runners.dace.transformations import auto_optimize  # noqa: E402

IDim = gtx.Dimension("IDim")
Field = gtx.Field[[IDim], gtx.float64]


@gtx.field_operator
def lap(a: Field) -> Field:
    return a(IDim - 1) - 2.0 * a + a(IDim + 1)


@gtx.field_operator
def lap_lap(a: Field) -> Field:
    return lap(lap(a))


@gtx.program
def lap_lap_program(a: Field, out: Field):
    lap_lap(a, out=out, domain={IDim: (2, 62)})


@gtx.field_operator
def scaled_square(a: Field, b: Field) -> Field:
    tmp = a + 2.0 * b
    return tmp * tmp


@gtx.program
def scaled_square_program(a: Field, b: Field, out: Field):
    scaled_square(a, b, out=out)


def lap_lap_reference(x):
    lap1 = x[:-2] - 2 * x[1:-1] + x[2:]
    return lap1[:-2] - 2 * lap1[1:-1] + lap1[2:]


@pytest.fixture(autouse=True)
def gt4py_setup(tmp_path, compiler, monkeypatch):
    """Every test: GT4Py's builds in its own folder, in this process (so that the spy below sees
    them), and a record of the SDFGs sdfc.dace compiled."""
    monkeypatch.setattr(gtx_config, "BUILD_CACHE_DIR", tmp_path / "gt4py-cache", raising=False)
    monkeypatch.setattr(gtx_config, "BUILD_JOBS_MODE", gtx_config.BuildJobsMode.SERIAL)
    compiled = []
    real_compile = sdfc.dace._compile

    def spy(sdfg, *args, **kwargs):
        compiled.append(sdfg.name)
        return real_compile(sdfg, *args, **kwargs)

    monkeypatch.setattr(sdfc.dace, "_compile", spy)
    yield compiled
    assert not sdfc.dace.is_enabled()  # the compilation step restores DaCe's compiler


def test_a_gt4py_program_is_compiled_by_sdfc(gt4py_setup):
    backend = sdfc.gt4py.make_backend(gpu=False)
    assert backend.name == "run_sdfc_cpu_opt"
    x = np.random.default_rng(0).random(64)
    a, out = gtx.as_field([IDim], x), gtx.as_field([IDim], np.zeros(64))
    program = lap_lap_program.with_backend(backend)
    program(a, out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy()[2:62], lap_lap_reference(x), rtol=1e-12, atol=1e-12)
    assert out.asnumpy()[0] == 0 and out.asnumpy()[63] == 0
    assert gt4py_setup == ["lap_lap_program"]
    a2 = gtx.as_field([IDim], 2 * x)  # a second call: the same library, new arguments
    program(a2, out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy()[2:62], lap_lap_reference(2 * x), rtol=1e-12, atol=1e-12)
    assert gt4py_setup == ["lap_lap_program"]


def test_external_workspace_holds_the_transients(gt4py_setup, monkeypatch):
    # GT4Py's own test of the memory modes keeps the intermediate transient this way.
    monkeypatch.setattr(auto_optimize, "_gt_auto_process_top_level_maps", lambda *, sdfg, **kwargs: sdfg)
    workspace = np.full(1 << 16, 0xFF, np.uint8)
    backend = sdfc.gt4py.make_backend(
        gpu=False,
        optimization_args={"transient_memory_mode": gtx_transformations.TransientMemoryMode.EXTERNAL},
        external_workspace={core_defs.DeviceType.CPU: workspace},
    )
    rng = np.random.default_rng(1)
    x, y = rng.random(64), rng.random(64)
    out = gtx.as_field([IDim], np.zeros(64))
    scaled_square_program.with_backend(backend)(gtx.as_field([IDim], x), gtx.as_field([IDim], y), out, offset_provider={})
    np.testing.assert_allclose(out.asnumpy(), (x + 2 * y) ** 2, rtol=1e-13)
    assert gt4py_setup == ["scaled_square_program"]
    assert np.any(workspace != 0xFF)  # the transients lived in the caller's workspace


@pytest.mark.parametrize(
    "arguments, error, text",
    [
        ({"gpu": True, "max_concurrent_gpu_streams": -1}, ValueError, "0 or more"),
        ({"gpu": True, "max_concurrent_gpu_streams": True}, ValueError, "0 or more"),
        ({"gpu": False, "external_sync_stream": 12345}, ValueError, "CPU backend"),
        ({"gpu": True, "external_sync_stream": "stream"}, TypeError, "cannot use str as a stream"),
    ],
)
def test_stream_parameters_are_checked(arguments, error, text):
    with pytest.raises(error, match=text):
        sdfc.gt4py.make_backend(**arguments)


def test_the_all_streams_default_init_code_goes_only_with_own_streams():
    init = "__dace_gpu_set_all_streams(__state, cudaStreamDefault);"
    sdfg = {"attributes": {"init_code": {"cuda": {"string_data": "x();\n" + init, "language": "CPP"}}}}
    assert sdfc.gt4py._without_all_streams_default(sdfg)["attributes"]["init_code"]["cuda"]["string_data"] == "x();\n"
    unchanged = {"attributes": {"init_code": {"cuda": {"string_data": "x();", "language": "CPP"}}}}
    assert sdfc.gt4py._without_all_streams_default(unchanged) is unchanged


# ------------------------------------------------------------------------------------------ GPU


def _cupy():
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            return cupy
    except Exception:  # no CuPy, no driver or no device
        pass
    pytest.skip("no CuPy with a GPU: sdfc.gt4py GPU tests skipped (they run on the GPU machine)")


@pytest.mark.parametrize("streams", [0, 1, 4])
def test_gpu_program_on_a_busy_external_stream(gt4py_setup, streams):
    """Each call is ordered after the work queued on the caller's busy stream (which writes the
    input) and its results are there once the stream is synchronized: checked every call."""
    cp = _cupy()
    stream = cp.cuda.Stream(non_blocking=True)
    backend = sdfc.gt4py.make_backend(gpu=True, max_concurrent_gpu_streams=streams, external_sync_stream=stream)
    n = 1 << 20
    a = gtx.as_field([IDim], np.zeros(n), allocator=backend)
    out = gtx.as_field([IDim], np.zeros(n), allocator=backend)
    program = lap_lap_program.with_backend(backend)
    busy = cp.zeros((4096, 4096))
    for call in range(5):
        with stream:
            for _ in range(8):  # keeps the stream busy before it writes the input
                busy = busy * 1.0000001 + 1.0
            a.ndarray[...] = cp.arange(n, dtype=cp.float64) % 97 * (call + 1)
        program(a, out, offset_provider={})
        stream.synchronize()
        x = (np.arange(n) % 97 * (call + 1)).astype(np.float64)
        np.testing.assert_allclose(cp.asnumpy(out.ndarray)[2:62], lap_lap_reference(x[:64]), rtol=1e-12, atol=1e-9)
    assert gt4py_setup == ["lap_lap_program"]


def test_gpu_pool_with_several_streams(gt4py_setup):
    """GT4Py's POOL mode (its GPU default) with 4 streams: accepted, results right."""
    cp = _cupy()
    backend = sdfc.gt4py.make_backend(
        gpu=True,
        max_concurrent_gpu_streams=4,
        optimization_args={"transient_memory_mode": gtx_transformations.TransientMemoryMode.POOL},
    )
    rng = np.random.default_rng(2)
    x, y = rng.random(4096), rng.random(4096)
    a = gtx.as_field([IDim], x, allocator=backend)
    b = gtx.as_field([IDim], y, allocator=backend)
    out = gtx.as_field([IDim], np.zeros(4096), allocator=backend)
    program = scaled_square_program.with_backend(backend)
    for _ in range(3):
        program(a, b, out, offset_provider={})
        cp.cuda.runtime.deviceSynchronize()
        np.testing.assert_allclose(cp.asnumpy(out.ndarray), (x + 2 * y) ** 2, rtol=1e-13)
