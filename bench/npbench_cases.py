#!/usr/bin/env python3
"""NPBench-like kernels through DaCe's Python frontend, written as case folders for bench/gpu_vs_dace.py.

    source ../shared/third_party/env.sh      # or .gpu-py/env.sh on the GPU machine
    python3 bench/npbench_cases.py [OUT]     # default .bench-sdfgs/npbench
    python3 bench/gpu_vs_dace.py --corpus .bench-sdfgs/npbench ...

The corpus's programs are small by design; these are the kinds of programs users write with
``@dace.program`` (the NPBench suite's categories: stencils with a time loop, weather stencils,
matrix-vector products written as maps with sums, row reductions, elementwise arithmetic), each
written here from its textbook definition. Every program takes its sizes as symbols, so that
gpu_vs_dace.py's ``large`` size scales them. Each case folder holds what the harness reads:
``program.sdfg`` (``to_sdfg()`` of the program, before any GPU transformation; the harness puts the
arguments on the device and applies ``apply_gpu_transformations()``), ``inputs.json`` (the symbols'
values and seeded random arrays at a small size) and ``expected.json`` (the outputs computed by
NumPy from the same inputs, and the tolerances). The same script always writes the same files.
"""

import json
import pathlib
import sys

import dace
import numpy as np

N, M, K, T = (dace.symbol(s, dace.int32) for s in ("N", "M", "K", "T"))


@dace.program
def jacobi_2d(A: dace.float64[N, N], B: dace.float64[N, N]):
    for t in range(T):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def jacobi_2d_ref(A, B, T):
    for _ in range(T):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def _heat(u):
    c = u[1:-1, 1:-1, 1:-1]
    return (0.125 * (u[2:, 1:-1, 1:-1] - 2.0 * c + u[:-2, 1:-1, 1:-1]) +
            0.125 * (u[1:-1, 2:, 1:-1] - 2.0 * c + u[1:-1, :-2, 1:-1]) +
            0.125 * (u[1:-1, 1:-1, 2:] - 2.0 * c + u[1:-1, 1:-1, :-2]) + c)


@dace.program
def heat_3d(A: dace.float64[N, N, N], B: dace.float64[N, N, N]):
    for t in range(T):
        B[1:-1, 1:-1, 1:-1] = (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1]) +
                               0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1]) +
                               0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, :-2]) +
                               A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1, 1:-1] = (0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1]) +
                               0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1]) +
                               0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, :-2]) +
                               B[1:-1, 1:-1, 1:-1])


def heat_3d_ref(A, B, T):
    for _ in range(T):
        B[1:-1, 1:-1, 1:-1] = _heat(A)
        A[1:-1, 1:-1, 1:-1] = _heat(B)


@dace.program
def fdtd_2d(ex: dace.float64[M, N], ey: dace.float64[M, N], hz: dace.float64[M, N]):
    for t in range(T):
        ey[0, :] = 0.25 * t
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def fdtd_2d_ref(ex, ey, hz, T):
    for t in range(T):
        ey[0, :] = 0.25 * t
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


@dace.program
def hdiff(inp: dace.float64[M + 4, N + 4, K], coeff: dace.float64[M, N, K], out: dace.float64[M, N, K]):
    """Horizontal diffusion of the COSMO weather model: a Laplacian, limited fluxes, the update."""
    lap = 4.0 * inp[1:M + 3, 1:N + 3, :] - (inp[2:M + 4, 1:N + 3, :] + inp[0:M + 2, 1:N + 3, :] +
                                            inp[1:M + 3, 2:N + 4, :] + inp[1:M + 3, 0:N + 2, :])
    res1 = lap[1:, 1:N + 1, :] - lap[:M + 1, 1:N + 1, :]
    flx = np.where(res1 * (inp[2:M + 3, 2:N + 2, :] - inp[1:M + 2, 2:N + 2, :]) > 0, 0.0, res1)
    res2 = lap[1:M + 1, 1:, :] - lap[1:M + 1, :N + 1, :]
    fly = np.where(res2 * (inp[2:M + 2, 2:N + 3, :] - inp[2:M + 2, 1:N + 2, :]) > 0, 0.0, res2)
    out[:] = inp[2:M + 2, 2:N + 2, :] - coeff * (flx[1:, :, :] - flx[:-1, :, :] + fly[:, 1:, :] - fly[:, :-1, :])


