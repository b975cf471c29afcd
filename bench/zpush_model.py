#!/usr/bin/env python3
"""1D model of the GPU operator's z stage (src/disc/qk/cuda/qk_ops.cu): the push into
the register ring with summation by parts over plane differences, emulated
step for step (z-chunks, first-plane garbage, the extra push at j = n), with
the weights built as in hpmg_cuda_op_create. Checks
  - random inputs, every chunk size: equals the CPU's operator (rounded
    entries, exact row sums) to ~1e-16;
  - smooth input: the solution floor |A^-1 delta| / |x| of the operator error
    delta, for the GPU form, the CPU difference form and the former
    row-sum-correction form.
Exact references with fractions.Fraction. Usage (from the repository root,
after building build/libhpmg.a):
  gcc -O1 -fopenmp -Iinclude -Isrc bench/zpush_dump.c build/libhpmg.a \\
      -llapacke -lopenblas -lfftw3_omp -lfftw3 -lm [-lcudart -lcufft -lstdc++] -o /tmp/zpush_dump
  python3 bench/zpush_model.py /tmp/zpush_dump
"""
import math, random, subprocess, sys
from fractions import Fraction as Fr

DUMP = sys.argv[1] if len(sys.argv) > 1 else "/tmp/zpush_dump"

def load(k, c):
    out = subprocess.run([DUMP, str(k), str(c)], capture_output=True, text=True).stdout.split("\n")
    n, bw = map(int, out[0].split())
    K = [0.0] * ((2 * bw + 1) * n); M = [0.0] * ((2 * bw + 1) * n)
    for t in range((2 * bw + 1) * n):
        a, b = out[1 + t].split(); K[t] = float(a); M[t] = float(b)
    sK = [float(out[1 + (2 * bw + 1) * n + i]) for i in range(n)]
    return n, bw, K, M, sK

def weights(n, kb, K, sK):
    """hpmg_cuda_op_create's Wz (double)"""
    W = [0.0] * ((2 * kb + 1) * n)
    Kij = lambda i, j: Fr(K[(j - i + kb) * n + i])
    for i in range(n):
        a = max(0, i - kb); b = min(n - 1, i + kb); S = Fr(sK[i])
        rev = a > 0 and i >= n - kb
        for l in range(a + 1 if rev else a, (n if rev else b) + 1):
            if l <= i: w = -sum((Kij(i, j) for j in range(a, l)), Fr(0)) + (0 if rev else S)
            else: w = sum((Kij(i, j) for j in range(l, b + 1)), Fr(0)) - (S if rev else 0)
            W[(l - i + kb) * n + i] = float(w)
    return W

def kernel(n, KZ, M, W, p, q, zc):
    """the ring of qk_op_kernel in z: pa = q (mass part), pm = p (stiffness part)"""
    y = [float("nan")] * n
    for z0 in range(0, n, zc):
        z1 = min(n, z0 + zc); ja = max(0, z0 - KZ); jb = min(n, z1 + KZ)
        acc = [0.0] * (2 * KZ + 1); pmprev = 0.0
        for j in range(z0 - KZ, z1 + KZ):
            i = j - KZ
            comp = ja <= j < jb; push = comp or (KZ > 0 and j == n)
            CZ = [[(Z[(2 * KZ - s) * n + j - KZ + s] if 0 <= j - KZ + s < n else 0.0) for s in range(2 * KZ + 1)]
                  for Z in (M, W)] if push else None
            if comp:
                dz = p[j] - pmprev; pmprev = p[j]
                for s in range(2 * KZ + 1): acc[s] += CZ[0][s] * q[j] + CZ[1][s] * dz
            elif KZ > 0 and push:
                dz = -pmprev; pmprev = 0.0
                for s in range(2 * KZ + 1): acc[s] += CZ[1][s] * dz
            if z0 <= i < z1: y[i] = acc[0]
            acc = acc[1:] + [0.0]
    return y

