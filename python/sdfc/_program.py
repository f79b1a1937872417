"""A loaded sdfc program: binding by name over the library's C ABI (``__sdfc_program_info``,
``__sdfc_init``, ``__sdfc_call``, ``__sdfc_last_error``, the workspace and stream hooks),
mirroring ``sdfc::Program`` (compiler/Api.cpp)."""

import ctypes
import hashlib
import json
import os

import numpy as np

from ._arrays import contiguous_byte_strides, data_pointer_probe, view_of
from ._dtypes import DTYPES, convert_exact
from ._errors import Error
from ._expr import Expr

_POINTER_SIZE = ctypes.sizeof(ctypes.c_void_p)
_SIZE_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_size_t)) - 1
_DEVICE_STORAGES = frozenset({"GPU_Global"})
_WORKSPACE_ALIGNMENT = 256  # what sdfc::Program allocates its own workspaces with
#: Values whose type and value identify them for the call cache (others are converted every call).
_CACHEABLE_VALUE_TYPES = (int, float, bool, np.generic)
#: The CUDA array interface's stream number of the legacy default stream.
_LEGACY_DEFAULT_STREAM = 1

# Libraries loaded by this process: real path -> ((device, inode, modification time), content
# digest) of the file loaded. The dynamic loader returns an already loaded library for its path,
# so a file replaced by another program at the same path must not be taken for the new program
# (sdfc rewrites its output file on every compile, with the same bytes for the same program).
_loaded_files = {}


def _identity(path):
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_mtime_ns)


def _digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).digest()


def _open_library(path):
    real = os.path.realpath(path)
    try:
        identity = _identity(real)
        previous = _loaded_files.get(real)
        digest = previous[1] if previous is not None and previous[0] == identity else _digest(real)
    except OSError as e:
        raise Error(f"cannot load {path}: {e.strerror}") from None
    if previous is not None and previous[1] != digest:
        raise Error(
            f"cannot load {path}: a library of this path was already loaded by this process and the file has "
            "changed since; the dynamic loader would return the old program: write each program to its own path"
        )
    # RTLD_NODELETE, as sdfc::Program: OpenMP worker threads of a program outlive it.
    mode = os.RTLD_NOW | os.RTLD_LOCAL | getattr(os, "RTLD_NODELETE", 0)
    try:
        library = ctypes.CDLL(real, mode=mode)
    except OSError as e:
        raise Error(f"cannot load {path}: {e}") from None
    _loaded_files[real] = (identity, digest)
    return library


def _function(library, path, name, restype, argtypes, required=True):
    try:
        f = library[name]
    except AttributeError:
        if not required:
            return None
        raise Error(f"{path}: the library does not export {name}; was it built by sdfc?") from None
    f.restype = restype
    if argtypes is not None:
        f.argtypes = argtypes
    return f


def _text(message):
    return message.decode("utf-8", "replace") if message is not None else None


class _Argument:
    """One entry of the program description's ``args``, with its place in the C argument array."""

    __slots__ = ("name", "kind", "dtype_name", "dtype", "by_pointer", "storage", "device", "shape", "strides", "holder")

    def __init__(self, entry, path):
        try:
            self.name = entry["name"]
            self.kind = entry["kind"]
            self.dtype_name = entry["dtype"]
            self.by_pointer = bool(entry["by_pointer"])
        except (KeyError, TypeError) as e:
            raise Error(f"{path}: malformed program description (argument entry {entry!r}: {e})") from None
        if self.kind == "callback":
            raise Error(
                f"{path}: argument '{self.name}' is a callback ({entry.get('signature', 'a C function pointer')}), "
                "which this package does not bind yet; call the program through DaCe (sdfc.dace.enable(): DaCe's "
                "loader passes Python functions) or bind a C function with Program::set_callback in C++"
            )
        if entry.get("structure"):
            raise Error(
                f"{path}: argument '{self.name}' is a structure (a pointer to the C struct {self.dtype_name}), which "
                "this package does not bind yet; call the program through DaCe (sdfc.dace.enable(): DaCe's loader "
                f"passes ctypes structures) or bind its address with Program::set_array(\"{self.name}\", &value, "
                f"\"{self.dtype_name}\", 1) in C++"
            )
        if self.dtype_name not in DTYPES:
            raise Error(
                f"{path}: argument '{self.name}' has dtype {self.dtype_name}, which this package does not bind "
                f"(it binds {', '.join(DTYPES)})"
            )
        self.dtype = DTYPES[self.dtype_name][0]
        self.storage = entry.get("storage", "Default")
        self.device = self.storage in _DEVICE_STORAGES
        try:
            self.shape = [Expr(s) for s in entry.get("shape", [])] if self.kind == "array" else []
            # Without "strides" (libraries of sdfc before they were described) arrays are row-major.
            strides = entry.get("strides")
            self.strides = [Expr(s) for s in strides] if strides is not None and self.kind == "array" else None
        except ValueError as e:
            raise Error(f"{path}: argument '{self.name}': {e}") from None
        self.holder = None

    @property
    def is_pointer(self):
        """Whether the argument is passed as a pointer to data (arrays, device scalars)."""
        return self.kind == "array" or self.by_pointer

    def describe(self):
        """``x: float64[N, M] (CPU_Heap)``, ``N: int32 symbol``, ``a: float64 scalar``."""
        if self.kind == "array":
            return f"{self.name}: {self.dtype_name}[{', '.join(e.text for e in self.shape)}] ({self.storage})"
        return f"{self.name}: {self.dtype_name} {self.kind}" + (f" ({self.storage})" if self.by_pointer else "")


