#!/usr/bin/env python3
"""Time to a loaded library: sdfc against DaCe's own compiler on the same SDFGs (issue 40).

    source ../shared/third_party/env.sh
    /usr/bin/python3 bench/compile_time.py [--set DIR]... [--corpus DIR] [--target cpu|cuda]
                                           [--cold N] [--limit N] [--no-dace] [--json FILE]

Each program is compiled once by each compiler, one after the other in the same process so that
both see the same load, the order alternating from program to program: DaCe's ``SDFG.compile()``
in GT4Py's DaCe configuration (``dace_context``: ``-O3 -march=native``, release build; without
GT4Py, DaCe's defaults) and ``sdfc.dace.compile()``, both from the SDFG loaded from the file, each
into a fresh build folder, both timed until DaCe's ``CompiledSDFG`` is loaded: what a GT4Py or
DaCe user waits for. The caches that outlive one program stay warm, as in a user's session: DaCe's
machine-wide build cache (``$DACE_BUILD_CACHE_DIR``: precompiled ``dace.h``, saved CMake
configurations, replayed build commands) and sdfc's build cache (``$SDFC_CACHE_DIR``: the
precompiled prelude), both in a temporary folder warmed by one untimed compile of the first program.
No library is reused: files with the same contents are timed once.

``--cold N`` also times the first N programs with both caches empty (a fresh folder for each
compile): the first compile of a session.

With ``--target cuda`` the floor of a CUDA build is timed too: nvcc alone on a one-kernel ``.cu`` file
(an elementwise kernel and an ``extern "C"`` host function that launches it), compiled with the nvcc
flags sdfc's CUDA builds use (compiler/Compile.cpp and compiler/Build.cpp: ``-std=c++17 -O3
-Xcompiler -fPIC -arch=sm_90 --extended-lambda -Xcompiler -fopenmp,-fvisibility=hidden,...``), linked
into a shared library as sdfc links (the host compiler, ``-shared``, cudart, gold where it links) and
loaded, 3 times in fresh folders: the median is printed as the "nvcc one-kernel baseline", with the
ratio of sdfc's time on the smallest corpus program (the smallest SDFG file) to it. With a CMake that
knows no C++20 flags for nvcc (3.25, for one), DaCe's CUDA builds get a CMake rules file that adds them
(see bench/gpu_vs_dace.py).

Programs: every ``*.sdfg`` under each ``--set`` folder, and from ``--corpus`` each program's
``program.sdfg`` (``program_gpu.sdfg`` with ``--target cuda``); a ``--set`` may be a ``.tar.gz`` of
them. bench/data/gt4py_suite_sdfgs.tar.gz holds the 296 distinct SDFGs GT4Py's field-view suite
(run_dace_cpu, the selection of scripts/gt4py-suite.sh) handed to its compiler on 2026-12-05; such a
set is made with

    GT4PY_SUITE_KEEP=1 GT4PY_BUILD_CACHE_LIFETIME=persistent bash scripts/gt4py-suite.sh
    /usr/bin/python3 bench/compile_time.py --collect /tmp/sdfc-gt4py-suite.XXXXXX .bench-sdfgs/gt4py

Prints one row per program, then sums, medians, the worst ratio (sdfc / DaCe) and how many programs
sdfc built slower. A program one compiler refuses is listed with the error and left out of the
ratios. Exits non-zero only on bad arguments or when no program could be timed by both.
"""