def matvec_exact(n, kb, A, x, fix=None):
    y = []
    for i in range(n):
        s = Fr(0); rs = Fr(0)
        for o in range(-kb, kb + 1):
            if 0 <= i + o < n:
                e = Fr(A[(o + kb) * n + i]); s += e * Fr(x[i + o]); rs += e
        if fix is not None: s += (Fr(fix[i]) - rs) * Fr(x[i])
        y.append(s)
    return y

def rel(y, ref):
    return math.sqrt(float(sum((Fr(a) - b) ** 2 for a, b in zip(y, ref)) / sum(b * b for b in ref)))

def band_solve(n, kb, K, sK, rhs):
    A = [[0.0] * n for _ in range(n)]
    for i in range(n):
        rs = Fr(0)
        for o in range(-kb, kb + 1):
            if 0 <= i + o < n: A[i][i + o] = K[(o + kb) * n + i]; rs += Fr(K[(o + kb) * n + i])
        A[i][i] = float(Fr(A[i][i]) + Fr(sK[i]) - rs)
    b = rhs[:]
    for c in range(n):
        for r in range(c + 1, min(n, c + kb + 1)):
            f = A[r][c] / A[c][c]
            for cc in range(c, min(n, c + 2 * kb + 1)): A[r][cc] -= f * A[c][cc]
            b[r] -= f * b[c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (b[r] - sum(A[r][cc] * x[cc] for cc in range(r + 1, min(n, r + 2 * kb + 1)))) / A[r][r]
    return x

random.seed(1)
print("random inputs (worst over chunk sizes), relative to the CPU operator:")
for k, c in [(1, 5), (2, 4), (3, 3), (5, 6), (7, 12), (8, 3), (1, 2), (2, 1), (3, 1), (7, 1)]:
    n, kb, K, M, sK = load(k, c); W = weights(n, kb, K, sK); worst = 0.0
    for zc in sorted(set([n, max(1, 2 * k + 2), 1, 3, 7])):
        p = [random.uniform(-1, 1) for _ in range(n)]; q = [random.uniform(-1, 1) for _ in range(n)]
        ref = [a + b for a, b in zip(matvec_exact(n, kb, M, q), matvec_exact(n, kb, K, p, sK))]
        worst = max(worst, rel(kernel(n, kb, M, W, p, q, zc), ref))
    print(f"  k={k} n={n}: {worst:.2e}")
print("smooth input, solution floor |A^-1 delta|/|x|:")
for k, c in [(2, 500), (3, 300), (5, 150), (7, 100)]:
    n, kb, K, M, sK = load(k, c)
    ps = [math.sin(math.pi * (i + 1) / (n + 1)) * math.exp((i + 1) / (n + 1)) for i in range(n)]
    refs = matvec_exact(n, kb, K, ps, sK); xn = math.sqrt(sum(v * v for v in ps))
    corr = [float(Fr(sK[i]) - sum(Fr(K[(o + kb) * n + i]) for o in range(-kb, kb + 1) if 0 <= i + o < n)) for i in range(n)]
    forms = {
        "gpu (summation by parts)": kernel(n, kb, M, weights(n, kb, K, sK), ps, [0.0] * n, 2 * k + 2),
        "cpu (difference form)": [sum(K[(o + kb) * n + i] * (ps[i + o] - ps[i]) for o in range(-kb, kb + 1) if 0 <= i + o < n)
                                  + sK[i] * ps[i] for i in range(n)],
        "former (row-sum correction)": [sum(K[(o + kb) * n + i] * ps[i + o] for o in range(-kb, kb + 1) if 0 <= i + o < n)
                                        + corr[i] * ps[i] for i in range(n)],
    }
    line = []
    for name, y in forms.items():
        e = band_solve(n, kb, K, sK, [float(Fr(a) - b) for a, b in zip(y, refs)])
        line.append(f"{name} {math.sqrt(sum(v * v for v in e)) / xn:.2e}")
    print(f"  k={k} n={n}: " + ", ".join(line))
