"""External workspaces (corpus external_ws_s: one External transient ws[N]): their sizes, the
caller's buffers checked by the library, and the workspaces the program allocates itself."""

import numpy as np
import pytest

import sdfc
from _corpus import arrays_of, case_json, mismatches

FILE = "external_ws_s/program.sdfg"


@pytest.fixture(scope="module")
def library(compiler, corpus):
    return sdfc.compile(corpus / FILE, compiler=compiler, transients="external").library_path


@pytest.fixture
def program(library):
    with sdfc.load(library) as p:
        yield p


def _call_and_check(program):
    inputs = case_json(FILE, "inputs.json")
    arrays = arrays_of(inputs)
    program(**arrays)
    assert not mismatches(case_json(FILE, "expected.json"), arrays)
    return inputs["symbols"]["N"]["value"]


def test_sizes_need_the_symbol_values(program):
    with pytest.raises(sdfc.Error, match=r"workspace sizes depend on N; pass N=\.\.\."):
        program.workspace_sizes()
    with pytest.raises(sdfc.Error, match="'M' is not a symbol"):
        program.workspace_sizes(N=4, M=2)
    sizes = program.workspace_sizes(N=55)
    assert list(sizes) == ["CPU_Heap"] and sizes["CPU_Heap"] >= 8 * 55
    assert program.workspace_sizes(N=1000)["CPU_Heap"] >= 8 * 1000


def test_the_programs_own_workspace(program):
    n = _call_and_check(program)
    assert program.workspace_sizes()["CPU_Heap"] >= 8 * n  # the bound N


def test_the_callers_workspace_is_used(program):
    size = program.workspace_sizes(N=55)["CPU_Heap"]
    buffer = np.full(size, 0xAB, dtype=np.uint8)
    program.set_workspace("CPU_Heap", buffer)
    _call_and_check(program)
    assert np.any(buffer != 0xAB), "the program did not write its transient into the caller's buffer"


def test_a_too_small_workspace_is_refused_by_the_library(program):
    size = program.workspace_sizes(N=55)["CPU_Heap"]
    with pytest.raises(sdfc.Error) as refused:
        program.set_workspace("CPU_Heap", np.zeros(size - 8, dtype=np.uint8))
    assert f"has {size - 8} bytes but the program needs {size}" in str(refused.value)
    _call_and_check(program)  # nothing was installed: the program's own workspace serves


def test_a_misaligned_workspace_is_refused(program):
    size = program.workspace_sizes(N=55)["CPU_Heap"]
    misaligned = np.zeros(size + 64, dtype=np.uint8)[1 : size + 1]
    with pytest.raises(sdfc.Error, match="not aligned to 8 bytes"):
        program.set_workspace("CPU_Heap", misaligned)


def test_a_workspace_set_before_initialization_is_checked_at_the_call(program):
    program.set_workspace("CPU_Heap", np.zeros(16, dtype=np.uint8))  # no instance yet: not checked
    with pytest.raises(sdfc.Error, match="has 16 bytes but the program needs"):
        _call_and_check(program)


def test_larger_symbols_need_a_larger_workspace(program):
    size = program.workspace_sizes(N=55)["CPU_Heap"]
    program.set_workspace("CPU_Heap", np.zeros(size, dtype=np.uint8))
    _call_and_check(program)
    n = 4 * 55
    with pytest.raises(sdfc.Error, match="but the program needs"):  # the new instance refuses it
        program(a=np.zeros(n), b=np.zeros(n), c=np.zeros(n))
    program.set_workspace("CPU_Heap", np.zeros(program.workspace_sizes(N=n)["CPU_Heap"], dtype=np.uint8))
    a, b, c = np.ones(n), np.ones(n), np.zeros(n)
    program(a=a, b=b, c=c)
    assert np.any(c != 0)


def test_workspace_buffers_must_suit_the_storage(program):
    with pytest.raises(sdfc.Error, match=r"has no GPU_Global workspace \(its workspaces: CPU_Heap\)"):
        program.set_workspace("GPU_Global", np.zeros(1024, dtype=np.uint8))

    class DeviceBuffer:
        __cuda_array_interface__ = {"shape": (1024,), "typestr": "|u1", "data": (0x10000, False), "version": 3}

    with pytest.raises(sdfc.Error, match="must be a numpy.ndarray"):
        program.set_workspace("CPU_Heap", DeviceBuffer())
    with pytest.raises(sdfc.Error, match="must be a contiguous array"):
        program.set_workspace("CPU_Heap", np.zeros(4096, dtype=np.uint8)[::2])


def test_a_program_without_workspaces(axpy):
    assert axpy.workspace_sizes(N=4) == {}
    with pytest.raises(sdfc.Error, match="its workspaces: none; compile with transients='external'"):
        axpy.set_workspace("CPU_Heap", np.zeros(64, dtype=np.uint8))
