#!/usr/bin/env python3
"""The corpus on the GPU, side by side: DaCe's own compiler against sdfc, same SDFG, same device arrays.

    source .gpu-py/env.sh        # GPU machine (here: source ../shared/third_party/env.sh)
    SDFC=build-gpu/sdfc python3 bench/gpu_vs_dace.py [--corpus DIR] [--only NAME]... [--size large|small|large,small]
                                                     [--elements N] [--layout corpus|reversed] [--calls R]
                                                     [--rounds N] [--max-call-ms MS] [--jobs N] [--timeout S]
                                                     [--gpu-arch sm_90] [--sdfc-options JSON]
                                                     [--call both|fast|python] [--no-run]
                                                     [--no-warm-up] [--json FILE] [--keep]

One GPU SDFG per corpus case, whose array arguments live on the device, so that both compilers are timed on
their kernels and not on PCIe copies: the case's ``program_gpu.sdfg`` where its array arguments already are
``GPU_Global`` (the GT4Py cases; GT4Py's metrics output ``gt_compute_time`` stays a host array), else its
``program.sdfg`` with every non-transient Array set to ``GPU_Global`` before ``apply_gpu_transformations()``
(DaCe then adds no copy-in state: checked, no ``gpu_<arg>`` transient may appear). Scalars stay host values.
A case that cannot be made so is reported with its error and skipped.

Sizes (``--size``, a comma list runs several sizes on the same builds): ``small`` is the corpus's inputs.json;
``large`` scales the symbols that size the argument arrays (the free symbols of their shapes) by one common
factor, so that the largest argument array has about ``--elements`` (2**24) elements; symbols in no shape
(NSTEPS, T) keep their values. A shape ``r1 - r0`` (GT4Py's ``__<field>_<Dim>_range_1 - ..._range_0``) scales
its extent and keeps ``r0``; an extent e becomes max(1, round(e * factor)) everywhere, so sizes that were equal
stay equal. GT4Py cases: integer symbols whose corpus value equals an old extent of a scaled dimension become
the new extent (domain bounds such as nx, ny, nz, i_end). Arrays whose strides are free symbols (GT4Py's
``__<field>_<Dim>_stride``) are laid out densely with the dimensions ordered as the corpus's strides order them
(``--layout corpus``) or in the reverse of that order (``--layout reversed``: the corpus's outermost dimension
becomes the fastest), and the stride symbols take the new arrays' strides; arrays whose strides are expressions
of the shape (all other cases) keep the layout the SDFG fixes. Contents: the corpus arrays tiled to the new shape
with ``numpy.resize`` (index tables and ragged lengths stay in range), as CuPy arrays with those strides.
So that no program runs for minutes (a host loop over rows, a naive matrix product), a large size grows from
the corpus size in steps of 8x the elements, two calls per compiler a step (the faster counts), and stops at
the last step whose next would take more than ``--max-call-ms`` (250) a call, predicted from the steps so far
(time ~ elements**p, p from the last two steps, at least 1, at most 3): the size column says "capped" then.

Compiles: DaCe's ``SDFG.compile()`` (DaCe's default configuration; CUDA architecture from ``--gpu-arch``) and
``sdfc.dace.compile(sdfg, target="cuda", **--sdfc-options)``, each into a fresh build folder, both timed until
DaCe's ``CompiledSDFG`` is loaded, in ``--jobs`` processes at once (default: a quarter of the cores, at most 8;
bench/compile_time.py times compiles alone; ``--compile-timeout`` per case). Both see warm machine-wide caches
(``$DACE_BUILD_CACHE_DIR``, ``$SDFC_CACHE_DIR``: fresh folders of this run, warmed by one untimed compile of the
first case, as in bench/compile_time.py; ``--no-warm-up``: not warmed). With a CMake that knows no C++20 flags
for nvcc (3.25, for one), DaCe's CUDA build gets a CMake rules file that adds them (DaCe needs C++20); CMake 4
needs no ``CMAKE_POLICY_VERSION_MINIMUM`` (DaCe asks for 3.18).

Runs (one process at a time on the GPU, a fresh one after a failed case; a case that runs past ``--timeout``
(120) seconds is stopped and reported): DaCe's library is loaded as ``SDFG.compile()`` returns it (with the SDFG
its code was generated from, saved in its build folder), sdfc's by ``sdfc.dace.compile()`` from its build folder;
each program is initialized for each size (DaCe's ``CompiledSDFG`` initializes once, with the first call's
symbols, which size its persistent containers), External containers get zeroed workspaces of the sizes the
program asks for. Both are called through DaCe's ``CompiledSDFG.__call__`` (the same Python argument handling
for both; symbols and scalars typed as each signature has them) with fresh copies of the same device arrays, and
every argument array is
compared element by element between DaCe and sdfc (the tolerances of the case's expected.json per dtype, the
real and imaginary parts of complex values separately, integers and bools exactly; GT4Py's timing output
``gt_compute_time`` is not compared). Then 2 more warm-up calls each and R timed calls each (``--calls``, 50;
fewer where a call is slow, so that a program takes about 1 s a way of calling), in ``--rounds`` (5) rounds
alternating between the compilers so that both see the same clocks. Two ways of calling (``--call``, default
``both``): ``fast`` is how GT4Py calls a program in its time loop (the argument vector built once with
``CompiledSDFG.construct_arguments()``, then ``fast_call()`` without the GPU error check); ``python`` is
``CompiledSDFG.__call__``, which builds the argument vector anew at every call in Python (160-320 us for the
GT4Py programs' 20-40 arguments on a 2-core host, the same for both compilers, so it pulls their ratio towards
1). A call is timed as the user sees it: CuPy events on the null stream around the call and a device
synchronize, and perf_counter around the same; the table gives the medians of the event times (``fast`` in the
main columns where it ran; the ``py`` columns are ``__call__``'s; the JSON also has the wall times and every
sample). Roofline: the bytes of every argument
array the program reads plus those of every argument array it writes (one read and written counts twice),
divided by the device-to-device copy bandwidth measured in the same run with a 512 MiB CuPy copy (read plus
write bytes per second), is the floor; "roofline" is floor / measured time for each compiler.

Prints one row per program and size (compile seconds, microseconds per call, sdfc/DaCe, roofline fractions,
match), then per size the geometric mean of the ratios and the programs where sdfc is slower, and the sums of the
compile times. ``--no-run`` compiles both and stops (no GPU needed; the sizes are still worked out). Exits 1 when
a program's outputs differ between DaCe and sdfc, 2 when no case could be compiled by both, else 0.
"""

import argparse
import concurrent.futures
import json
import math
import os
import pathlib
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = pathlib.Path(__file__).resolve().parent.parent
HOST_ONLY = ("gt_compute_time",)  # GT4Py's metrics output: a host array holding a time, not compared
SIZES = ("large", "small")


# ----------------------------------------------------------------------------------------------- corpus


