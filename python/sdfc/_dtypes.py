"""The dtypes of sdfc's program description, their NumPy and C types, and exact conversion of
Python and NumPy numbers into them (as ``compiler/Convert.h``: a value is bound only when the
dtype holds it exactly)."""

import ctypes
import math
import numbers

import numpy as np

def _complex_type(part, name):
    """A ctypes type laid out as ``part re, im`` with a ``value`` (a Python complex), as the
    scalar ctypes types have."""

    def get(self):
        return complex(self.re, self.im)

    def set(self, v):
        self.re, self.im = v.real, v.imag

    return type(name, (ctypes.Structure,), {"_fields_": [("re", part), ("im", part)], "value": property(get, set)})


#: dtype name -> (NumPy dtype, ctypes type) of every dtype a program argument can have.
DTYPES = {
    "bool": (np.dtype(np.bool_), ctypes.c_bool),
    "int8": (np.dtype(np.int8), ctypes.c_int8),
    "int16": (np.dtype(np.int16), ctypes.c_int16),
    "int32": (np.dtype(np.int32), ctypes.c_int32),
    "int64": (np.dtype(np.int64), ctypes.c_int64),
    "uint8": (np.dtype(np.uint8), ctypes.c_uint8),
    "uint16": (np.dtype(np.uint16), ctypes.c_uint16),
    "uint32": (np.dtype(np.uint32), ctypes.c_uint32),
    "uint64": (np.dtype(np.uint64), ctypes.c_uint64),
    "float32": (np.dtype(np.float32), ctypes.c_float),
    "float64": (np.dtype(np.float64), ctypes.c_double),
    "complex64": (np.dtype(np.complex64), _complex_type(ctypes.c_float, "c_complex64")),
    "complex128": (np.dtype(np.complex128), _complex_type(ctypes.c_double, "c_complex128")),
}


def _integer_range(dtype):
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def convert_exact(value, dtype_name):
    """``value`` (a Python or NumPy bool, integer or float, or a 0-d NumPy array) as the Python
    value to store in ``dtype_name``'s C type; raises ValueError saying why when the dtype does
    not hold it exactly (2.5 into int32, 300 into int8, 0.1 into float32, 2 into bool)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if dtype_name in ("complex64", "complex128"):
        if not isinstance(value, numbers.Complex) or isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{value!r} ({type(value).__name__}) is not a number")
        part = "float32" if dtype_name == "complex64" else "float64"
        z = complex(value)
        return complex(convert_exact(z.real, part), convert_exact(z.imag, part))
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    elif isinstance(value, numbers.Integral):
        value = int(value)
    elif isinstance(value, numbers.Real):
        as_float = float(value)
        if as_float != value and not math.isnan(as_float):  # a Fraction such as 1/3
            raise ValueError(f"{value!r} is not exactly representable as a float")
        value = as_float
    else:
        raise ValueError(f"{value!r} ({type(value).__name__}) is not a number")
    dtype = DTYPES[dtype_name][0]
    if dtype.kind == "b":
        if value in (0, 1):  # also 0.0 and 1.0, as sdfc's convert_exact
            return bool(value)
        raise ValueError(f"{value!r} is neither 0 nor 1")
    if dtype.kind in "iu":
        if isinstance(value, float):
            if not math.isfinite(value) or value != math.floor(value):
                raise ValueError(f"{value!r} is not an integer")
            value = int(value)
        low, high = _integer_range(dtype)
        if not low <= value <= high:
            raise ValueError(f"{value!r} is outside {dtype_name}'s range [{low}, {high}]")
        return value
    # float32, float64
    try:
        with np.errstate(over="ignore"):
            converted = float(dtype.type(value))
    except OverflowError:
        raise ValueError(f"{value!r} is outside {dtype_name}'s range") from None
    if converted == value or (isinstance(value, float) and math.isnan(value)):
        return converted
    raise ValueError(f"{value!r} is not exactly representable (nearest {dtype_name}: {converted!r})")
