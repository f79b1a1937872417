"""sdfc.compile from a file, JSON text and objects with to_json(); sdfc's diagnostics as errors;
where libraries go; finding the compiler; loading libraries."""

import json

import numpy as np
import pytest

import sdfc
from _corpus import REPOSITORY, arrays_of, call_arguments, case_json, mismatches

AXPY = REPOSITORY / "samples" / "axpy.sdfg"


def _check_axpy(program):
    assert program.name == "axpy"
    x, y = np.arange(5.0), np.ones(5)
    program(x=x, y=y, a=3.0)
    np.testing.assert_array_equal(y, 3.0 * np.arange(5.0) + 1.0)
    program.close()


def test_compile_from_json_text(compiler):
    _check_axpy(sdfc.compile(AXPY.read_text(), compiler=compiler))


def test_compile_from_an_object_with_to_json(compiler):
    class SDFGLike:  # what a dace.SDFG offers
        def to_json(self):
            return json.loads(AXPY.read_text())

    _check_axpy(sdfc.compile(SDFGLike(), compiler=compiler))


def test_the_same_program_compiles_to_the_same_library(compiler):
    text = AXPY.read_text()
    first, again = sdfc.compile(text, compiler=compiler), sdfc.compile(text, compiler=compiler)
    assert first.library_path == again.library_path and "/axpy-" in first.library_path
    from_file = sdfc.compile(AXPY, compiler=compiler)
    assert from_file.library_path != first.library_path  # sdfc prints the source's path into the code
    assert sdfc.compile(AXPY, compiler=compiler).library_path == from_file.library_path


def test_a_refused_sdfg_raises_the_diagnostics(compiler):
    with pytest.raises(sdfc.Error) as error:
        sdfc.compile('{"type": "SDFG", "attributes": {"name": "broken"}}', compiler=compiler)
    assert str(error.value).startswith("<string>: /: error: missing required key \"nodes\"")
    with pytest.raises(sdfc.Error, match="malformed JSON"):
        sdfc.compile("{", compiler=compiler)
    unsupported = json.loads(AXPY.read_text())
    unsupported["attributes"]["_arrays"]["x"]["attributes"]["dtype"] = "float16"
    with pytest.raises(sdfc.Error, match='data "x" is float16, which sdfc does not support yet'):
        sdfc.compile(json.dumps(unsupported), compiler=compiler)


def test_arguments_compile_checks(compiler, tmp_path):
    with pytest.raises(sdfc.Error, match="no such SDFG file"):
        sdfc.compile(tmp_path / "absent.sdfg", compiler=compiler)
    # The values sdfc's option table (`sdfc options --json`) lists, checked before sdfc runs.
    with pytest.raises(sdfc.Error, match="target must be one of 'cpu', 'cuda', 'hip' or None, not 'tpu'"):
        sdfc.compile(AXPY, target="tpu", compiler=compiler)
    with pytest.raises(sdfc.Error, match="transients must be one of .*'external' or None, not 'heap'"):
        sdfc.compile(AXPY, transients="heap", compiler=compiler)
    with pytest.raises(sdfc.Error, match="blas must be one of 'pure', 'vendor' or None, not 'mkl'"):
        sdfc.compile(AXPY, blas="mkl", compiler=compiler)
    with pytest.raises(sdfc.Error, match="gpu_streams must be an integer of 0 or more"):
        sdfc.compile(AXPY, gpu_streams=-1, compiler=compiler)
    with pytest.raises(sdfc.Error, match="fuse_maps must be True or False, not 'yes'"):
        sdfc.compile(AXPY, fuse_maps="yes", compiler=compiler)
    with pytest.raises(sdfc.Error, match="pass an SDFG file path, its JSON text, or an object with to_json"):
        sdfc.compile(42, compiler=compiler)


