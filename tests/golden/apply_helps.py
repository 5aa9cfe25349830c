#!/usr/bin/env python3
"""Every `help:` must lead to a file that checks: apply bextc's mechanical
helps and check the result (issue 14 item 2).

A help is *mechanical* when its text says exactly what to edit ("did you
mean `X`?", "write `X`", "dereference it with `*`", "add `Fusion` to
`#[backend_extension(...)]`", "drop `Fusion` from ...", "remove the
`#[fusion(...)]` attribute", "take it by value: `n: T`", "add
`#[extension_type(fusion)]` to `T`", "mark `T` with `#[fusion(scalar)]`");
APPLIERS below turns each into an edit of the source (the first
alternative of an "X, or Y" help).  Two modes:

  --pair BEFORE.bext   applies every mechanical help bextc gives for
                       BEFORE and requires the result to equal
                       BEFORE's sibling `.after.bext` (expectation comments
                       ignored), which is itself checked like any golden
                       file: clean, or only the diagnostics it expects.
  --each FILE...       for every diagnostic of FILE with a mechanical
                       help, applies that help alone and requires that
                       the diagnostic is gone and that no diagnostic
                       appears that FILE did not already have (advice
                       that goes in a circle shows up as a new one),
                       except those a `// reveals: TEXT` clause on the
                       diagnostic's line allows.

Usage: apply_helps.py --bextc PATH (--pair FILE | --each FILE...)
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_golden  # noqa: E402

EXPECT = re.compile(r"\s*//\s*(error|warning|help|bextc-args|reveals):.*$")


def diagnostics(bextc, text, name, extra=()):
    """bextc's diagnostics for `text` (written next to the original so
    `use` finds the same modules)."""
    tmp = os.path.join(os.path.dirname(name) or ".", ".apply_helps_" + os.path.basename(name))
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    try:
        p = subprocess.run([bextc, "--check", "--diagnostics=json", *extra, tmp],
                           capture_output=True, text=True, timeout=30)
        out = p.stderr.strip()
        items = json.loads(out) if out.startswith("[") else [json.loads(l) for l in out.splitlines() if l.strip()]
    finally:
        os.unlink(tmp)
    return [d for d in items if d.get("severity") != "note"]


def offset(text, line, col):
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    return starts[line - 1] + col - 1


def span(text, d):
    a = offset(text, d["line"], d["column"])
    b = offset(text, d["end_line"], d["end_column"]) if d.get("end_line") else a
    return a, b


def replace_span(text, d, new):
    a, b = span(text, d)
    return text[:a] + new + text[b:]


def insert_at_span(text, d, new):
    a, _ = span(text, d)
    return text[:a] + new + text[a:]


def attr_before(text, d, name):
    """(start, end) of the last `#[name(...)]` above the diagnostic's line
    (end includes the rest of its line when nothing else is on it)."""
    limit = offset(text, d["line"], 1)
    start = text.rfind("#[" + name, 0, limit)
    if start < 0:
        return None
    depth, i = 0, start + 1
    while i < len(text):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                break
        i += 1
    end = i + 1
    line_start = text.rfind("\n", 0, start) + 1
    nl = text.find("\n", end)
    if text[line_start:start].strip() == "" and text[end:nl if nl >= 0 else len(text)].strip() == "":
        return line_start, (nl + 1 if nl >= 0 else len(text))
    return start, end


def remove_attr(text, d, name):
    r = attr_before(text, d, name)
    return None if r is None else text[:r[0]] + text[r[1]:]


def edit_backend_list(text, d, fn):
    r = attr_before(text, d, "backend_extension")
    if r is None:
        return None
    a = text.find("#[backend_extension", r[0])
    b = text.find(")]", a)
    head, inner = text[a:text.find("(", a) + 1], text[text.find("(", a) + 1:b]
    return text[:a] + head + fn(inner) + text[b:]


def drop_fusion(inner):
    parts = [p.strip() for p in inner.split(",")]
    return ", ".join(p for p in parts if p != "Fusion")


def insert_line_before_item(text, kw_re, line):
    m = re.search(kw_re, text, re.M)
    if not m:
        return None
    at = text.rfind("\n", 0, m.start()) + 1
    indent = re.match(r"\s*", text[at:]).group(0)
    return text[:at] + indent + line + "\n" + text[at:]


def did_you_mean(text, d, want):
    """Replace the misspelled name: `DType::U8` for a span that covers
    `F8` only replaces the last segment, `#[fusion]` for the name of an
    attribute replaces the name."""
    a, b = span(text, d)
    got = text[a:b]
    if want.startswith("#[") and not got.startswith("#"):
        want = want[2:-1]
    if "::" in want and "::" not in got:
        want = want.rsplit("::", 1)[1]
    return text[:a] + want + text[b:]


# (help regex, edit(text, diagnostic, match) -> new text or None)
APPLIERS = [
    (r"^did you mean `([^`]+)`\?$", lambda t, d, m: did_you_mean(t, d, m.group(1))),
    # "write `X`" with a placeholder in X (`"name"`, `...`) is a template, not an edit
    (r"^(?:.*: )?write `([^`]+)`$",
     lambda t, d, m: None if re.search(r'"name"|\.\.', m.group(1)) else replace_span(t, d, m.group(1))),
    (r"^dereference it with `\*`$", lambda t, d, m: insert_at_span(t, d, "*")),
    (r"^borrow it with `&`$", lambda t, d, m: insert_at_span(t, d, "&")),
    (r"^take it by value: `[^:`]+: ([^`]+)`$", lambda t, d, m: replace_span(t, d, m.group(1))),
    (r"^add `Fusion` to `#\[backend_extension\(\.\.\.\)\]`$",
     lambda t, d, m: edit_backend_list(t, d, lambda s: s.rstrip() + ", Fusion")),
    (r"^drop `Fusion` from `#\[backend_extension\(\.\.\.\)\]` and the `#\[fusion\(\.\.\.\)\]` attribute",
     lambda t, d, m: (lambda u: u and edit_backend_list(u, {**d, "line": d["line"] - 1}, drop_fusion))(
         remove_attr(t, d, "fusion"))),
    (r"^drop `Fusion` from `#\[backend_extension\(\.\.\.\)\]`",
     lambda t, d, m: edit_backend_list(t, d, drop_fusion)),
    (r"^remove the `#\[fusion\(\.\.\.\)\]` attribute", lambda t, d, m: remove_attr(t, d, "fusion")),
    (r"^add `#\[extension_type\(fusion\)\]` to `(\w+)`$",
     lambda t, d, m: insert_line_before_item(t, r"^\s*(pub\s+)?(struct|enum)\s+" + m.group(1) + r"\b",
                                             "#[extension_type(fusion)]")),
    (r"^mark `(\w+)` with `#\[fusion\(scalar\)\]`",
     lambda t, d, m: insert_line_before_item(t, r"^\s*(pub\s+)?type\s+" + m.group(1) + r"\b",
                                             "#[fusion(scalar)]")),
]


def apply_one(text, d):
    """The text with d's help applied, or None when it is not mechanical."""
    h = d.get("help") or ""
    for rx, fn in APPLIERS:
        m = re.search(rx, h)
        if m:
            return fn(text, d, m)
    return None


