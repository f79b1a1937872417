"""sdfc as DaCe's compiler: ``import sdfc.dace; sdfc.dace.enable()``.

After :func:`enable`, ``dace.SDFG.compile`` builds with sdfc instead of DaCe's code generator and
CMake, so ``sdfg.compile()``, ``@dace.program`` calls and GT4Py's DaCe backends run sdfc-built
libraries. Only the build changes: sdfc lays the program out in the SDFG's DaCe build folder
(``sdfc compile FILE --dace-layout FOLDER``: ``build/lib<name>.so``, DaCe's loader stub,
``program.sdfg``) and DaCe's own loader (``dace.codegen.compiler.load_precompiled_sdfg``) makes
the ``CompiledSDFG``, so every call, argument check, workspace and return value after the build
is DaCe's code.

DaCe is imported only when these functions run: ``import sdfc`` works without it. See
docs/python.md ("sdfc as DaCe's compiler").
"""

import contextlib
import copy
import ctypes
import fcntl
import functools
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import threading
import weakref

from ._compile import find_compiler
from ._errors import Error
from ._options import check_option, command_options, option_table

__all__ = ["CompilationError", "compile", "disable", "enable", "enabled", "is_enabled"]

# The options of enable() and compile(), with what each means when not given.
_OPTION_DEFAULTS = {
    "target": None,  # None: "cuda" (or "hip" if DaCe's compiler.cuda.backend says so) for SDFGs with GPU
    #                  storage or schedules, else "cpu"
    "transients": None,  # None: the lifetimes the SDFG declares
    "gpu_streams": None,  # None: from DaCe's compiler.cuda.max_concurrent_streams (-1: 0, N > 0: N)
    "gpu_arch": None,  # None: from DaCe's compiler.cuda.cuda_arch / hip_arch when set, else sdfc's default
    "blas": None,  # None: sdfc's default ("pure")
    "gpu_graph": False,
    "fuse_maps": False,
    "dependent_launch": True,
    "transient_layouts": True,
    "build_cache": True,  # False: sdfc --no-cache (always build and check CPP tasklets)
    "compiler": None,  # the sdfc executable (see sdfc.find_compiler)
}

_lock = threading.RLock()
_dace_compile = None  # dace.SDFG.compile as DaCe defines it, while enable() has replaced it
_enabled_options = None  # the options of enable(), while enabled
_error_type = None  # CompilationError, made on first use (it derives from DaCe's)


# ---------------------------------------------------------------------------------------- errors


def _compilation_error():
    """The exception type of failed sdfc builds: a subclass of DaCe's
    ``dace.codegen.exceptions.CompilationError`` (what DaCe's own compiler raises, so callers
    that catch it still do) and of :class:`sdfc.Error`."""
    global _error_type
    if _error_type is None:
        from dace.codegen.exceptions import CompilationError as DaceCompilationError

        class CompilationError(DaceCompilationError, Error):
            """sdfc refused the SDFG or failed to build it; the message is sdfc's diagnostics."""

        CompilationError.__module__ = __name__
        _error_type = CompilationError
    return _error_type


def __getattr__(name):
    # sdfc.dace.CompilationError imports DaCe only when it is asked for.
    if name == "CompilationError":
        return _compilation_error()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------------------- options


# The options of this module, not sdfc's: sdfc's own are those its option table lists.
_PACKAGE_OPTIONS = ("build_cache", "compiler")


def _check_options(options):
    """Raises :class:`sdfc.Error` for unknown option names and values sdfc does not take (as its
    option table, ``sdfc options --json``, says; without an sdfc to ask, sdfc checks them when it
    compiles)."""
    try:
        table = option_table(find_compiler(options.get("compiler")))
    except Error:
        table = None
    known = set(_OPTION_DEFAULTS) | set(table or ())
    unknown = sorted(set(options) - known)
    if unknown:
        raise Error(f"unknown sdfc option(s) {', '.join(unknown)}; expected some of {', '.join(sorted(known))}")
    for name, value in options.items():
        if table is not None and name not in _PACKAGE_OPTIONS:
            check_option(table, name, value)


