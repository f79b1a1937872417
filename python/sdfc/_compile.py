"""Compiling SDFGs with the sdfc command-line compiler, and loading the libraries it writes."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ._errors import Error
from ._options import command_options
from ._program import Program


def find_compiler(compiler=None):
    """The path of the sdfc compiler: ``compiler`` when given, else ``$SDFC``, else ``sdfc`` on
    ``PATH``, else ``build/sdfc`` of the source tree this package lies in; raises :class:`Error`
    when none is an executable file."""
    for candidate, origin in ((compiler, "compiler="), (os.environ.get("SDFC"), "$SDFC")):
        if candidate:
            found = shutil.which(os.fspath(candidate))
            if not found:
                raise Error(f"the sdfc compiler given by {origin} ({candidate}) is not an executable file")
            return found
    found = shutil.which("sdfc")
    if found:
        return found
    in_tree = Path(__file__).resolve().parents[2] / "build" / "sdfc"
    if os.access(in_tree, os.X_OK) and in_tree.is_file():
        return str(in_tree)
    raise Error("cannot find the sdfc compiler: pass compiler=PATH, set $SDFC, or put sdfc on PATH")


def library_directory():
    """Where :func:`compile` writes libraries unless told otherwise: ``python/`` in sdfc's build
    cache folder (``$SDFC_CACHE_DIR``, else ``$XDG_CACHE_HOME/sdfc``, else ``~/.cache/sdfc``)."""
    cache = os.environ.get("SDFC_CACHE_DIR")
    if not cache:
        xdg = os.environ.get("XDG_CACHE_HOME")
        cache = os.path.join(xdg, "sdfc") if xdg and os.path.isabs(xdg) else os.path.join(Path.home(), ".cache", "sdfc")
    return Path(cache) / "python"


def _sdfg_name(text):
    """The SDFG's name in its JSON ``text``, or ``None`` (sdfc reports what is wrong with it)."""
    try:
        name = json.loads(text).get("attributes", {}).get("name")
    except (ValueError, AttributeError):
        return None
    return name if isinstance(name, str) and name else None


def _sdfg_text(sdfg):
    """(JSON text or None, path or None, a short name) of the ``sdfg`` argument of compile()."""
    if hasattr(sdfg, "to_json"):
        document = sdfg.to_json()
        try:
            text = json.dumps(document)
        except (TypeError, ValueError) as e:
            raise Error(
                f"cannot write {type(sdfg).__name__}.to_json() as JSON ({e}); save the SDFG to a file and compile that"
            ) from None
        return text, None, _sdfg_name(text) or "sdfg"
    if isinstance(sdfg, bytes):
        sdfg = sdfg.decode("utf-8")
    if isinstance(sdfg, str) and sdfg.lstrip().startswith("{"):
        return sdfg, None, _sdfg_name(sdfg) or "sdfg"
    if isinstance(sdfg, (str, os.PathLike)):
        path = Path(sdfg)
        if not path.is_file():
            raise Error(f"{path}: no such SDFG file")
        # Resolved: sdfc prints the path into the code it generates, so one file is one cache entry.
        path = path.resolve()
        return None, path, _sdfg_name(path.read_text(errors="replace")) or path.stem
    raise Error(
        f"cannot compile {type(sdfg).__name__}: pass an SDFG file path, its JSON text, or an object with to_json() "
        "(a dace.SDFG)"
    )


