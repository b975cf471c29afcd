#!/usr/bin/env python3
"""The tables of scripts/cpu-isa-bench from its OUTDIR (peak.txt, op.jsonl,
solve.jsonl): printed and written to OUTDIR/table.md.
usage: scripts/cpu-isa-table.py OUTDIR"""
import json, re, sys

out = sys.argv[1]
peak = {}
for line in open(f"{out}/peak.txt"):
    m = re.match(r"isa=(\S+) vector_bytes=\d+ gflops=([\d.]+)", line)
    if m:
        peak[m.group(1)] = float(m.group(2))
ops = [json.loads(l) for l in open(f"{out}/op.jsonl")]
solves = [json.loads(l) for l in open(f"{out}/solve.jsonl")]
BUILDS = ["native", "portable", "base"]
ISAS = ["native", "avx512", "avx2", "sse2", "neon", "generic", "base"]


def order(c):
    return (BUILDS.index(c[0]), ISAS.index(c[1]) if c[1] in ISAS else 99)


def level(isa):
    """the instruction set whose peak a variant is set against (native, base: the widest)"""
    return isa if isa in peak else max(peak, key=peak.get)


def cases(rows):
    return sorted({(r["dim"], r["k"], r["L"]) for r in rows}, key=lambda t: (-t[0], t[1], t[2]))


cols = sorted({(r["build"], r["isa"]) for r in ops}, key=order)
lines = ["## Operator apply, one thread: double ms (% of the double peak of the variant's instruction set) / float ms",
         "", "| dim | k | L | DoFs | " + " | ".join(f"{b} {i}" for b, i in cols) + " |", "|" + "---|" * (4 + len(cols))]
for key in cases(ops):
    rs = {(r["build"], r["isa"]): r for r in ops if (r["dim"], r["k"], r["L"]) == key}
    row = [str(x) for x in key] + [str(next(iter(rs.values())).get("dofs", ""))]
    for c in cols:
        r = rs.get(c)
        if not r or "double_apply_ms" not in r:
            row.append("-")
            continue
        pk = peak.get(level(r["isa"]))
        pct = f" ({100 * r['double_gflops'] / pk:.0f}%)" if pk else ""
        row.append(f"{r['double_apply_ms']:.2f}{pct} / {r.get('float_apply_ms', float('nan')):.2f}")
    lines.append("| " + " | ".join(row) + " |")
threads = solves[0].get("threads", "?") if solves else "?"
scols = sorted({(s["build"], s["forced"]) for s in solves}, key=order)
lines += ["", f"## hpmg solve, default configuration (FMG, auto smoother, double), {threads} threads: seconds (iterations)",
          "", "| dim | k | L | DoFs | " + " | ".join(f"{b} {i}" for b, i in scols) + " | L2 error |",
          "|" + "---|" * (5 + len(scols))]
for key in cases(solves):
    ss = {(s["build"], s["forced"]): s for s in solves if (s["dim"], s["k"], s["L"]) == key}
    any_s = next(iter(ss.values()))
    row = [str(x) for x in key] + [str(any_s["dofs"])]
    row += [f"{ss[c]['solve_s']:.3f} ({ss[c]['iters']})" if c in ss else "-" for c in scols]
    row.append(f"{any_s['l2err']:.3e}")
    lines.append("| " + " | ".join(row) + " |")
peaks = ", ".join(f"{k} {v:.1f}" for k, v in peak.items())
text = f"Double FMA peak of one core (bench/cpu_peak), GFLOP/s: {peaks}\n\n" + "\n".join(lines) + "\n"
open(f"{out}/table.md", "w").write(text)
print(text)
