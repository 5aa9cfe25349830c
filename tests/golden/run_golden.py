#!/usr/bin/env python3
"""Golden diagnostics runner for bextc (house style item 15).

Each tests/golden/**/*.bext file carries its expectations inline, on the
line where the diagnostic must be reported:

    #[backend_extension(Wgpu)] // error: is not a backend selector // help: write `Cube`

  * `// error: TEXT` / `// warning: TEXT` expects one diagnostic of that
    severity on this line whose message contains TEXT;
  * `// help: TEXT` right after one of those also requires that
    diagnostic's help to contain TEXT;
  * `// bextc-args: ARGS` (anywhere) adds command-line arguments, e.g.
    `--feature wgpu`;
  * `// reveals: TEXT` is apply_helps.py's (a diagnostic that applying
    this line's help may uncover) and ignored here.

The runner runs `bextc --check --diagnostics=json FILE` (diagnostics on
stderr) and fails a file
when an expected diagnostic is missing, when any diagnostic appears that
no expectation names (notes excepted), when bextc crashes or hangs, or
when its exit status disagrees with the errors it reported.  A file with
no expectations must produce no diagnostics at all and exit 0.

With `--emit-dir DIR` the runner runs `bextc -o DIR` instead of `--check`,
so errors of the C generator (C name clashes, docs/codegen.md) are checked
the same way (tests/codegen/names/).

Usage: run_golden.py --bextc PATH [--emit-dir DIR] [FILE_OR_DIR ...]
(default: every .bext under this script's folder).  Prints one PASS/FAIL
line per file and a final `N passed, N failed` line; exits 1 on failure.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CLAUSE = re.compile(r"//\s*(error|warning|help|bextc-args|reveals):\s*")
TIMEOUT_S = 30


def parse_expectations(path):
    """Return (expectations, extra_args). An expectation is a dict with
    line, severity, message substring and optional help substring."""
    expects, args = [], []
    with open(path, encoding="utf-8") as f:
        for lineno, text in enumerate(f, start=1):
            matches = list(CLAUSE.finditer(text))
            for i, m in enumerate(matches):
                end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
                body = text[m.end():end].strip()
                kind = m.group(1)
                if kind == "reveals":
                    continue   # apply_helps.py's: what applying this line's help may reveal
                if kind == "bextc-args":
                    args.extend(shlex.split(body))
                elif kind == "help":
                    if not expects or expects[-1]["line"] != lineno:
                        raise ValueError(f"{path}:{lineno}: `// help:` must follow an error or warning on its line")
                    expects[-1]["help"] = body
                else:
                    expects.append({"line": lineno, "severity": kind,
                                    "message": body, "help": None})
    return expects, args


def _dig(obj, *paths):
    """First value found along any of the key paths (tolerates a few JSON
    layouts: flat {line}, {range:{start:{line}}}, {location:{line}})."""
    for p in paths:
        cur = obj
        for k in p:
            if isinstance(cur, dict) and k in cur:
                cur = cur[k]
            else:
                cur = None
                break
        if cur is not None:
            return cur
    return None


def parse_diagnostics(out):
    """bextc's JSON diagnostics: one array, an object with `diagnostics`,
    or one object per line."""
    text = out.strip()
    if not text:
        return []
    try:
        doc = json.loads(text)
        items = doc.get("diagnostics", []) if isinstance(doc, dict) else doc
    except json.JSONDecodeError:
        items = []
        for ln in text.splitlines():
            ln = ln.strip()
            if ln:
                items.append(json.loads(ln))
    diags = []
    for d in items:
        diags.append({
            "severity": str(_dig(d, ("severity",), ("level",)) or "").lower(),
            "message": _dig(d, ("message",), ("msg",)) or "",
            "help": _dig(d, ("help",)) or "",
            "line": _dig(d, ("line",), ("range", "start", "line"),
                         ("location", "line"), ("span", "line"),
                         ("range", "line"), ("start", "line")),
            "file": _dig(d, ("file",), ("range", "file"), ("location", "file"),
                         ("span", "file"), ("path",)) or "",
        })
    return diags


def same_file(diag_file, path):
    if not diag_file:
        return True
    return os.path.realpath(diag_file) == os.path.realpath(path) or \
        os.path.basename(diag_file) == os.path.basename(path)


def run_one(bextc, path, emit_dir=None):
    """Return a list of failure reasons (empty: PASS)."""
    try:
        expects, extra = parse_expectations(path)
    except ValueError as e:
        return [str(e)]
    mode = ["-o", emit_dir] if emit_dir else ["--check"]
    cmd = [bextc] + mode + ["--diagnostics=json"] + extra + [path]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return [f"bextc did not finish within {TIMEOUT_S}s"]
    fails = []
    if proc.returncode < 0 or proc.returncode >= 64:
        return [f"bextc crashed (status {proc.returncode}): {proc.stderr.strip()[-2000:]}"]
    try:
        # bextc renders diagnostics on stderr (stdout carries dumps).
        diags = parse_diagnostics(proc.stderr)
    except (json.JSONDecodeError, AttributeError) as e:
        return [f"unreadable JSON diagnostics ({e}): {proc.stderr[:800]!r}"]
    diags = [d for d in diags if d["severity"] != "note"]
    unmatched = list(diags)
    for e in expects:
        hit = None
        for d in unmatched:
            if d["line"] == e["line"] and d["severity"] == e["severity"] \
                    and same_file(d["file"], path) and e["message"] in d["message"] \
                    and (e["help"] is None or e["help"] in d["help"]):
                hit = d
                break
        if hit is None:
            near = [f"{d['severity']}: {d['message']} [help: {d['help']}]"
                    for d in diags if d["line"] == e["line"]]
            want = f"{e['severity']}: {e['message']}" + (f" [help: {e['help']}]" if e["help"] else "")
            fails.append(f"line {e['line']}: missing `{want}`" +
                         (f"; on that line: {near}" if near else ""))
        else:
            unmatched.remove(hit)
    for d in unmatched:
        fails.append(f"line {d['line']}: unexpected {d['severity']}: {d['message']}"
                     + (f" [help: {d['help']}]" if d["help"] else "")
                     + ("" if same_file(d["file"], path) else f" (in {d['file']})"))
    has_error = any(d["severity"] == "error" for d in diags)
    # bextc exits 1 on errors in the input; anything else (a sanitizer's
    # leak report exits 23, say) is a failure even when diagnostics match.
    if has_error and proc.returncode != 1:
        fails.append(f"bextc reported errors but exited {proc.returncode}")
    if not has_error and proc.returncode != 0:
        fails.append(f"bextc exited {proc.returncode} without reporting an error: "
                     f"{proc.stderr.strip()[-500:]}")
    return fails


def collect(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files.extend(os.path.join(root, n) for n in names if n.endswith(".bext"))
        else:
            files.append(p)
    return sorted(files)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bextc", required=True)
    ap.add_argument("--emit-dir", default=None,
                    help="run `bextc -o DIR` (the C generator too) instead of --check")
    ap.add_argument("paths", nargs="*")
    ns = ap.parse_args()
    files = collect(ns.paths or [HERE])
    if not files:
        print("no .bext files found")
        return 1
    passed = failed = 0
    for f in files:
        fails = run_one(ns.bextc, f, ns.emit_dir)
        rel = os.path.relpath(f, HERE) if f.startswith(HERE) else f
        if fails:
            failed += 1
            print(f"FAIL {rel}")
            for r in fails:
                print(f"    {r}")
        else:
            passed += 1
            print(f"PASS {rel}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
