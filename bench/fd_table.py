#!/usr/bin/env python3
"""Markdown tables for the FD benchmarks (bench/fd_bench.sh, scripts/gpu-check-fd).

usage: fd_table.py RUNS.jsonl [PEERS_LIVE.txt] [PEERS_RECORDED.txt] [LOG]
RUNS.jsonl: one `hpmg solve --disc fd --json` object per line.
Peer files hold `peer=... key=value` lines; live runs win over recorded ones.
"""
import json
import sys


def load_runs(path):
    return [json.loads(l) for l in open(path) if l.strip().startswith("{")]


def load_peers(path, source):
    rows = {}
    try:
        for line in open(path):
            if not line.startswith("peer="):
                continue
            kv = dict(tok.split("=", 1) for tok in line.split() if "=" in tok)
            key = (kv["peer"], int(kv["dim"]), int(kv.get("n", 0)), kv.get("rhs", "exact"))
            if key[3] != "exact" or key in rows:
                continue
            kv["source"] = source
            rows[key] = kv
    except OSError:
        pass
    return rows


def find(runs, **want):
    for r in runs:
        if all(r.get(k) == v for k, v in want.items()):
            return r
    return None


def main():
    runs = load_runs(sys.argv[1])
    peers = {}
    if len(sys.argv) > 3:
        peers.update(load_peers(sys.argv[3], "recorded"))
    if len(sys.argv) > 2:
        peers.update(load_peers(sys.argv[2], "live"))
    log = open(sys.argv[4]).read().splitlines() if len(sys.argv) > 4 else []
    gpu = any(r["device"] == "cuda" for r in runs)
    out = []
    if log:
        out.append("Run: " + " | ".join(l.lstrip("# ") for l in log if l.startswith("#")))
        out.append("")
    if not gpu:
        out.append("### FMG to discretization error vs FFT (CPU)")
        out.append("")
        out.append("FMG as run by default (cubic FMG interpolation, V(1,1) in 2D, V(2,1) with SOR 1.3 in 3D since session 10, V(2,2) plain GS before) and as in "
                   "paper 002 (linear, FMG(1,2) in 2D, FMG(3,3) in 3D); times are the fastest of --repeat solves, "
                   "setup/planning excluded; errors are max-norm against prod sin(pi x_i); err/FFT is the FMG "
                   "error over the FFT (discrete) solution's.")
        out.append("")
        out.append("| grid | unknowns | FMG | FMG s | FMG max err | err/FFT | hpmg FFTW s | FFTW peer s (plan=measure) | peer err | peer s / FMG s | source |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for dim, Ls in ((2, range(10, 14)), (3, range(6, 10))):
            for L in Ls:
                n = 2 ** L
                t = find(runs, dim=dim, refine=L, solver="fft", device="cpu")
                p = peers.get(("fftw", dim, n, "exact"))
                for interp in ("cubic", "linear"):
                    f = find(runs, dim=dim, refine=L, solver="fmg", device="cpu", fmg_interp=interp)
                    if not f:
                        continue
                    row = f"| {n}^{dim} | {f['unknowns']} | {interp} ({f['pre']},{f['post']}) | {f['t_solve']:.4g} | {f['err_max']:.3e} | "
                    row += f"{f['err_max'] / t['err_max']:.2f} | {t['t_solve']:.4g} | " if t else "- | - | "
                    if p:
                        ps = float(p["solve_s"])
                        row += f"{ps:.4g} | {float(p['maxerr']):.3e} | {ps / f['t_solve']:.2f} | {p['source']} |"
                    else:
                        row += "- | - | - | no peer row |"
                    out.append(row)
        out.append("")
        out.append("### V-cycle / CG to relative residual 1e-9 vs hypre BoomerAMG-PCG (CPU)")
        out.append("")
        out.append("| grid | unknowns | V-cycle it | V-cycle s | CG it | CG s | hypre it | hypre solve s | hypre setup s | hypre solve / best ours | hypre (setup+solve) / best ours | source |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for dim, Ls in ((2, (10, 11)), (3, (6, 7, 8))):
            for L in Ls:
                n = 2 ** L
                v = find(runs, dim=dim, refine=L, solver="vcycle", device="cpu")
                c = find(runs, dim=dim, refine=L, solver="cg", device="cpu")
                if not v or not c:
                    continue
                p = peers.get(("hypre", dim, n, "exact"))
                best = min(v["t_solve"], c["t_solve"])
                row = (f"| {n}^{dim} | {v['unknowns']} | {v['iterations']} | {v['t_solve']:.4g} | "
                       f"{c['iterations']} | {c['t_solve']:.4g} | ")
                if p:
                    s, su = float(p["solve_s"]), float(p["setup_s"])
                    row += (f"{p['iters']} | {s:.4g} | {su:.4g} | {s / best:.1f} | {(s + su) / best:.1f} | {p['source']} |")
                else:
                    row += "- | - | - | - | - | no peer row |"
                out.append(row)
    else:
        out.append("### FMG vs cuFFT sine-transform solver (GPU)")
        out.append("")
        out.append("| grid | precision | FMG(pre,post) | split | FMG s | FMG err (h-L2) | cuFFT s | cuFFT err (h-L2) | cuFFT s / FMG s |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for r in runs:
            if r["solver"] != "fmg":
                continue
            t = find(runs, dim=r["dim"], refine=r["refine"], solver="fft", precision=r["precision"])
            out.append(f"| {r['n']}^{r['dim']} | {r['precision']} | ({r['pre']},{r['post']}) | {r['split']} | "
                       f"{r['t_solve']:.4g} | {r['err_l2h']:.3e} | " +
                       (f"{t['t_solve']:.4g} | {t['err_l2h']:.3e} | {t['t_solve'] / r['t_solve']:.2f} |" if t else "- | - | - |"))
        out.append("")
        out.append("### V-cycle / CG to 1e-9 and the --split sweep (GPU, double)")
        out.append("")
        out.append("| grid | solver | tol | split | iterations | s | DoF/s |")
        out.append("|---|---|---|---|---|---|---|")
        for r in runs:
            if r["solver"] in ("vcycle", "cg"):
                out.append(f"| {r['n']}^{r['dim']} | {r['solver']} | {r['tol']:g} | {r['split']} | {r['iterations']} | "
                           f"{r['t_solve']:.4g} | {r['dofs_per_s']:.3g} |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
