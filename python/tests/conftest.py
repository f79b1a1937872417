"""Test setup: the package of this source tree, the sdfc compiler and the corpus."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # python/: the package under test

import sdfc  # noqa: E402

from _corpus import REPOSITORY, corpus_dir  # noqa: E402


@pytest.fixture(scope="session")
def compiler():
    """The sdfc executable ($SDFC, PATH, build/sdfc); the tests that compile skip without one."""
    try:
        return sdfc.find_compiler()
    except sdfc.Error as e:
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def corpus():
    """The corpus folder; the tests that use it skip without one."""
    path = corpus_dir()
    if path is None:
        pytest.skip("corpus not found (set SDFC_CORPUS); corpus tests skipped")
    return path


@pytest.fixture(scope="session")
def axpy_library(compiler):
    """The library of samples/axpy.sdfg (x, y: float64[N]; N: int32; a: float64; y = a * x + y)."""
    return sdfc.compile(REPOSITORY / "samples" / "axpy.sdfg", compiler=compiler).library_path


@pytest.fixture
def axpy(axpy_library):
    """A fresh Program of samples/axpy.sdfg (closed after the test)."""
    with sdfc.load(axpy_library) as program:
        yield program
