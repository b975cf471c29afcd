#!/usr/bin/env python3
"""Markdown table of bench/gpu_solve JSON lines (scripts/gpu-check)."""
import json, sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
print("| dim | k | DoFs | solver | smoother | precision | its | L2 error | t_solve s | DoF/s | op apply f64 GB/s GFLOP/s | op smooth f64 GB/s | op apply f32 GB/s GFLOP/s | op smooth f32 GB/s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    def op(m, p, key):
        o = r.get(f"op_{m}_{p}")
        return f"{o[key]:.0f}" if o else "-"
    print(f"| {r['dim']} | {r['k']} | {r['dofs']:.3g} | {r.get('solver', 'cg')} | {r.get('smoother', 'chebyshev')} | {r['precision']} | {r['iterations']} | {r['l2_error']:.3e} | "
          f"{r['t_solve']:.4f} | {r['dofs_per_s']:.3g} | {op('apply','double','GBps')} / {op('apply','double','GFLOPps')} | "
          f"{op('smooth','double','GBps')} | {op('apply','float','GBps')} / {op('apply','float','GFLOPps')} | {op('smooth','float','GBps')} |")