def strip_expectations(text):
    return "\n".join(EXPECT.sub("", l).rstrip() for l in text.splitlines()).strip() + "\n"


def key(d):
    return (d.get("severity"), d.get("code"), d.get("message"))


def check_pair(bextc, before):
    after = before[:-len(".bext")] + ".after.bext"
    fails = []
    with open(before, encoding="utf-8") as f:
        text = strip_expectations(f.read())
    _, extra = run_golden.parse_expectations(before)
    diags = [d for d in diagnostics(bextc, text, before, extra) if d.get("help")]
    # apply from the bottom up so earlier spans stay valid
    diags.sort(key=lambda d: (d["line"], d["column"]), reverse=True)
    applied = 0
    for d in diags:
        new = apply_one(text, d)
        if new is not None:
            text, applied = new, applied + 1
    if not applied:
        fails.append("no mechanical help to apply")
    if not os.path.exists(after):
        return fails + [f"missing {os.path.basename(after)}"]
    with open(after, encoding="utf-8") as f:
        want = strip_expectations(f.read())
    if text != want:
        fails.append("applying the helps gives:\n" + text + "\nbut " + os.path.basename(after) + " is:\n" + want)
    fails += run_golden.run_one(bextc, after)
    return fails


REVEALS = re.compile(r"//\s*reveals:\s*(.*?)\s*(?=//|$)")


def check_each(bextc, path):
    """`// reveals: TEXT` on a diagnostic's line allows a new diagnostic
    containing TEXT after its help is applied: an error the first one hid
    (a file of deliberate mistakes has several), not a circle."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    reveals = {}
    for n, l in enumerate(text.splitlines(), start=1):
        reveals[n] = REVEALS.findall(l)
    _, extra = run_golden.parse_expectations(path)
    before = diagnostics(bextc, text, path, extra)
    fails, tried = [], 0
    for d in before:
        new = apply_one(text, d)
        if new is None:
            continue
        tried += 1
        after = diagnostics(bextc, new, path, extra)
        left = [key(x) for x in before]
        left.remove(key(d))
        gone = key(d) not in [key(x) for x in after] or \
            [key(x) for x in after].count(key(d)) < [key(x) for x in before].count(key(d))
        if not gone:
            fails.append(f"line {d['line']}: applying `{d['help']}` leaves `{d['message']}`")
        for x in after:
            if key(x) in left:
                left.remove(key(x))
            elif key(x) != key(d) and not any(r in x["message"] for r in reveals.get(d["line"], [])):
                fails.append(f"line {d['line']}: applying `{d['help']}` gives a new "
                             f"{x['severity']}: {x['message']}" + (f" [help: {x['help']}]" if x.get("help") else ""))
    return fails, tried


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bextc", required=True)
    ap.add_argument("--pair")
    ap.add_argument("--each", nargs="*")
    ns = ap.parse_args()
    failed = False
    if ns.pair:
        fails = check_pair(ns.bextc, ns.pair)
        print(("FAIL " if fails else "PASS ") + os.path.relpath(ns.pair, HERE))
        for r in fails:
            print("    " + r)
        failed |= bool(fails)
    for p in ns.each or []:
        fails, tried = check_each(ns.bextc, p)
        print(("FAIL " if fails else "PASS ") + os.path.relpath(p, HERE) + f" ({tried} helps applied)")
        for r in fails:
            print("    " + r)
        failed |= bool(fails)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
