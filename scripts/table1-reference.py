#!/usr/bin/python3
"""Independent reference for paper 000's Table 1 (2D) at low degree.

Rebuilds the paper's method from assembled sparse matrices, sharing no code
with hpmg: Q_k on [0,1]^d (GLL nodes, equidistant for k <= 2), exact (Gauss) quadrature,
one coarse cell, level l = 2^l cells per direction (the paper's tables print
l + 1, deal.II's number of levels; docs/patch.md), Dirichlet boundary,
prolongation = embedding of Q_k(coarse) in Q_k(fine), restriction = its
transpose, level 1 (one vertex patch) solved exactly, and the colored
multiplicative vertex-patch smoother: for each of the 2^d colors (vertex
parity: color c has bit d = (v_d - 1) mod 2 for the interior vertex v, v_d =
1..2^l-1; the authors' code colors by the child index of the patch's first
cell in its parent, the same colors in the same order), r = b - A x, then
x_P += A_PP^{-1} r_P on every patch P of that color
(interior DoFs of the 2x2 cells around an interior vertex, a dense inverse).
FMG with b = the vector of ones (--rhs vector-one), 1 pre + 1 post step in
the same color order, V-cycles after the start until ||b - Ax|| <= 1e-9 ||b||,
counted as hpmg and the paper count them (the start's finest cycle not
counted).

--cycle add-residual adds the level residual with every coarse-grid
correction, x += P e_c + r, as the authors' code of the paper's time does
(hpmg's --cycle add-residual; docs/patch.md): the cycle that reproduces the
published 2D counts.

Options vary what the paper leaves open: every one of the 24 color orders,
reversed colors after the coarse correction (symmetric cycle), and the
number of pre/post steps; --additive W replaces the multiplicative smoother
by the damped additive one, --local-scale C scales every local correction
(an inexact local solver), --quadrature gll-local / gll builds the local
solver / the whole method with (k+1)-point GLL quadrature (a lumped 1D mass
matrix), all for comparison. Counts of -1: not converged in 40
cycles. Usage:
  scripts/table1-reference.py [--dim 2|3] [--degrees 1,2] [--levels 2..8] [--orders all]
  scripts/table1-reference.py --dim 2 --degrees 1 --levels 5..5 --history
  scripts/table1-reference.py --dim 2 --degrees 1,2,3 --levels 2..8 --cycle add-residual
Needs python3-numpy and python3-scipy (Debian). Results: docs/patch.md.
"""
import argparse
import itertools
import sys

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def lagrange(nodes, t, skip=()):
    """values of the Lagrange basis on nodes at points t: (len(t), len(nodes)),
    with the factors of the nodes in skip left out"""
    V = np.ones((len(t), len(nodes)))
    for j, xj in enumerate(nodes):
        for m, xm in enumerate(nodes):
            if m != j and m not in skip:
                V[:, j] *= (t - xm) / (xj - xm)
    return V


def lagrange_deriv(nodes, t):
    """exact derivatives of the Lagrange basis: phi_j' = sum over m != j of
    1/(x_j - x_m) times the product over the other factors"""
    D = np.zeros((len(t), len(nodes)))
    for m, xm in enumerate(nodes):
        part = lagrange(nodes, t, skip=(m,))
        for j, xj in enumerate(nodes):
            if j != m:
                D[:, j] += part[:, j] / (xj - xm)
    return D


def gll(k):
    """Gauss-Lobatto-Legendre nodes on [0,1] (equidistant for k <= 2)"""
    if k <= 2:
        return np.linspace(0.0, 1.0, k + 1)
    inner = np.polynomial.legendre.Legendre.basis(k).deriv().roots()
    return (np.concatenate(([-1.0], np.sort(inner.real), [1.0])) + 1) / 2


def element_1d(k, quad="gauss"):
    """reference-cell mass and stiffness matrices of Q_k on [0,1], GLL nodes,
    with exact Gauss quadrature or the (k+1)-point GLL rule ("gll": the mass
    matrix lumped, the stiffness matrix still exact)"""
    nodes = gll(k)
    if quad == "gll":
        q = nodes
        w = 1.0 / (k * (k + 1) * np.polynomial.legendre.Legendre.basis(k)(2 * q - 1) ** 2)
    else:
        q, w = np.polynomial.legendre.leggauss(k + 2)
        q, w = (q + 1) / 2, w / 2
    V = lagrange(nodes, q)
    D = lagrange_deriv(nodes, q)
    return V.T @ (w[:, None] * V), D.T @ (w[:, None] * D), nodes


