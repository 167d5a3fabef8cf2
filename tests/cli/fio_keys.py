#!/usr/bin/env python3
"""fio_keys.py REAL.json OURS.json — fio's JSON (json or json+) against iommulab fio's: the
same keys at every level, recursively, and numbers where fio has numbers. Keys that are values
are compared by rule: a percentile object has the same keys (both runs did I/O of the same
kind with the same percentile_list), json+ "bins" keys are numbers; the contents of "job
options" / "global options" are the job's own. Prints each difference; exit 1 if any."""
import json, sys
real = json.load(open(sys.argv[1])); ours = json.load(open(sys.argv[2]))
errs = []
def cmp(a, b, path):
    if isinstance(a, dict):
        if not isinstance(b, dict):
            errs.append(f"{path}: real is an object, ours {type(b).__name__}"); return
        if path.endswith("bins"):
            for k in list(a) + list(b):
                if not k.isdigit(): errs.append(f"{path}: bin key {k!r} not a number")
            return
        if path.endswith("options"):
            return
        for k in sorted(set(a) | set(b)):
            if k not in b: errs.append(f"{path}/{k}: missing in ours")
            elif k not in a: errs.append(f"{path}/{k}: not in fio's")
            else: cmp(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            errs.append(f"{path}: list lengths differ"); return
        for i, (x, y) in enumerate(zip(a, b)): cmp(x, y, f"{path}[{i}]")
    elif isinstance(a, (int, float)) and not isinstance(a, bool):
        if not isinstance(b, (int, float)) or isinstance(b, bool): errs.append(f"{path}: not a number in ours")
    elif type(a) != type(b):
        errs.append(f"{path}: {type(a).__name__} in fio's, {type(b).__name__} in ours")
cmp(real, ours, "")
print("\n".join(errs)); sys.exit(1 if errs else 0)