def hdiff_ref(inp, coeff, out):
    m, n = out.shape[0], out.shape[1]
    lap = 4.0 * inp[1:m + 3, 1:n + 3, :] - (inp[2:m + 4, 1:n + 3, :] + inp[0:m + 2, 1:n + 3, :] +
                                            inp[1:m + 3, 2:n + 4, :] + inp[1:m + 3, 0:n + 2, :])
    res1 = lap[1:, 1:n + 1, :] - lap[:m + 1, 1:n + 1, :]
    flx = np.where(res1 * (inp[2:m + 3, 2:n + 2, :] - inp[1:m + 2, 2:n + 2, :]) > 0, 0.0, res1)
    res2 = lap[1:m + 1, 1:, :] - lap[1:m + 1, :n + 1, :]
    fly = np.where(res2 * (inp[2:m + 2, 2:n + 3, :] - inp[2:m + 2, 1:n + 2, :]) > 0, 0.0, res2)
    out[:] = inp[2:m + 2, 2:n + 2, :] - coeff * (flx[1:, :, :] - flx[:-1, :, :] + fly[:, 1:, :] - fly[:, :-1, :])


@dace.program
def gesummv(A: dace.float64[N, N], B: dace.float64[N, N], x: dace.float64[N], y: dace.float64[N]):
    """y = 1.5 A x + 1.2 B x, the products written as maps with sums (write-conflict resolution)."""
    ta = np.zeros([N], dtype=np.float64)
    tb = np.zeros([N], dtype=np.float64)
    for i, j in dace.map[0:N, 0:N]:
        ta[i] += A[i, j] * x[j]
        tb[i] += B[i, j] * x[j]
    y[:] = 1.5 * ta + 1.2 * tb


def gesummv_ref(A, B, x, y):
    y[:] = 1.5 * (A @ x) + 1.2 * (B @ x)


@dace.program
def atax(A: dace.float64[M, N], x: dace.float64[N], y: dace.float64[N]):
    """y = A^T (A x), both products as maps with sums: the first along rows, the second down columns."""
    tmp = np.zeros([M], dtype=np.float64)
    for i, j in dace.map[0:M, 0:N]:
        tmp[i] += A[i, j] * x[j]
    y[:] = 0.0
    for i, j in dace.map[0:M, 0:N]:
        y[j] += A[i, j] * tmp[i]


def atax_ref(A, x, y):
    y[:] = A.T @ (A @ x)


@dace.program
def softmax_rows(x: dace.float32[M, N], out: dace.float32[M, N]):
    tmp_max = np.maximum.reduce(x, axis=1, keepdims=True)
    tmp_out = np.exp(x - tmp_max)
    tmp_sum = np.add.reduce(tmp_out, axis=1, keepdims=True)
    out[:] = tmp_out / tmp_sum


def softmax_rows_ref(x, out):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    out[:] = e / np.sum(e, axis=-1, keepdims=True)


@dace.program
def arc_distance(theta_1: dace.float64[N], phi_1: dace.float64[N], theta_2: dace.float64[N],
                 phi_2: dace.float64[N], out: dace.float64[N]):
    tmp = np.sin((theta_2 - theta_1) / 2)**2 + np.cos(theta_1) * np.cos(theta_2) * np.sin((phi_2 - phi_1) / 2)**2
    out[:] = 2 * np.arctan2(np.sqrt(tmp), np.sqrt(1 - tmp))


def arc_distance_ref(theta_1, phi_1, theta_2, phi_2, out):
    tmp = np.sin((theta_2 - theta_1) / 2)**2 + np.cos(theta_1) * np.cos(theta_2) * np.sin((phi_2 - phi_1) / 2)**2
    out[:] = 2 * np.arctan2(np.sqrt(tmp), np.sqrt(1 - tmp))


@dace.program
def clip_axpy(a: dace.int64[M, N], b: dace.int64[M, N], out: dace.int64[M, N]):
    out[:] = np.minimum(np.maximum(a, 2), 10) * 4 + b * 3 + 9


def clip_axpy_ref(a, b, out):
    out[:] = np.clip(a, 2, 10) * 4 + b * 3 + 9


