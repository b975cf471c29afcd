# The table of docs/performance.md ("The y stage written transposed") from op.raw:
# fastest round per case; % of the idle double FMA peak (AVX2 57.0, AVX-512 107.1 GFLOP/s).
import sys
raw = sys.argv[1] if len(sys.argv) > 1 else "op.raw"
peak = {"avx2": 57.0, "avx512": 107.1}
best = {}
for l in open(raw):
    f = l.split()
    r, lab, isa, d, k, L, prec = f[:7]
    ms, gf = float(f[8]), float(f[12])
    key = (d, k, L, isa, prec, lab)
    if key not in best or ms < best[key][0]:
        best[key] = (ms, gf)
cases = sorted({c[:3] for c in best}, key=lambda c: (-int(c[0]), int(c[1])))
print("| dim | k | L | DoFs | AVX2 double main ms (GF/s, % peak) | new ms (% peak) | new/main | AVX2 float main / new ms | AVX-512 double main / new ms | AVX-512 float main / new ms |")
print("|---|---|---|---|---|---|---|---|---|---|")
for d, k, L in cases:
    n = ((1 << int(L)) * int(k) - 1) ** int(d)
    g = lambda isa, prec, lab: best[(d, k, L, isa, prec, lab)]
    m, y = g("avx2", "double", "main"), g("avx2", "double", "yt")
    cell = lambda isa, prec: "%.3f / %.3f" % (g(isa, prec, "main")[0], g(isa, prec, "yt")[0])
    print("| %s | %s | %s | %d | %.3f (%.1f, %.0f%%) | %.3f (%.0f%%) | %.2f | %s | %s | %s |" % (
        d, k, L, n, m[0], m[1], 100 * m[1] / peak["avx2"], y[0], 100 * y[1] / peak["avx2"], y[0] / m[0],
        cell("avx2", "float"), cell("avx512", "double"), cell("avx512", "float")))