def _uses_gpu(sdfg):
    """Whether the SDFG has GPU storage or GPU schedules (the test DaCe's CompiledSDFG makes for
    ``has_gpu_code``)."""
    from dace import dtypes
    from dace.sdfg import nodes

    gpu_storages = (dtypes.StorageType.GPU_Global, dtypes.StorageType.GPU_Shared)
    if any(desc.storage in gpu_storages for _, _, desc in sdfg.arrays_recursive()):
        return True
    scoped = (nodes.EntryNode, nodes.ExitNode, nodes.LibraryNode)
    return any(
        isinstance(node, scoped) and node.schedule in dtypes.GPU_SCHEDULES for node, _ in sdfg.all_nodes_recursive()
    )


def _resolve(sdfg, options):
    """The options sdfc compiles ``sdfg`` with: ``options`` over the defaults, the unset ones
    taken from the SDFG (the target) and from DaCe's configuration (streams, architecture)."""
    from dace.config import Config

    resolved = dict(_OPTION_DEFAULTS)
    resolved.update(options)
    if resolved["target"] is None:
        backend = str(Config.get("compiler", "cuda", "backend")).lower()
        resolved["target"] = ("hip" if backend == "hip" else "cuda") if _uses_gpu(sdfg) else "cpu"
    gpu = resolved["target"] != "cpu"
    if resolved["gpu_streams"] is None and gpu:
        # DaCe: -1 is the default stream only, 0 "as many as useful", N at most N. sdfc: 0 is one
        # stream (the caller's or the default), N >= 1 up to N internal streams; DaCe's 0 keeps
        # sdfc's default.
        streams = int(Config.get("compiler", "cuda", "max_concurrent_streams"))
        resolved["gpu_streams"] = 0 if streams < 0 else (streams or None)
    if resolved["gpu_arch"] is None and gpu:
        key = "hip_arch" if resolved["target"] == "hip" else "cuda_arch"
        archs = [a for a in re.split(r"[\s,;]+", str(Config.get("compiler", "cuda", key) or "")) if a]
        if archs:  # DaCe lists numbers ("90") for CUDA; sdfc takes "sm_90"
            resolved["gpu_arch"] = f"sm_{archs[0]}" if archs[0].isdigit() and key == "cuda_arch" else archs[0]
    if not gpu:
        resolved["gpu_streams"] = None  # sdfc would only note that it ignores them
    return resolved


def _command_options(executable, resolved):
    """sdfc's command-line options for the resolved options (spelled by sdfc's option table)."""
    sdfc_options = {k: v for k, v in resolved.items() if k not in _PACKAGE_OPTIONS}
    options = command_options(executable, sdfc_options)
    if not resolved["build_cache"]:
        options.append("--no-cache")
    return options


# ----------------------------------------------------------------------------------------- build

# The files sdfc keeps in a build folder: the SDFG it compiled (a stable path, so that sdfc's build
# cache recognizes it) and a stamp of what the library was built from (for compiler.use_cache).
_SDFC_FOLDER = "sdfc"


