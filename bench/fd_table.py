#!/usr/bin/env python3
"""Markdown tables for the FD benchmarks (bench/fd_bench.sh, scripts/gpu-check-fd).

usage: fd_table.py RUNS.jsonl [PEERS_LIVE.txt] [PEERS_RECORDED.txt] [LOG]
RUNS.jsonl: one `hpmg solve --disc fd --json` object per line (docs/json.md).
Peer files hold `peer=... key=value` lines; live runs win over recorded ones.
"""
import json
import sys

# field names of the FD --json before it took the common schema, as in the
# result files written then (bench/results/fd-*/*.jsonl)
FD_NAMES_BEFORE_SCHEMA = {"unknowns": "dofs", "points": "dofs_total", "err_l2h": "l2_error", "err_max": "max_error",
                          "err_rms": "rms_error", "t_solve": "solve_s", "t_solve_mean": "solve_mean_s",
                          "t_setup": "setup_s", "res0": "residual0", "res": "residual", "omega": "jacobi_omega"}


def load_runs(path):
    runs = [json.loads(l) for l in open(path) if l.strip().startswith("{")]
    return [{FD_NAMES_BEFORE_SCHEMA.get(k, k): v for k, v in r.items()} for r in runs]


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
        out.append("FMG as run by default (cubic FMG interpolation, V(1,1) in 2D, V(2,1) with SOR 1.3 in 3D) and as in "
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
                    row = f"| {n}^{dim} | {f['dofs']} | {interp} ({f['pre']},{f['post']}) | {f['solve_s']:.4g} | {f['max_error']:.3e} | "
                    row += f"{f['max_error'] / t['max_error']:.2f} | {t['solve_s']:.4g} | " if t else "- | - | "
                    if p:
                        ps = float(p["solve_s"])
                        row += f"{ps:.4g} | {float(p['maxerr']):.3e} | {ps / f['solve_s']:.2f} | {p['source']} |"
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
                best = min(v["solve_s"], c["solve_s"])
                row = (f"| {n}^{dim} | {v['dofs']} | {v['iterations']} | {v['solve_s']:.4g} | "
                       f"{c['iterations']} | {c['solve_s']:.4g} | ")
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
                       f"{r['solve_s']:.4g} | {r['l2_error']:.3e} | " +
                       (f"{t['solve_s']:.4g} | {t['l2_error']:.3e} | {t['solve_s'] / r['solve_s']:.2f} |" if t else "- | - | - |"))
        out.append("")
        out.append("### V-cycle / CG to 1e-9 and the --split sweep (GPU, double)")
        out.append("")
        out.append("| grid | solver | tol | split | iterations | s | DoF/s |")
        out.append("|---|---|---|---|---|---|---|")
        for r in runs:
            if r["solver"] in ("vcycle", "cg"):
                out.append(f"| {r['n']}^{r['dim']} | {r['solver']} | {r['tol']:g} | {r['split']} | {r['iterations']} | "
                           f"{r['solve_s']:.4g} | {r['dofs_per_s']:.3g} |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