def corpus_cases(corpus, only):
    """The case folders of the corpus (sorted), restricted to ``only`` when given."""
    corpus = pathlib.Path(corpus).resolve()  # the compile and run workers start in folders of their own
    found = sorted(p for p in corpus.iterdir() if p.is_dir() and (p / "inputs.json").is_file()
                   and ((p / "program.sdfg").is_file() or (p / "program_gpu.sdfg").is_file()))
    if only:
        names = {p.name: p for p in found}
        unknown = [n for n in only if n not in names]
        if unknown:
            sys.exit(f"gpu_vs_dace: no case {', '.join(unknown)} in {corpus}")
        found = [names[n] for n in only]
    return found


def is_gt4py(case):
    return pathlib.Path(case).name.startswith("gt4py_")


def decode(entry, np):
    """An array of inputs.json as a fresh C-order NumPy array (complex data: [re, im] pairs)."""
    if entry["dtype"].startswith("complex"):
        parts = np.array(entry["data"], dtype=np.float64).reshape(-1, 2)
        return (parts[:, 0] + 1j * parts[:, 1]).astype(entry["dtype"]).reshape(entry["shape"]).copy()
    return np.array(entry["data"], dtype=entry["dtype"]).reshape(entry["shape"]).copy()


def one_line(error):
    """The line of an exception worth a report: the first that names an error, else the first."""
    text = str(error).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    generic = ("compiler failure", "configuration failure", "sdfc could not compile")
    named = [ln for ln in lines if re.search(r"error|refused|unsupported|cannot", ln, re.I)
             and not ln.lower().startswith(generic)]
    line = named[0] if named else (lines[0] if lines else "")
    line = re.sub(r"(?<![\w.])/(?:[^\s/()]+/)+", "", line)  # file names without their folders
    line = re.sub(r"THRUST_\d+_SM_\d+_NS::", "", line)
    return f"{type(error).__name__}: {line}"[:240]


# ------------------------------------------------------------------------------------- the device SDFG


def _array_arguments(sdfg):
    from dace import data

    return {n: d for n, d in sdfg.arrays.items() if not d.transient and isinstance(d, data.Array)
            and not isinstance(d, data.View)}


def check_device_arguments(sdfg):
    """The host array arguments of a device SDFG (only GT4Py's metrics output may be one); raises when an
    argument array is copied into a ``gpu_<name>`` transient (a copy-in state) or another one is on the host."""
    from dace import dtypes

    host = []
    for name, desc in _array_arguments(sdfg).items():
        if f"gpu_{name}" in sdfg.arrays:
            raise RuntimeError(f"argument {name} is copied into the transient gpu_{name} (a copy-in state)")
        if desc.storage != dtypes.StorageType.GPU_Global:
            if name not in HOST_ONLY:
                raise RuntimeError(f"argument {name} has storage {desc.storage.name}, not GPU_Global")
            host.append(name)
    return host


def device_sdfg(case):
    """(SDFG, how it was made) of a case with its array arguments on the device (see the module's text)."""
    import dace
    from dace import dtypes

    case = pathlib.Path(case)
    gpu_file = case / "program_gpu.sdfg"
    if gpu_file.is_file():
        sdfg = dace.SDFG.from_file(str(gpu_file))
        if any(d.storage == dtypes.StorageType.GPU_Global for d in _array_arguments(sdfg).values()):
            check_device_arguments(sdfg)
            sdfg.validate()
            return sdfg, "program_gpu.sdfg"
    sdfg = dace.SDFG.from_file(str(case / "program.sdfg"))
    for desc in _array_arguments(sdfg).values():
        desc.storage = dtypes.StorageType.GPU_Global
    sdfg.apply_gpu_transformations()
    sdfg.validate()
    check_device_arguments(sdfg)
    return sdfg, "program.sdfg, arguments GPU_Global, apply_gpu_transformations()"


def access_sets(sdfg):
    """(arrays read, arrays written) among the array arguments, by DaCe's read_and_write_sets, with the
    access nodes of every state (nested SDFGs are reached through theirs) as a fallback."""
    args = set(_array_arguments(sdfg))
    try:
        reads, writes = sdfg.read_and_write_sets()
        reads, writes = set(reads) & args, set(writes) & args
    except Exception:  # an SDFG DaCe's analysis does not handle: count access nodes
        reads, writes = set(), set()
    from dace.sdfg import nodes

    for state in sdfg.all_states():
        for node in state.nodes():
            if isinstance(node, nodes.AccessNode) and node.data in args:
                if state.out_degree(node) > 0:
                    reads.add(node.data)
                if state.in_degree(node) > 0:
                    writes.add(node.data)
    return sorted(reads), sorted(writes)


# ---------------------------------------------------------------------------------------------- sizes


_COMPILED = {}


def _compiled(expr):
    """(sympy expression, names of its free symbols, a function of their values) of a shape or stride entry
    (DaCe's own sympy object, so that names such as N, I or Q stay symbols), cached by its text."""
    key = (type(expr).__name__, str(expr))
    if key not in _COMPILED:
        import sympy

        e = sympy.sympify(expr)
        syms = sorted(e.free_symbols, key=str)
        _COMPILED[key] = (e, tuple(str(s) for s in syms), sympy.lambdify(syms, e, "math"))
    return _COMPILED[key]


def _sym(expr):
    return _compiled(expr)[0]


def _names(expr):
    return set(_compiled(expr)[1])


def _evaluate(expr, values):
    _, names, function = _compiled(expr)
    missing = [n for n in names if n not in values]
    if missing:
        raise KeyError(f"no value for {', '.join(missing)} in {expr}")
    return int(round(function(*[values[n] for n in names])))


def _difference(expr):
    """(r1, r0) when ``expr`` is r1 - r0 of two symbols (GT4Py's ranges), else None."""
    e = _sym(expr)
    syms = sorted(e.free_symbols, key=str)
    if len(syms) != 2:
        return None
    a, b = syms
    if (e - (a - b)).expand() == 0:
        return str(a), str(b)
    if (e - (b - a)).expand() == 0:
        return str(b), str(a)
    return None


def _extent(value, factor):
    """An extent scaled by ``factor`` (at least 1; factor 1 and empty extents unchanged)."""
    if factor == 1.0 or value <= 0:
        return value
    return max(1, int(round(value * factor)))


def _values(inputs):
    values = {k: v["value"] for k, v in inputs.get("symbols", {}).items()}
    values.update({k: v["value"] for k, v in inputs.get("scalars", {}).items()})
    return values


def _int_typed(inputs, name):
    entry = inputs.get("symbols", {}).get(name) or inputs.get("scalars", {}).get(name)
    return entry is not None and re.fullmatch(r"u?int\d*", entry["dtype"]) is not None


