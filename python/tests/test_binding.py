"""Binding by name: inference and checks of symbols, the errors of a binding the program does not
allow (each naming the argument), repeated calls with changed arguments, re-initialization,
refused calls and finalization."""

import ctypes

import numpy as np
import pytest

import sdfc
from _corpus import REPOSITORY, arrays_of, call_arguments, case_json, mismatches


@pytest.fixture(scope="module")
def scale_shift(compiler, corpus):
    """corpus scale_shift_s: out = (a - b) * c + 0.25 on float32[N, M], c a float32 scalar."""
    return sdfc.compile(corpus / "scale_shift_s" / "program.sdfg", compiler=compiler).library_path


def _float32_inputs(n=3, m=5, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, m)).astype(np.float32)
    b = rng.standard_normal((n, m)).astype(np.float32)
    return a, b, np.zeros((n, m), np.float32)


def _raises(program, argument, *parts, **kwargs):
    """Calls ``program(**kwargs)``, which must raise sdfc.Error for ``argument`` saying ``parts``."""
    with pytest.raises(sdfc.Error) as error:
        program(**kwargs)
    for part in parts:
        assert part in str(error.value)
    assert error.value.argument == argument
    return str(error.value)


# ------------------------------------------------------------------------------------ inference
def test_symbols_are_inferred_from_array_shapes(axpy):
    x, y = np.arange(8.0), np.ones(8)
    axpy(x=x, y=y, a=2.0)  # N = 8 from x and y
    np.testing.assert_array_equal(y, 2.0 * np.arange(8.0) + 1.0)
    assert axpy.graph_captures == 0  # a CPU program never captures a graph


def test_a_given_symbol_must_agree_with_the_shapes(axpy):
    x, y = np.arange(8.0), np.ones(8)
    _raises(axpy, "x", "has shape [N], which is 9 in dimension 0 for N = 9 (given)", "(8,)", x=x, y=y, a=1.0, N=9)
    axpy(x=x, y=y, a=1.0, N=8)
    np.testing.assert_array_equal(y, np.arange(8.0) + 1.0)


def test_two_arrays_that_disagree_on_a_symbol(axpy):
    message = _raises(axpy, "y", "N = 8 (from x.shape[0])", "(6,)", x=np.zeros(8), y=np.zeros(6), a=1.0)
    assert "has shape [N]" in message


def test_a_symbol_no_array_determines_must_be_given(compiler, corpus):
    with sdfc.compile(corpus / "heat2d_loop_s" / "program.sdfg", compiler=compiler) as heat:
        u = np.zeros((20, 24))
        message = _raises(heat, "NSTEPS", "cannot infer symbol 'NSTEPS'", "sizes no array argument", "NSTEPS=", u=u)
        assert "'N'" not in message and "'M'" not in message  # those come from u's shape
        heat(u=u, NSTEPS=2)


def test_gt4py_ranges_are_solved_and_checked(compiler, corpus):
    """GT4Py's shapes are `-__q_I_range_0 + __q_I_range_1`: given range_0, range_1 (a symbol that only
    sizes arrays) follows from the extent; range_0 itself cannot be inferred."""
    file = "gt4py_where_s/program_nometrics.sdfg"
    inputs = case_json(file, "inputs.json")
    with sdfc.compile(corpus / file, compiler=compiler) as program:
        arrays = arrays_of(inputs)
        kwargs = call_arguments(program, inputs, arrays, infer=True)
        assert "__q_I_range_1" not in kwargs and "__q_I_range_0" in kwargs
        program(**kwargs)
        assert not mismatches(case_json(file, "expected.json"), arrays)

        # A shape-only symbol given with a value the arrays do not have.
        wrong = dict(kwargs, __q_I_range_1=int(inputs["symbols"]["__q_I_range_1"]["value"]) + 1)
        _raises(program, "q", "argument 'q'", "__q_I_range_1 = ", "(given)", **wrong)
        not_an_integer = dict(kwargs, __q_I_range_1=6.5)
        _raises(program, "__q_I_range_1", "sizes arrays", "not an integer", **not_an_integer)

        missing = {k: v for k, v in kwargs.items() if k != "__q_I_range_0"}
        _raises(program, "__q_I_range_0", "cannot infer symbol '__q_I_range_0'", "q.shape[0] =", **missing)


# --------------------------------------------------------------------------------- binding errors
def test_wrong_dtype(axpy):
    _raises(axpy, "x", "dtype float64", "float32", x=np.zeros(4, np.float32), y=np.zeros(4), a=1.0)


def test_wrong_number_of_dimensions(axpy):
    _raises(axpy, "x", "1 dimension [N]", "(2, 2)", x=np.zeros((2, 2)), y=np.zeros(4), a=1.0)