# name: (program, reference, symbols, arrays {name: (dtype, shape in symbols, role)}, outputs)
# A role is "in" (random), "out" (zeros) or "inout" (random).
CASES = {
    "np_jacobi_2d": (jacobi_2d, jacobi_2d_ref, {"N": 34, "T": 8},
                     {"A": ("float64", ("N", "N")), "B": ("float64", ("N", "N"))}, ["A", "B"]),
    "np_heat_3d": (heat_3d, heat_3d_ref, {"N": 14, "T": 6},
                   {"A": ("float64", ("N", "N", "N")), "B": ("float64", ("N", "N", "N"))}, ["A", "B"]),
    "np_fdtd_2d": (fdtd_2d, fdtd_2d_ref, {"M": 30, "N": 37, "T": 6},
                   {"ex": ("float64", ("M", "N")), "ey": ("float64", ("M", "N")), "hz": ("float64", ("M", "N"))}, ["ex", "ey", "hz"]),
    "np_hdiff": (hdiff, hdiff_ref, {"M": 20, "N": 17, "K": 9},
                 {"inp": ("float64", ("M+4", "N+4", "K")), "coeff": ("float64", ("M", "N", "K")),
                  "out": ("float64", ("M", "N", "K"))}, ["out"]),
    "np_gesummv": (gesummv, gesummv_ref, {"N": 45},
                   {"A": ("float64", ("N", "N")), "B": ("float64", ("N", "N")), "x": ("float64", ("N", )),
                    "y": ("float64", ("N", ))}, ["y"]),
    "np_atax": (atax, atax_ref, {"M": 39, "N": 46},
                {"A": ("float64", ("M", "N")), "x": ("float64", ("N", )), "y": ("float64", ("N", ))}, ["y"]),
    "np_softmax_rows": (softmax_rows, softmax_rows_ref, {"M": 23, "N": 31},
                        {"x": ("float32", ("M", "N")), "out": ("float32", ("M", "N"))}, ["out"]),
    "np_arc_distance": (arc_distance, arc_distance_ref, {"N": 257},
                        {n: ("float64", ("N", )) for n in ("theta_1", "phi_1", "theta_2", "phi_2", "out")}, ["out"]),
    "np_clip_axpy": (clip_axpy, clip_axpy_ref, {"M": 19, "N": 27},
                     {"a": ("int64", ("M", "N")), "b": ("int64", ("M", "N")), "out": ("int64", ("M", "N"))},
                     ["out"]),
}

TOLERANCE = {"float64": {"rtol": 1e-10, "atol": 1e-12}, "float32": {"rtol": 1e-5, "atol": 1e-6},
             "int64": {"rtol": 0, "atol": 0}}


def shape_of(shape, symbols):
    return [int(eval(e, {}, dict(symbols))) for e in shape]


def inputs_of(name, symbols, arrays, outputs):
    rng = np.random.default_rng(sum(map(ord, name)))
    values = {}
    for a, (dtype, shape) in arrays.items():
        dims = shape_of(shape, symbols)
        if dtype.startswith("int"):
            values[a] = rng.integers(-20, 20, size=dims).astype(dtype)
        elif a in outputs and a not in ("A", "B", "ex", "ey", "hz"):
            values[a] = np.zeros(dims, dtype=dtype)
        else:
            values[a] = rng.random(dims).astype(dtype)
    return values


def entry(array):
    return {"dtype": str(array.dtype), "shape": list(array.shape), "data": array.ravel().tolist()}


def write_case(folder, name, case):
    program, reference, symbols, arrays, outputs = case
    folder.mkdir(parents=True, exist_ok=True)
    sdfg = program.to_sdfg(simplify=True)
    sdfg.name = name
    values = inputs_of(name, symbols, arrays, outputs)
    inputs = {"format": "sdfc-corpus-v1", "sdfg_name": name,
              "symbols": {s: {"dtype": "int32", "value": v} for s, v in symbols.items()}, "scalars": {},
              "arrays": {a: entry(v) for a, v in values.items()}}
    result = {a: v.copy() for a, v in values.items()}
    extra = {"T": symbols["T"]} if "T" in symbols and "T" in reference.__code__.co_varnames else {}
    reference(*(result[a] for a in arrays), **extra)
    dtypes = sorted({d for d, _ in arrays.values()})
    expected = {"format": "sdfc-corpus-v1", "sdfg_name": name, "outputs": outputs,
                "arrays": {a: entry(result[a]) for a in outputs}, "tolerance": {d: TOLERANCE[d] for d in dtypes}}
    sdfg.save(str(folder / "program.sdfg"))
    (folder / "inputs.json").write_text(json.dumps(inputs, indent=1))
    (folder / "expected.json").write_text(json.dumps(expected, indent=1))


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".bench-sdfgs/npbench")
    for name, case in CASES.items():
        write_case(out / name, name, case)
        print(f"{name}: {out / name}")


if __name__ == "__main__":
    main()