def _scaled_symbols(sdfg, inputs, factor, gt4py):
    """{symbol: new value} of the symbols the argument shapes depend on (and, for GT4Py, the integer
    symbols equal to an old extent: domain bounds), for ``factor``."""
    old = _values(inputs)
    new, starts, old_extents = {}, set(), set()

    def assign(name, value):
        if name in new and new[name] != value:
            raise ValueError(f"symbol {name} would be both {new[name]} and {value}")
        new[name] = value

    for desc in _array_arguments(sdfg).values():
        for dim in desc.shape:
            names = _names(dim)
            if not names:
                continue
            old_extents.add(_evaluate(dim, old))
            pair = _difference(dim)
            if pair is not None:  # r1 - r0: the extent scales, the start stays
                r1, r0 = pair
                starts.add(r0)
                assign(r1, old[r0] + _extent(old[r1] - old[r0], factor))
            else:
                for s in names:
                    assign(s, _extent(old[s], factor))
    for s in starts:
        if s in new and new[s] != old[s]:
            raise ValueError(f"symbol {s} is both the start of a range and a scaled size")
        new.setdefault(s, old[s])
    if gt4py:
        for name, value in old.items():
            if (name not in new and not name.startswith("__") and name != "gt_metrics_level"
                    and _int_typed(inputs, name) and not isinstance(value, bool) and value in old_extents):
                new[name] = _extent(value, factor)
    return new


def _largest(sdfg, values, device):
    """(name, elements) of the largest device array argument."""
    best, count = None, -1
    for name, desc in _array_arguments(sdfg).items():
        if name in device:
            n = math.prod(_evaluate(d, values) for d in desc.shape)
            if n > count:
                best, count = name, n
    return best, count


def _factor_for(sdfg, inputs, elements, gt4py, device):
    """The factor whose largest device array has the number of elements nearest (by ratio) to ``elements``."""
    base = _values(inputs)

    def size(f):
        values = dict(base)
        values.update(_scaled_symbols(sdfg, inputs, f, gt4py))
        return _largest(sdfg, values, device)[1]

    if size(1.0) == size(1e6):  # no argument shape depends on a symbol
        return 1.0
    lo, hi = 1e-9, 1.0
    while size(hi) <= elements:
        lo, hi = hi, hi * 2.0
    for _ in range(100):  # size(lo) <= elements < size(hi)
        mid = (lo + hi) / 2
        if size(mid) <= elements:
            lo = mid
        else:
            hi = mid
        if hi - lo <= lo * 1e-9:
            break
    below, above = size(lo), size(hi)
    if below <= 0 or math.log(above / elements) < math.log(elements / below):
        return hi
    return lo


def _dense_strides(shape, order):
    """Strides (elements) of a dense array whose dimensions, outermost first, are ``order``."""
    strides, step = [0] * len(shape), 1
    for dim in reversed(order):
        strides[dim] = step
        step *= max(1, shape[dim])
    return strides


def size_plan(sdfg, inputs, size, elements=1 << 24, layout="corpus", gt4py=False):
    """Shapes, strides and symbol values of the arguments for ``size``: "small" (the corpus's), "large" (the
    largest array about ``elements`` elements) or the text of a number of elements. Returns {'size',
    'factor', 'symbols', 'scalars', 'arrays': {name: {'shape', 'strides' (elements), 'dtype', 'device'}},
    'largest', 'elements', 'description'}."""
    from dace import dtypes

    if layout not in ("corpus", "reversed"):
        raise ValueError(f"unknown layout {layout!r}")
    args = _array_arguments(sdfg)
    device = {n for n, d in args.items() if d.storage == dtypes.StorageType.GPU_Global}
    if size == "small":
        factor = 1.0
    else:
        target = elements if size == "large" else int(size)
        factor = _factor_for(sdfg, inputs, target, gt4py, device)
    old = _values(inputs)
    values = dict(old)
    values.update(_scaled_symbols(sdfg, inputs, factor, gt4py))
    shape_symbols = set()
    for desc in args.values():
        for d in desc.shape:
            shape_symbols |= _names(d)
    laid_out = {}  # stride symbol: value, from the layout of the arrays
    arrays = {}
    for name, desc in args.items():
        shape = [_evaluate(d, values) for d in desc.shape]
        free = set()
        for s in desc.strides:
            free |= _names(s)
        if not free - shape_symbols:  # the SDFG fixes the layout (constants, expressions of the shape)
            strides = [_evaluate(s, values) for s in desc.strides]
        else:
            corpus = [_evaluate(s, old) for s in desc.strides]
            order = sorted(range(len(shape)), key=lambda d: -corpus[d])  # outermost first, stable
            if layout == "reversed":
                order.reverse()
            strides = _dense_strides(shape, order)
            for dim, expr in enumerate(desc.strides):
                e = _sym(expr)
                if not e.free_symbols:
                    if int(e) != strides[dim] and shape[dim] > 1:
                        raise ValueError(f"{name}: stride {dim} is fixed at {e}, the layout needs {strides[dim]}")
                elif e.is_Symbol and str(e) not in shape_symbols:
                    s = str(e)
                    if s in laid_out and laid_out[s] != strides[dim]:
                        raise ValueError(f"stride symbol {s} would be both {laid_out[s]} and {strides[dim]}")
                    laid_out[s] = strides[dim]
                else:
                    raise ValueError(f"{name}: cannot lay out stride {dim} = {e}")
        arrays[name] = {"shape": shape, "strides": strides, "dtype": str(desc.dtype.as_numpy_dtype()),
                        "device": name in device}
    values.update(laid_out)
    scalars = {k: values[k] for k in inputs.get("scalars", {})}
    symbols = {k: v for k, v in values.items() if k not in scalars}
    largest, count = _largest(sdfg, values, device)
    description = "no device arrays"
    if largest:
        description = f"{largest}[{'x'.join(str(n) for n in arrays[largest]['shape'])}]"
    if laid_out and layout == "reversed":
        description += " reversed"
    return {"size": size, "factor": factor, "symbols": symbols, "scalars": scalars, "arrays": arrays,
            "largest": largest, "elements": count, "description": description}


def tiled_arrays(plan, inputs, np):
    """{name: C-order NumPy array} of the plan: the corpus arrays tiled to the new shapes (numpy.resize) in
    the plan's dtypes; zeros for an array inputs.json lacks."""
    host = {}
    for name, a in plan["arrays"].items():
        dtype = np.dtype(a["dtype"])
        corpus = decode(inputs["arrays"][name], np).astype(dtype) if name in inputs["arrays"] else None
        if corpus is not None and corpus.size:
            host[name] = np.resize(corpus, a["shape"])
        else:
            host[name] = np.zeros(a["shape"], dtype)
    return host


def make_arrays(plan, host, xp, np):
    """{name: array}: fresh copies of the tiled ``host`` arrays, device arrays with ``xp`` (CuPy; NumPy in
    the tests) in the plan's strides, host arrays as plain NumPy arrays (DaCe refuses NumPy views)."""
    out = {}
    for name, a in plan["arrays"].items():
        if a["device"]:
            out[name] = strided(xp, np, host[name], a["strides"])
        else:
            out[name] = np.ascontiguousarray(host[name]).copy()
    return out


def strided(xp, np, host, strides):
    """A fresh ``xp`` array with ``host``'s contents and the given element strides (a dense layout)."""
    shape, dtype = host.shape, host.dtype
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(n > 0 for n in shape) else 0
    buffer = xp.zeros(max(span, 1), dtype)
    byte_strides = tuple(s * dtype.itemsize for s in strides)
    if xp is np:
        view = np.lib.stride_tricks.as_strided(buffer, shape, byte_strides)
    else:
        view = xp.ndarray(shape, dtype, memptr=buffer.data, strides=byte_strides)
    view[...] = xp.asarray(host)
    return view


