"""What binding needs of an array object: its data pointer, shape, strides, dtype and whether it
lives in device memory. NumPy arrays (and objects with ``__array_interface__``) are host memory;
objects with ``__cuda_array_interface__`` (CuPy arrays, PyTorch CUDA tensors, Numba device
arrays) are device memory."""

import ctypes

import numpy as np


class ArrayView:
    """One array argument as the C ABI sees it.

    ``pointer`` is the address of the first element, ``shape`` a tuple of extents,
    ``byte_strides`` a tuple of strides in bytes, ``dtype`` a NumPy dtype, ``device`` whether the
    memory is device memory and ``stream`` the CUDA array interface's stream (``None`` when there
    is none to synchronize with).
    """

    __slots__ = ("pointer", "shape", "byte_strides", "dtype", "device", "stream")

    def __init__(self, pointer, shape, byte_strides, dtype, device, stream=None):
        self.pointer = pointer
        self.shape = shape
        self.byte_strides = byte_strides
        self.dtype = dtype
        self.device = device
        self.stream = stream

    @property
    def size(self):
        """The number of elements."""
        count = 1
        for extent in self.shape:
            count *= extent
        return count


def contiguous_byte_strides(shape, itemsize):
    """The strides in bytes of a row-major array of ``shape``."""
    strides = []
    step = itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _from_interface(interface, device):
    shape = tuple(int(e) for e in interface["shape"])
    dtype = np.dtype(interface["typestr"])
    strides = interface.get("strides")
    byte_strides = (
        contiguous_byte_strides(shape, dtype.itemsize) if strides is None else tuple(int(s) for s in strides)
    )
    data = interface["data"]
    pointer = int(data[0]) if isinstance(data, tuple) else None
    return ArrayView(pointer, shape, byte_strides, dtype, device, interface.get("stream") if device else None)


def view_of(obj):
    """The :class:`ArrayView` of ``obj``, or ``None`` when ``obj`` is not an array this package
    binds (a NumPy array, an object with ``__cuda_array_interface__`` or ``__array_interface__``)."""
    if isinstance(obj, np.ndarray):
        return ArrayView(obj.__array_interface__["data"][0], obj.shape, obj.strides, obj.dtype, False)
    interface = getattr(obj, "__cuda_array_interface__", None)
    if interface is not None:
        return _from_interface(interface, True)
    if getattr(obj, "__array_interface__", None) is not None:
        # NumPy reads the interface without copying (also when it exposes a buffer object).
        return view_of(np.asarray(obj))
    return None


def _find_data_pointer_offset():
    """The offset of the data pointer in NumPy's array object (``PyArrayObject_fields.data``,
    right after the object header), found by comparing with ``__array_interface__`` on a few
    arrays; ``None`` when no offset matches them all (then nothing reads it)."""
    probes = [np.empty(n, dtype=np.uint8) for n in (1, 16, 4096)]
    for offset in range(8, 65, 8):
        if offset + ctypes.sizeof(ctypes.c_void_p) > np.ndarray.__basicsize__:
            break
        if all(
            ctypes.c_void_p.from_address(id(p) + offset).value == p.__array_interface__["data"][0] for p in probes
        ):
            return offset
    return None


_DATA_POINTER_OFFSET = _find_data_pointer_offset()


def data_pointer_probe(array):
    """A ctypes view of ``array``'s data-pointer field (``probe.value`` reads the pointer in well
    under a microsecond, ``__array_interface__`` takes about one), or ``None`` when the field was
    not found. The probe does not keep ``array`` alive: read it only while ``array`` is."""
    if _DATA_POINTER_OFFSET is None or not isinstance(array, np.ndarray):
        return None
    return ctypes.c_void_p.from_address(id(array) + _DATA_POINTER_OFFSET)