import argparse
import contextlib
import ctypes
import hashlib
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def programs(sets, corpus, target, work):
    """(label, path) of every distinct SDFG file, in a stable order."""
    found = []
    for folder in sets:
        folder = pathlib.Path(folder)
        if folder.is_file() and folder.name.endswith((".tar.gz", ".tgz")):  # an archived set
            unpacked = work / "sets" / folder.name.split(".")[0]
            unpacked.mkdir(parents=True)
            with tarfile.open(folder) as archive:
                archive.extractall(unpacked)
            folder = unpacked
        if not folder.is_dir():
            sys.exit(f"compile_time: --set {folder}: not a folder or a .tar.gz of SDFG files")
        found += [(str(p.relative_to(folder).parent / p.stem), p) for p in sorted(folder.rglob("*.sdfg"))]
    if corpus:
        corpus = pathlib.Path(corpus)
        name = "program_gpu.sdfg" if target == "cuda" else "program.sdfg"
        found += [(f"corpus/{p.parent.name}", p) for p in sorted(corpus.glob(f"*/{name}"))]
    seen, distinct = set(), []
    for label, path in found:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            distinct.append((label, path))
    return distinct


def collect(kept, into):
    """Copies the distinct SDFGs a GT4Py suite run handed to sdfc (``<name>.sdfg`` in the ``sdfc``
    folder of each build folder under ``kept``) into ``into`` as ``<name>-<hash>.sdfg``."""
    into = pathlib.Path(into)
    into.mkdir(parents=True, exist_ok=True)
    seen = {p.name.rsplit("-", 1)[-1] for p in into.glob("*.sdfg")}
    added = 0
    for path in sorted(pathlib.Path(kept).rglob("sdfc/*.sdfg")):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        if f"{digest}.sdfg" in seen:
            continue
        seen.add(f"{digest}.sdfg")
        shutil.copyfile(path, into / f"{path.stem}-{digest}.sdfg")
        added += 1
    print(f"compile_time: {added} new SDFGs in {into} ({len(seen)} in all)")


def dace_configuration(target):
    """GT4Py's DaCe configuration for the target where GT4Py imports, else DaCe's defaults."""
    try:
        from gt4py._core import definitions as core_defs
        from gt4py.next import config as gtx_config
        from gt4py.next.program_processors.runners.dace.workflow import common as gtx_wfdcommon
    except ImportError:
        return contextlib.nullcontext()
    device = core_defs.DeviceType.CUDA if target == "cuda" else core_defs.DeviceType.CPU
    return gtx_wfdcommon.dace_context(device_type=device, cmake_build_type=gtx_config.CMakeBuildType.RELEASE)


class Compilers:
    def __init__(self, target, work):
        import dace
        import sdfc.dace

        self.dace, self.sdfc_dace, self.target, self.work = dace, sdfc.dace, target, work
        self.count = 0
        if target == "cuda":  # a CMake without C++20 flags for nvcc (3.25) gets them from a rules file
            from gpu_vs_dace import cmake_cuda_rules

            rules = cmake_cuda_rules(work / "cmake", dace.Config.get("compiler", "cpp_standard"))
            if rules is not None:
                extra = str(dace.Config.get("compiler", "extra_cmake_args") or "")
                dace.Config.set("compiler", "extra_cmake_args",
                                value=f"{extra} -DCMAKE_USER_MAKE_RULES_OVERRIDE_CUDA={rules}")

    def fresh_folder(self, tool):
        self.count += 1
        folder = self.work / f"{tool}-{self.count}"
        folder.mkdir()
        return folder

    def load(self, path):
        sdfg = self.dace.SDFG.from_file(str(path))
        return sdfg

    def time_dace(self, path):
        sdfg = self.load(path)
        sdfg.build_folder = str(self.fresh_folder("dace"))
        with dace_configuration(self.target):
            start = time.perf_counter()
            compiled = sdfg.compile()
            elapsed = time.perf_counter() - start
        del compiled
        return elapsed

    def time_sdfc(self, path):
        sdfg = self.load(path)
        sdfg.build_folder = str(self.fresh_folder("sdfc"))
        options = {"target": self.target} if self.target == "cuda" else {}
        start = time.perf_counter()
        compiled = self.sdfc_dace.compile(sdfg, **options)
        elapsed = time.perf_counter() - start
        del compiled
        return elapsed