def argument_bytes(plan, names):
    return sum(math.prod(plan["arrays"][n]["shape"]) * _itemsize(plan["arrays"][n]["dtype"])
               for n in names if n in plan["arrays"] and plan["arrays"][n]["device"])


def _itemsize(dtype):
    import numpy as np

    return np.dtype(dtype).itemsize


# ---------------------------------------------------------------------------------------- DaCe setup


def cmake_cuda_rules(folder, standard):
    """A CMake rules file that gives nvcc's C++``standard`` flags to a CMake that lacks them (3.25 knows no
    CUDA20 for NVIDIA), or None when the CMake in PATH has them or cannot be asked."""
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "cmake_root.cmake"
    script.write_text('message("${CMAKE_ROOT}")\n')
    try:
        run = subprocess.run(["cmake", "-P", str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    module = pathlib.Path(run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "") / "Modules" / \
        "Compiler" / "NVIDIA-CUDA.cmake"
    if not module.is_file() or f"CUDA{standard}_STANDARD_COMPILE_OPTION" in module.read_text():
        return None
    rules = folder / f"cuda{standard}_rules.cmake"
    rules.write_text(f'set(CMAKE_CUDA{standard}_STANDARD_COMPILE_OPTION "-std=c++{standard}")\n'
                     f'set(CMAKE_CUDA{standard}_EXTENSION_COMPILE_OPTION "-std=c++{standard}")\n')
    return rules


def configure_dace(gpu_arch, work):
    """DaCe's configuration for both compilers: CUDA architectures from ``gpu_arch`` (sdfc.dace takes the
    same), views allowed as arguments, and the CMake rules file where CMake needs it."""
    from dace.config import Config

    arch = str(gpu_arch)
    Config.set("compiler", "cuda", "cuda_arch", value=arch[3:] if arch.startswith("sm_") else arch)
    Config.set("compiler", "allow_view_arguments", value=True)
    rules = cmake_cuda_rules(pathlib.Path(work) / "cmake", Config.get("compiler", "cpp_standard"))
    if rules is not None:
        extra = str(Config.get("compiler", "extra_cmake_args") or "")
        if str(rules) not in extra:
            Config.set("compiler", "extra_cmake_args", value=f"{extra} -DCMAKE_USER_MAKE_RULES_OVERRIDE_CUDA={rules}")
    return rules


def quiet_warnings():
    import warnings

    warnings.simplefilter("ignore")


# -------------------------------------------------------------------------------------- compile worker


def compile_worker(task):
    """Makes the case's device SDFG, its size plans and read/write sets, and compiles it with both compilers
    (each from the saved SDFG, into its own folder); writes the result JSON."""
    quiet_warnings()
    sys.path.insert(0, str(ROOT / "python"))
    import dace
    import sdfc.dace

    configure_dace(task["gpu_arch"], task["work"])
    case, folder = pathlib.Path(task["case"]), pathlib.Path(task["folder"])
    result = {"case": case.name}
    inputs = json.loads((case / "inputs.json").read_text())
    try:
        sdfg, source = device_sdfg(case)
        made = folder / "made.sdfg"
        sdfg.save(str(made))
        result["source"] = source
        result["host_arrays"] = check_device_arguments(sdfg)
        result["reads"], result["writes"] = access_sets(sdfg)
    except Exception as e:
        result["make_error"] = one_line(e)
        result["make_traceback"] = traceback.format_exc()[-4000:]
        return result
    plans = {}
    for size in task["sizes"]:
        try:
            plans[size] = size_plan(sdfg, inputs, size, task["elements"], task["layout"], is_gt4py(case))
        except Exception as e:
            plans[size] = {"error": one_line(e)}
    result["plans"] = plans
    order = ["dace", "sdfc"] if task["dace_first"] else ["sdfc", "dace"]
    for tool in order:
        program = dace.SDFG.from_file(str(made))
        program.build_folder = str(folder / tool)
        try:
            start = time.perf_counter()
            if tool == "dace":
                compiled = program.compile()
            else:
                compiled = sdfc.dace.compile(program, **task["sdfc_options"])
            elapsed = time.perf_counter() - start
            result[tool] = {"compile_s": elapsed}
            del compiled
        except Exception as e:
            result[tool] = {"error": one_line(e), "traceback": traceback.format_exc()[-4000:]}
    return result


# ------------------------------------------------------------------------------------------ run worker


class Runner:
    """The GPU side of one run worker: loaded programs, arrays, calls, timings."""

    def __init__(self, task):
        quiet_warnings()
        sys.path.insert(0, str(ROOT / "python"))
        import cupy
        import dace
        import numpy
        import sdfc.dace
        from dace.config import Config

        self.cp, self.np, self.dace, self.sdfc_dace, self.task = cupy, numpy, dace, sdfc.dace, task
        configure_dace(task["gpu_arch"], task["work"])
        Config.set("compiler", "use_cache", value=True)  # load what the compile workers built
        self.loaded_case, self.programs, self.sdfg = None, {}, None
        self.initialized_for, self.workspaces = {}, {}

    def bandwidth(self):
        """Device-to-device copy bandwidth (read + written bytes per second) of a 512 MiB CuPy copy."""
        cp = self.cp
        nbytes = 512 << 20
        a, b = cp.ones(nbytes, cp.uint8), cp.empty(nbytes, cp.uint8)
        for _ in range(3):
            b.data.copy_from_device(a.data, nbytes)
        start, end = cp.cuda.Event(), cp.cuda.Event()
        reps = 20
        start.record()
        for _ in range(reps):
            b.data.copy_from_device(a.data, nbytes)
        end.record()
        end.synchronize()
        seconds = cp.cuda.get_elapsed_time(start, end) / 1e3
        del a, b
        cp.get_default_memory_pool().free_all_blocks()
        return 2 * nbytes * reps / seconds

    def load(self, case_result, folder):
        if self.loaded_case == folder:
            return
        self.programs, self.initialized_for, self.workspaces = {}, {}, {}
        self.cp.get_default_memory_pool().free_all_blocks()
        from dace.codegen import compiler

        made = pathlib.Path(folder) / "made.sdfg"
        dace_folder = pathlib.Path(folder) / "dace"
        if (dace_folder / "program.sdfgz").is_file() or (dace_folder / "program.sdfg").is_file():
            # What DaCe's SDFG.compile() returns: its library with the SDFG its code was generated from
            # (saved in the folder; storages resolved, as the library's workspace functions name them).
            self.programs["dace"] = compiler.load_precompiled_sdfg(dace_folder)
        else:
            dace_sdfg = self.dace.SDFG.from_file(str(made))
            dace_sdfg.build_folder = str(dace_folder)
            self.programs["dace"] = dace_sdfg.compile()  # compiler.use_cache: the library that is there
        sdfc_sdfg = self.dace.SDFG.from_file(str(made))
        sdfc_sdfg.build_folder = str(pathlib.Path(folder) / "sdfc")
        library = sorted((pathlib.Path(folder) / "sdfc").rglob("*.so"))
        before = {p: p.stat().st_mtime_ns for p in library}
        self.programs["sdfc"] = self.sdfc_dace.compile(sdfc_sdfg, **self.task["sdfc_options"])
        self.rebuilt = any(p.stat().st_mtime_ns != t for p, t in before.items() if p.exists())
        self.sdfg = sdfc_sdfg
        self.loaded_case = folder

    def arguments(self, tool, plan, arrays):
        """Keyword arguments of a call: the arrays, then the symbols and scalars typed as the program's
        signature types them (no casts, no warnings in DaCe's argument handling)."""
        from dace import data

        typedict = getattr(self.programs[tool], "_typedict", None) or {}
        kwargs = dict(arrays)
        for name, value in list(plan["symbols"].items()) + list(plan["scalars"].items()):
            desc = typedict.get(name)
            if isinstance(desc, data.Scalar):
                kwargs[name] = desc.dtype.type(value)
            else:
                kwargs[name] = value
        return kwargs

    def fresh(self, plan, host):
        return make_arrays(plan, host, self.cp, self.np)

    def prepare(self, tool, plan, kwargs):
        """Initializes the program for the plan's symbol values (DaCe's CompiledSDFG initializes once, with the
        symbols of its first call, and sizes its persistent containers by them): after another size, the
        program is finalized and initialized again. External containers (workspaces) get zeroed buffers of
        the sizes the program asks for, on the device for GPU storages."""
        key = json.dumps(plan["symbols"], sort_keys=True, default=str)
        if self.initialized_for.get(tool) == key:
            return
        program = self.programs[tool]
        if getattr(program, "_initialized", False):
            program.finalize()
        program.initialize(**kwargs)
        self.workspaces[tool] = []
        if getattr(program, "external_memory_types", None):
            for storage, size in program.get_workspace_sizes().items():
                xp = self.cp if storage.name.startswith("GPU") else self.np
                buffer = xp.zeros(max(int(size), 1), xp.uint8)
                program.set_workspace(storage, buffer)
                self.workspaces[tool].append(buffer)
        self.initialized_for[tool] = key

    def call(self, tool, kwargs, vectors=None):
        """One timed call: (event microseconds, wall microseconds). With ``vectors`` (what
        ``construct_arguments()`` returned), through ``fast_call()`` as GT4Py calls, else ``__call__``."""
        cp = self.cp
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        t0 = time.perf_counter()
        if vectors is None:
            self.programs[tool](**kwargs)
        else:
            self.programs[tool].fast_call(*vectors, do_gpu_check=False)
        cp.cuda.runtime.deviceSynchronize()
        t1 = time.perf_counter()
        end.record()
        end.synchronize()
        return cp.cuda.get_elapsed_time(start, end) * 1e3, (t1 - t0) * 1e6

    def one_call_each(self, plan, inputs):
        """Seconds of the slower compiler's call at this size (the faster of two calls: the first may
        include the program's initialization)."""
        host = tiled_arrays(plan, inputs, self.np)
        times = []
        for tool in ("dace", "sdfc"):
            arrays = self.fresh(plan, host)
            kwargs = self.arguments(tool, plan, arrays)
            self.prepare(tool, plan, kwargs)
            times.append(min(self.call(tool, kwargs)[1] for _ in range(2)) / 1e6)
            del arrays, kwargs
        return max(times)

    def capped_plan(self, case, inputs, plan):
        """The large plan, or the largest step towards it whose calls stay under --max-call-ms (see the
        module's text): (plan, note)."""
        limit = self.task["max_call_ms"] / 1e3
        if limit <= 0:
            return plan, ""
        gt4py = is_gt4py(case)
        small = size_plan(self.sdfg, inputs, "small", layout=self.task["layout"], gt4py=gt4py)
        if small["elements"] <= 0 or small["elements"] >= plan["elements"]:
            return plan, ""
        points = [(small["elements"], self.one_call_each(small, inputs))]
        current = small
        while True:
            elements = points[-1][0] * 8
            nxt = plan if elements >= plan["elements"] else \
                size_plan(self.sdfg, inputs, str(elements), layout=self.task["layout"], gt4py=gt4py)
            e0, t0 = points[-1]
            p = 1.0
            if len(points) >= 2:
                e1, t1 = points[-2]
                if t0 > 0 and t1 > 0 and e0 > e1:
                    p = min(3.0, max(1.0, math.log(t0 / t1) / math.log(e0 / e1)))
            predicted = t0 * (nxt["elements"] / e0) ** p
            if predicted > limit:
                return current, f" capped (next step: ~{predicted:.2f} s a call)"
            if nxt is plan:
                return plan, ""
            points.append((nxt["elements"], self.one_call_each(nxt, inputs)))
            current = nxt

    def compare(self, a, b, tolerance):
        """Differences between DaCe's array ``a`` and sdfc's ``b``: (count, examples)."""
        cp = self.cp
        if a.shape != b.shape:
            return -1, f"shapes {a.shape} and {b.shape}"
        kind = a.dtype.kind
        if kind in "biu":
            bad = a != b
        else:
            rtol, atol = tolerance.get("rtol", 0.0), tolerance.get("atol", 0.0)
            parts = [(a.real, b.real), (a.imag, b.imag)] if kind == "c" else [(a, b)]
            bad = cp.zeros(a.shape, bool)
            for x, y in parts:
                x, y = x.astype(cp.float64), y.astype(cp.float64)
                ok = (x == y) | (cp.abs(x - y) <= atol + rtol * cp.abs(x)) | (cp.isnan(x) & cp.isnan(y))
                bad |= ~ok
        count = int(bad.sum())
        if not count:
            return 0, ""
        where = cp.asnumpy(cp.argwhere(bad)[:3])
        examples = ", ".join(f"{tuple(int(i) for i in w)}: DaCe {a[tuple(w)].item()} sdfc {b[tuple(w)].item()}"
                             for w in where)
        return count, examples

    def run(self, item, case_result):
        case, folder, size = pathlib.Path(item["case"]), item["folder"], item["size"]
        inputs = json.loads((case / "inputs.json").read_text())
        expected = json.loads((case / "expected.json").read_text()) if (case / "expected.json").is_file() else {}
        tolerances = expected.get("tolerance", {})
        self.load(case_result, folder)
        plan = size_plan(self.sdfg, inputs, size, self.task["elements"], self.task["layout"], is_gt4py(case))
        note = ""
        if size == "large":
            plan, note = self.capped_plan(case, inputs, plan)
        host = tiled_arrays(plan, inputs, self.np)
        row = {"plan": {k: v for k, v in plan.items() if k != "arrays"}, "description": plan["description"] + note,
               "sdfc_rebuilt_on_load": self.rebuilt}
        # Verification: one call each on fresh copies of the same arrays (also the first warm-up call).
        arrays, kwargs, samples = {}, {}, {"dace": [], "sdfc": []}
        for tool in ("dace", "sdfc"):
            arrays[tool] = self.fresh(plan, host)
            kwargs[tool] = self.arguments(tool, plan, arrays[tool])
            self.prepare(tool, plan, kwargs[tool])
            samples[tool].append(self.call(tool, kwargs[tool]))
        mismatches = []
        for name, a in plan["arrays"].items():
            if name in HOST_ONLY:
                continue
            x, y = arrays["dace"][name], arrays["sdfc"][name]
            if not a["device"]:
                x, y = self.cp.asarray(x), self.cp.asarray(y)
            count, examples = self.compare(x, y, tolerances.get(a["dtype"], {}))
            if count:
                mismatches.append(f"{name}: {count if count > 0 else 'all'} elements differ ({examples})")
        row["mismatches"] = mismatches
        # Warm-up: two more calls each; then the number of calls that fits ~2 s for the program.
        for _ in range(2):
            for tool in ("dace", "sdfc"):
                samples[tool].append(self.call(tool, kwargs[tool]))
        per_call = max(statistics.median(w for _, w in samples[t]) for t in samples) / 1e6
        calls = max(1, min(self.task["calls"], int(1.0 / max(per_call, 1e-9))))
        rounds = max(1, min(self.task["rounds"], calls))
        per_round = math.ceil(calls / rounds)
        modes = ("fast", "python") if self.task["call"] == "both" else (self.task["call"],)
        # GT4Py's way: the argument vectors built once (on a copy: construct_arguments adds return values).
        vectors = {tool: self.programs[tool].construct_arguments(**dict(kwargs[tool])) if "fast" in modes else None
                   for tool in ("dace", "sdfc")}
        timed = {(tool, mode): [] for tool in ("dace", "sdfc") for mode in modes}
        for r in range(rounds):
            for tool in (("dace", "sdfc") if r % 2 == 0 else ("sdfc", "dace")):
                for mode in modes:
                    for _ in range(per_round):
                        timed[tool, mode].append(
                            self.call(tool, kwargs[tool], vectors[tool] if mode == "fast" else None))
        for tool in ("dace", "sdfc"):
            row[tool] = {"call": modes[0]}
            for mode in modes:
                prefix = "" if mode == modes[0] else f"{mode}_"
                row[tool].update({f"{prefix}us": statistics.median(e for e, _ in timed[tool, mode]),
                                  f"{prefix}wall_us": statistics.median(w for _, w in timed[tool, mode]),
                                  f"{prefix}calls": len(timed[tool, mode]),
                                  f"{prefix}samples": [[round(e, 2), round(w, 2)] for e, w in timed[tool, mode]]})
        reads, writes = case_result["reads"], case_result["writes"]
        row["bytes"] = argument_bytes(plan, reads) + argument_bytes(plan, writes)
        del arrays, kwargs
        return row


def run_worker(task, out):
    """Runs the task's items one after the other, writing ``progress`` before each and ``<i>.json`` after;
    exits 3 after an item that raised (its CUDA context may be broken: the parent starts a fresh worker)."""
    out = pathlib.Path(out)
    runner = Runner(task)
    if task.get("bandwidth") is None:
        (out / "bandwidth.json").write_text(json.dumps({"bytes_per_s": runner.bandwidth()}))
    cases = json.loads(pathlib.Path(task["cases_file"]).read_text())
    for item in task["items"]:
        (out / "progress.json").write_text(json.dumps({"id": item["id"], "start": time.time()}))
        try:
            row = runner.run(item, cases[item["case_name"]])
        except Exception as e:
            row = {"error": one_line(e), "traceback": traceback.format_exc()[-4000:]}
            (out / f"{item['id']}.json").write_text(json.dumps(row))
            sys.stdout.flush()
            os._exit(3)
        (out / f"{item['id']}.json").write_text(json.dumps(row))
    return 0


# -------------------------------------------------------------------------------------------- parent


def worker_command(kind, task_file):
    return [sys.executable, str(pathlib.Path(__file__).resolve()), "--worker", kind, str(task_file)]


def compile_all(cases, options, work, env):
    """Compile results per case name, with ``--jobs`` workers at once (after the warm-up, if any)."""
    results = {}

    def one(index, case, warm=False):
        folder = work / ("warm-up" if warm else "cases") / case.name
        folder.mkdir(parents=True, exist_ok=True)
        task = dict(options, case=str(case), folder=str(folder), dace_first=index % 2 == 0, work=str(work))
        task_file = folder / "compile-task.json"
        task_file.write_text(json.dumps(task))
        log = folder / "compile.log"
        with open(log, "w") as f:
            try:
                run = subprocess.run(worker_command("compile", task_file), stdout=f, stderr=subprocess.STDOUT,
                                     cwd=folder, env=env, timeout=options["compile_timeout"], start_new_session=True)
                rc = run.returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
        result_file = folder / "compile-result.json"
        if result_file.is_file():
            result = json.loads(result_file.read_text())
        else:
            tail = log.read_text(errors="replace").strip().splitlines()[-3:]
            result = {"case": case.name, "make_error": f"compile worker failed (rc={rc}): {' | '.join(tail)}"[:300]}
        result["folder"] = str(folder)
        return result

    if options["warm_up"] and cases:
        print(f"warming the build caches with {cases[0].name} (untimed)", flush=True)
        one(0, cases[0], warm=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=options["jobs"]) as pool:
        futures = {pool.submit(one, i, case): case for i, case in enumerate(cases)}
        for future in concurrent.futures.as_completed(futures):
            result = future.result()
            results[result["case"]] = result
            print(f"  compiled {result['case']}: {compile_summary(result)}", flush=True)
    return results


def compile_summary(result):
    if "make_error" in result:
        return f"not made: {result['make_error']}"
    parts = []
    for tool, label in (("dace", "DaCe"), ("sdfc", "sdfc")):
        r = result.get(tool, {})
        parts.append(f"{label} {r['compile_s']:.1f} s" if "compile_s" in r else f"{label} FAILED: {r.get('error')}")
    return ", ".join(parts)


def run_all(items, options, work, env, cases_file, on_row):
    """Runs the items in worker processes, one at a time on the GPU: a worker that fails an item (its CUDA
    context may be broken), dies or runs past --timeout on one is replaced by a fresh one for the rest.
    Returns (rows by id, bandwidth)."""
    rows, bandwidth = {}, None
    out = work / "run"
    out.mkdir(exist_ok=True)
    pending, attempt = list(items), 0

    def collect():
        for item in pending:
            done = out / f"{item['id']}.json"
            if item["id"] not in rows and done.is_file():
                try:
                    rows[item["id"]] = json.loads(done.read_text())
                except ValueError:  # being written
                    continue
                on_row(item, rows[item["id"]])

    def current():
        try:
            return json.loads((out / "progress.json").read_text())
        except (OSError, ValueError):
            return None

    while pending:
        attempt += 1
        (out / "progress.json").unlink(missing_ok=True)
        task = dict(options, items=pending, cases_file=str(cases_file), work=str(work), bandwidth=bandwidth)
        task_file = out / f"task-{attempt}.json"
        task_file.write_text(json.dumps(task))
        log = out / f"worker-{attempt}.log"
        timed_out = None
        with open(log, "w") as f:
            proc = subprocess.Popen(worker_command("run", task_file), stdout=f, stderr=subprocess.STDOUT,
                                    cwd=out, env=env, start_new_session=True)
            while proc.poll() is None:
                time.sleep(0.2)
                collect()
                state = current()
                if state and state["id"] not in rows and time.time() - state["start"] > options["timeout"]:
                    timed_out = state["id"]
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        if bandwidth is None and (out / "bandwidth.json").is_file():
            bandwidth = json.loads((out / "bandwidth.json").read_text())["bytes_per_s"]
        collect()
        state = current()
        tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:])
        if state is None and proc.returncode != 0:  # the worker failed before its first item: so would the next
            for item in pending:
                if item["id"] not in rows:
                    rows[item["id"]] = {"error": f"run worker failed (rc={proc.returncode}): {tail}"[:400]}
                    on_row(item, rows[item["id"]])
        elif state is not None and state["id"] not in rows:  # the item in progress: stopped, or the worker died
            item = next(i for i in pending if i["id"] == state["id"])
            if timed_out == state["id"]:
                rows[item["id"]] = {"error": f"stopped after {options['timeout']:g} s (--timeout)"}
            else:
                rows[item["id"]] = {"error": f"run worker died (rc={proc.returncode}): {tail}"[:400]}
            on_row(item, rows[item["id"]])
        remaining = [item for item in pending if item["id"] not in rows]
        if remaining and proc.returncode == 0:  # exited without doing them: should not happen
            for item in remaining:
                rows[item["id"]] = {"error": "the run worker left it out"}
                on_row(item, rows[item["id"]])
            remaining = []
        pending = remaining
    return rows, bandwidth


