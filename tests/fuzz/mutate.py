#!/usr/bin/env python3
"""Structure-aware mutation harness (issue 18): mutants of corpus SDFGs through `sdfc validate`,
`sdfc compile --emit-source` and, for accepted mutants, `sdfc compile -o` (a real build).

Each mutant changes one thing a user or a buggy tool could get wrong: a renamed map parameter, a
subset end, a shape, a dtype, a schedule or storage, a deleted edge or node, tasklet code, a
symbol. sdfc must answer every mutant with exit 0 or 1 (a diagnostic), never a crash (a signal), a
hang (the time limit), a sanitizer report, or an accepted program whose generated code the C++
compiler rejects ("this is an sdfc bug").

    tests/fuzz/mutate.py --sdfc build/sdfc --corpus DIR [--count N] [--seed S] [--build-every K] [--gpu-build auto|on|off]

Accepted GPU mutants (from `program_gpu*.sdfg`) are built for CUDA with nvcc when it is found
($SDFC_NVCC, `nvcc` on PATH, or /usr/local/cuda/bin/nvcc; `--gpu-build on` makes its absence an
error), so that their generated code is compiled too, not only emitted.

Prints one line per finding and a summary; exits 1 when there is any finding. CI runs a short,
seeded run (tests/CMakeLists.txt); longer runs by hand: --count 1000 --seed <anything>.
"""
import argparse
import copy
import json
import os
import random
import subprocess
import sys
import shutil
import tempfile