def compile(
    sdfg,
    target="cpu",
    transients=None,
    gpu_streams=None,
    gpu_arch=None,
    blas=None,
    gpu_graph=False,
    fuse_maps=False,
    dependent_launch=True,
    transient_layouts=True,
    use_cache=True,
    dace_layout=None,
    compiler=None,
    output=None,
):
    """Compiles ``sdfg`` with sdfc and returns the loaded :class:`Program`.

    ``sdfg`` is the path of an SDFG file, its JSON text, or an object with ``to_json()`` (a
    ``dace.SDFG``). The options are sdfc's (``sdfc help compile``): ``target`` "cpu", "cuda" or
    "hip"; ``transients`` "scoped", "persistent", "pool" or "external" (``None``: the lifetimes
    the SDFG declares); ``gpu_streams`` the number of internal GPU streams; ``gpu_arch`` the GPU
    architecture (``sm_90``, ``gfx90a``); ``blas`` "pure" or "vendor" (BLAS nodes as loops, or
    as CBLAS / cuBLAS calls); ``gpu_graph=True`` replays each call's GPU work as a CUDA/HIP graph;
    ``fuse_maps=True`` merges chains of maps that continue each other point by point into one map;
    ``dependent_launch=False`` launches CUDA kernels without programmatic dependent launch (by
    default, on sm_90 and newer, a kernel may start while the one before it finishes);
    ``transient_layouts=False`` keeps every GPU transient's layout as the SDFG declares it (by
    default one that only kernels touch takes, at each call, the order of the argument beside it);
    ``use_cache=False`` bypasses sdfc's build cache;
    ``dace_layout`` a folder passed as ``--dace-layout``; ``compiler`` the sdfc executable (see
    :func:`find_compiler`).

    The library is written to ``output`` when given, else to :func:`library_directory` under a
    name made of the SDFG's name and a hash of its file path or text, its content, the options
    and the compiler (so a changed SDFG never reuses a library this process has loaded). JSON
    text and objects are kept in ``sources/`` there, so that sdfc's build cache recognizes them:
    a repeated compile of the same program takes milliseconds.

    Raises :class:`Error` with sdfc's diagnostics when sdfc refuses the SDFG or fails to build it.
    """
    executable = find_compiler(compiler)
    # Checked and spelled by sdfc's own option table (`sdfc options --json`).
    options = command_options(
        executable,
        {
            "target": target,
            "transients": transients,
            "gpu_streams": gpu_streams,
            "gpu_arch": gpu_arch,
            "blas": blas,
            "gpu_graph": gpu_graph,
            "fuse_maps": fuse_maps,
            "dependent_launch": dependent_launch,
            "transient_layouts": transient_layouts,
        },
    )
    text, path, name = _sdfg_text(sdfg)
    if dace_layout is not None:
        options += ["--dace-layout", os.fspath(dace_layout)]
    if not use_cache:
        options.append("--no-cache")

    # The key of the program's library: its source (sdfc prints the SDFG's path into the code it
    # generates), the options and the compiler.
    st = os.stat(executable)
    source = str(path) if path is not None else "<string>"
    digest = hashlib.sha256()
    digest.update(repr((source, options, os.path.realpath(executable), st.st_size, st.st_mtime_ns)).encode())
    digest.update(text.encode() if text is not None else path.read_bytes())
    key = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}-{digest.hexdigest()[:16]}"
    if output is None:
        output = library_directory() / f"{key}.so"
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    if text is not None:
        # A stable file for the text, so that sdfc's build cache recognizes it on the next compile.
        path = library_directory() / "sources" / f"{key}.sdfg"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text() != text:
            with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as f:
                f.write(text)
            os.replace(f.name, path)

    command = [executable, "compile", str(path), "-o", str(output), *options]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    diagnostics = result.stderr.strip()
    if text is not None:
        diagnostics = diagnostics.replace(str(path), "<string>")
    if result.returncode != 0:
        if result.returncode == 2:  # a usage error: an option this sdfc does not know; not its usage text
            raise Error(f"sdfc rejected the options {' '.join(options)}: {diagnostics.split(chr(10) + 'usage:')[0]}")
        raise Error(diagnostics or f"sdfc exited with status {result.returncode}")
    return Program(output)


def load(library_path):
    """Loads the sdfc-built library at ``library_path`` and returns its :class:`Program`. A path
    this process has already loaded must still hold the same file (the dynamic loader would
    return the loaded library): otherwise :class:`Error`."""
    return Program(library_path)
