#!/usr/bin/env python3
"""Read a .vtu that `hpmg solve --vtu` wrote for a box with the built-in sine problem
(--disc sem, or Q_k with --cells/--bc/--grid; hpmg_vtu_write_lattice: appended raw
binary, UInt64 headers; no VTK needed) and check it against the box's
manufactured solution (docs/bc.md, src/disc/fd/fd_box.c manu_1d):
points and cells counted, cell types 70/72, offsets, every connectivity
index in range, each cell's corner points (VTK order) at its element's
corners and all its points inside it, and max |u - u_exact| over the points
equal to the nodal max error the solve reported (every lattice node is a point).
With "cell" after MAXERR (the finite-difference cell layout: the points are the cell
centres and the faces of the non-periodic directions): every non-periodic direction has
points at 0 and L, the points off the Neumann faces give the reported max error, and those
on a Neumann face (extrapolated by h/2 times the flux) lie within NEUMANN_TOL (the
last argument) of the exact solution.
usage: check_box_vtu.py FILE DIM P CX,CY[,CZ] LX,LY[,LZ] BC MAXERR [cell NEUMANN_TOL]
BC: per direction D, N or P for the min and max face, e.g. DNPP; or "unit" for the
unit-box problems (--disc fd --refine L, the default Q_k mesh): u = prod sin(pi x_i)."""
import math
import re
import struct
import sys

path, dim, p = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cells = [int(c) for c in sys.argv[4].split(",")]
box = [float(b) for b in sys.argv[5].split(",")]
bc = sys.argv[6]
maxerr = float(sys.argv[7])
cell = len(sys.argv) > 8 and sys.argv[8] == "cell"
neumann_tol = float(sys.argv[9]) if cell else 0.0
data = open(path, "rb").read()
head = data[: data.index(b"<AppendedData")].decode()
np_ = int(re.search(r'NumberOfPoints="(\d+)"', head).group(1))
nc = int(re.search(r'NumberOfCells="(\d+)"', head).group(1))
offs = [int(o) for o in re.findall(r'offset="(\d+)"', head)]
base = data.index(b"_", data.index(b"<AppendedData")) + 1
fail = []


def block(i, fmt, size):
    o = base + offs[i]
    n = struct.unpack("<Q", data[o : o + 8])[0]
    if n % size:
        fail.append(f"block {i}: {n} bytes")
    return struct.unpack(f"<{n // size}{fmt}", data[o + 8 : o + 8 + n])


u = block(0, "d", 8)
pts = block(1, "d", 8)
conn = block(2, "q", 8)
offsets = block(3, "q", 8)
types = block(4, "B", 1)
npc = (p + 1) ** dim
want_np = math.prod(c * p + 1 for c in cells)
if np_ != want_np or nc != math.prod(cells) or len(u) != np_ or len(pts) != 3 * np_:
    fail.append(f"points {np_} (want {want_np}), cells {nc}")
if len(conn) != nc * npc or list(offsets) != [(i + 1) * npc for i in range(nc)]:
    fail.append("connectivity or offsets")
if set(types) != {70 if dim == 2 else 72}:
    fail.append(f"cell types {set(types)}")
if any(not 0 <= c < np_ for c in conn):
    fail.append("connectivity index out of range")


def manu_1d(lo, hi, L, x):
    s = x / L
    if lo == "P":
        return math.cos(2 * math.pi * s) + math.sin(2 * math.pi * s)
    q = math.pi if lo == hi else 0.5 * math.pi
    a = math.sin(q * s) if lo == "D" else math.cos(q * s)
    return a + 0.5 * s


def exact(x):
    if bc == "unit":  # the unit-box problems' u = prod sin(pi x_d) (homogeneous Dirichlet)
        return math.prod(math.sin(math.pi * x[d]) for d in range(dim))
    v = 1.0
    for d in range(dim):
        v *= manu_1d(bc[2 * d], bc[2 * d + 1], box[d], x[d])
    return v + 0.25


worst = worst_n = 0.0
on_face = [[False, False] for _ in range(dim)]
for i in range(np_):
    x = pts[3 * i : 3 * i + 3]
    err = abs(u[i] - exact(x))
    neumann = False
    for d in range(dim):
        for s, at in enumerate((0.0, box[d])):
            if abs(x[d] - at) <= 1e-12 * box[d]:
                on_face[d][s] = True
                neumann = neumann or (cell and bc[2 * d + s] == "N")
    if neumann:
        worst_n = max(worst_n, err)
    else:
        worst = max(worst, err)
if cell:
    for d in range(dim):
        if bc[2 * d] != "P" and not all(on_face[d]):
            fail.append(f"direction {d}: no points on its faces")
    if not worst_n <= neumann_tol:
        fail.append(f"max |u - exact| on the Neumann faces {worst_n:.6e} above {neumann_tol:.6e}")
if not abs(worst - maxerr) <= 2e-6 * maxerr + 1e-13:  # --json prints 7 digits
    fail.append(f"max |u - exact| over the points {worst:.6e} differs from the reported nodal max error {maxerr:.6e}")
# each cell: corners in VTK order (x fastest counter-clockwise, then z) span a box; all points inside
corner = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)][: 2**dim]
for c in range(nc):
    ids = conn[c * npc : (c + 1) * npc]
    P = [pts[3 * j : 3 * j + 3] for j in ids]
    lo = [min(q[d] for q in P) for d in range(3)]
    hi = [max(q[d] for q in P) for d in range(3)]
    for k, cc in enumerate(corner):
        for d in range(dim):
            if abs(P[k][d] - (hi[d] if cc[d] else lo[d])) > 1e-12 * max(box):
                fail.append(f"cell {c}: corner {k} not at its element corner")
                break
    if len(set(ids)) != npc:
        fail.append(f"cell {c}: repeated points")
for f in fail[:10]:
    print("FAIL:", f)
print(f"{path}: {np_} points, {nc} cells of degree {p}; max |u - exact| {worst:.3e} (reported {maxerr:.3e})"
      + (f", on the Neumann faces {worst_n:.3e}" if cell else ""))
sys.exit(1 if fail else 0)