def fmt(value, spec, width):
    return format(value, spec).rjust(width) if value is not None else "-".rjust(width)


HEADER = (f"{'program':24} {'size':30} {'DaCe c s':>8} {'sdfc c s':>8} {'DaCe us':>10} {'sdfc us':>10} "
          f"{'ratio':>6} {'DaCe rf':>7} {'sdfc rf':>7} {'DaCe py':>9} {'sdfc py':>9} {'match':>5}")


def table_row(row):
    return " ".join([f"{row['program'][:24]:24}", f"{row['size'][:30]:30}", fmt(row["dace_compile_s"], ".2f", 8),
                     fmt(row["sdfc_compile_s"], ".2f", 8), fmt(row["dace_us"], ".1f", 10),
                     fmt(row["sdfc_us"], ".1f", 10), fmt(row["ratio"], ".2f", 6), fmt(row["dace_roofline"], ".3f", 7),
                     fmt(row["sdfc_roofline"], ".3f", 7), fmt(row["dace_python_us"], ".1f", 9),
                     fmt(row["sdfc_python_us"], ".1f", 9), f"{row['match']:>5}"])


def build_rows(case_names, sizes, compiled, ran, bandwidth, no_run):
    rows = []
    for name in case_names:
        c = compiled[name]
        dace_c = c.get("dace", {}).get("compile_s")
        sdfc_c = c.get("sdfc", {}).get("compile_s")
        for size in sizes:
            plan = c.get("plans", {}).get(size, {})
            row = {"program": name, "size": plan.get("description", size), "size_name": size,
                   "dace_compile_s": dace_c, "sdfc_compile_s": sdfc_c, "dace_us": None, "sdfc_us": None,
                   "ratio": None, "dace_roofline": None, "sdfc_roofline": None, "dace_python_us": None,
                   "sdfc_python_us": None, "match": "-", "error": None}
            if "make_error" in c:
                row["error"] = f"not made: {c['make_error']}"
            elif "error" in plan:
                row["error"] = f"no {size} size: {plan['error']}"
            elif dace_c is None or sdfc_c is None:
                row["error"] = "; ".join(f"{label} compile failed: {c[t]['error']}" for t, label in
                                         (("dace", "DaCe"), ("sdfc", "sdfc")) if "error" in c.get(t, {}))
            elif no_run:
                row["error"] = None
            else:
                r = ran.get(f"{name}/{size}", {"error": "not run"})
                if "error" in r:
                    row["error"] = f"run failed: {r['error']}"
                    row["run"] = r
                else:
                    row["size"] = r["description"]
                    row["dace_us"], row["sdfc_us"] = r["dace"]["us"], r["sdfc"]["us"]
                    for tool in ("dace", "sdfc"):
                        python = "us" if r[tool].get("call", "python") == "python" else "python_us"
                        row[f"{tool}_python_us"] = r[tool].get(python)
                    row["ratio"] = row["sdfc_us"] / row["dace_us"] if row["dace_us"] > 0 else None
                    if bandwidth:
                        floor_us = r["bytes"] / bandwidth * 1e6
                        row["floor_us"] = floor_us
                        row["dace_roofline"] = floor_us / row["dace_us"] if row["dace_us"] > 0 else None
                        row["sdfc_roofline"] = floor_us / row["sdfc_us"] if row["sdfc_us"] > 0 else None
                    row["match"] = "no" if r["mismatches"] else "yes"
                    row["mismatches"] = r["mismatches"]
                    row["run"] = {k: v for k, v in r.items() if k not in ("mismatches",)}
            rows.append(row)
    return rows