def walk(x, path=()):
    """Yields (path, dict) for every dict in the document."""
    if isinstance(x, dict):
        yield path, x
        for k, v in x.items():
            yield from walk(v, path + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from walk(v, path + (i,))


def of_type(doc, *types):
    return [d for _, d in walk(doc) if d.get("type") in types]


def ranges(doc):
    return [d for _, d in walk(doc) if d.get("type") == "Range" and isinstance(d.get("ranges"), list) and d["ranges"]]


def states(doc):
    return [d for _, d in walk(doc) if d.get("type") == "SDFGState"]


def rename_map_param(doc, rng):
    maps = [m for m in of_type(doc, "MapEntry") if m.get("attributes", {}).get("params")]
    if not maps:
        return False
    params = rng.choice(maps)["attributes"]["params"]
    params[rng.randrange(len(params))] = "renamed_" + str(rng.randrange(100))
    return True


def change_subset_end(doc, rng):
    rs = ranges(doc)
    if not rs:
        return False
    dim = rng.choice(rng.choice(rs)["ranges"])
    key = rng.choice(["start", "end", "step"])
    dim[key] = rng.choice(["0", "-1", "N", "N + 7", "nan", "2**62", "i", "-5", "1/0", "N**2**2", "x y"])
    return True


def change_shape(doc, rng):
    arrays = [a for a in doc.get("attributes", {}).get("_arrays", {}).values() if "shape" in a.get("attributes", {})]
    if not arrays:
        return False
    shape = rng.choice(arrays)["attributes"]["shape"]
    if not shape:
        return False
    shape[rng.randrange(len(shape))] = rng.choice(["0", "-3", "9223372036854775807", "N - 100", "M", "2.5", "N*N*N*N"])
    return True


def change_dtype(doc, rng):
    arrays = list(doc.get("attributes", {}).get("_arrays", {}).values())
    if not arrays:
        return False
    rng.choice(arrays).setdefault("attributes", {})["dtype"] = rng.choice(
        ["int8", "uint64", "float32", "bool", "float16", "complex128", "int128", "void"])
    return True


def change_schedule_or_storage(doc, rng):
    maps = of_type(doc, "MapEntry")
    arrays = list(doc.get("attributes", {}).get("_arrays", {}).values())
    if maps and rng.random() < 0.5:
        rng.choice(maps)["attributes"]["schedule"] = rng.choice(
            ["Sequential", "CPU_Multicore", "GPU_Device", "GPU_ThreadBlock", "Unrolled", "Bogus"])
        return True
    if arrays:
        rng.choice(arrays).setdefault("attributes", {})["storage"] = rng.choice(
            ["Register", "CPU_Heap", "GPU_Global", "GPU_Shared", "CPU_Pinned", "Bogus"])
        return True
    return False


def delete_edge_or_node(doc, rng):
    sts = [s for s in states(doc) if s.get("edges")]
    if not sts:
        return False
    st = rng.choice(sts)
    if rng.random() < 0.7:
        del st["edges"][rng.randrange(len(st["edges"]))]
    elif st.get("nodes"):
        del st["nodes"][rng.randrange(len(st["nodes"]))]
    return True


def change_code(doc, rng):
    tasklets = of_type(doc, "Tasklet")
    if not tasklets:
        return False
    code = tasklets[rng.randrange(len(tasklets))]["attributes"].setdefault("code", {})
    code["string_data"] = rng.choice(
        ["", "x = ", "b = a +", "b = unknown_name(a)", "b = a if a > 0 else", "for i in range(3):\n  b = a",
         "b = a ** 1000", "b = a // 0", "import os", "b = a; return", "b = [a]"])
    return True


def change_symbol(doc, rng):
    syms = doc.get("attributes", {}).get("symbols")
    if not isinstance(syms, dict) or not syms:
        return False
    name = rng.choice(sorted(syms))
    if rng.random() < 0.5:
        del syms[name]
    else:
        syms[name] = rng.choice(["float64", "bool", "int8", "string", "uint64"])
    return True


def change_connector(doc, rng):
    edges = [e for s in states(doc) for e in s.get("edges", [])]
    if not edges:
        return False
    e = rng.choice(edges)
    key = rng.choice(["src_connector", "dst_connector"])
    e[key] = rng.choice([None, "bogus", "IN_x", "OUT_x", "__return"])
    return True


def keep(folder, path):
    os.makedirs(folder, exist_ok=True)
    with open(path) as f, open(os.path.join(folder, os.path.basename(path)), "w") as g:
        g.write(f.read())


MUTATIONS = [rename_map_param, change_subset_end, change_shape, change_dtype, change_schedule_or_storage,
             delete_edge_or_node, change_code, change_symbol, change_connector]


def run(cmd, timeout, env=None):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return None, "timeout"


def classify(rc, out):
    """A finding's kind, or None when the answer is fine."""
    if rc is None:
        return "hang"
    if rc < 0 or rc >= 128:
        return "crash (signal %d)" % (-rc if rc < 0 else rc - 128)
    if "ERROR: AddressSanitizer" in out or "runtime error:" in out:
        return "sanitizer report"
    if "this is an sdfc bug" in out:
        return "sdfc bug"
    if rc not in (0, 1):
        return "exit %d" % rc
    return None


def find_nvcc():
    """nvcc as sdfc would run it, or None."""
    for candidate in (os.environ.get("SDFC_NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sdfc", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--build-every", type=int, default=1, help="build every K-th accepted mutant (0: never)")
    ap.add_argument("--gpu-build", choices=["auto", "on", "off"], default="auto",
                    help="build accepted GPU mutants with nvcc (auto: when nvcc is found)")
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--keep", default="mutant-findings", help="where the mutants behind findings are copied")
    args = ap.parse_args()

    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(args.corpus) for f in fs if f.endswith(".sdfg"))
    if not files:
        print("mutate: no .sdfg files under %s" % args.corpus)
        return 1
    nvcc = find_nvcc() if args.gpu_build != "off" else None
    if args.gpu_build == "on" and not nvcc:
        print("mutate: --gpu-build on, but nvcc is not found ($SDFC_NVCC, PATH, /usr/local/cuda/bin)")
        return 1
    env = dict(os.environ)
    if nvcc:
        env["SDFC_NVCC"] = nvcc
    rng = random.Random(args.seed)
    counts = {"mutants": 0, "accepted": 0, "rejected": 0, "built": 0, "built_gpu": 0}
    findings = []
    with tempfile.TemporaryDirectory(prefix="sdfc-mutants-") as tmp:
        for k in range(args.count):
            src = rng.choice(files)
            with open(src) as f:
                doc = json.load(f)
            mutation = rng.choice(MUTATIONS)
            if not mutation(doc, rng):
                continue
            counts["mutants"] += 1
            path = os.path.join(tmp, "mutant%d.sdfg" % k)
            with open(path, "w") as f:
                json.dump(doc, f)
            label = "%s (%s of %s, seed %d)" % (path, mutation.__name__, os.path.relpath(src, args.corpus), args.seed)
            gpu = "gpu" in os.path.basename(src)
            target = ["--target", "cuda"] if gpu else []
            steps = [[args.sdfc, "validate", path],
                     [args.sdfc, "compile", path, "--emit-source", os.path.join(tmp, "src%d" % k)] + target]
            accepted = True
            for cmd in steps:
                rc, out = run(cmd, args.timeout)
                kind = classify(rc, out)
                if kind:
                    findings.append((kind, label, " ".join(cmd[1:3]), out[-600:]))
                    keep(args.keep, path)
                if rc != 0:
                    accepted = False
                    break
            if not accepted:
                counts["rejected"] += 1
                continue
            counts["accepted"] += 1
            # Every K-th accepted mutant is built (GPU files with nvcc, when it is found).
            if (not gpu or nvcc) and args.build_every and counts["accepted"] % args.build_every == 0:
                rc, out = run([args.sdfc, "compile", path, "-o", os.path.join(tmp, "lib%d.so" % k), "--no-cache"]
                              + target, max(args.timeout, 300), env)
                counts["built"] += 1
                counts["built_gpu"] += 1 if gpu else 0
                kind = classify(rc, out)
                if kind:
                    findings.append((kind, label, "compile -o", out[-600:]))
                    keep(args.keep, path)
            os.remove(path)
    if findings:
        os.makedirs(args.keep, exist_ok=True)
    for kind, label, step, out in findings:
        print("FINDING %s: %s at %s\n%s\n" % (kind, label, step, out))
    print("mutate: %d mutants (seed %d): %d rejected with a diagnostic, %d accepted, %d of them built (%d for CUDA%s); "
          "%d findings" % (counts["mutants"], args.seed, counts["rejected"], counts["accepted"], counts["built"],
                           counts["built_gpu"], "" if nvcc else ": nvcc not found", len(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