@contextlib.contextmanager
def caches(work, name):
    """$DACE_BUILD_CACHE_DIR and $SDFC_CACHE_DIR set to fresh folders under work/name."""
    saved = {k: os.environ.get(k) for k in ("DACE_BUILD_CACHE_DIR", "SDFC_CACHE_DIR")}
    (work / name / "dace").mkdir(parents=True)
    (work / name / "sdfc").mkdir(parents=True)
    os.environ["DACE_BUILD_CACHE_DIR"] = str(work / name / "dace")
    os.environ["SDFC_CACHE_DIR"] = str(work / name / "sdfc")
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def attempt(timer, path):
    try:
        return timer(path), None
    except Exception as e:  # a refusal or a failed build: reported, left out of the ratios
        first = str(e).strip().splitlines()
        return None, f"{type(e).__name__}: {first[0] if first else ''}"[:160]


def pair(compilers, path, dace_first, use_dace):
    order = [("dace", compilers.time_dace), ("sdfc", compilers.time_sdfc)]
    if not dace_first:
        order.reverse()
    result = {}
    for tool, timer in order:
        if tool == "dace" and not use_dace:
            result[tool] = (None, "not run (--no-dace)")
            continue
        result[tool] = attempt(timer, path)
    return result


def summarize(rows, key_a, key_b, title):
    both = [r for r in rows if r[key_a] is not None and r[key_b] is not None]
    print(f"\n{title}: {len(both)} programs timed by both")
    if not both:
        return None
    a = [r[key_a] for r in both]
    b = [r[key_b] for r in both]
    ratios = [r[key_b] / r[key_a] for r in both]
    worst = max(both, key=lambda r: r[key_b] / r[key_a])
    summary = {
        "programs": len(both),
        "dace_sum_s": sum(a),
        "sdfc_sum_s": sum(b),
        "sum_ratio": sum(b) / sum(a),
        "dace_median_s": statistics.median(a),
        "sdfc_median_s": statistics.median(b),
        "median_ratio": statistics.median(b) / statistics.median(a),
        "worst_ratio": worst[key_b] / worst[key_a],
        "worst_program": worst["program"],
        "sdfc_slower_on": sum(1 for x in ratios if x > 1.0),
    }
    print(f"  sum     DaCe {summary['dace_sum_s']:8.2f} s   sdfc {summary['sdfc_sum_s']:8.2f} s   "
          f"ratio {summary['sum_ratio']:.2f}")
    print(f"  median  DaCe {summary['dace_median_s']:8.3f} s   sdfc {summary['sdfc_median_s']:8.3f} s   "
          f"ratio {summary['median_ratio']:.2f}")
    print(f"  worst ratio {summary['worst_ratio']:.2f} ({summary['worst_program']}); "
          f"sdfc slower on {summary['sdfc_slower_on']} of {len(both)}")
    return summary

# nvcc alone on one kernel: the floor of any CUDA build (see the module's text).
ONE_KERNEL = r"""#include <cuda_runtime.h>

__global__ void axpy_kernel(int n, double a, const double* __restrict__ x, double* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __attribute__((visibility("default"))) int one_kernel_launch(int n, double a, const double* x, double* y,
                                                                        cudaStream_t stream) {
  axpy_kernel<<<(n + 255) / 256, 256, 0, stream>>>(n, a, x, y);
  return (int)cudaGetLastError();
}
"""
GPU_ARCH = "sm_90"  # sdfc's default architecture (ir/Options.cpp)