def summarize(rows, sizes, compiled, no_run):
    summary = {}
    names = sorted({r["program"] for r in rows})
    dace_c = [compiled[n]["dace"]["compile_s"] for n in names if "compile_s" in compiled[n].get("dace", {})
              and "compile_s" in compiled[n].get("sdfc", {})]
    sdfc_c = [compiled[n]["sdfc"]["compile_s"] for n in names if "compile_s" in compiled[n].get("dace", {})
              and "compile_s" in compiled[n].get("sdfc", {})]
    summary["compiled_by_both"] = len(dace_c)
    summary["dace_compile_sum_s"], summary["sdfc_compile_sum_s"] = sum(dace_c), sum(sdfc_c)
    print(f"\ncompiles: {len(dace_c)} programs by both; sums DaCe {sum(dace_c):.1f} s, sdfc {sum(sdfc_c):.1f} s"
          + (f" (ratio {sum(sdfc_c) / sum(dace_c):.2f})" if dace_c and sum(dace_c) > 0 else ""))
    if no_run:
        return summary
    for size in sizes:
        timed = [r for r in rows if r["size_name"] == size and r["ratio"]]
        if not timed:
            print(f"{size}: no program timed by both")
            continue
        geomean = math.exp(sum(math.log(r["ratio"]) for r in timed) / len(timed))
        slower = [r["program"] for r in timed if r["ratio"] > 1.0]
        mismatched = [r["program"] for r in rows if r["size_name"] == size and r["match"] == "no"]
        summary[size] = {"programs": len(timed), "geomean_ratio": geomean, "sdfc_slower_on": len(slower),
                         "sdfc_slower": slower, "mismatched": mismatched}
        print(f"{size}: {len(timed)} programs timed; geometric mean of sdfc/DaCe {geomean:.3f}; sdfc slower on "
              f"{len(slower)}" + (f" ({', '.join(slower)})" if slower else "")
              + (f"; MISMATCHES: {', '.join(mismatched)}" if mismatched else ""))
    return summary


