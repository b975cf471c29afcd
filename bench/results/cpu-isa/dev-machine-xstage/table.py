import sys, re
# usage: table.py RAW FLOPS PEAK_AVX2 PEAK_AVX512  (fastest round of each; GF/s from each build's own flops/unknown)
raw, flopsf, p2, p5 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
peak = {"avx2": p2, "avx512": p5}
fl = {}
for l in open(flopsf):
    m = re.match(r"(\S+) main unknowns (\d+) flops/unknown ([\d.]+)\s+new flops/unknown ([\d.]+)", l)
    if m: fl[m.group(1)] = (int(m.group(2)), float(m.group(3)), float(m.group(4)))
best = {}
for l in open(raw):
    f = l.split(); r, b, isa, d, k, L, prec = f[:7]; ms = float(f[8])
    b = "main" if "main" in b else "new"
    key = (d, k, L, isa, prec, b); best[key] = min(best.get(key, 1e9), ms)
cases = sorted(set(k[:3] for k in best), key=lambda c: (-int(c[0]), int(c[1])))
print("| dim | k | L | DoFs | variant | main ms | main GF/s (% peak) | new ms | new GF/s (% peak) | new/main time | float main / new ms |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for c in cases:
    n, fm, fn = fl[":".join(c)]
    for isa in ("avx2", "avx512"):
        tm, tn = best.get(c + (isa, "double", "main")), best.get(c + (isa, "double", "new"))
        if tm is None: continue
        gm, gn = n * fm / tm * 1e-6, n * fn / tn * 1e-6
        fm_, fn_ = best.get(c + (isa, "float", "main")), best.get(c + (isa, "float", "new"))
        print(f"| {c[0]} | {c[1]} | {c[2]} | {n} | {isa} | {tm:.3f} | {gm:.1f} ({100*gm/peak[isa]:.0f}%) | {tn:.3f} | {gn:.1f} ({100*gn/peak[isa]:.0f}%) | {tn/tm:.2f} | {fm_:.3f} / {fn_:.3f} |")
