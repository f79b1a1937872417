"""Every CPU program of the corpus compiled and called through the package with its inputs.json,
reproducing expected.json (with the symbols given, and with the symbols the arrays determine left
to inference); files on the known-unsupported list (tests/CorpusKnown.h) are refused with an
sdfc.Error naming the construct."""

import pytest

import sdfc
from _corpus import arrays_of, call_arguments, case_json, corpus_dir, gpu_programs, host_programs, known_unsupported
from _corpus import mismatches, typed

KNOWN = known_unsupported()


def _arglist(file):
    """DaCe's argument order: inputs.json's, or meta.json's for GT4Py's program_nometrics.sdfg."""
    if file.endswith("program_nometrics.sdfg"):
        return case_json(file, "meta.json")["nometrics"]["arglist"]
    return case_json(file, "inputs.json")["arglist"]


def _run_and_compare(program, file, infer):
    inputs, expected = case_json(file, "inputs.json"), case_json(file, "expected.json")
    arrays = arrays_of(inputs)
    program(**call_arguments(program, inputs, arrays, infer))
    problems = mismatches(expected, arrays)
    assert not problems, f"{file} ({'inferred' if infer else 'given'} symbols): " + "; ".join(problems)


def test_corpus_present_or_skipped(corpus):
    assert host_programs(), f"no program.sdfg in {corpus}"


def test_known_unsupported_files_exist(corpus):
    for file in KNOWN:
        assert (corpus / file).is_file(), f"tests/CorpusKnown.h lists {file}, which the corpus does not have"


@pytest.mark.parametrize("file", host_programs())
def test_reproduces_dace(file, corpus, compiler):
    if file in KNOWN:
        with pytest.raises(sdfc.Error) as refused:
            sdfc.compile(corpus / file, compiler=compiler)
        assert KNOWN[file] in str(refused.value), f"{file} was refused, but not for {KNOWN[file]!r}"
        return
    with sdfc.compile(corpus / file, compiler=compiler) as program:
        assert program.arguments == _arglist(file)
        _run_and_compare(program, file, infer=False)
        _run_and_compare(program, file, infer=True)  # a second call on the same instance, too


@pytest.mark.parametrize("file", [f for f in host_programs() if f.endswith("/program.sdfg") and f not in KNOWN])
def test_reproduces_dace_with_external_transients(file, corpus, compiler):
    with sdfc.compile(corpus / file, compiler=compiler, transients="external") as program:
        symbols = case_json(file, "inputs.json")["symbols"]
        sizes = program.workspace_sizes(**{s: typed(symbols[s]) for s in program.info["init_symbols"]})
        assert set(sizes) == set(program.storages)
        _run_and_compare(program, file, infer=True)  # with workspaces the program allocates itself


@pytest.mark.parametrize("file", [f for f in gpu_programs() if f in KNOWN])
def test_known_unsupported_gpu_file_is_refused_for_cuda(file, corpus, compiler):
    # Refused before any CUDA compiler runs: this needs neither nvcc nor a GPU.
    with pytest.raises(sdfc.Error) as refused:
        sdfc.compile(corpus / file, compiler=compiler, target="cuda")
    assert KNOWN[file] in str(refused.value)


def test_corpus_location_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SDFC_CORPUS", str(tmp_path / "absent"))
    assert corpus_dir() is None and host_programs() == []
    monkeypatch.setenv("SDFC_CORPUS", str(tmp_path))
    assert corpus_dir() == tmp_path