def level_1d(k, l, quad="gauss"):
    """interior 1D mass and stiffness on 2^l cells of [0,1]"""
    Me, Ke, _ = element_1d(k, quad)
    nc = 2 ** l
    n = k * nc + 1
    h = 1.0 / nc
    M = np.zeros((n, n))
    K = np.zeros((n, n))
    for c in range(nc):
        s = slice(c * k, c * k + k + 1)
        M[s, s] += h * Me
        K[s, s] += Ke / h
    return sp.csr_matrix(M[1:-1, 1:-1]), sp.csr_matrix(K[1:-1, 1:-1])


def prolong_1d(k, l):
    """interior embedding of level l-1 into level l"""
    _, _, nodes = element_1d(k)
    ncf = 2 ** l
    nf, ncn = k * ncf + 1, k * (ncf // 2) + 1
    P = np.zeros((nf, ncn))
    hf, hc = 1.0 / ncf, 2.0 / ncf
    for i in range(nf):
        cf, j = min(i // k, ncf - 1), i - min(i // k, ncf - 1) * k
        x = (cf + nodes[j]) * hf
        c = min(cf // 2, ncf // 2 - 1)
        t = (x - c * hc) / hc
        P[i, c * k:c * k + k + 1] = lagrange(nodes, np.array([t]))[0]
    P[np.abs(P) < 1e-14] = 0.0
    return sp.csr_matrix(P[1:-1, 1:-1])


def kron_all(mats):
    out = mats[0]
    for m in mats[1:]:
        out = sp.kron(out, m)
    return out.tocsr()


class Level:
    def __init__(self, k, l, dim, quad="gauss", local_scale=1.0):
        def stiffness(q):  # x fastest: kron(z, y, x); K in direction d's slot, M elsewhere
            M, K = level_1d(k, l, q)
            return sum(kron_all([K if s == d else M for s in range(dim)]) for d in range(dim)).tocsr(), M
        self.A, M = stiffness("gll" if quad == "gll" else "gauss")
        Aloc = stiffness("gauss" if quad == "gauss" else "gll")[0]
        self.n1 = M.shape[0]
        self.P = kron_all([prolong_1d(k, l)] * dim)  # level l-1 -> l (unused on level 1)
        nc = 2 ** l
        m = 2 * k - 1  # patch interior per direction
        self.colors = {}
        for v in itertools.product(range(1, nc), repeat=dim):  # (.., vy, vx)
            # interior nodes of cells v-1, v in every direction: global node
            # indices k(v-1)+1 .. k(v+1)-1, interior numbering minus 1
            idx = np.zeros(1, dtype=np.int64)
            for vd in v:
                i1 = np.arange(k * (vd - 1) + 1, k * (vd + 1)) - 1
                idx = (idx[:, None] * self.n1 + i1[None, :]).ravel()
            self.colors.setdefault(tuple((vd - 1) % 2 for vd in reversed(v)), []).append(idx)
        for c in self.colors:
            self.colors[c] = np.array(self.colors[c])
        some = next(iter(self.colors.values()))[0]
        self.Ainv = local_scale * np.linalg.inv(Aloc[some][:, some].toarray())  # the same on every patch
        assert m ** dim == len(some)

    def smooth(self, x, b, order, additive=0.0):
        if additive:  # every patch from one residual, corrections summed and damped
            r = b - self.A @ x
            dx = np.zeros_like(x)
            for c in order:
                if c in self.colors:
                    np.add.at(dx, self.colors[c], r[self.colors[c]] @ self.Ainv.T)
            x += additive * dx
            return x
        for c in order:
            if c not in self.colors:
                continue
            r = b - self.A @ x
            I = self.colors[c]
            x[I] += (r[I] @ self.Ainv.T)  # rows: patches
        return x


def vcycle(lv, l, x, b, cfg):
    L = lv[l]
    if l == 1:
        return spla.spsolve(L.A.tocsc(), b)
    order = cfg["order"]
    for _ in range(cfg["pre"]):
        L.smooth(x, b, order, cfg["additive"])
    r = b - L.A @ x
    bc = L.P.T @ r
    ec = vcycle(lv, l - 1, np.zeros_like(bc), bc, cfg)
    x += L.P @ ec
    if cfg["cycle"] == "add-residual":  # the authors' code: x += P e_c + r
        x += r
    post = order[::-1] if cfg["sym"] else order
    for _ in range(cfg["post"]):
        L.smooth(x, b, post, cfg["additive"])
    return x


def fmg_count(lv, Lmax, cfg, tol=1e-9, maxit=40, history=None):
    b = {Lmax: np.ones(lv[Lmax].A.shape[0])}
    for l in range(Lmax, 1, -1):
        b[l - 1] = lv[l].P.T @ b[l]
    x = spla.spsolve(lv[1].A.tocsc(), b[1])
    for l in range(2, Lmax + 1):
        x = lv[l].P @ x
        x = vcycle(lv, l, x, b[l], cfg)
    nb = np.linalg.norm(b[Lmax])
    if history is not None:
        history.append(np.linalg.norm(b[Lmax] - lv[Lmax].A @ x) / nb)
    for it in range(1, maxit + 1):
        x = vcycle(lv, Lmax, x, b[Lmax], cfg)
        rel = np.linalg.norm(b[Lmax] - lv[Lmax].A @ x) / nb
        if history is not None:
            history.append(rel)
        if rel <= tol:
            return it
    return -1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dim", type=int, default=2, choices=[2, 3])
    ap.add_argument("--degrees", default="1,2")
    ap.add_argument("--levels", default="2..8", help="a..b")
    ap.add_argument("--orders", default="default", choices=["default", "all"])
    ap.add_argument("--sym", action="store_true", help="reverse the colors in post-smoothing")
    ap.add_argument("--pre", type=int, default=1)
    ap.add_argument("--post", type=int, default=1)
    ap.add_argument("--additive", type=float, default=0.0, metavar="W",
                    help="additive instead of multiplicative: all patches from one residual, "
                         "corrections summed and damped by W (a weaker cycle, for comparison)")
    ap.add_argument("--local-scale", type=float, default=1.0, metavar="C",
                    help="x_P += C A_PP^{-1} r_P (an inexact local solver, for comparison)")
    ap.add_argument("--quadrature", default="gauss", choices=["gauss", "gll-local", "gll"],
                    help="gll-local: the local solver from (k+1)-point GLL quadrature (lumped 1D "
                         "mass), the operator exact; gll: both (default: exact)")
    ap.add_argument("--cycle", default="standard", choices=["standard", "add-residual"],
                    help="coarse-grid correction x += P e_c (standard, Algorithm 1) or x += P e_c + r "
                         "(the authors' code)")
    ap.add_argument("--order", help="one color order, e.g. 0123 (default: hpmg's and the paper's, 0..2^d-1)")
    ap.add_argument("--history", action="store_true",
                    help="print the relative residual after the FMG start and after every V-cycle "
                         "at the finest level (as hpmg solve's iteration table)")
    a = ap.parse_args()
    lo, hi = (int(s) for s in a.levels.split(".."))
    base = [tuple((c >> d) & 1 for d in range(a.dim)) for c in range(2 ** a.dim)]  # x parity first
    orders = [tuple(base)] if a.orders == "default" else list(itertools.permutations(base))
    if a.order:
        if sorted(a.order) != [str(c) for c in range(2 ** a.dim)]:
            ap.error(f"--order must be a permutation of 0..{2 ** a.dim - 1}")
        orders = [tuple(base[int(c)] for c in a.order)]
    for k in (int(s) for s in a.degrees.split(",")):
        lv = {l: Level(k, l, a.dim, a.quadrature, a.local_scale) for l in range(1, hi + 1)}
        for order in orders:
            cfg = {"order": order, "sym": a.sym, "pre": a.pre, "post": a.post, "additive": a.additive,
                   "cycle": a.cycle}
            if a.history:
                h = []
                fmg_count(lv, hi, cfg, history=h)
                for it, rel in enumerate(h):
                    print(f"{it} {rel:.4e}")
                continue
            counts = [fmg_count(lv, L, cfg) for L in range(lo, hi + 1)]
            name = "".join(str(sum(b << d for d, b in enumerate(c))) for c in order)
            add = f" additive={a.additive:g}" if a.additive else ""
            add += f" local-scale={a.local_scale:g}" if a.local_scale != 1.0 else ""
            add += f" quadrature={a.quadrature}" if a.quadrature != "gauss" else ""
            add += f" cycle={a.cycle}" if a.cycle != "standard" else ""
            print(f"{a.dim}D k={k} order={name} sym={int(a.sym)}{add} "
                  f"pre={a.pre} post={a.post} L={lo}..{hi}: {' '.join(map(str, counts))}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
