#!/usr/bin/env python3
"""compile_all.py — every program `bextc --check` accepts must give C that compiles.

Runs `bextc --check` on each given .bext file (or every .bext under a given
folder); each file that checks clean (exit 0) must then generate with
`bextc -o`, and the generated .c (which includes its .h) must pass
`CC -fsyntax-only -Wall -Wextra -Werror -I<runtime/include>` twice: with no
feature macro defined, and with every BEXT_FEATURE_* macro the header
mentions defined.  Files given with --must (the awkward-names file) must
check clean; a folder whose files all fail the check is an error too, so
nothing is skipped silently.  docs/codegen.md, "Where this is tested".

Usage: compile_all.py --bextc PATH --cc CC --include DIR [--include DIR] --out DIR
                      [--must FILE ...] [FILE_OR_DIR ...]
"""
import argparse
import os
import re
import subprocess
import sys

TIMEOUT_S = 60


def collect(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            files.extend(sorted(os.path.join(p, n) for n in os.listdir(p) if n.endswith(".bext")))
        else:
            files.append(p)
    return files


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bextc", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--include", required=True, action="append",
                    help="an include dir (repeat: runtime/include and the build's include/)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--must", action="append", default=[])
    ap.add_argument("paths", nargs="*")
    ns = ap.parse_args()
    fails, compiled, skipped = [], 0, []
    groups = [[m] for m in ns.must] + [collect([p]) for p in ns.paths]
    for gi, group in enumerate(groups):
        must = gi < len(ns.must)
        clean_in_group = 0
        for f in group:
            chk = run([ns.bextc, "--check", f])
            if chk.returncode != 0:
                if chk.returncode < 0 or chk.returncode >= 64:
                    fails.append(f"{f}: bextc --check crashed ({chk.returncode})")
                elif must:
                    fails.append(f"{f}: must check clean: {chk.stderr.strip()[:800]}")
                else:
                    skipped.append(f)
                continue
            clean_in_group += 1
            stem = os.path.basename(f)[:-5]
            out = os.path.join(ns.out, f"{gi}_{stem}")
            os.makedirs(out, exist_ok=True)
            gen = run([ns.bextc, f, "-o", out])
            if gen.returncode != 0:
                fails.append(f"{f}: checks clean but `bextc -o` failed: {gen.stderr.strip()[:1500]}")
                continue
            c_path = os.path.join(out, stem + ".c")
            h_path = os.path.join(out, stem + ".h")
            with open(h_path, encoding="utf-8", errors="replace") as hf:
                feats = sorted(set(re.findall(r"BEXT_FEATURE_[A-Za-z0-9_]+", hf.read())))
            for defs in ([], [f"-D{m}=1" for m in feats]):
                cc = run([ns.cc, "-std=c11", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                          *[x for d in ns.include for x in ("-I", d)], "-I", out] + defs + [c_path])
                if cc.returncode != 0:
                    what = "all features on" if defs else "no features"
                    fails.append(f"{f}: generated C does not compile ({what}):\n{cc.stderr.strip()[:3000]}")
                    break
            else:
                compiled += 1
        if not must and group and clean_in_group == 0:
            fails.append(f"none of the {len(group)} files of {ns.paths[gi - len(ns.must)]} checks clean")
    for s in skipped:
        print(f"skip (does not check clean): {s}")
    for fl in fails:
        print(f"FAIL {fl}")
    print(f"{compiled} compiled, {len(skipped)} skipped, {len(fails)} failed")
    return 1 if fails or compiled == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