def test_options_reach_sdfc(compiler, tmp_path):
    """Each option becomes sdfc's command-line option, in the order of sdfc's option table (a
    stand-in compiler records them; it lists the options as sdfc does)."""
    recorder = tmp_path / "sdfc"
    recorder.write_text(
        f'#!/bin/sh\nif [ "$1" = options ]; then exec {compiler} "$@"; fi\n'
        f"echo \"$@\" > {tmp_path}/arguments\necho 'recorded' >&2\nexit 1\n"
    )
    recorder.chmod(0o755)
    with pytest.raises(sdfc.Error, match="^recorded$"):
        sdfc.compile(
            AXPY,
            compiler=recorder,
            target="cuda",
            transients="pool",
            gpu_streams=2,
            gpu_arch="sm_90",
            blas="vendor",
            gpu_graph=True,
            fuse_maps=True,
            dependent_launch=False,
            transient_layouts=False,
            use_cache=False,
            dace_layout=tmp_path / "layout",
            output=tmp_path / "axpy.so",
        )
    arguments = (tmp_path / "arguments").read_text().split()
    assert arguments[:4] == ["compile", str(AXPY), "-o", str(tmp_path / "axpy.so")]
    assert " ".join(arguments[4:]) == (
        "--target cuda --gpu-arch sm_90 --transients pool --gpu-streams 2 --gpu-graph --fuse-maps "
        f"--no-dependent-launch --declared-transient-layouts --blas vendor --dace-layout {tmp_path / 'layout'} --no-cache"
    )


def test_vendor_blas_reproduces_dace(compiler, corpus):
    """blas="vendor": the MatMul nodes of fe_rowdot_views_s (row products through row views, a
    column product through a strided column view) as CBLAS calls reproduce DaCe's outputs."""
    file = "fe_rowdot_views_s/program_libnodes.sdfg"
    inputs, expected = case_json(file, "inputs.json"), case_json(file, "expected.json")
    with sdfc.compile(corpus / file, compiler=compiler, blas="vendor") as program:
        arrays = arrays_of(inputs)
        program(**call_arguments(program, inputs, arrays, False))
    assert not mismatches(expected, arrays)


def test_fused_maps_reproduce_dace(compiler, corpus):
    """fuse_maps=True: forkjoin2x2_s's five maps become one, and the outputs stay DaCe's."""
    file = "forkjoin2x2_s/program.sdfg"
    inputs, expected = case_json(file, "inputs.json"), case_json(file, "expected.json")
    with sdfc.compile(corpus / file, compiler=compiler, fuse_maps=True) as program:
        arrays = arrays_of(inputs)
        program(**call_arguments(program, inputs, arrays, False))
    assert not mismatches(expected, arrays)


def test_the_external_mode_gives_a_workspace(compiler, corpus):
    chain5 = corpus / "chain5_s" / "program.sdfg"  # transients with the default (Scope) lifetime
    assert sdfc.compile(chain5, compiler=compiler).storages == []
    assert sdfc.compile(chain5, compiler=compiler, transients="external").storages == ["CPU_Heap"]


def test_libraries_go_to_the_cache_folder_or_output(compiler, tmp_path, monkeypatch):
    monkeypatch.setenv("SDFC_CACHE_DIR", str(tmp_path / "cache"))
    assert sdfc.library_directory() == tmp_path / "cache" / "python"
    program = sdfc.compile(AXPY, compiler=compiler)
    assert program.library_path.startswith(str(tmp_path / "cache" / "python" / "axpy-"))
    chosen = tmp_path / "out" / "my_axpy.so"
    _check_axpy(sdfc.compile(AXPY, compiler=compiler, output=chosen))
    _check_axpy(sdfc.load(chosen))


def test_a_changed_library_at_a_loaded_path_is_refused(compiler, corpus, tmp_path):
    path = tmp_path / "program.so"
    sdfc.compile(AXPY, compiler=compiler, output=path).close()
    with pytest.raises(sdfc.Error, match="was already loaded by this process and the file has changed"):
        sdfc.compile(corpus / "chain5_s" / "program.sdfg", compiler=compiler, output=path)


def test_finding_the_compiler(compiler, monkeypatch, tmp_path):
    assert sdfc.find_compiler(compiler) == compiler
    with pytest.raises(sdfc.Error, match=r"given by compiler= \(.*absent\) is not an executable file"):
        sdfc.find_compiler(tmp_path / "absent")
    monkeypatch.setenv("SDFC", str(tmp_path / "absent"))
    with pytest.raises(sdfc.Error, match=r"given by \$SDFC"):
        sdfc.find_compiler()
    monkeypatch.setenv("SDFC", compiler)
    assert sdfc.find_compiler() == compiler


def test_loading_what_is_not_an_sdfc_library(tmp_path):
    with pytest.raises(sdfc.Error, match="cannot load"):
        sdfc.load(tmp_path / "absent.so")
    not_a_library = tmp_path / "text.so"
    not_a_library.write_text("hello")
    with pytest.raises(sdfc.Error, match="cannot load"):
        sdfc.load(not_a_library)
