#!/usr/bin/env python3
"""terse_fields.py REAL.txt OURS.txt — fio's terse lines (--output-format=terse) against
iommulab's: the same number of lines and of ';' fields, and each field of the same kind as
fio's (a whole number, a decimal with fio's six places, a percentage, a percentile "P%=V",
text), so that a parser of fio's terse output reads ours. Prints each difference; exit 1."""
import re, sys
KINDS = [("int", r"\d+"), ("dec", r"-?\d+\.\d{6}"), ("pct", r"\d+\.\d{1,6}%"),
         ("pctl", r"\d+(\.\d{6})?%=\d+")]
def kind(v):
    for name, rx in KINDS:
        if re.fullmatch(rx, v):
            return name
    return "text"
real = open(sys.argv[1]).read().splitlines(); ours = open(sys.argv[2]).read().splitlines()
errs = []
if len(real) != len(ours):
    errs.append(f"{len(real)} lines in fio's, {len(ours)} in ours")
for n, (a, b) in enumerate(zip(real, ours)):
    fa, fb = a.split(";"), b.split(";")
    if len(fa) != len(fb):
        errs.append(f"line {n + 1}: {len(fa)} fields in fio's, {len(fb)} in ours")
        continue
    for i, (x, y) in enumerate(zip(fa, fb)):
        # a percentile fio has no sample for is "0%=0" there too: compare the kind only
        if kind(x) != kind(y):
            errs.append(f"line {n + 1} field {i + 1}: fio's {x!r} ({kind(x)}), ours {y!r} ({kind(y)})")
        elif kind(x) == "text" and i > 2 and x != y:
            errs.append(f"line {n + 1} field {i + 1}: fio's {x!r}, ours {y!r}")
print("\n".join(errs)); sys.exit(1 if errs else 0)