class _Binding:
    """What the last successful binding saw, to recognize a call with the same arguments: the
    key set, per NumPy array its id, type, data-pointer probe, pointer, shape, strides and dtype,
    per device array its type and interface fingerprint, and the values that size arrays or
    initialize the program. Scalars that do neither are converted when they change
    (``independents``). Nothing here keeps an argument alive."""

    __slots__ = ("keys", "arrays", "interfaces", "dependents", "independents")

    def __init__(self, keys):
        self.keys = keys
        self.arrays = []
        self.interfaces = []
        self.dependents = []
        self.independents = []


def _interface_fingerprint(interface):
    return (interface["data"][0], tuple(interface["shape"]), interface.get("strides"), interface["typestr"])


def _describe_values(names, values, sources):
    return ", ".join(f"{n} = {values[n]} ({sources[n]})" for n in sorted(names) if n in values)


class Program:
    """A program compiled by sdfc, loaded from its library. Call it with its arguments by name::

        program = sdfc.load("axpy.so")
        program(x=x, y=y, a=2.0)          # N is inferred from x's and y's shapes

    Arguments bind as in DaCe's ``CompiledSDFG``: arrays (``numpy.ndarray`` for host storage,
    objects with ``__cuda_array_interface__`` such as CuPy arrays and PyTorch CUDA tensors for
    ``GPU_Global`` storage) by reference, with their dtype, shape, strides and device checked
    against the program description; scalars and symbols by value, converted exactly into their
    dtype. Symbols may be left out when an array's shape or strides determine them, and symbols
    that only size arrays may be given to check them. Anything else is an :class:`Error` naming
    the argument.

    The program is initialized (``__dace_init_<name>``) on the first call with the values of its
    ``init_symbols``; a later call with different values for them finalizes the instance and
    initializes a new one (transients with lifetime Persistent and the workspaces are made
    again). A call the program refuses raises :class:`Error` with the program's message and
    leaves the instance usable. ``close()`` (or leaving a ``with`` block) finalizes it.

    A Program is not thread-safe: call one instance from one thread at a time.

    Attributes: ``info`` (the parsed ``__sdfc_program_info`` JSON), ``name``, ``target``,
    ``library_path``, ``arguments`` (the argument names in the C ABI's order), ``storages``
    (the storages of its external workspaces, see ``workspace_sizes()``).
    """

    def __init__(self, library_path):
        """Loads the sdfc-built library at ``library_path``; raises :class:`Error` when it cannot be
        loaded or does not export sdfc's ABI. Use :func:`sdfc.load` or :func:`sdfc.compile`."""
        self.library_path = os.path.abspath(os.fspath(library_path))
        self._state = None
        self._closed = False
        self._binding = None
        library = _open_library(self.library_path)
        path = self.library_path
        info_fn = _function(library, path, "__sdfc_program_info", ctypes.c_char_p, [])
        try:
            self.info = json.loads(info_fn().decode("utf-8"))
            entries = self.info["args"]
            self.name = self.info["name"]
            init_symbols = list(self.info.get("init_symbols", []))
            self.storages = list(self.info.get("external_storages", []))
        except (ValueError, KeyError, TypeError) as e:
            raise Error(f"{path}: malformed program description: {e}") from None
        self.target = self.info.get("target", "cpu")
        self._args = [_Argument(entry, path) for entry in entries]
        self._by_name = {a.name: a for a in self._args}
        self.arguments = [a.name for a in self._args]

        void_p, void_pp = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
        self._init_fn = _function(library, path, "__sdfc_init", void_p, [void_p])
        self._call_fn = _function(library, path, "__sdfc_call", None, None)
        self._exit_fn = _function(library, path, f"__dace_exit_{self.name}", ctypes.c_int, [void_p])
        self._last_error_fn = _function(library, path, "__sdfc_last_error", ctypes.c_char_p, [void_p])
        self._clear_error_fn = _function(library, path, "__sdfc_clear_error", None, [void_p])
        self._workspace_size_fn = _function(
            library, path, "__sdfc_workspace_size", ctypes.c_size_t, [void_p, ctypes.c_char_p, void_pp]
        )
        set_workspace_types = [void_p, ctypes.c_char_p, void_p, ctypes.c_size_t, void_pp]
        self._set_workspace_fn = _function(library, path, "__sdfc_set_workspace", ctypes.c_char_p, set_workspace_types)
        self._set_stream_fn = _function(library, path, "__sdfc_set_external_stream", ctypes.c_char_p, [void_p, void_p])
        self._init_error_fn = _function(library, path, "__sdfc_init_error", ctypes.c_char_p, [], required=False)
        self._device_alloc_fn = _function(library, path, "__sdfc_device_alloc", void_p, [ctypes.c_size_t], False)
        self._device_free_fn = _function(library, path, "__sdfc_device_free", None, [void_p], False)
        self._graph_captures_fn = _function(library, path, "__sdfc_graph_captures", ctypes.c_int, [void_p], False)
        self._library = library

        # The C argument array: pointers to a slot holding each array's data pointer, or to a
        # holder of each value in its C type. Both stay in place for the program's lifetime.
        pointer_args = [a for a in self._args if a.is_pointer]
        self._pointer_slots = (ctypes.c_void_p * max(1, len(pointer_args)))()
        self._argv = (ctypes.c_void_p * max(1, len(self._args)))()
        slot_base = ctypes.addressof(self._pointer_slots)
        for i, arg in enumerate(self._args):
            if arg.is_pointer:
                arg.holder = pointer_args.index(arg)
                self._argv[i] = slot_base + arg.holder * _POINTER_SIZE
            else:
                arg.holder = DTYPES[arg.dtype_name][1]()
                self._argv[i] = ctypes.addressof(arg.holder)
        self._array_args = pointer_args
        self._value_args = [a for a in self._args if not a.is_pointer]

        # __sdfc_init and the workspace hooks take pointers to the init symbols' values.
        for s in init_symbols:
            if s not in self._by_name or self._by_name[s].is_pointer:
                raise Error(f"{path}: malformed program description: init symbol '{s}' is not a value argument")
        self._init_symbols = init_symbols
        self._init_argv = (ctypes.c_void_p * max(1, len(init_symbols)))()
        for i, s in enumerate(init_symbols):
            self._init_argv[i] = ctypes.addressof(self._by_name[s].holder)
        self._init_values = None

        # Symbols of shapes and strides: those that are not arguments may be given to check arrays.
        self._sizing_symbols = set()
        for arg in self._array_args:
            for e in arg.shape + (arg.strides or []):
                self._sizing_symbols |= e.symbols
        self._shape_only_symbols = sorted(self._sizing_symbols - set(self._by_name))
        self._accepted = set(self._by_name) | set(self._shape_only_symbols)
        self._independent = {
            a.name for a in self._value_args if a.name not in self._sizing_symbols and a.name not in init_symbols
        }

        self._user_workspaces = {}  # storage -> (buffer object, pointer, bytes)
        self._own_workspaces = {}  # storage -> (numpy buffer or device pointer, pointer, bytes)
        self._installed = set()  # storages whose workspace the current instance has
        self._stream = None  # the caller's stream handle set with set_stream, or None
        self._stream_sync_fn = None

    # ------------------------------------------------------------------------------------ calls
    def __call__(self, **kwargs):
        """Calls the program with its arguments by name (see the class documentation); raises
        :class:`Error` for a binding the program description does not allow and for a call the
        program refuses (with its message). Returns ``None``: results are in the arrays."""
        if self._closed:
            raise Error(f"program '{self.name}' was closed; load or compile it again to call it")
        streams = self._same_arguments(kwargs)
        if streams is None:
            streams = self._bind(kwargs)
        if streams:
            self._synchronize_producers(streams)
        state = self._state
        self._call_fn(state, self._argv)
        message = self._last_error_fn(state)
        if message is not None:
            self._clear_error_fn(state)
            raise Error(f"program '{self.name}' refused the call: {_text(message)}")

    def _same_arguments(self, kwargs):
        """The device arrays' producer streams (a list) when ``kwargs`` bind exactly as the last
        successful call did (converting changed independent scalars), else ``None``."""
        binding = self._binding
        if binding is None or kwargs.keys() != binding.keys:
            return None
        for name, identity, array_type, probe, pointer, shape, strides, dtype in binding.arrays:
            a = kwargs[name]
            # The same object (so the probe reads its data pointer) with the same layout; an array
            # made at the address of a dead one is as good when pointer, shape, strides and dtype
            # are the same, since they are all the binding checked.
            if id(a) != identity or type(a) is not array_type:
                return None
            if a.shape != shape or a.strides != strides or (a.dtype is not dtype and a.dtype != dtype):
                return None
            if (probe.value if probe is not None else a.__array_interface__["data"][0]) != pointer:
                return None
        streams = []
        for name, array_type, fingerprint in binding.interfaces:
            a = kwargs[name]
            if type(a) is not array_type:
                return None
            interface = a.__cuda_array_interface__
            if _interface_fingerprint(interface) != fingerprint:
                return None
            if interface.get("stream") is not None:
                streams.append(interface["stream"])
        for name, value_type, value in binding.dependents:
            v = kwargs[name]
            if type(v) is not value_type or v != value:
                return None
        for cache in binding.independents:
            arg, value_type, value = cache
            v = kwargs[arg.name]
            if type(v) is not value_type or v != value:
                arg.holder.value = self._convert(arg, v)
                cache[1], cache[2] = type(v), v
        return streams

    def _convert(self, arg, value):
        try:
            return convert_exact(value, arg.dtype_name)
        except ValueError as e:
            raise Error(
                f"{arg.kind} '{arg.name}' of program '{self.name}' is {arg.dtype_name}: {e}; pass a value that "
                f"{arg.dtype_name} holds exactly (for example numpy.{arg.dtype_name}(...))",
                arg.name,
            ) from None

    def _check_names(self, kwargs):
        extra = [n for n in kwargs if n not in self._accepted]
        if extra:
            shape_only = (
                f"; symbols that size arrays: {', '.join(self._shape_only_symbols)}" if self._shape_only_symbols else ""
            )
            raise Error(
                f"program '{self.name}' has no argument {', '.join(repr(n) for n in extra)} (its arguments: "
                f"{', '.join(a.describe() for a in self._args)}{shape_only})",
                extra[0],
            )
        missing = [a for a in self._args if a.kind != "symbol" and a.name not in kwargs]
        if missing:
            raise Error(
                f"program '{self.name}' is missing argument{'s' if len(missing) > 1 else ''} "
                f"{', '.join(a.describe() for a in missing)}",
                missing[0].name,
            )

    def _view(self, arg, obj):
        """The checked :class:`ArrayView` of ``obj`` for ``arg`` and its strides in elements."""
        where = f"argument '{arg.name}' of program '{self.name}'"
        try:
            view = view_of(obj)
        except (RuntimeError, TypeError, ValueError, KeyError) as e:  # an interface that refuses or is malformed
            raise Error(f"{where}: cannot read the array's interface: {e}", arg.name) from None
        if view is None:
            kind = (
                "a device array (an object with __cuda_array_interface__: CuPy, PyTorch CUDA tensor)"
                if arg.device
                else "a numpy.ndarray"
            )
            raise Error(f"{where} ({arg.describe()}) must be {kind}, not {type(obj).__name__}", arg.name)
        if arg.device and not view.device:
            raise Error(
                f"{where} is in device memory ({arg.storage}) but the array given is host memory; pass a device "
                "array (CuPy array, PyTorch CUDA tensor) or copy it there (cupy.asarray(x))",
                arg.name,
            )
        if not arg.device and view.device:
            raise Error(
                f"{where} is host memory ({arg.storage}) but the array given is device memory; pass a numpy.ndarray "
                "(cupy.asnumpy(x), tensor.cpu().numpy())",
                arg.name,
            )
        if view.dtype != arg.dtype:
            raise Error(
                f"{where} has dtype {arg.dtype_name} but the array given has dtype {view.dtype}; pass an array of "
                f"dtype {arg.dtype_name} (x.astype(numpy.{arg.dtype_name}) makes a copy, which receives the results)",
                arg.name,
            )
        if not view.pointer:
            raise Error(f"{where}: the array's data pointer is null", arg.name)
        if arg.kind != "array":  # a scalar in device memory: one element
            if view.size != 1:
                message = f"{where} is a scalar in {arg.storage}: pass an array of one element, not shape {view.shape}"
                raise Error(message, arg.name)
            return view, ()
        if len(view.shape) != len(arg.shape):
            raise Error(
                f"{where} has {len(arg.shape)} dimension{'s' if len(arg.shape) != 1 else ''} "
                f"[{', '.join(e.text for e in arg.shape)}] but the array given has shape {view.shape}",
                arg.name,
            )
        itemsize = view.dtype.itemsize
        if any(s % itemsize for s in view.byte_strides):
            raise Error(
                f"{where}: the array's strides {view.byte_strides} (bytes) are not multiples of its element size "
                f"{itemsize}; pass a copy (numpy.ascontiguousarray(x))",
                arg.name,
            )
        return view, tuple(s // itemsize for s in view.byte_strides)

    def _bind(self, kwargs):
        """Checks and binds ``kwargs`` (the slow path), initializes the program when needed and
        records the binding for the next call; returns the device arrays' producer streams."""
        self._binding = None
        self._check_names(kwargs)
        views = {arg.name: self._view(arg, kwargs[arg.name]) for arg in self._array_args}

        values, sources = {}, {}
        for arg in self._value_args:
            if arg.name in kwargs:
                values[arg.name] = self._convert(arg, kwargs[arg.name])
                sources[arg.name] = "given"
        for name in self._shape_only_symbols:
            if name in kwargs:
                try:
                    values[name] = convert_exact(kwargs[name], "int64")
                except ValueError as e:
                    raise Error(
                        f"symbol '{name}' of program '{self.name}' sizes arrays: {e}; pass an integer", name
                    ) from None
                sources[name] = "given"
        self._infer_symbols(views, values, sources)
        self._check_arrays(views, values, sources)

        # Commit: data pointers, values (inferred symbols converted into their dtypes).
        for arg in self._array_args:
            self._pointer_slots[arg.holder] = views[arg.name][0].pointer
        for arg in self._value_args:
            if sources[arg.name] != "given":
                try:
                    values[arg.name] = convert_exact(values[arg.name], arg.dtype_name)
                except ValueError as e:
                    raise Error(
                        f"symbol '{arg.name}' of program '{self.name}' = {values[arg.name]} ({sources[arg.name]}) does "
                        f"not fit its dtype {arg.dtype_name}: {e}",
                        arg.name,
                    ) from None
            arg.holder.value = values[arg.name]
        self._ensure_state(tuple(values[s] for s in self._init_symbols))
        self._ensure_workspaces()
        self._binding = self._record(kwargs, views)
        return [view.stream for view, _ in views.values() if view.stream is not None]

    def _infer_symbols(self, views, values, sources):
        """Adds the symbols that the arrays determine to ``values``: a shape entry that is a bare
        symbol gives its extent; a stride entry that is a bare symbol its stride in elements (a
        dimension of extent 1 only when nothing else gives it); an entry ``c + s`` or ``c - s``
        whose other symbols are known gives ``s``."""
        weak = []
        for arg in self._array_args:
            view, strides = views[arg.name]
            for d, e in enumerate(arg.shape):
                s = e.bare_symbol
                if s is not None and s not in values:
                    values[s] = view.shape[d]
                    sources[s] = f"from {arg.name}.shape[{d}]"
            for d, e in enumerate(arg.strides or []):
                s = e.bare_symbol
                if s is not None and s not in values:
                    source = f"from {arg.name}'s stride {d} in elements"
                    if view.shape[d] > 1:
                        values[s], sources[s] = strides[d], source
                    else:
                        weak.append((s, strides[d], source))
        progress = True
        while progress:
            progress = False
            for arg in self._array_args:
                view, strides = views[arg.name]
                entries = [(e, view.shape[d], f"{arg.name}.shape[{d}]") for d, e in enumerate(arg.shape)]
                entries += [
                    (e, strides[d], f"{arg.name}'s stride {d}")
                    for d, e in enumerate(arg.strides or [])
                    if view.shape[d] > 1
                ]
                for e, actual, what in entries:
                    unknown = [s for s in e.symbols if s not in values]
                    if len(unknown) != 1:
                        continue
                    solution = e.solve(unknown[0], actual, values)
                    if solution is not None:
                        values[unknown[0]] = solution
                        sources[unknown[0]] = f"solved from {what} = {actual} = {e.text}"
                        progress = True
        for s, value, source in weak:
            if s not in values:
                values[s], sources[s] = value, source
        missing = [a for a in self._value_args if a.kind == "symbol" and a.name not in values]
        if missing:
            raise Error(
                "; ".join(self._not_inferred(a) for a in missing),
                missing[0].name,
            )

    def _not_inferred(self, arg):
        where = [
            f"{a.name}.{part}[{d}] = {e.text}"
            for a in self._array_args
            for part, entries in (("shape", a.shape), ("strides", a.strides or []))
            for d, e in enumerate(entries)
            if arg.name in e.symbols
        ]
        reason = (
            f"no array's shape or strides determine it (it occurs in {', '.join(where)})"
            if where
            else "it sizes no array argument"
        )
        return (
            f"cannot infer symbol '{arg.name}' of program '{self.name}': {reason}; "
            f"pass {arg.name}=... ({arg.dtype_name})"
        )

    def _check_arrays(self, views, values, sources):
        """Every shape and stride entry that the symbol values determine must be the array's."""
        for arg in self._array_args:
            if arg.kind != "array":
                continue
            view, strides = views[arg.name]
            where = f"argument '{arg.name}' of program '{self.name}'"
            expected_shape = []
            for d, e in enumerate(arg.shape):
                expected = e.evaluate(values)
                expected_shape.append(expected)
                if expected is None:
                    if e.symbols <= values.keys():
                        raise Error(
                            f"{where}: extent {d} of its shape [{', '.join(x.text for x in arg.shape)}] is not "
                            f"computable (it overflows 64 bits) for {_describe_values(e.symbols, values, sources)}",
                            arg.name,
                        )
                    continue  # a symbol that only sizes arrays was neither given nor determined
                if expected != view.shape[d]:
                    symbols = f" for {_describe_values(e.symbols, values, sources)}" if e.symbols else ""
                    raise Error(
                        f"{where} has shape [{', '.join(x.text for x in arg.shape)}], which is {expected} in dimension "
                        f"{d}{symbols}, but the array given has shape {view.shape}",
                        arg.name,
                    )
            if view.size == 0:
                continue  # no element is addressed: any strides do
            if arg.strides is not None:
                expected_strides = [e.evaluate(values) for e in arg.strides]
                texts = ", ".join(e.text for e in arg.strides)
            else:  # row-major
                expected_strides = [1] * len(strides)
                for d in range(len(strides) - 2, -1, -1):
                    expected_strides[d] = expected_strides[d + 1] * view.shape[d + 1]
                texts = "row-major"
            for d, expected in enumerate(expected_strides):
                if expected is not None and view.shape[d] > 1 and expected != strides[d]:
                    stride_symbols = set().union(*(e.symbols for e in arg.strides)) if arg.strides else set()
                    symbols = f" for {_describe_values(stride_symbols, values, sources)}" if stride_symbols else ""
                    raise Error(
                        f"{where} has strides [{texts}] (in elements), which is {expected} in dimension {d}{symbols}, "
                        f"but the array given has strides {strides}; pass an array with that layout "
                        "(numpy.ascontiguousarray(x) for row-major; the program writes into the array given, "
                        "not a copy)",
                        arg.name,
                    )

    def _record(self, kwargs, views):
        """The :class:`_Binding` of a successful bind, or ``None`` when an argument cannot be
        recognized cheaply on the next call (a host array that is no ``numpy.ndarray``, a value
        of another type than bool, int, float and NumPy scalars)."""
        binding = _Binding(set(kwargs))
        for arg in self._array_args:
            obj = kwargs[arg.name]
            view = views[arg.name][0]
            if isinstance(obj, np.ndarray):
                probe = data_pointer_probe(obj)
                binding.arrays.append(
                    (arg.name, id(obj), type(obj), probe, view.pointer, obj.shape, obj.strides, obj.dtype)
                )
            else:
                interface = getattr(obj, "__cuda_array_interface__", None)
                if interface is None:
                    return None  # a host object converted by numpy.asarray: checked every call
                binding.interfaces.append((arg.name, type(obj), _interface_fingerprint(interface)))
        for name, value in kwargs.items():
            if name in self._by_name and self._by_name[name].is_pointer:
                continue
            if not isinstance(value, _CACHEABLE_VALUE_TYPES):
                return None
            if name in self._independent:
                binding.independents.append([self._by_name[name], type(value), value])
            else:
                binding.dependents.append((name, type(value), value))
        return binding

    # ------------------------------------------------------------------------ instance, workspaces
    def _ensure_state(self, init_values):
        """An initialized instance for the init symbols' values (held by their holders)."""
        if self._state is not None and init_values == self._init_values:
            return
        self._binding = None
        self._finalize_state()
        state = self._init_fn(ctypes.cast(self._init_argv, ctypes.c_void_p))
        if not state:
            why = _text(self._init_error_fn() if self._init_error_fn else self._last_error_fn(None))
            raise Error(f"program '{self.name}' failed to initialize: {why or 'out of memory'}")
        self._state = ctypes.c_void_p(state)
        self._init_values = init_values
        if self._stream is not None:
            why = self._set_stream_fn(self._state, self._stream)
            if why is not None:
                self._finalize_state()
                raise Error(f"program '{self.name}': {_text(why)}")

    def _finalize_state(self):
        """Finalizes the current instance (if any); returns ``__dace_exit``'s status and the
        error the program had recorded (or ``None``)."""
        if self._state is None:
            return 0, None
        state, self._state = self._state, None
        self._init_values = None
        self._installed = set()
        message = _text(self._last_error_fn(state))
        return self._exit_fn(state), message

    def _install(self, storage, pointer, nbytes):
        why = self._set_workspace_fn(self._state, storage.encode(), pointer, nbytes, self._init_argv)
        if why is not None:
            raise Error(f"program '{self.name}': {_text(why)}")
        self._installed.add(storage)

    def _ensure_workspaces(self):
        """Installs the caller's workspaces, and workspaces of its own for the other storages
        (sized for the current symbol values), on the current instance."""
        for storage in self.storages:
            if storage in self._installed:
                continue
            user = self._user_workspaces.get(storage)
            if user is not None:
                self._install(storage, user[1], user[2])
                continue
            nbytes = self._workspace_size_fn(self._state, storage.encode(), self._init_argv)
            own = self._own_workspaces.get(storage)
            if own is None or own[2] < nbytes:
                self._free_own_workspace(storage)
                own = self._allocate(storage, nbytes)
                self._own_workspaces[storage] = own
            self._install(storage, own[1], nbytes)

    def _allocate(self, storage, nbytes):
        rounded = max(_WORKSPACE_ALIGNMENT, -(-nbytes // _WORKSPACE_ALIGNMENT) * _WORKSPACE_ALIGNMENT)
        if nbytes == _SIZE_MAX:
            raise Error(
                f"program '{self.name}': the size of the {storage} workspace overflows or is negative for the "
                "current symbol values"
            )
        if storage in _DEVICE_STORAGES:
            if self._device_alloc_fn is None:
                raise Error(
                    f"program '{self.name}' has a {storage} workspace but its library cannot allocate device memory"
                )
            pointer = self._device_alloc_fn(rounded)
            if not pointer:
                raise Error(f"program '{self.name}': cannot allocate the {storage} workspace of {nbytes} bytes")
            return (pointer, pointer, nbytes)
        buffer = np.empty(rounded + _WORKSPACE_ALIGNMENT, dtype=np.uint8)
        address = buffer.__array_interface__["data"][0]
        return (buffer, address + (-address) % _WORKSPACE_ALIGNMENT, nbytes)

    def _free_own_workspace(self, storage):
        own = self._own_workspaces.pop(storage, None)
        if own is not None and storage in _DEVICE_STORAGES:
            self._device_free_fn(own[1])

    def _check_storage(self, storage):
        if storage not in self.storages:
            have = ", ".join(self.storages) if self.storages else "none; compile with transients='external'"
            raise Error(f"program '{self.name}' has no {storage} workspace (its workspaces: {have})")

    def workspace_sizes(self, **symbols):
        """The bytes each external workspace needs (a dict storage -> bytes; empty unless the
        program was compiled with ``transients="external"``), for the values of the init symbols
        given as keyword arguments or, for those not given, bound by the last call. Initializes
        the program for these values (as a call with them would)."""
        if self._closed:
            raise Error(f"program '{self.name}' was closed; load or compile it again")
        values = dict(zip(self._init_symbols, self._init_values or ()))
        for name, value in symbols.items():
            arg = self._by_name.get(name)
            if arg is None or arg.kind != "symbol":
                known = ", ".join(self._init_symbols) or "none"
                raise Error(f"'{name}' is not a symbol of program '{self.name}' (its init symbols: {known})", name)
            values[name] = self._convert(arg, value)
        missing = [s for s in self._init_symbols if s not in values]
        if missing:
            raise Error(
                f"program '{self.name}': workspace sizes depend on {', '.join(missing)}; pass "
                f"{', '.join(f'{s}=...' for s in missing)} or call the program first",
                missing[0],
            )
        self._binding = None  # the holders take these values: the next call binds again
        for s in self._init_symbols:
            self._by_name[s].holder.value = values[s]
        self._ensure_state(tuple(values[s] for s in self._init_symbols))
        sizes = {}
        for storage in self.storages:
            nbytes = self._workspace_size_fn(self._state, storage.encode(), self._init_argv)
            if nbytes == _SIZE_MAX:
                raise Error(f"program '{self.name}': the {storage} workspace size overflows for {values}")
            sizes[storage] = nbytes
        return sizes

    def set_workspace(self, storage, buffer):
        """Gives the program ``buffer`` as its workspace of ``storage`` ("CPU_Heap", "GPU_Global",
        ... as in ``workspace_sizes()``): a contiguous ``numpy.ndarray`` for host storages, a
        contiguous device array (``__cuda_array_interface__``, such as a CuPy array) for GPU_Global.
        The library checks its size and alignment: now when the program is initialized (after a
        call or ``workspace_sizes()``), else at the next call; a rejection is an :class:`Error`
        with the library's message and installs nothing. The program keeps a reference to
        ``buffer`` and uses it until ``close()`` or another ``set_workspace`` for ``storage``."""
        if self._closed:
            raise Error(f"program '{self.name}' was closed; load or compile it again")
        self._check_storage(storage)
        view = view_of(buffer)
        device = storage in _DEVICE_STORAGES
        if view is None or view.device != device:
            kind = "a device array (__cuda_array_interface__)" if device else "a numpy.ndarray"
            raise Error(f"the {storage} workspace of program '{self.name}' must be {kind}, not {type(buffer).__name__}")
        contiguous = contiguous_byte_strides(view.shape, view.dtype.itemsize)
        if view.size > 1 and any(
            n > 1 and s != c for n, s, c in zip(view.shape, view.byte_strides, contiguous)
        ):
            raise Error(f"the {storage} workspace of program '{self.name}' must be a contiguous array")
        nbytes = view.size * view.dtype.itemsize
        if self._state is not None:
            self._install(storage, view.pointer, nbytes)
        self._user_workspaces[storage] = (buffer, view.pointer, nbytes)
        self._free_own_workspace(storage)

    # ----------------------------------------------------------------------------------- streams
    def set_stream(self, stream):
        """Orders the program's GPU work on the caller's ``stream`` (a raw ``cudaStream_t`` /
        ``hipStream_t`` handle as an int, a CuPy ``Stream`` (``.ptr``), a PyTorch
        ``torch.cuda.Stream`` (``.cuda_stream``), or ``None`` for the default stream). Calls then
        return once the work is queued: synchronize the stream before reading results on the
        host. Checked by the library now when the program is initialized (a CPU program always
        refuses), else at the first call; a refusal is an :class:`Error` with its message."""
        handle = _stream_handle(stream)
        pointer = ctypes.c_void_p(handle)
        if self._state is not None or self.target == "cpu":
            why = self._set_stream_fn(self._state, pointer)
            if why is not None:
                raise Error(f"program '{self.name}': {_text(why)}")
        self._stream = pointer

    @property
    def graph_captures(self):
        """Graph mode (``--gpu-graph``): how many times the program captured its GPU work since
        it was initialized (calls whose arguments match one of its last 4 captures replay it).
        0 for programs that never captured (CPU programs, GPU programs without graphs)."""
        if self._state is None or self._graph_captures_fn is None:
            return 0
        return self._graph_captures_fn(self._state)

    def _synchronize_producers(self, streams):
        """Waits for the streams that device arrays were produced on (their CUDA array interface's
        ``stream``) unless the program's work is ordered on that stream already."""
        anchor = self._stream.value if self._stream is not None else None
        anchor = anchor or _LEGACY_DEFAULT_STREAM
        for stream in set(streams):
            if stream == anchor:
                continue
            if self._stream_sync_fn is None:
                runtime = "hip" if self.target == "hip" else "cuda"
                self._stream_sync_fn = _function(
                    self._library, self.library_path, f"{runtime}StreamSynchronize", ctypes.c_int, [ctypes.c_void_p]
                )
            status = self._stream_sync_fn(stream)
            if status != 0:
                raise Error(
                    f"program '{self.name}': cannot synchronize with stream {stream:#x} of an array argument "
                    f"(error {status})"
                )

    # ------------------------------------------------------------------------------------- close
    def close(self):
        """Finalizes the program (``__dace_exit_<name>``) and frees its workspaces; calls after it
        raise :class:`Error`. Raises :class:`Error` when the program reports an error it had
        recorded and not yet reported. Closing twice does nothing."""
        if self._closed:
            return
        self._closed = True
        self._binding = None
        status, message = self._finalize_state()
        for storage in list(self._own_workspaces):
            self._free_own_workspace(storage)
        self._user_workspaces.clear()
        if status != 0:
            raise Error(f"program '{self.name}' reported an error when finalized: {message or 'unknown error'}")

    @property
    def closed(self):
        """Whether ``close()`` was called."""
        return self._closed

    def __enter__(self):
        """Returns the program; leaving the ``with`` block calls ``close()``."""
        return self

    def __exit__(self, exc_type, exc, tb):
        """Finalizes the program (``close()``)."""
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # nothing can report it any more (interpreter shutdown, a recorded error)
            pass

    def __repr__(self):
        args = ", ".join(a.describe() for a in self._args)
        return f"<sdfc.Program {self.name} ({self.target}) [{args}] from {self.library_path}>"


def _stream_handle(stream):
    """The integer handle of a stream given as an int, ``None``, or a CuPy/PyTorch stream."""
    if stream is None:
        return 0
    if isinstance(stream, (int, np.integer)) and not isinstance(stream, bool):
        return int(stream)
    for attribute in ("ptr", "cuda_stream"):
        handle = getattr(stream, attribute, None)
        if isinstance(handle, (int, np.integer)):
            return int(handle)
    raise Error(
        f"cannot use {type(stream).__name__} as a stream: pass a raw stream handle (int), a CuPy Stream (.ptr) or "
        "a torch.cuda.Stream (.cuda_stream)"
    )
