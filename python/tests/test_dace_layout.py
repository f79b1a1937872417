"""`sdfc compile --dace-layout DIR`, loaded the way DaCe's own loader loads a program folder.

DaCe is not installed here (no PyPI), so these tests follow the steps of
`dace.codegen.compiler.load_precompiled_sdfg(DIR)` and `ReloadableDLL` as DaCe 2.0 takes them:
read `FOLDER_MODE` ("development": the library is `DIR/build/lib<sdfg name>.so`), read
`DIR/program.sdfgz` or else `DIR/program.sdfg`, load `libdacestub_<name>.so` from the library's
folder with ctypes, ask it `is_library_loaded`, `load_library` (RTLD_LOCAL), `get_symbol` for
`__dace_init_<name>`, `__program_<name>`, `__dace_exit_<name>` and the external-memory pair, then
`unload_library`. Arguments go in DaCe's order (the corpus' `c_call_order`).
"""
import ctypes
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
CORPUS = pathlib.Path(os.environ.get("SDFC_CORPUS", REPO.parent / "shared" / "corpus"))
SDFC = os.environ.get("SDFC", str(REPO / "build" / "sdfc"))

CTYPES = {"float64": ctypes.c_double, "float32": ctypes.c_float, "int32": ctypes.c_int32,
          "int64": ctypes.c_int64, "bool": ctypes.c_bool, "int8": ctypes.c_int8, "uint8": ctypes.c_uint8}


def corpus_case(name):
    case = CORPUS / name
    if not (case / "program.sdfg").is_file():
        pytest.skip(f"corpus case {name} not found under {CORPUS} (set SDFC_CORPUS)")
    return case


