#!/usr/bin/python3
"""Roofline of the H200 kernels (issue 4): the Q_k operator kernel (apply) and
the fused vertex-patch smoothing step, double and float, against measured roofs.

  /usr/bin/python3 bench/roofline.py [gpu_bench.jsonl] [perf.md] [peak.json] [out.png]
  (needs Debian's python3-matplotlib)

Inputs (measured on an H200):
  bench/results/gpu-op-launch-config/op_sweep_round2.jsonl   operator kernel, 3D k = 1..8,
                                           the launch configuration in use ("tuned" rows;
                                           bench/gpu_solve.c): GB/s and GFLOP/s of the algorithmic
                                           count (hpmg_laplace_flops); a scripts/gpu-check
                                           gpu_bench.jsonl works too
  bench/results/gpu-perf/perf.md           fused patch step times, 3D k = 2..8 (the table
                                           printed by scripts/gpu-check-perf)
  bench/results/gpu-perf/peak.json         roofs measured by bench/gpu_peak.cu
Patch flops are the kernel's executed count per patch (patch_counts of
bench/gpu_perf_table.py; in double at k = 7, 8 the FP64 tensor cores execute
zero-padded 8 x 8 blocks, and the count stays the banded one), patches = (cells-1)^3 with cells from the unknowns
(k cells - 1)^3. Bytes: the minimum a step must move, x read and written and b read
(3 values per unknown). Prints the table it plots (percent of the measured
FP64/FP32 roof; kept in bench/results/gpu-roofline/) and writes the PNG."""
import json, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_perf_table import patch_counts  # noqa: E402

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

ops_file = sys.argv[1] if len(sys.argv) > 1 else "bench/results/gpu-op-launch-config/op_sweep_round2.jsonl"
perf_file = sys.argv[2] if len(sys.argv) > 2 else "bench/results/gpu-perf/perf.md"
peak_file = sys.argv[3] if len(sys.argv) > 3 else "bench/results/gpu-perf/peak.json"
out = sys.argv[4] if len(sys.argv) > 4 else "docs/roofline_h200.png"
pk = json.load(open(peak_file))
PEAK = {"double": pk["fp64_tflops"] * 1e12, "float": pk["fp32_tflops"] * 1e12}
BW = pk["dram_copy_TBps"] * 1e12

pts = []  # (label, precision, intensity flop/byte, flop/s)
seen = set()
for l in open(ops_file):
    if not l.strip().startswith("{"):
        continue
    r = json.loads(l)
    if "r" in r:  # a launch-configuration sweep: the configuration in use only
        if r.get("variant") != "tuned":
            continue
        r = r["r"]
    if r.get("dim", 3) != 3:
        continue
    for p in ("double", "float"):
        o = r.get(f"op_apply_{p}")
        if not o or (r["k"], p) in seen:
            continue
        seen.add((r["k"], p))
        pts.append((f"operator Q{r['k']}", p, o["GFLOPps"] / o["GBps"], o["GFLOPps"] * 1e9))
# rows of the fused-step table: | k | unknowns | f64 ms | ... | f32 ms | ...
in_steps = False
for l in open(perf_file):
    if l.startswith("## "):
        in_steps = "Fused patch smoothing step" in l
        continue
    c = [x.strip() for x in l.strip().strip("|").split("|")]
    if not in_steps or len(c) < 11 or not re.fullmatch(r"\d+", c[0]):
        continue
    k, N = int(c[0]), float(c[1])
    cells = round((N ** (1 / 3) + 1) / k)
    fl = (cells - 1) ** 3 * patch_counts(k)[0]
    for p, ms, b in (("double", float(c[2]), 8), ("float", float(c[6]), 4)):
        pts.append((f"fused patch Q{k}", p, fl / (3 * b * N), fl / (ms * 1e-3)))

print("| kernel | precision | flop/byte | TFLOP/s | % of roof (measured) |")
print("|---|---|---|---|---|")
for lab, p, ai, f in pts:
    roof = min(PEAK[p], BW * ai)
    print(f"| {lab} | {p} | {ai:.2f} | {f / 1e12:.2f} | {100 * f / roof:.0f}% |")

fig, ax = plt.subplots(figsize=(7, 5))
xs = [0.5 * 1.1**i for i in range(70)]
for p, ls in (("double", "-"), ("float", "--")):
    ax.plot(xs, [min(PEAK[p], BW * v) for v in xs], "k" + ls, lw=1,
            label=f"roof {p} ({PEAK[p] / 1e12:.1f} TFLOP/s, {BW / 1e12:.2f} TB/s; measured)")
mk = {"double": "o", "float": "s"}
for lab, p, ai, f in pts:
    c = "tab:blue" if lab.startswith("operator") else "tab:red"
    ax.loglog(ai, f, mk[p], color=c, ms=6)
    ax.annotate(f"{lab.split()[-1]} {p[0]}", (ai, f), textcoords="offset points", xytext=(4, 3), fontsize=7, color=c)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("arithmetic intensity [flop/byte]")
ax.set_ylabel("flop/s")
ax.set_title("H200: operator kernel (blue), fused patch step (red); o f64, s f32", fontsize=10)
ax.legend(fontsize=7, loc="lower right")
ax.grid(True, which="both", lw=0.3)
fig.tight_layout()
fig.savefig(out, dpi=120)
print(f"wrote {out}")
