#!/usr/bin/python3
"""Roofline of the H200 kernels (issue 4): the Q_k operator kernel (apply) and
the fused vertex-patch smoothing step, double and float.

  /usr/bin/python3 bench/roofline.py [gpu_bench.jsonl] [gpu_patch.jsonl] [out.png]
  (needs Debian's python3-matplotlib)

Inputs (measured by scripts/gpu-check on an H200):
  bench/results/session2/gpu_bench.jsonl   operator kernel: GB/s and GFLOP/s of the
                                           algorithmic count (hpmg_laplace_flops)
  bench/results/gpu_h200_patch.jsonl       patch step times (bench/gpu_patch.c)
Patch flops are the kernel's executed count per patch (3D; docs/cuda.md): the
localized residual with x/y contractions over the full m x n 1D rows and the
z contraction over the band, 2 (2 n^3 m + 3 n^2 m^2 + m^3 n), plus the fast
diagonalization, 6 contractions of m^4 FMA = 12 m^4, with n = 2k+1, m = 2k-1;
patches = (cells-1)^3. Bytes: the minimum a step must move, x read and written
and b read (3 values per unknown).
Roofs: nominal, not measured: 132 SMs x 1.98 GHz x (64 FP64 | 128 FP32 FMA
lanes) x 2 = 33.5 | 66.9 TFLOP/s; HBM3e 4.8 TB/s.
Prints the table it plots (percent of the FP64/FP32 roof) and writes the PNG."""
import json, sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

ops_file = sys.argv[1] if len(sys.argv) > 1 else "bench/results/session2/gpu_bench.jsonl"
patch_file = sys.argv[2] if len(sys.argv) > 2 else "bench/results/gpu_h200_patch.jsonl"
out = sys.argv[3] if len(sys.argv) > 3 else "docs/roofline_h200.png"
PEAK = {"double": 132 * 1.98e9 * 64 * 2, "float": 132 * 1.98e9 * 128 * 2}
BW = 4.8e12

pts = []  # (label, precision, intensity flop/byte, flop/s)
seen = set()
for l in open(ops_file):
    if not l.strip().startswith("{"):
        continue
    r = json.loads(l)
    for p in ("double", "float"):
        o = r.get(f"op_apply_{p}")
        if not o or (r["k"], p) in seen:
            continue
        seen.add((r["k"], p))
        pts.append((f"operator Q{r['k']}", p, o["GFLOPps"] / o["GBps"], o["GFLOPps"] * 1e9))
seen = set()
for l in open(patch_file):
    if not l.strip().startswith("{"):
        continue
    r = json.loads(l)
    if r.get("smoother") != "fused" or r["dim"] != 3 or r["dofs"] < 3e7:
        continue
    k, N = r["k"], r["dofs"]
    n, m = 2 * k + 1, 2 * k - 1
    cells = round((N ** (1 / 3) + 1) / k)
    patches = (cells - 1) ** 3
    fl = patches * (2 * (2 * n**3 * m + 3 * n**2 * m**2 + m**3 * n) + 12 * m**4)
    for p, key, b in (("double", "step_double_s", 8), ("float", "step_float_s", 4)):
        if (k, p) in seen:
            continue
        seen.add((k, p))
        pts.append((f"fused patch Q{k}", p, fl / (3 * b * N), fl / r[key]))

print("| kernel | precision | flop/byte | TFLOP/s | % of roof (nominal) |")
print("|---|---|---|---|---|")
for lab, p, ai, f in pts:
    roof = min(PEAK[p], BW * ai)
    print(f"| {lab} | {p} | {ai:.2f} | {f / 1e12:.2f} | {100 * f / roof:.0f}% |")

fig, ax = plt.subplots(figsize=(7, 5))
xs = [0.5 * 1.1**i for i in range(70)]
for p, ls in (("double", "-"), ("float", "--")):
    ax.plot(xs, [min(PEAK[p], BW * v) for v in xs], "k" + ls, lw=1,
            label=f"roof {p} ({PEAK[p] / 1e12:.1f} TFLOP/s, 4.8 TB/s; nominal)")
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
