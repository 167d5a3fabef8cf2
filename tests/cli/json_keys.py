#!/usr/bin/env python3
"""json_keys.py [--loose-lists] REAL.json OURS.json — fio's JSON (json or json+), or iperf3's
with --loose-lists, against iommulab's: the
same keys at every level, recursively, and numbers where fio has numbers. Keys that are values
are compared by rule: a percentile object has the same keys (both runs did I/O of the same
kind with the same percentile_list), json+ "bins" keys are numbers; the contents of "job
options" / "global options" are the job's own. Prints each difference; exit 1 if any."""
import json, sys
# --loose-lists: lists may differ in length (iperf3's intervals: a real run's timing adds one);
# the elements both have are compared
LOOSE_LISTS = "--loose-lists" in sys.argv
args = [a for a in sys.argv[1:] if a != "--loose-lists"]
real = json.load(open(args[0])); ours = json.load(open(args[1]))
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
            elif k not in a: errs.append(f"{path}/{k}: not in the real tool's")
            else: cmp(a[k], b[k], f"{path}/{k}")
    elif isinstance(a, list):
        if not isinstance(b, list) or (len(a) != len(b) and not LOOSE_LISTS) or (a and not b):
            errs.append(f"{path}: list lengths differ ({len(a)}, {len(b)} in ours)"); return
        for i, (x, y) in enumerate(zip(a, b)): cmp(x, y, f"{path}[{i}]")
    elif isinstance(a, (int, float)) and not isinstance(a, bool):
        if not isinstance(b, (int, float)) or isinstance(b, bool): errs.append(f"{path}: not a number in ours")
    elif type(a) != type(b):
        errs.append(f"{path}: {type(a).__name__} in fio's, {type(b).__name__} in ours")
cmp(real, ours, "")
print("\n".join(errs)); sys.exit(1 if errs else 0)
