#!/usr/bin/python3
"""Tables of scripts/gpu-check-perf (issue 4, docs/cuda.md):
  python3 bench/gpu_perf_table.py OUTDIR
reads OUTDIR/peak.json, steps.jsonl, table7_fmg.jsonl, profile.jsonl.

Fused patch step, 3D (src/disc/qk/cuda/qk_patch.cu, qk_lines_kernel), per patch,
n = 2k+1, m = 2k-1, z = 2k^2+2k-1 structural nonzeros of a 1D m x n patch
matrix (an interior row couples to its own cells' nodes only):
  flops (FMAs executed, x2): localized residual 2 (2 n^2 z + 3 m n z + 2 m^2 z)
  (x: n^2 lines, Mr and Kr; y: m n lines, Mr, Kr on tM and Mr on tK; z: m^2
  lines, Kr and Mr) + fast diagonalization 12 m^4 (6 dense m x m
  contractions of m^(d-1) lines); patches per step = (cells-1)^3.
  shared-memory bandwidth used, in bytes of bank time per patch: the data
  words the threads load and store (conflict free)
    gather n^3 | x: n^3 + 2 m n^2 | y: 2 m n^2 + 2 m^2 n | z: 2 m^2 n + m^3
    | FDM: 6 m^3 loads + 5 m^3 stores
  times the word size, plus for k >= 6 the residual's coefficients (Mr, Kr):
  one 16-byte vector load per 2 (double) / 4 (float) FMAs, the same address
  across the warp, so one 128-byte wavefront per warp = 4 bytes per thread
  (Sr, and everything at k <= 5: constant bank, no shared traffic).
  Float fused steps apply the first Sr^T contraction in the residual's last
  step (one FDM pass fewer, 2 m^3 words); the model keeps the double count.
In double at 3D k >= 7 the contractions run on the FP64 tensor cores,
which execute zero-padded blocks; the flops stay this banded
count, and the shared-memory model stays the CUDA-core kernel's.
Percentages are of the measured roofs of bench/gpu_peak.cu."""
import json, os, sys

def patch_counts(k):
    """flops, data words, 16-byte coefficient loads (per thread) of one patch"""
    n, m = 2 * k + 1, 2 * k - 1
    z = 2 * k * k + 2 * k - 1
    res = 2 * n**2 * z + 3 * m * n * z + 2 * m**2 * z
    fma = res + 6 * m**4
    words = (n**3 + n**3 + 2 * m * n**2 + 2 * m * n**2 + 2 * m**2 * n
             + 2 * m**2 * n + m**3 + 6 * m**3 + 5 * m**3)
    return 2 * fma, words, res if k >= 6 else 0


def smem_bytes(k, b):
    """bytes of shared-memory bank time per patch, word size b"""
    _, words, fma = patch_counts(k)
    return words * b + fma / (16 // b) * 4


def main(d):
    def jl(name):
        p = os.path.join(d, name)
        if not os.path.exists(p):
            return []
        out = []
        for l in open(p):
            l = l.strip()
            if l.startswith("{"):
                try:
                    out.append(json.loads(l))
                except ValueError:
                    pass
        return out


    peak = jl("peak.json")
    peak = peak[0] if peak else None
    if peak:
        print("## Measured roofs (bench/gpu_peak.cu)\n")
        print("| device | SMs | clock attr / implied by FP64 MHz | FP64 TFLOP/s | FP32 TFLOP/s | shared f32 TB/s | shared f64 TB/s | DRAM copy TB/s | DRAM read TB/s |")
        print("|---|---|---|---|---|---|---|---|---|")
        print(f"| {peak['device']} | {peak['sms']} | {peak['clock_attr_mhz']:.0f} / {peak.get('clock_implied_mhz', 0):.0f} | "
              f"{peak['fp64_tflops']:.1f} | {peak['fp32_tflops']:.1f} | {peak['smem_f32_TBps']:.1f} | "
              f"{peak['smem_f64_TBps']:.1f} | {peak['dram_copy_TBps']:.2f} | {peak['dram_read_TBps']:.2f} |\n")


    steps = jl("steps.jsonl")
    if steps:
        print("## Fused patch smoothing step, 3D (finest level, random data, median of 7)\n")
        print("| k | unknowns | step f64 ms | GFLOP/s f64 | % FP64 peak | shared TB/s f64 | step f32 ms | GFLOP/s f32 | % FP32 peak | shared TB/s f32 | GDoF/s f32 |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in steps:
            k, cells = r["k"], 2 ** r["refine"]
            fl = patch_counts(k)[0]
            P = (cells - 1) ** 3
            row = [f"{k}", f"{r['dofs']:.3g}"]
            for prec, key, b in (("fp64", "step_double_s", 8), ("fp32", "step_float_s", 4)):
                t = r[key]
                g = P * fl / t
                pct = f"{100 * g / (peak[prec + '_tflops'] * 1e12):.0f}%" if peak else "-"
                row += [f"{t * 1e3:.2f}", f"{g * 1e-9:.0f}", pct, f"{P * smem_bytes(k, b) / t * 1e-12:.1f}"]
            row.append(f"{r['step_float_GDoFps']:.2f}")
            print("| " + " | ".join(row) + " |")
        print()

    t7 = jl("table7_fmg.jsonl")
    if t7:
        paper = {1: (5, "1.12e-06", 2.385, 3.391), 3: (3, "2.30e-13", 2.418, 3.941), 7: (2, "2.89e-16", 3.326, 5.891)}
        print("## Paper 000 Table 7 sizes (3D, sine, relative residual 1e-9)\n")
        print("| k | unknowns | solver | smoother | precision | its | L2 error | t_solve s | paper its / L2 / s (A100) | speed-up vs paper |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in t7:
            p = paper.get(r["k"])
            ref = p[2] if r["precision"] == "mixed" else p[3]
            print(f"| {r['k']} | {r['dofs']:.3g} | {r['solver']} | {r['smoother']} | {r['precision']} | {r['iterations']} | "
                  f"{r['l2_error']:.3e} | {r['t_solve']:.4f} | {p[0]} / {p[1]} / {ref} | {ref / r['t_solve']:.2f}x |")
        print()

    for r in jl("profile.jsonl"):
        its = max(r["iterations"], 1)
        print(f"## One V-cycle per level, 3D Q{r['k']}, {r['dofs']:.3g} unknowns, {r['solver']} + {r['smoother']}, "
              f"{r['precision']} (--profile, solve total / {its} V-cycles)\n")
        print("| level | unknowns | smoother ms | residual ms | transfer ms | share |")
        print("|---|---|---|---|---|---|")
        tot = sum(l["smoother_s"] + l["operator_s"] + l["transfer_s"] for l in r["per_level"])
        for l in r["per_level"]:
            s = l["smoother_s"] + l["operator_s"] + l["transfer_s"]
            print(f"| {l['level']} | {l['dofs']} | {l['smoother_s'] / its * 1e3:.3f} | {l['operator_s'] / its * 1e3:.3f} | "
                  f"{l['transfer_s'] / its * 1e3:.3f} | {100 * s / tot if tot else 0:.1f}% |")
        print(f"\nwhole solve (profiled, {r['t_solve']:.4f} s): operator {r['t_operator']:.4f} smoother {r['t_smoother']:.4f} "
              f"transfer {r['t_transfer']:.4f} coarse {r['t_coarse']:.4f} krylov {r['t_krylov']:.4f} s\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
