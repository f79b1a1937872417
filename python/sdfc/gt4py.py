"""sdfc as GT4Py's compiler: GT4Py's own DaCe backend (its lowering, its SDFG transformations, its
argument binding and workspaces) with every SDFG compiled by sdfc, and the parameters of stream
scheduling done by sdfc's passes instead of tasklets injected into the SDFG::

    import sdfc.gt4py
    backend = sdfc.gt4py.make_backend(gpu=True, max_concurrent_gpu_streams=4,
                                      external_sync_stream=cupy.cuda.Stream(non_blocking=True))
    my_program.with_backend(backend)(a, b, out=c, offset_provider={})

``make_backend`` takes the arguments of GT4Py's ``make_dace_backend`` (``auto_optimize``,
``optimization_args`` with ``transient_memory_mode``, ``external_workspace``, ...) and these:

- ``max_concurrent_gpu_streams``: 0 (default) runs every kernel and copy on one stream (the
  ``external_sync_stream`` when given, else the default stream); N >= 1 lets sdfc spread
  independent work over up to N internal streams, ordered by events its synchronization pass
  places, and ordered against the external stream at each call's entry and exit. Negative values
  are refused. Ignored on the CPU.
- ``external_sync_stream``: the caller's stream (a CuPy ``Stream``, a PyTorch ``torch.cuda.Stream``
  or a raw ``cudaStream_t`` as an int). Each call starts after the work queued on it and queues
  its end on it, so an MPI halo exchange or another program on that stream is ordered with the
  program's internal streams, and an external workspace may be reused by the next call. The
  library checks the stream at the first call (another device, a stream being captured, a stream
  whose ``cudaStreamQuery`` fails: refused, as an :class:`sdfc.Error`). Refused on the CPU.
- ``transient_memory_mode`` (in ``optimization_args``, GT4Py's): ``POOL`` is accepted with any
  number of streams (sdfc's pool-legality pass frees each pool block on the stream that last uses
  it, after the streams that read it); ``EXTERNAL`` uses ``external_workspace`` as with DaCe.
- ``gpu_graph``, ``fuse_maps``, ``dependent_launch``, ``transient_layouts``, ``compiler``: sdfc's (see
  ``sdfc help compile``).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

from ._errors import Error
from ._program import _stream_handle, _text

__all__ = ["make_backend"]

# What GT4Py's translation adds to a GPU SDFG's init code so that every DaCe stream is the default
# stream (its only mode before sdfc); sdfc's streams replace it when max_concurrent_gpu_streams >= 1.
_ALL_STREAMS_DEFAULT = ("__dace_gpu_set_all_streams(__state, cudaStreamDefault);",
                        "__dace_gpu_set_all_streams(__state, hipStreamDefault);")


def _check_streams(gpu, max_concurrent_gpu_streams, external_sync_stream):
    """The stream count and the raw handle of the external stream (None when there is none)."""
    streams = max_concurrent_gpu_streams
    if isinstance(streams, bool) or not isinstance(streams, int) or streams < 0:
        raise ValueError(f"max_concurrent_gpu_streams must be an integer of 0 or more, not {streams!r}")
    if external_sync_stream is None:
        return streams, None
    if not gpu:
        raise ValueError(
            "external_sync_stream was given for a CPU backend: a CPU program has no GPU work to order "
            "against a stream (use gpu=True, or leave the stream out)"
        )
    try:
        return streams, _stream_handle(external_sync_stream)
    except Error as e:
        raise TypeError(str(e)) from None


def _without_all_streams_default(source_code):
    """The SDFG (GT4Py's JSON dictionary) without the init code that makes every stream the
    default stream, so that sdfc's internal streams are used; the dictionary itself when it has
    none."""
    def blocks(sdfg):
        init = sdfg.get("attributes", {}).get("init_code", {})
        return [c for c in init.values() if isinstance(c, dict) and isinstance(c.get("string_data"), str)]

    if not any(line in c["string_data"] for c in blocks(source_code) for line in _ALL_STREAMS_DEFAULT):
        return source_code
    sdfg = copy.deepcopy(source_code)
    for code in blocks(sdfg):
        for line in _ALL_STREAMS_DEFAULT:
            code["string_data"] = code["string_data"].replace(line, "")
    return sdfg


@dataclasses.dataclass(frozen=True)
class SdfcCompilationStep:
    """GT4Py's DaCe compilation step (its build folder, locking and artifact) with sdfc as DaCe's
    compiler inside it, in whichever process GT4Py runs the step. Picklable, as GT4Py's steps are."""

    inner: Any  # GT4Py's DaCeCompiler
    options: tuple  # sdfc.dace's options, as sorted (name, value) pairs
    own_streams: bool  # max_concurrent_gpu_streams >= 1: GT4Py's all-streams-default init code goes

    def __call__(self, inp):
        import sdfc.dace

        if self.own_streams:
            source = inp.program_source
            source = dataclasses.replace(source, source_code=_without_all_streams_default(source.source_code))
            inp = dataclasses.replace(inp, program_source=source)
        with sdfc.dace.enabled(**dict(self.options)):
            return self.inner(inp)


def _backend_type():
    """DaCeBackend with the external stream set on each program it loads (made on first use:
    GT4Py is imported only when a backend is made)."""
    global _SdfcBackend
    if _SdfcBackend is not None:
        return _SdfcBackend
    from gt4py.next.program_processors.runners.dace.workflow import backend as gtx_backend

    @dataclasses.dataclass(frozen=True)
    class SdfcBackend(gtx_backend.DaCeBackend):
        """GT4Py's DaCe backend whose programs sdfc compiles (see :mod:`sdfc.gt4py`)."""

        external_stream: int | None = None

        def load_artifact(self, artifact):
            program = super().load_artifact(artifact)
            if self.external_stream is not None:
                _set_stream_at_initialization(program, self.external_stream)
            return program

    SdfcBackend.__module__ = __name__
    SdfcBackend.__qualname__ = "SdfcBackend"
    _SdfcBackend = SdfcBackend
    return SdfcBackend


_SdfcBackend = None


def _set_stream_at_initialization(program, handle):
    """Makes ``handle`` the caller's stream of the library instance GT4Py's first call creates
    (GT4Py initializes it while it constructs the first argument vector)."""
    import ctypes

    compiled = program._fun  # GT4Py's CompiledDaceProgram
    construct = compiled.construct_arguments

    def construct_arguments(**kwargs):
        construct(**kwargs)
        sdfg_program = compiled.sdfg_program
        set_stream = sdfg_program._lib.get_symbol("__sdfc_set_external_stream", ctypes.c_char_p)
        why = set_stream(sdfg_program._libhandle, ctypes.c_void_p(handle))
        if why is not None:
            raise Error(f"program '{sdfg_program.sdfg.name}': {_text(why)}")

    compiled.construct_arguments = construct_arguments


def make_backend(
    gpu: bool,
    *,
    max_concurrent_gpu_streams: int = 0,
    external_sync_stream: Any = None,
    gpu_graph: bool = False,
    fuse_maps: bool = False,
    dependent_launch: bool = True,
    transient_layouts: bool = True,
    compiler: str | None = None,
    **dace_backend_args: Any,
):
    """A GT4Py backend: GT4Py's ``make_dace_backend(gpu, **dace_backend_args)`` with sdfc as the
    compiler of its SDFGs and sdfc's stream parameters (see the module's documentation). Named
    ``run_sdfc_cpu`` / ``run_sdfc_gpu`` (``_noopt`` without ``auto_optimize``)."""
    from gt4py.next.program_processors.runners.dace.workflow import backend as gtx_backend

    streams, handle = _check_streams(gpu, max_concurrent_gpu_streams, external_sync_stream)
    options = {
        "gpu_graph": bool(gpu_graph),
        "fuse_maps": bool(fuse_maps),
        "dependent_launch": bool(dependent_launch),
        "transient_layouts": bool(transient_layouts),
    }
    if gpu:
        options["gpu_streams"] = streams
    else:
        options["target"] = "cpu"
    if compiler is not None:
        options["compiler"] = str(compiler)
    import sdfc.dace

    sdfc.dace._check_options(options)

    base = gtx_backend.make_dace_backend(gpu=gpu, **dace_backend_args)
    workflow = base.executor
    inner = workflow.compilation
    # The build folder GT4Py chooses depends on DaCe's non-default configuration: sdfc's options
    # join it, so that libraries built by DaCe and by sdfc (or with other options) never mix.
    marked = dataclasses.replace(inner)
    nondefaults = dict(marked.dace_config_nondefaults)
    nondefaults["sdfc"] = json.dumps(options, sort_keys=True)
    object.__setattr__(marked, "dace_config_nondefaults", nondefaults)
    step = SdfcCompilationStep(inner=marked, options=tuple(sorted(options.items())), own_streams=gpu and streams >= 1)
    fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
    fields["executor"] = dataclasses.replace(workflow, compilation=step)
    fields["name"] = base.name.replace("run_dace_", "run_sdfc_", 1)
    return _backend_type()(**fields, external_stream=handle)