def _write_if_changed(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and path.read_text() == text:
        return
    with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as f:
        f.write(text)
    os.replace(f.name, path)


def _stamp(sdfg, executable, options, form=None):
    """What a library was built from: the SDFG (DaCe's hash of its JSON form as sdfc reads it,
    which leaves out the identifiers every new SDFG object gets and keeps the interstate
    assignments as written: DaCe's own form sees them through SymPy, where ``ceil(arg)`` and
    ``arg`` hash alike), sdfc's options and the sdfc executable. ``form``: that JSON form when the
    caller already made it (it is consumed)."""
    st = os.stat(executable)
    digest = sdfg.hash_sdfg(form if form is not None else _json_form(sdfg))
    key = (digest, options, os.path.realpath(executable), st.st_size, st.st_mtime_ns)
    return hashlib.sha256(repr(key).encode()).hexdigest()


def _stamp_path(build_folder, name):
    return pathlib.Path(build_folder) / _SDFC_FOLDER / f"{name}.stamp"


def _build(program, build_folder, folder_mode, resolved):
    """Compiles the SDFG ``program`` with sdfc into ``build_folder`` as DaCe's ``folder_mode``
    lays it out; raises :func:`CompilationError` with sdfc's diagnostics."""
    # One JSON form for both the file sdfc reads and the stamp (DaCe's to_json is the larger part
    # of this function's own time on GT4Py's programs).
    form = _json_form(program)
    name, text = program.name, _dumps(program, form)
    executable = find_compiler(resolved["compiler"])
    folder = pathlib.Path(build_folder).resolve()
    source = folder / _SDFC_FOLDER / f"{name}.sdfg"
    _write_if_changed(source, text)
    # sdfc writes DaCe's development layout; a production folder (library and stub at the top,
    # nothing else) is made from one written beside it.
    layout = folder if folder_mode == "development" else pathlib.Path(tempfile.mkdtemp(prefix=".sdfc-", dir=folder))
    options = _command_options(executable, resolved)
    command = [executable, "compile", str(source), "--dace-layout", str(layout), *options]
    try:
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:
            diagnostics = result.stderr.strip() or f"sdfc exited with status {result.returncode}"
            raise _compilation_error()(f"sdfc could not compile SDFG '{name}':\n{diagnostics}")
        if folder_mode == "production":
            for file in (f"lib{name}.so", f"libdacestub_{name}.so"):
                os.replace(layout / "build" / file, folder / file)
            for stale in ("program.sdfg", "program.sdfgz"):
                (folder / stale).unlink(missing_ok=True)
            os.replace(layout / "program.sdfg", folder / "program.sdfg")
            (folder / "FOLDER_MODE").write_text("production")
    finally:
        if layout != folder:
            shutil.rmtree(layout, ignore_errors=True)
    _write_if_changed(_stamp_path(folder, name), _stamp(program, executable, options, form))


# ------------------------------------------------------------------------------------------ load


def _external_containers(build_folder):
    """{(SDFG name, container): (storage, lifetime)} of the containers of lifetime External in
    the folder's program.sdfg (sdfc marks there the transients it placed in workspaces, with the
    storage the library exports its workspace functions for); empty when there is none."""
    path = pathlib.Path(build_folder) / "program.sdfg"
    if not path.is_file():
        return {}
    text = path.read_text()
    if '"External"' not in text:
        return {}
    found = {}

    def visit(value):
        if isinstance(value, dict):
            if value.get("type") == "SDFG":
                attributes = value.get("attributes", {})
                for container, desc in (attributes.get("_arrays") or {}).items():
                    desc_attributes = desc.get("attributes", {}) if isinstance(desc, dict) else {}
                    if desc_attributes.get("lifetime") == "External":
                        found[(attributes.get("name"), container)] = desc_attributes.get("storage", "Default")
            for child in value.values():
                visit(child)
        elif isinstance(value, list):
            for child in value:
                visit(child)

    visit(json.loads(text))
    return found


def _as_the_library_has_it(sdfg, build_folder):
    """``sdfg``, or a copy whose External containers have the storages and lifetimes the library
    has for them (DaCe's CompiledSDFG asks the library for the workspace functions of each storage
    of an External container: ``--transients external`` makes transients External, and ``Default``
    is a storage sdfc decides)."""
    from dace import dtypes

    marked = _external_containers(build_folder)
    if not marked:
        return sdfg
    changes = []
    for nested in sdfg.all_sdfgs_recursive():
        for container, desc in nested.arrays.items():
            storage = marked.get((nested.name, container))
            if storage is not None and (
                desc.lifetime != dtypes.AllocationLifetime.External or desc.storage.name != storage
            ):
                changes.append((nested.cfg_id, container, dtypes.StorageType[storage]))
    if not changes:
        return sdfg
    sdfg = copy.deepcopy(sdfg)
    by_id = {nested.cfg_id: nested for nested in sdfg.all_sdfgs_recursive()}
    for cfg_id, container, storage in changes:
        desc = by_id[cfg_id].arrays[container]
        desc.lifetime = dtypes.AllocationLifetime.External
        desc.storage = storage
    return sdfg


def _sdfc_message(compiled):
    """The message of the call the program refused (``__sdfc_last_error``), or None."""
    lib = getattr(compiled, "_lib", None)
    if lib is None or getattr(lib, "_lib", None) is None or not compiled._libhandle:
        return None
    try:
        last_error = lib.get_symbol("__sdfc_last_error", ctypes.c_char_p)
    except (KeyError, ReferenceError):
        return None
    message = last_error(compiled._libhandle)
    # A handle the library no longer knows (after __dace_exit_) has no message of the program's.
    if not message or message.startswith(b"__sdfc_last_error:"):
        return None
    return message.decode(errors="replace")


def _load(build_folder, sdfg):
    """DaCe's CompiledSDFG of the library in ``build_folder``, made by DaCe's loader."""
    from dace.codegen import compiler

    compiled = compiler.load_precompiled_sdfg(folder=build_folder, sdfg=_as_the_library_has_it(sdfg, build_folder))
    # DaCe raises "An error was detected when calling ..." when the library's error check is not 0
    # (sdfc's loader stub makes it 1 after a refused call); the text then is the program's own.
    dace_text = compiled._get_error_text
    compiled_ref = weakref.ref(compiled)

    def error_text(result):
        this = compiled_ref()
        message = _sdfc_message(this) if this is not None else None
        return f"sdfc: {message}" if message else dace_text(result)

    compiled._get_error_text = error_text
    _bind_as_the_library_takes(compiled)
    return compiled


def _bind_as_the_library_takes(compiled):
    """DaCe passes the arguments in the order of the SDFG's signature as DaCe derives it; DaCe's own
    compile derives it after library-node expansion, so a symbol that only sizes a dimension of an
    argument (``N`` in ``sum(A[N, M])``, ``B`` in a batched ``a @ b``) is a parameter of the library
    but missing from the list DaCe derives from the SDFG it was given. The library's own program info
    knows its parameter order: DaCe's handle binds by that list, each symbol typed as the SDFG
    declares it. A name the SDFG does not declare cannot be bound: refused, naming both lists."""
    from dace import data

    info_text = compiled._lib.get_symbol("__sdfc_program_info", restype=ctypes.c_char_p)  # DaCe's own handle
    info = json.loads(info_text().decode("utf-8"))
    ours = [a["name"] for a in info["args"]]
    init_symbols = list(info.get("init_symbols", []))
    theirs = list(compiled._sig)
    if ours == theirs:
        return
    # DaCe's init call passes the arguments that are free symbols, in the order of the list above.
    if [name for name in ours if name in init_symbols] != init_symbols:
        raise _compilation_error()(
            f"sdfc: program '{compiled._sdfg.name}': the library's init symbols ({', '.join(init_symbols)}) "
            f"are not in the order of its arguments ({', '.join(ours)}); refused (an sdfc bug: please report)"
        )
    typedict = dict(compiled._typedict)
    symbols = compiled._sdfg.symbols
    unknown = [name for name in ours if name not in typedict and name not in symbols]
    if unknown:
        raise _compilation_error()(
            f"sdfc: program '{compiled._sdfg.name}': sdfc's entry point takes ({', '.join(ours)}), DaCe "
            f"would pass ({', '.join(theirs)}) and the SDFG declares no {', '.join(unknown)}; refused, "
            "since those arguments could not be bound"
        )
    for name in ours:
        if name not in typedict:
            typedict[name] = data.Scalar(symbols[name])
    compiled._typedict = typedict
    compiled._sig = ours
    compiled._free_symbols = set(init_symbols)


# --------------------------------------------------------------------------------------- compile


@contextlib.contextmanager
def _folder_lock(build_folder):
    """Holds the build folder's lock: DaCe names the folder after the SDFG, so processes that
    compile different SDFGs of one name (pytest-xdist workers, a job's ranks) share it, and one
    could otherwise load the library another just wrote there. Between the check of what exists,
    the build and the load (a loaded library stays as it was when the file is replaced)."""
    lock_path = pathlib.Path(build_folder) / _SDFC_FOLDER / ".lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _compile(sdfg, options, output_file=None, validate=True, return_program_handle=True):
    """``dace.SDFG.compile`` with sdfc in place of DaCe's code generator and CMake: the same
    steps, the same folder, the same loader (see DaCe's ``SDFG.compile``), under the folder's lock
    (:func:`_folder_lock`)."""
    with _folder_lock(sdfg.build_folder):
        return _compile_locked(sdfg, options, output_file, validate, return_program_handle)


def _compile_locked(sdfg, options, output_file, validate, return_program_handle):
    from dace.codegen import compiler
    from dace.config import Config

    build_folder = sdfg.build_folder
    # The folder's FOLDER_MODE when it exists, else DaCe's configuration.
    folder_mode = compiler.get_folder_mode(build_folder, probe=True) or Config.get("compiler", "build_folder_mode")

    if not sdfg._recompile or Config.get_bool("compiler", "use_cache"):
        # DaCe reuses a library that exists. A library sdfc built is reused only when it was
        # built from this SDFG with these options (its stamp says so); one DaCe built, as DaCe would.
        library = compiler.get_binary_name(object_folder=build_folder, sdfg_name=sdfg.name, folder_mode=folder_mode)
        stamp = _stamp_path(build_folder, sdfg.name)
        if library.is_file() and (not stamp.is_file() or _unchanged(sdfg, options, stamp)):
            return _load(build_folder, sdfg) if return_program_handle else None

    # As DaCe: a copy (sdfc must not change the caller's SDFG), external nested SDFGs loaded, and
    # another name while a library of this name is loaded in the process (a library's file cannot
    # be replaced under a loaded one).
    program = _prepared(sdfg)
    index = 0
    while program.is_loaded(folder_mode=folder_mode):
        program.name = f"{sdfg.name}_{index}"
        index += 1
    if validate:
        program.validate()  # DaCe's own checks and errors first (sdfc validates again)

    resolved = _resolve(program, options)
    _build(program, build_folder, folder_mode, resolved)
    library = compiler.get_binary_name(object_folder=build_folder, sdfg_name=program.name, folder_mode=folder_mode)
    if output_file is not None:
        if os.path.isdir(output_file):
            output_file = os.path.join(output_file, os.path.basename(library))
        shutil.copyfile(library, output_file)
    return _load(build_folder, program) if return_program_handle else None


def _prepared(sdfg):
    """The copy of ``sdfg`` that sdfc compiles: its build folder fixed (the folder's name may
    depend on the SDFG's hash), external nested SDFGs loaded, scope connectors filled in."""
    program = copy.deepcopy(sdfg)
    program.build_folder = sdfg.build_folder
    for _ in program.all_sdfgs_recursive(load_ext=True):
        pass
    program.fill_scope_connectors()
    return program


@contextlib.contextmanager
def _assignments_as_written():
    """DaCe writes an interstate assignment to JSON through SymPy, which takes every name for an
    integer symbol: ``ceil_arg = ceil(arg)`` of a float64 scalar ``arg`` is written
    ``ceil_arg = arg`` (and then truncates 0.7 to 0), while DaCe's own code generator compiles
    the assignment as the SDFG holds it. sdfc reads the assignments as Python, so they are
    written as the SDFG holds them."""
    from dace.sdfg.sdfg import InterstateEdge

    prop = InterstateEdge.assignments  # DaCe's DictProperty: its to_json is an attribute
    sympy_form = prop.to_json
    prop.to_json = lambda d: {k: str(v) for k, v in d.items()}
    try:
        yield
    finally:
        prop.to_json = sympy_form


def _json_form(sdfg):
    """``sdfg.to_json()`` with the interstate assignments as written."""
    try:
        with _lock, _assignments_as_written():
            return sdfg.to_json()
    except (TypeError, ValueError) as e:
        raise _compilation_error()(f"cannot write SDFG '{sdfg.name}' as JSON for sdfc ({e})") from None


def _dumps(sdfg, form):
    try:
        return json.dumps(form)
    except (TypeError, ValueError) as e:
        raise _compilation_error()(f"cannot write SDFG '{sdfg.name}' as JSON for sdfc ({e})") from None


def _unchanged(sdfg, options, stamp):
    """Whether the library that ``stamp`` describes was built from ``sdfg`` with ``options``
    (the copy sdfc compiles is prepared as _compile prepares it)."""
    program = _prepared(sdfg)
    resolved = _resolve(program, options)
    try:
        executable = find_compiler(resolved["compiler"])
    except Error:
        return True  # no sdfc to build with: as DaCe, reuse what exists
    return stamp.read_text() == _stamp(program, executable, _command_options(executable, resolved))


def compile(sdfg, output_file=None, validate=True, return_program_handle=True, **sdfc_options):
    """Compiles the ``dace.SDFG`` ``sdfg`` with sdfc and returns DaCe's ``CompiledSDFG`` for it,
    as ``sdfg.compile()`` does with DaCe's compiler: the library is written to
    ``sdfg.build_folder`` (DaCe's layout and folder mode), ``compiler.use_cache`` reuses one built
    from the same SDFG and options, ``output_file`` receives a copy of the library, ``validate``
    runs DaCe's validation first, and ``return_program_handle=False`` returns None.

    ``sdfc_options`` are sdfc's (``sdfc help compile``): ``target`` ("cpu", "cuda", "hip"; by
    default from the SDFG's storages and schedules), ``transients`` ("scoped", "persistent",
    "pool", "external"), ``gpu_streams`` (default: DaCe's ``compiler.cuda.max_concurrent_streams``),
    ``gpu_arch`` (default: DaCe's ``compiler.cuda.cuda_arch`` / ``hip_arch`` when set), ``blas``,
    ``gpu_graph``, ``fuse_maps``, ``dependent_launch``, ``transient_layouts``, ``build_cache=False`` (sdfc's
    ``--no-cache``) and ``compiler`` (the sdfc executable). Without options, those of
    :func:`enable` apply while it is in effect.

    Raises :data:`CompilationError` (a ``dace.codegen.exceptions.CompilationError`` and an
    :class:`sdfc.Error`) with sdfc's diagnostics when sdfc refuses the SDFG or cannot build it.
    """
    _check_options(sdfc_options)
    if not sdfc_options and _enabled_options is not None:
        sdfc_options = _enabled_options
    return _compile(sdfg, sdfc_options, output_file, validate, return_program_handle)


# ------------------------------------------------------------------------------ enable / disable


def enable(**sdfc_options):
    """Makes sdfc DaCe's compiler in this process: ``dace.SDFG.compile`` is replaced by a function
    that compiles with sdfc (see :func:`compile`), with these options. Calling it again replaces
    the options; :func:`disable` restores DaCe's compiler."""
    _check_options(sdfc_options)
    import dace

    global _dace_compile, _enabled_options
    with _lock:
        if _dace_compile is None:
            _dace_compile = dace.SDFG.compile

            @functools.wraps(_dace_compile)
            def compile_with_sdfc(self, output_file=None, validate=True, return_program_handle=True):
                return _compile(self, _enabled_options or {}, output_file, validate, return_program_handle)

            compile_with_sdfc.__sdfc__ = True
            dace.SDFG.compile = compile_with_sdfc
        _enabled_options = dict(sdfc_options)


def disable():
    """Restores DaCe's own ``dace.SDFG.compile`` (nothing happens when sdfc is not enabled).
    Libraries already loaded stay as they are."""
    global _dace_compile, _enabled_options
    with _lock:
        if _dace_compile is None:
            return
        import dace

        dace.SDFG.compile = _dace_compile
        _dace_compile = None
        _enabled_options = None


def is_enabled():
    """Whether :func:`enable` is in effect."""
    return _dace_compile is not None


@contextlib.contextmanager
def enabled(**sdfc_options):
    """``with sdfc.dace.enabled(...):`` — sdfc is DaCe's compiler inside the block, with these
    options; afterwards what was in effect before (DaCe's compiler, or sdfc with other options)."""
    previous = dict(_enabled_options) if is_enabled() else None
    enable(**sdfc_options)
    try:
        yield
    finally:
        if previous is None:
            disable()
        else:
            enable(**previous)