def default_jobs():
    return max(1, min(8, (os.cpu_count() or 1) // 4))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=str(ROOT / ".corpus"), help="sdfc's corpus folder (default .corpus)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="only this case (repeatable)")
    parser.add_argument("--size", default="large", help="large, small, or a comma list (default large)")
    parser.add_argument("--elements", type=int, default=1 << 24, help="large: elements of the largest array")
    parser.add_argument("--layout", choices=("corpus", "reversed"), default="corpus",
                        help="order of the dimensions of arrays with symbolic strides (GT4Py's fields)")
    parser.add_argument("--calls", type=int, default=50, help="timed calls per compiler (fewer for slow programs)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds alternating between the compilers")
    parser.add_argument("--max-call-ms", type=float, default=250.0,
                        help="large: stop growing a program whose next step would take longer a call (0: never)")
    parser.add_argument("--jobs", type=int, default=default_jobs(), help="compiles at once")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a program may run (all its calls)")
    parser.add_argument("--compile-timeout", type=float, default=900.0, help="seconds a case's two compiles may take")
    parser.add_argument("--gpu-arch", default="sm_90", help="CUDA architecture of both builds (default sm_90)")
    parser.add_argument("--sdfc-options", default="{}", help="JSON object of extra sdfc.dace.compile options")
    parser.add_argument("--call", choices=("both", "fast", "python"), default="both",
                        help="time fast_call() as GT4Py calls (main columns), __call__ (py columns), or both")
    parser.add_argument("--no-run", action="store_true", help="compile both and stop (no GPU needed)")
    parser.add_argument("--no-warm-up", action="store_true", help="do not warm the build caches first")
    parser.add_argument("--json", help="write everything to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (builds, logs)")
    parser.add_argument("--worker", nargs=2, metavar=("KIND", "TASK"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        kind, task_file = args.worker
        task = json.loads(pathlib.Path(task_file).read_text())
        if kind == "compile":
            result = compile_worker(task)
            (pathlib.Path(task["folder"]) / "compile-result.json").write_text(json.dumps(result))
            return 0
        return run_worker(task, pathlib.Path(task_file).parent)

    sizes = [s.strip() for s in args.size.split(",") if s.strip()]
    if not sizes or any(s not in SIZES for s in sizes):
        parser.error(f"--size: expected large, small or a comma list of them, not {args.size!r}")
    try:
        sdfc_options = json.loads(args.sdfc_options)
        assert isinstance(sdfc_options, dict)
    except (ValueError, AssertionError):
        parser.error("--sdfc-options: expected a JSON object")
    sdfc_options.setdefault("target", "cuda")
    cases = corpus_cases(args.corpus, args.only)
    if not cases:
        parser.error(f"no cases in {args.corpus}")

    work = pathlib.Path(tempfile.mkdtemp(prefix="sdfc-gpu-vs-dace-"))
    env = dict(os.environ)
    env["DACE_BUILD_CACHE_DIR"] = str(work / "cache" / "dace")
    env["SDFC_CACHE_DIR"] = str(work / "cache" / "sdfc")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python")] + [p for p in [env.get("PYTHONPATH")] if p])
    if shutil.which("nvcc", path=env.get("PATH")) is None and os.path.isfile("/usr/local/cuda/bin/nvcc"):
        env["PATH"] = f"/usr/local/cuda/bin{os.pathsep}{env.get('PATH', '')}"
    options = {"sizes": sizes, "elements": args.elements, "layout": args.layout, "calls": max(1, args.calls),
               "rounds": max(1, args.rounds), "call": args.call, "max_call_ms": args.max_call_ms, "jobs": max(1, args.jobs),
               "timeout": args.timeout, "compile_timeout": args.compile_timeout, "gpu_arch": args.gpu_arch,
               "sdfc_options": sdfc_options, "warm_up": not args.no_warm_up}
    report = {"options": options, "corpus": str(pathlib.Path(args.corpus).resolve()), "cases": {}, "rows": []}

    def write_json():
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(report, indent=1))

    try:
        sys.path.insert(0, str(ROOT / "python"))
        import sdfc

        print(f"sdfc {sdfc.find_compiler()}; {len(cases)} cases; sizes {', '.join(sizes)}; layout {args.layout}; "
              f"calls {args.call}; "
              f"sdfc options {json.dumps(sdfc_options)}; {options['jobs']} compiles at once", flush=True)
        start = time.perf_counter()
        compiled = compile_all(cases, options, work, env)
        report["cases"] = compiled
        report["compile_stage_s"] = time.perf_counter() - start
        write_json()
        names = [c.name for c in cases]
        ran, bandwidth = {}, None
        if not args.no_run:
            items = []
            for name in names:
                c = compiled[name]
                if "make_error" in c or "compile_s" not in c.get("dace", {}) or "compile_s" not in c.get("sdfc", {}):
                    continue
                for size in sizes:
                    if "error" not in c.get("plans", {}).get(size, {}):
                        items.append({"id": f"{len(items)}", "case": str(pathlib.Path(args.corpus) / name),
                                      "case_name": name, "folder": c["folder"], "size": size})
            cases_file = work / "cases.json"
            cases_file.write_text(json.dumps(compiled))
            by_id = {}

            def on_row(item, row):
                ran[f"{item['case_name']}/{item['size']}"] = row
                by_id[item["id"]] = row
                if "error" in row:
                    print(f"  ran {item['case_name']} {item['size']}: FAILED: {row['error']}", flush=True)
                else:
                    note = "" if not row["mismatches"] else f"  MISMATCH: {'; '.join(row['mismatches'])}"
                    print(f"  ran {item['case_name']} {item['size']} ({row['description']}): DaCe "
                          f"{row['dace']['us']:.1f} us, sdfc {row['sdfc']['us']:.1f} us{note}", flush=True)
                report["rows"] = build_rows(names, sizes, compiled, ran, bandwidth, False)
                write_json()

            if items:
                print(f"running {len(items)} programs (one at a time)", flush=True)
                ran_rows, bandwidth = run_all(items, options, work, env, cases_file, on_row)
            report["bandwidth_bytes_per_s"] = bandwidth
        rows = build_rows(names, sizes, compiled, ran, bandwidth, args.no_run)
        report["rows"] = rows
        print()
        if bandwidth:
            print(f"device-to-device copy bandwidth: {bandwidth / 1e9:.0f} GB/s (read + write bytes)")
        print(HEADER)
        for row in rows:
            print(table_row(row))
        problems = [r for r in rows if r["error"]]
        if problems:
            print("\nnot timed:" if not args.no_run else "\nnot compiled by both:")
            for r in problems:
                print(f"  {r['program']} ({r['size_name']}): {r['error']}")
        mismatched = [r for r in rows if r["match"] == "no"]
        for r in mismatched:
            print(f"\n*** MISMATCH between DaCe and sdfc: {r['program']} ({r['size']}):")
            for m in r["mismatches"]:
                print(f"***   {m}")
        report["summaries"] = summarize(rows, sizes, compiled, args.no_run)
        write_json()
        if mismatched:
            return 1
        if report["summaries"]["compiled_by_both"] == 0:
            return 2
        return 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