def lay_out(sdfg_file, folder, *options):
    done = subprocess.run([SDFC, "compile", str(sdfg_file), "--dace-layout", str(folder), *options],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


class DaceStyleLoader:
    """The loader steps of DaCe 2.0 (load_precompiled_sdfg + ReloadableDLL), for one folder."""

    def __init__(self, folder):
        folder = pathlib.Path(folder)
        mode = (folder / "FOLDER_MODE").read_text().splitlines()[0].strip()
        assert mode == "development"
        sdfg_file = next(folder / n for n in ("program.sdfgz", "program.sdfg") if (folder / n).exists())
        self.name = json.loads(sdfg_file.read_text())["attributes"]["name"]
        self.library = str((folder / "build" / f"lib{self.name}.so").resolve())
        stub_path = pathlib.Path(self.library).parent / ("libdacestub_" + pathlib.Path(self.library).name[3:])
        assert stub_path.is_file()
        self.stub = ctypes.CDLL(str(stub_path))
        self.stub.load_library.restype = ctypes.c_void_p
        self.stub.get_symbol.restype = ctypes.c_void_p
        self.stub.get_symbol.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        self.stub.unload_library.argtypes = [ctypes.c_void_p]
        assert self.stub.is_library_loaded(self.library.encode()) == 0
        self.handle = self.stub.load_library(self.library.encode())
        assert self.handle, f"load_library({self.library}) failed"
        assert self.stub.is_library_loaded(self.library.encode()) == 1

    def function(self, symbol, restype, *argtypes):
        address = self.stub.get_symbol(self.handle, symbol.encode())
        if not address:
            raise KeyError(f"{symbol} not found in {self.library}")
        return ctypes.CFUNCTYPE(restype, *argtypes)(address)

    def unload(self):
        self.stub.unload_library(self.handle)


def dace_arguments(inputs):
    """ctypes values in DaCe's call order, and the numpy arrays by name."""
    arrays = {n: np.array(a["data"], dtype=a["dtype"]).reshape(a["shape"]) for n, a in inputs["arrays"].items()}
    values, types = [], []
    for name in inputs["c_call_order"]:
        if name in arrays:
            values.append(arrays[name].ctypes.data_as(ctypes.c_void_p))
            types.append(ctypes.c_void_p)
        else:
            entry = inputs["symbols"].get(name) or inputs["scalars"][name]
            values.append(CTYPES[entry["dtype"]](entry["value"]))
            types.append(CTYPES[entry["dtype"]])
    return arrays, values, types


def init_arguments(inputs):
    names = [p.split()[-1] for p in inputs["init_signature"].split(",") if p.strip()]
    return [CTYPES[inputs["symbols"][n]["dtype"]](inputs["symbols"][n]["value"]) for n in names]


@pytest.mark.parametrize("case, options, sdfg_name", [
    ("chain5_s", [], "program.sdfg"),
    ("heat2d_loop_s", [], "program.sdfg"),
    ("gt4py_lap3d_s", [], "program.sdfg"),
    ("external_ws_s", ["--transients", "external"], "program.sdfg"),
])
def test_dace_loader_runs_the_program(tmp_path, case, options, sdfg_name):
    folder = corpus_case(case)
    lay_out(folder / sdfg_name, tmp_path / "prog", *options)
    inputs = json.loads((folder / "inputs.json").read_text())
    expected = json.loads((folder / "expected.json").read_text())
    loader = DaceStyleLoader(tmp_path / "prog")
    arrays, values, types = dace_arguments(inputs)
    init_args = init_arguments(inputs)
    init = loader.function(f"__dace_init_{loader.name}", ctypes.c_void_p, *[type(v) for v in init_args])
    program = loader.function(f"__program_{loader.name}", None, ctypes.c_void_p, *types)
    finalize = loader.function(f"__dace_exit_{loader.name}", ctypes.c_int, ctypes.c_void_p)
    state = init(*init_args)
    assert state
    workspace = None
    if "external" in options:  # DaCe 2.0's CompiledSDFG: get the size, then set the memory
        size = loader.function("__dace_get_external_memory_size_CPU_Heap", ctypes.c_size_t, ctypes.c_void_p,
                               *[type(v) for v in init_args])(state, *init_args)
        workspace = np.zeros(size + 64, dtype=np.uint8)
        aligned = workspace[(-workspace.ctypes.data) % 64:]
        loader.function("__dace_set_external_memory_CPU_Heap", None, ctypes.c_void_p, ctypes.c_void_p,
                        *[type(v) for v in init_args])(state, aligned.ctypes.data, *init_args)
    program(state, *values)
    assert finalize(state) == 0
    loader.unload()
    for name in expected["outputs"]:
        want = np.array(expected["arrays"][name]["data"], dtype=expected["arrays"][name]["dtype"])
        np.testing.assert_allclose(arrays[name].ravel(), want, rtol=1e-5 if want.dtype == np.float32 else 1e-12)


def _external_ws_script(tmp_path, body):
    """A Python script that lays out corpus external_ws_s with --transients external in
    tmp_path/prog, loads it as DaCe does, binds init and program, makes a state for N = 8 and
    arrays a, b, c, and then runs `body` (indented like this function's callers write it)."""
    folder = corpus_case("external_ws_s")
    lay_out(folder / "program.sdfg", tmp_path / "prog", "--transients", "external")
    return textwrap.dedent(f"""
        import ctypes, sys
        sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r})
        import numpy as np
        from test_dace_layout import DaceStyleLoader
        loader = DaceStyleLoader({str(tmp_path / 'prog')!r})
        init = loader.function("__dace_init_external_ws_s", ctypes.c_void_p, ctypes.c_int)
        program = loader.function("__program_external_ws_s", None, ctypes.c_void_p, ctypes.c_void_p,
                                  ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)
        a = np.ones(8); b = np.ones(8); c = np.zeros(8)
        state = init(8)
    """) + textwrap.dedent(body)


def test_refused_call_is_printed_once_per_message(tmp_path):
    """DaCe never reads __sdfc_last_error: a refused call also says why on stderr, once."""
    script = _external_ws_script(tmp_path, """
        finalize = loader.function("__dace_exit_external_ws_s", ctypes.c_int, ctypes.c_void_p)
        for _ in range(3):  # no workspace set: every call is refused
            program(state, a.ctypes.data, b.ctypes.data, c.ctypes.data, 8)
        assert (c == 0).all(), "a refused call must leave its outputs untouched"
        print("exit", finalize(state))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "exit 1" in done.stdout
    lines = [l for l in done.stderr.splitlines() if l.startswith("sdfc: ")]
    assert len(lines) == 1, done.stderr
    assert "external workspace" in lines[0] and "not set" in lines[0], lines[0]


def test_plain_library_stays_silent(tmp_path):
    """Without --dace-layout refusals are only in __sdfc_last_error (callers of the library API
    get them as exceptions)."""
    folder = corpus_case("external_ws_s")
    lib = tmp_path / "libexternal_ws_s.so"
    done = subprocess.run([SDFC, "compile", str(folder / "program.sdfg"), "--transients", "external", "-o", str(lib)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    script = textwrap.dedent(f"""
        import ctypes
        import numpy as np
        lib = ctypes.CDLL({str(lib)!r})
        lib.__dace_init_external_ws_s.restype = ctypes.c_void_p
        lib.__program_external_ws_s.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int]
        lib.__sdfc_last_error.restype = ctypes.c_char_p
        lib.__sdfc_last_error.argtypes = [ctypes.c_void_p]
        state = lib.__dace_init_external_ws_s(8)
        a = np.ones(8)
        lib.__program_external_ws_s(state, a.ctypes.data, a.ctypes.data, a.ctypes.data, 8)
        print(lib.__sdfc_last_error(state).decode())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "not set" in done.stdout
    assert "sdfc:" not in done.stderr


def test_layout_replaces_a_stale_compressed_sdfg(tmp_path):
    """DaCe's loader prefers program.sdfgz: one left in the folder must not shadow the program."""
    folder = corpus_case("chain5_s")
    (tmp_path / "prog").mkdir()
    (tmp_path / "prog" / "program.sdfgz").write_bytes(b"stale")
    lay_out(folder / "program.sdfg", tmp_path / "prog")
    assert not (tmp_path / "prog" / "program.sdfgz").exists()
    assert (tmp_path / "prog" / "program.sdfg").read_bytes() == (folder / "program.sdfg").read_bytes()


def test_program_sdfg_names_the_workspace_storages(tmp_path):
    """DaCe asks for __dace_get_external_memory_size_<storage> of every External container: the
    layout's program.sdfg marks the transients in a workspace External, in the storage the library
    exports (the input file may say Scope, and Default)."""
    folder = corpus_case("external_ws_s")
    lay_out(folder / "program.sdfg", tmp_path / "prog", "--transients", "external")
    arrays = json.loads((tmp_path / "prog" / "program.sdfg").read_text())["attributes"]["_arrays"]
    external = {n: a["attributes"]["storage"] for n, a in arrays.items() if a["attributes"].get("lifetime") == "External"}
    assert external and set(external.values()) == {"CPU_Heap"}, external
    for name in external:
        assert arrays[name]["attributes"]["transient"]
    inputs = json.loads((folder / "inputs.json").read_text())
    loader = DaceStyleLoader(tmp_path / "prog")
    loader.function("__dace_get_external_memory_size_CPU_Heap", ctypes.c_size_t, ctypes.c_void_p)  # exported
    loader.unload()
    # A program without workspaces: the file is copied as it is.
    plain = corpus_case("chain5_s")
    lay_out(plain / "program.sdfg", tmp_path / "plain")
    assert (tmp_path / "plain" / "program.sdfg").read_bytes() == (plain / "program.sdfg").read_bytes()


def test_stub_error_check_reports_a_refused_call(tmp_path):
    """DaCe's CompiledSDFG raises when get_symbol("__dace_gpu_last_error")(handle) is not 0: the
    stub answers it with a check that is 1 after a call the program refused (no workspace set)."""
    script = _external_ws_script(tmp_path, """
        check = loader.function("__dace_gpu_last_error", ctypes.c_int, ctypes.c_void_p)
        print("before", check(state))
        program(state, a.ctypes.data, b.ctypes.data, c.ctypes.data, 8)
        print("after", check(state))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "before 0" in done.stdout and "after 1" in done.stdout, done.stdout
