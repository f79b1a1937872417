"""The corpus of DaCe-written SDFGs (../shared/corpus or $SDFC_CORPUS) for the tests: its files,
the known-unsupported list (parsed from tests/CorpusKnown.h, the list the C++ tests use), inputs
as keyword arguments, and expected.json's comparison (tests/TestUtil.h's rules)."""

import json
import os
import re
from pathlib import Path

import numpy as np

REPOSITORY = Path(__file__).resolve().parents[2]
HOST_FILES = ("program.sdfg", "program_nometrics.sdfg", "program_libnodes.sdfg")


def corpus_dir():
    """The corpus folder, or ``None`` when it is absent."""
    path = Path(os.environ.get("SDFC_CORPUS") or REPOSITORY.parent / "shared" / "corpus")
    return path if path.is_dir() else None


def _files(predicate):
    root = corpus_dir()
    if root is None:
        return []
    return sorted(
        f"{case.name}/{f.name}" for case in root.iterdir() if case.is_dir() for f in case.iterdir() if predicate(f.name)
    )


def host_programs():
    """The corpus's CPU programs as "case/file.sdfg", sorted (empty without a corpus)."""
    return _files(lambda name: name in HOST_FILES)


def gpu_programs():
    """The corpus's GPU programs (program_gpu*.sdfg) as "case/file.sdfg", sorted."""
    return _files(lambda name: name.startswith("program_gpu") and name.endswith(".sdfg"))


def _c_string(literal):
    return re.sub(r"\\(.)", r"\1", literal[1:-1])


def known_unsupported():
    """{"case/file.sdfg": a part of the refusal's message} from tests/CorpusKnown.h."""
    header = (REPOSITORY / "tests" / "CorpusKnown.h").read_text()
    string = r'"(?:[^"\\]|\\.)*"'
    constants = {m[1]: _c_string(m[2]) for m in re.finditer(rf"static const char\* (\w+) = ({string});", header)}
    entries = {}
    for m in re.finditer(rf'\{{\s*"([^"]+\.sdfg)",\s*(\w+|{string}),\s*\d+\s*\}}', header):
        entries[m[1]] = constants[m[2]] if m[2] in constants else _c_string(m[2])
    if not entries and "known_unsupported()" not in header:
        raise RuntimeError("tests/CorpusKnown.h: no list found; has its format changed?")
    return entries


def case_json(file, name):
    """``name`` (inputs.json, expected.json, meta.json) of the case of ``file`` ("case/file")."""
    return json.loads((corpus_dir() / file.split("/")[0] / name).read_text())


def decode(a):
    """An array entry of inputs.json / expected.json as a fresh C-order array of its dtype; complex
    data is a list of [re, im] pairs (the corpus README's encoding)."""
    if a["dtype"].startswith("complex"):
        parts = np.array(a["data"], dtype=np.float64).reshape(-1, 2)
        return (parts[:, 0] + 1j * parts[:, 1]).astype(a["dtype"]).reshape(a["shape"]).copy()
    return np.array(a["data"], dtype=a["dtype"]).reshape(a["shape"]).copy()


def arrays_of(inputs):
    """Fresh arrays (C order, the stated dtypes) of an inputs.json."""
    return {name: decode(a) for name, a in inputs["arrays"].items()}


def call_arguments(program, inputs, arrays, infer):
    """The keyword arguments for ``program`` from ``inputs``: its arrays and scalars, its symbols
    (with ``infer``, leaving out those that are a bare entry of an array's shape or strides, which
    the package must infer), and the symbols of inputs.json that only size its arrays."""
    bare = set()
    if infer:
        for a in program.info["args"]:
            bare |= {e for e in a.get("shape", []) + a.get("strides", []) if e.isidentifier()}
    sizing = set()
    for a in program.info["args"]:
        for e in a.get("shape", []) + a.get("strides", []):
            sizing |= set(re.findall(r"[A-Za-z_]\w*", e))
    kwargs = {}
    for name in program.arguments:
        if name in arrays:
            kwargs[name] = arrays[name]
        elif name in inputs["scalars"]:
            kwargs[name] = typed(inputs["scalars"][name])
        elif name not in bare:
            kwargs[name] = typed(inputs["symbols"][name])
    if not infer:
        kwargs.update({k: typed(v) for k, v in inputs["symbols"].items() if k in sizing and k not in program.arguments})
    return kwargs


def typed(entry):
    """An inputs.json value in its dtype (a float32 value is exact as numpy.float32, not as float)."""
    if entry["dtype"].startswith("complex"):
        return np.dtype(entry["dtype"]).type(complex(*entry["value"]))
    return np.dtype(entry["dtype"]).type(entry["value"])


def mismatches(expected, arrays):
    """The outputs of expected.json that ``arrays`` do not reproduce within its tolerances
    (|got - want| <= atol + rtol * |want|; integers and bools exactly), as messages."""
    problems = []
    for name in expected["outputs"]:
        e = expected["arrays"][name]
        want = decode(e)
        got = arrays[name]
        if got.shape != want.shape:
            problems.append(f"{name}: shape {got.shape}, expected {want.shape}")
            continue
        tolerance = expected["tolerance"].get(e["dtype"], {})
        rtol, atol = tolerance.get("rtol", 0.0), tolerance.get("atol", 0.0)
        if np.iscomplexobj(want):  # the tolerance applies to the real and imaginary parts separately
            g, w = got.view(np.float64 if want.dtype == np.complex128 else np.float32), want.view(got.real.dtype)
            g, w = g.astype(np.float64), w.astype(np.float64)
            got, want = g, w
        else:
            g, w = got.astype(np.float64), want.astype(np.float64)
        bad = ~((np.abs(g - w) <= atol + rtol * np.abs(w)) | (np.isnan(g) & np.isnan(w)))
        if bad.any():
            first = np.argwhere(bad)[:5]
            problems.append(
                f"{name}: {int(bad.sum())} elements differ, e.g. "
                + ", ".join(f"{tuple(i)}: {got[tuple(i)]} (expected {want[tuple(i)]})" for i in first)
            )
    return problems