def _cuda_compiler():
    """nvcc as sdfc finds it: $SDFC_NVCC, PATH, /usr/local/cuda/bin."""
    for candidate in (os.environ.get("SDFC_NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _cudart_flags(nvcc):
    """-L/-rpath/-lcudart of the toolkit nvcc belongs to (compiler/Build.cpp: runtime_link_flags)."""
    roots = [pathlib.Path(nvcc).parent.parent, pathlib.Path(os.path.realpath(nvcc)).parent.parent]
    roots += [pathlib.Path(os.environ[v]) for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    roots.append(pathlib.Path("/usr/local/cuda"))
    for root in roots:
        for libdir in ("lib64", "lib", "targets/x86_64-linux/lib"):
            if (root / libdir / "libcudart.so").exists():
                return [f"-L{root / libdir}", f"-Wl,-rpath,{root / libdir}", "-lcudart"]
    return ["-lcudart"]


def nvcc_baseline(work, repeats=3):
    """(median seconds, samples, commands) of building and loading the one-kernel library, or (None, error)."""
    nvcc = _cuda_compiler()
    cxx = os.environ.get("SDFC_CXX") or shutil.which("c++") or shutil.which("g++")
    if nvcc is None or cxx is None:
        return None, "no nvcc" if nvcc is None else "no host C++ compiler"
    compile_cmd = [nvcc, "-std=c++17", "-O3", "-Xcompiler", "-fPIC", f"-arch={GPU_ARCH}", "--extended-lambda",
                   "-Xcompiler", "-fopenmp,-fvisibility=hidden,-fvisibility-inlines-hidden,-fno-math-errno",
                   "-c", "one_kernel.cu", "-o", "one_kernel.cu.o"]
    link_cmd = [cxx, "-shared", "-std=c++17", "-O3", "-fPIC", "-fopenmp", "-fno-math-errno", "-fvisibility=hidden",
                "-fvisibility-inlines-hidden", "one_kernel.cu.o", *_cudart_flags(nvcc)]
    probe = work / "nvcc-baseline-probe"
    probe.mkdir(parents=True)
    (probe / "probe.cpp").write_text('extern "C" int sdfc_probe() { return 1; }\n')
    gold = subprocess.run([cxx, "-shared", "-fPIC", "-fuse-ld=gold", "probe.cpp", "-o", "libprobe.so"], cwd=probe,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    if gold:
        link_cmd.append("-fuse-ld=gold")
    link_cmd += ["-o", "libone_kernel.so"]
    samples = []
    for i in range(repeats):
        folder = work / f"nvcc-baseline-{i}"
        folder.mkdir(parents=True)
        (folder / "one_kernel.cu").write_text(ONE_KERNEL)
        start = time.perf_counter()
        for command in (compile_cmd, link_cmd):
            run = subprocess.run(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if run.returncode != 0:
                return None, f"{' '.join(command[:2])} ... failed: {run.stdout.strip()[:300]}"
        library = ctypes.CDLL(str(folder / "libone_kernel.so"))
        library.one_kernel_launch  # resolved: the library is loaded and exports the launch function
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), {"samples": samples, "commands": [compile_cmd, link_cmd]}


def report_baseline(work, rows, sizes):
    """Prints the nvcc one-kernel baseline and the ratio of the smallest corpus program's sdfc time to it."""
    median, detail = nvcc_baseline(work)
    if median is None:
        print(f"\nnvcc one-kernel baseline: not measured ({detail})")
        return {"error": detail}
    result = {"seconds": median, **detail}
    print(f"\nnvcc one-kernel baseline: {median:.3f} s (median of {len(detail['samples'])}: nvcc -c with sdfc's "
          f"flags, link, load)")
    timed = [r for r in rows if r["sdfc"] is not None]
    corpus = [r for r in timed if r["program"].startswith("corpus/")] or timed
    if corpus:
        smallest = min(corpus, key=lambda r: sizes[r["program"]])
        result.update(smallest_program=smallest["program"], smallest_program_sdfc_s=smallest["sdfc"],
                      ratio=smallest["sdfc"] / median)
        print(f"  smallest {'corpus ' if corpus is not timed else ''}program {smallest['program']} "
              f"({sizes[smallest['program']]} bytes): sdfc {smallest['sdfc']:.3f} s = {result['ratio']:.2f}x the "
              "baseline")
    return result



def fmt(seconds):
    return f"{seconds:8.3f}" if seconds is not None else "       -"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", default=[], help="a folder of SDFG files (recursive)")
    parser.add_argument("--corpus", help="sdfc's corpus folder (each program's program.sdfg)")
    parser.add_argument("--target", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--cold", type=int, default=0, metavar="N", help="also time the first N programs with empty caches")
    parser.add_argument("--limit", type=int, default=0, metavar="N", help="only the first N programs")
    parser.add_argument("--no-dace", action="store_true", help="time sdfc only")
    parser.add_argument("--json", help="write the rows and summaries to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary build folders")
    parser.add_argument("--collect", nargs=2, metavar=("KEPT", "INTO"),
                        help="copy the SDFGs of a kept GT4Py suite folder (GT4PY_SUITE_KEEP=1 "
                        "GT4PY_BUILD_CACHE_LIFETIME=persistent bash scripts/gt4py-suite.sh) into a set folder, and stop")
    args = parser.parse_args()
    if args.collect:
        collect(*args.collect)
        return 0
    sys.path.insert(0, str(ROOT / "python"))
    work = pathlib.Path(tempfile.mkdtemp(prefix="sdfc-compile-time-"))
    rows, cold_rows = [], []
    try:
        chosen = programs(args.set, args.corpus, args.target, work)
        if args.limit:
            chosen = chosen[: args.limit]
        if not chosen:
            parser.error("no SDFG files: give --set and/or --corpus")
        compilers = Compilers(args.target, work)
        import sdfc

        print(f"sdfc {sdfc.find_compiler()}; DaCe {compilers.dace.__version__}; target {args.target}; "
              f"{len(chosen)} distinct programs")
        with caches(work, "warm"):
            label, path = chosen[0]
            pair(compilers, path, True, not args.no_dace)  # warms both caches, untimed
            print(f"{'program':48} {'DaCe s':>8} {'sdfc s':>8} {'ratio':>6}")
            for i, (label, path) in enumerate(chosen):
                result = pair(compilers, path, i % 2 == 0, not args.no_dace)
                row = {"program": label, "dace": result["dace"][0], "sdfc": result["sdfc"][0],
                       "dace_error": result["dace"][1], "sdfc_error": result["sdfc"][1]}
                rows.append(row)
                ratio = f"{row['sdfc'] / row['dace']:6.2f}" if row["dace"] and row["sdfc"] else "     -"
                print(f"{label[:48]:48} {fmt(row['dace'])} {fmt(row['sdfc'])} {ratio}", flush=True)
                for tool in ("dace", "sdfc"):
                    if row[f"{tool}_error"] and not args.no_dace:
                        print(f"    {tool}: {row[f'{tool}_error']}")
        for i, (label, path) in enumerate(chosen[: args.cold]):
            with caches(work, f"cold-{i}"):
                result = pair(compilers, path, i % 2 == 0, not args.no_dace)
            cold_rows.append({"program": label, "dace": result["dace"][0], "sdfc": result["sdfc"][0]})
            print(f"cold {label[:43]:43} {fmt(cold_rows[-1]['dace'])} {fmt(cold_rows[-1]['sdfc'])}", flush=True)
        summaries = {"warm": summarize(rows, "dace", "sdfc", "warm caches (a session's later compiles)")}
        if cold_rows:
            summaries["cold"] = summarize(cold_rows, "dace", "sdfc", "cold caches (a session's first compile)")
        if args.target == "cuda":
            sizes = {label: path.stat().st_size for label, path in chosen}
            summaries["nvcc_one_kernel_baseline"] = report_baseline(work, rows, sizes)
        if args.no_dace:
            times = [r["sdfc"] for r in rows if r["sdfc"] is not None]
            if times:
                print(f"\nsdfc only: {len(times)} programs, sum {sum(times):.2f} s, median {statistics.median(times):.3f} s")
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps({"rows": rows, "cold": cold_rows, "summaries": summaries}, indent=1))
        if not args.no_dace and summaries["warm"] is None:
            return 1
        return 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