def test_non_contiguous_arrays(axpy, scale_shift):
    x = np.zeros(8)
    _raises(axpy, "x", "strides [1]", "(2,)", "ascontiguousarray", x=x[::2], y=np.zeros(4), a=1.0)
    with sdfc.load(scale_shift) as program:
        a, b, out = _float32_inputs()
        _raises(program, "b", "strides", "(1, 3)", a=a, b=np.asfortranarray(b), out=out, c=np.float32(1))


def test_missing_and_extra_arguments(axpy):
    message = _raises(axpy, "y", "missing argument y: float64[N]", x=np.zeros(4), a=1.0)
    assert "x:" not in message
    _raises(axpy, "z", "has no argument 'z'", "x: float64[N] (CPU_Heap)", x=np.zeros(4), y=np.zeros(4), a=1.0, z=1)


def test_scalars_convert_exactly(scale_shift):
    with sdfc.load(scale_shift) as program:
        a, b, out = _float32_inputs()
        # 0.1 is no float32: refused, not rounded; numpy.float32(0.1) is that float32.
        _raises(program, "c", "scalar 'c'", "float32", "not exactly representable", a=a, b=b, out=out, c=0.1)
        program(a=a, b=b, out=out, c=np.float32(0.1))
        np.testing.assert_array_equal(out, (a - b) * np.float32(0.1) + np.float32(0.25))
        program(a=a, b=b, out=out, c=3)  # an int that float32 holds
        np.testing.assert_array_equal(out, (a - b) * np.float32(3) + np.float32(0.25))
        _raises(program, "c", "not exactly representable", a=a, b=b, out=out, c=2**24 + 1)
        _raises(program, "c", "not a number", a=a, b=b, out=out, c="1.5")


def test_symbols_convert_exactly(axpy):
    x, y = np.zeros(4), np.zeros(4)
    _raises(axpy, "N", "symbol 'N'", "int32", "2.5 is not an integer", x=x, y=y, a=1.0, N=2.5)
    _raises(axpy, "N", "outside int32's range", x=x, y=y, a=1.0, N=2**31)
    axpy(x=x, y=y, a=1.0, N=4.0)  # an integral float is exact


def test_inferred_symbol_must_fit_its_dtype(axpy):
    # A view that claims 2**31 elements over one: the binding refuses it before anything reads it.
    huge = np.lib.stride_tricks.as_strided(np.zeros(1), shape=(2**31,), strides=(8,))
    _raises(axpy, "N", "symbol 'N' of program 'axpy' = 2147483648 (from x.shape[0])", "int32", x=huge, y=huge, a=1.0)


def test_device_array_for_a_host_argument(axpy):
    class DeviceArray:  # what CuPy and PyTorch CUDA tensors expose
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f8", "data": (0x10000, False), "version": 3}

    _raises(axpy, "x", "host memory (CPU_Heap)", "device memory", x=DeviceArray(), y=np.zeros(4), a=1.0)


def test_not_an_array(axpy):
    _raises(axpy, "x", "must be a numpy.ndarray, not list", x=[1.0, 2.0], y=np.zeros(2), a=1.0)


# ----------------------------------------------------------------------------- repeated calls
def test_repeated_calls_see_changed_arguments(axpy):
    x1, y1 = np.arange(4.0), np.zeros(4)
    x2, y2 = np.arange(4.0) + 10, np.zeros(4)
    axpy(x=x1, y=y1, a=1.0)
    axpy(x=x2, y=y2, a=1.0)  # other arrays of the same shape
    np.testing.assert_array_equal(y2, x2)
    axpy(x=x2, y=y2, a=0.5)  # another scalar
    np.testing.assert_array_equal(y2, 1.5 * x2)
    _raises(axpy, "a", "scalar 'a'", x=x2, y=y2, a=None)
    axpy(x=x2, y=y2, a=0.5)  # the refused binding left the program usable
    np.testing.assert_array_equal(y2, 2.0 * x2)


def test_repeated_calls_see_arrays_changed_in_place(axpy):
    x, y = np.arange(4.0), np.zeros(4)
    axpy(x=x, y=y, a=1.0)
    x.resize((2, 2), refcheck=False)  # same object, same data, another shape
    _raises(axpy, "x", "1 dimension", x=x, y=y, a=1.0)
    x.resize((4,), refcheck=False)
    axpy(x=x, y=y, a=1.0)
    np.testing.assert_array_equal(y, 2 * np.arange(4.0))
    x.resize(16, refcheck=False)  # same object, new data
    x[:] = np.arange(16.0)
    y = np.zeros(16)
    axpy(x=x, y=y, a=1.0)
    np.testing.assert_array_equal(y, np.arange(16.0))


