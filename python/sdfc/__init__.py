"""Python bindings of sdfc-built programs (ctypes and NumPy, no compiled extension).

::

    import numpy as np, sdfc
    program = sdfc.compile("axpy.sdfg")                 # or sdfc.load("axpy.so")
    x, y = np.ones(8), np.zeros(8)
    program(x=x, y=y, a=2.0)                            # N = 8 is inferred from the shapes

See docs/python.md for the binding rules, symbol inference, workspaces, streams and GPU arrays.
"""

from ._compile import compile, find_compiler, library_directory, load
from ._errors import Error
from ._program import Program

__version__ = "0.1.0"

__all__ = ["Error", "Program", "compile", "find_compiler", "library_directory", "load"]
