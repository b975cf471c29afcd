#!/usr/bin/env python3
"""hpmg solve --json prints the fields of docs/json.md for --disc fe, fd, p1 and sem
(CPU): the same names, null exactly where the table says a field is for other
discretizations, the documented types, and sensible values.
usage: json_schema_check.py path/to/hpmg path/to/docs/json.md"""
import json
import re
import subprocess
import sys

hpmg, doc = sys.argv[1], sys.argv[2]
rows = [l.split("|")[1:-1] for l in open(doc) if re.match(r"\| `\w+` \|", l)]
schema = {r[0].strip().strip("`"): (r[1].strip(), r[3].strip()) for r in rows}
types = {"integer": int, "number": (int, float), "string": str, "boolean": bool, "array": list, "object": dict}
fail = []


def check(cond, what):
    if not cond:
        fail.append(what)


runs = {"fe": ["--dim", "2", "--degree", "2", "--refine", "3"], "fd": ["--disc", "fd", "--dim", "2", "--refine", "6"],
        "p1": ["--disc", "p1", "--dim", "2", "--mesh", "regular:3", "--bc-group", "xmin=dirichlet"],
        "sem": ["--disc", "sem", "--dim", "2", "--degree", "4", "--cells", "3", "--tol", "1e-9", "--solver", "dcg"]}


def fills(for_, disc):
    return for_ == "all" or disc in [f.strip() for f in for_.split(",")]

out = {}
for disc, args in runs.items():
    p = subprocess.run([hpmg, "solve", "--json"] + args, capture_output=True, text=True)
    check(p.returncode == 0, f"{disc}: exit status {p.returncode}: {p.stderr}")
    check(p.stdout.count("\n") == 1, f"{disc}: --json is not one line")
    d = out[disc] = json.loads(p.stdout)
    check(set(d) == set(schema), f"{disc}: fields not in docs/json.md: {sorted(set(d) - set(schema))}, "
                                 f"documented but missing: {sorted(set(schema) - set(d))}")
    for k, (typ, for_) in schema.items():
        if k not in d:
            continue
        v = d[k]
        if not fills(for_, disc):
            check(v is None, f"{disc}: {k} is for {for_} only but is {v!r}")
            continue
        check(v is not None, f"{disc}: {k} is null")
        check(v is None or (isinstance(v, types[typ]) and not (typ != "boolean" and isinstance(v, bool))),
              f"{disc}: {k} = {v!r} is not of type {typ}")
    check(d["disc"] == disc and d["device"] == "cpu" and d["dim"] == 2 and d["status"] == 0, f"{disc}: disc/device/dim/status")
    check(d["converged"] and 1 <= d["iterations"] <= d["maxit"], f"{disc}: converged in 1..maxit iterations")
    check(0 < d["dofs"] < d["dofs_total"] if disc not in ("p1", "sem") else 0 < d["dofs"] == d["dofs_total"], f"{disc}: dofs, dofs_total")
    check(0 < d["residual"] < d["residual0"] and abs(d["relres"] - d["residual"] / d["residual0"]) <= 1e-5 * d["relres"]
          and d["relres"] <= 10 * d["tol"], f"{disc}: residuals")
    check(len(d["history"]) == d["iterations"] + 1 and all(h >= 0 for h in d["history"])
          and d["history"][-1] < d["history"][0], f"{disc}: history")
    check(0 < d["l2_error"] < 1e-2 and 0 < d["max_error"] < 1e-2, f"{disc}: errors at the discretization level")
    check(d["solve_s"] > 0 and d["setup_s"] >= 0 and d["dofs_per_s"] > 0 and d["solve_mean_s"] >= d["solve_s"] * (1 - 1e-9)
          and d["repeat"] == 1, f"{disc}: times")
    check(d["bytes_host"] > 0 and d["bytes_device"] == 0, f"{disc}: memory")
    check(disc in ("p1", "sem") or (d["smoother_s"] >= 0 and d["operator_s"] >= 0), f"{disc}: phase times")
    check(d["threads"] >= 1 and d["krylov_s"] >= 0, f"{disc}: threads, krylov_s")
fe, fd, p1 = out.get("fe", {}), out.get("fd", {}), out.get("p1", {})
if p1:
    check(list(p1) == list(fe), "fe and p1 print the fields in different orders")
    check(p1["dofs"] == 65 ** 2 and p1["cells"] == 2 * 64 ** 2 and p1["nnz"] > p1["dofs"] and p1["solver"] == "cg"
          and p1["smoother"] == "jacobi" and p1["mesh"] == "regular:3" and p1["symbolic_s"] >= 0 and p1["numeric_s"] >= 0
          and p1["compat_defect"] == 0 and p1["matvecs"] > 0, "p1-only values")
if fe and fd:
    check(list(fe) == list(fd), "fe and fd print the fields in different orders")
    check(fe["dofs_total"] == (2 * 8 + 1) ** 2 and fd["dofs"] == 63 ** 2 and fd["dofs_total"] == 65 ** 2 and fd["n"] == 64,
          "grid sizes")
    check(fd["rms_error"] > 0 and fd["split"] == 0 and fd["split_costs"]["measured"] == 0 and fd["fmg_interp"] == "cubic"
          and fd["smoother"] == "mcgs" and fd["solver"] == "vcycle" and fd["sor"] == 1, "fd-only values")
    check(fe["degree"] == 2 and fe["matvecs"] > 0 and len(fe["per_level"]) == fe["levels"]
          and fe["per_level"][0]["dofs"] == fe["dofs"], "fe-only values")
sem = out.get("sem", {})
if sem:
    check(list(sem) == list(fe), "fe and sem print the fields in different orders")
    check(sem["dofs"] == sem["dofs_total"] == (3 * 4 + 1) ** 2 and sem["dofs_condensed"] == sem["dofs"] - 9 * 3 ** 2
          and sem["elements"] == [3, 3, 0] and sem["solver"] == "dcg" and sem["smoother"] == "jacobi"
          and sem["degree"] == 4 and sem["matvecs"] > 0 and sem["compat_defect"] == 0, "sem-only values")
for f in fail:
    print("FAIL:", f)
print(f"{len(schema)} documented fields; fe, fd, p1 and sem objects", "differ from the schema" if fail else "match it")
sys.exit(1 if fail else 0)