def test_changed_init_symbols_reinitialize(compiler, corpus):
    """persistent_loop_s keeps a Persistent transient sized by N at initialization: a call with a
    larger N is refused by an instance made for a smaller one, so it must get a new instance."""
    library = sdfc.compile(corpus / "persistent_loop_s" / "program.sdfg", compiler=compiler).library_path
    rng = np.random.default_rng(1)
    small, large = rng.standard_normal(8).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    with sdfc.load(library) as program, sdfc.load(library) as fresh:
        out_small = np.zeros(8, np.float32)
        program(out=out_small, x=small)
        out_large, want = np.zeros(64, np.float32), np.zeros(64, np.float32)
        program(out=out_large, x=large)
        fresh(out=want, x=large)
        np.testing.assert_array_equal(out_large, want)
        assert np.any(want != 0)


def test_a_refused_call_raises_the_program_message_and_the_next_call_runs(compiler, corpus):
    """fe_ragged_symbol_s sizes the transient seg by k = L[i], read from the data: a negative L[i]
    is refused by the program at run time."""
    file = "fe_ragged_symbol_s/program.sdfg"
    inputs, expected = case_json(file, "inputs.json"), case_json(file, "expected.json")
    with sdfc.compile(corpus / file, compiler=compiler) as program:
        arrays = arrays_of(inputs)
        arrays["L"][1] = -3
        with pytest.raises(sdfc.Error) as refused:
            program(**arrays)
        assert "refused the call" in str(refused.value)
        assert "transient seg would have k = -3 elements" in str(refused.value)
        arrays = arrays_of(inputs)
        program(**arrays)
        assert not mismatches(expected, arrays)


# ------------------------------------------------------------------------------------ finalize
def test_the_context_manager_finalizes(axpy_library):
    x, y = np.arange(4.0), np.zeros(4)
    with sdfc.load(axpy_library) as program:
        program(x=x, y=y, a=1.0)
        state = program._state.value
    assert program.closed
    with pytest.raises(sdfc.Error, match="was closed"):
        program(x=x, y=y, a=1.0)
    # The library itself knows the instance is finished: a call with its handle is refused.
    library = ctypes.CDLL(axpy_library)
    last_error = library["__sdfc_last_error"]
    last_error.restype = ctypes.c_char_p
    call = library["__program_axpy"]
    call.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_double]
    call(state, x.ctypes.data, y.ctypes.data, 4, 1.0)
    np.testing.assert_array_equal(y, x)  # nothing ran
    message = last_error(ctypes.c_void_p(state)).decode()
    assert "already finished by __dace_exit_axpy" in message
    program.close()  # closing again does nothing


def test_set_stream_on_a_cpu_program_is_refused(axpy):
    with pytest.raises(sdfc.Error, match="compiled for the CPU"):
        axpy.set_stream(0)
    with pytest.raises(sdfc.Error, match="cannot use str as a stream"):
        axpy.set_stream("stream")


def test_program_description(axpy):
    assert axpy.name == "axpy" and axpy.target == "cpu"
    assert axpy.arguments == ["x", "y", "N", "a"]
    assert [a["kind"] for a in axpy.info["args"]] == ["array", "array", "symbol", "scalar"]
    assert "x: float64[N] (CPU_Heap)" in repr(axpy)


def test_a_program_with_callbacks_is_refused_at_load_saying_where_callbacks_work(compiler):
    """Callback arguments (DaCe's `callback` dtype) are bound by DaCe's loader or the C++ API; this
    package says so when it loads such a library instead of binding a wrong type."""
    with pytest.raises(sdfc.Error) as error:
        sdfc.compile(REPOSITORY / "tests" / "codegen" / "cpu" / "dace_callbacks.sdfg", compiler=compiler)
    text = str(error.value)
    assert "argument 'clock' is a callback (double (*)())" in text
    assert "sdfc.dace.enable()" in text and "Program::set_callback" in text


def test_a_program_with_a_structure_argument_is_refused_at_load_saying_where_it_works(compiler):
    """DaCe's Structure arguments (a pointer to a C struct of member pointers) are bound by DaCe's
    loader (ctypes structures) or the C++ API; this package says so at load."""
    with pytest.raises(sdfc.Error) as error:
        sdfc.compile(REPOSITORY / "tests" / "data" / "structs" / "for_with_field.sdfg", compiler=compiler)
    text = str(error.value)
    assert "argument 'S' is a structure (a pointer to the C struct BoundedArray)" in text
    assert "sdfc.dace.enable()" in text and 'Program::set_array("S", &value, "BoundedArray", 1)' in text
