#!/usr/bin/python3
"""Read hpmg .vtu files back with VTK's XML reader and check them.

usage: check_vtu.py SPEC...   SPEC = PATH:DIM:K:C0,C1,C2:B0,B1,B2

Each file must hold the continuous Q_k field u = prod_d x_d (b_d - x_d) on the
uniform mesh of C cells per direction of the box [0,B], with Gauss-Lobatto
nodes, as VTK Lagrange cells. Checks: no reader errors or warnings; number of
points and cells; cell types and sizes; every point on the Gauss-Lobatto grid,
each grid node exactly once; the field equals u at every point; inside every
cell, the point in each slot is the node VTK's own PointIndexFromIJK puts
there; and VTK's cell interpolation (EvaluateLocation weights) at off-node
parametric points reproduces, for both geometry and field, the tensor-product
interpolant of the nodal data on VTK's equispaced parametric nodes (for k = 2
the nodes are equispaced and this is u itself at the physical point).

Exits 77 when the vtk Python module is missing (install python3-vtk9)."""
import math
import sys

try:
    from vtkmodules.vtkCommonCore import reference, vtkOutputWindow, vtkStringOutputWindow
    from vtkmodules.vtkCommonDataModel import vtkLagrangeHexahedron, vtkLagrangeQuadrilateral
    from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridReader
except ImportError as exc:
    print("SKIP: cannot import vtk (%s); install python3-vtk9" % exc)
    sys.exit(77)

TOL = 1e-12
PARAM_POINTS = [(0.5, 0.5, 0.5), (0.13, 0.71, 0.37), (0.9, 0.05, 0.6), (0.31, 0.97, 0.02)]


def legendre(n, t):
    """P_n(t) and P_n'(t)."""
    p0, p1 = 1.0, t
    if n == 0:
        return 1.0, 0.0
    for m in range(2, n + 1):
        p0, p1 = p1, ((2 * m - 1) * t * p1 - (m - 1) * p0) / m
    return p1, n * (t * p1 - p0) / (t * t - 1.0) if abs(t) != 1.0 else 0.0


def gauss_lobatto(k):
    """k+1 Gauss-Lobatto points on [0,1], ascending."""
    pts = [-1.0]
    for i in range(1, k):
        t = -math.cos(math.pi * i / k)
        for _ in range(100):
            # roots of P_k'; Newton on q = (1-t^2) P_k', q' = -k(k+1) P_k
            p, dp = legendre(k, t)
            dt = (1.0 - t * t) * dp / (-k * (k + 1.0) * p)
            t -= dt
            if abs(dt) < 1e-16:
                break
        pts.append(t)
    pts.append(1.0)
    return [0.5 * (t + 1.0) for t in pts]


def lagrange_equispaced(k, r):
    """Values at r of the k+1 Lagrange polynomials on the nodes i/k."""
    nodes = [i / k for i in range(k + 1)]
    vals = []
    for i in range(k + 1):
        v = 1.0
        for j in range(k + 1):
            if j != i:
                v *= (r - nodes[j]) / (nodes[i] - nodes[j])
        vals.append(v)
    return vals


class Checker:
    def __init__(self, label):
        self.label = label
        self.errors = 0

    def fail(self, msg):
        self.errors += 1
        if self.errors <= 10:
            print("FAIL %s: %s" % (self.label, msg))


def check_file(path, dim, k, cells, box, log):
    ck = Checker("%s (dim %d, k %d)" % (path, dim, k))
    cells, box = cells[:dim], box[:dim]
    before = len(log.GetOutput())
    reader = vtkXMLUnstructuredGridReader()
    reader.SetFileName(path)
    reader.Update()
    text = log.GetOutput()[before:].strip()
    if text:
        ck.fail("reader reported: " + text[:500])
    grid = reader.GetOutput()

    npc = (k + 1) ** dim
    npoints = math.prod(k * c + 1 for c in cells)
    ncells = math.prod(cells)
    if grid.GetNumberOfPoints() != npoints:
        ck.fail("%d points, expected %d" % (grid.GetNumberOfPoints(), npoints))
    if grid.GetNumberOfCells() != ncells:
        ck.fail("%d cells, expected %d" % (grid.GetNumberOfCells(), ncells))
    if ck.errors:
        return ck.errors
    arr = grid.GetPointData().GetArray("u")
    if arr is None or arr.GetNumberOfComponents() != 1 or arr.GetDataTypeAsString() != "double":
        ck.fail("no Float64 scalar point array 'u'")
        return ck.errors

    gll = gauss_lobatto(k)
    h = [box[d] / cells[d] for d in range(dim)]
    # the 1D node grid of each direction, as hpmg_node_positions_1d defines it
    grid1d = []
    for d in range(dim):
        xs = [((g // k) + gll[g % k]) * h[d] for g in range(k * cells[d] + 1)]
        xs[0], xs[-1] = 0.0, box[d]
        grid1d.append(xs)

    def f1(d, t):
        return t * (box[d] - t)

    def exact(x):
        return math.prod(f1(d, x[d]) for d in range(dim))

    def grid_index(d, t):
        # node index of coordinate t in direction d, or None if t is off the grid
        g = min(range(len(grid1d[d])), key=lambda i: abs(grid1d[d][i] - t))
        return g if abs(grid1d[d][g] - t) <= TOL * box[d] else None

    # every point is a grid node, every grid node appears once, u matches
    seen = set()
    pts = grid.GetPoints()
    u = [arr.GetValue(p) for p in range(npoints)]
    for p in range(npoints):
        x = pts.GetPoint(p)
        if dim == 2 and x[2] != 0.0:
            ck.fail("point %d has z = %g in 2D" % (p, x[2]))
        g = tuple(grid_index(d, x[d]) for d in range(dim))
        if None in g:
            ck.fail("point %d at %s is not a Gauss-Lobatto node" % (p, x))
        elif g in seen:
            ck.fail("node %s appears twice" % (g,))
        seen.add(g)
        if abs(u[p] - exact(x)) > TOL:
            ck.fail("u at point %d %s is %.17g, expected %.17g" % (p, x, u[p], exact(x)))

    # VTK's own slot of local node (i,j,l) in a Lagrange cell of this order
    if dim == 2:
        slot = {(i, j, 0): vtkLagrangeQuadrilateral.PointIndexFromIJK(i, j, [k, k])
                for j in range(k + 1) for i in range(k + 1)}
        want_type = 70
    else:
        slot = {(i, j, l): vtkLagrangeHexahedron.PointIndexFromIJK(i, j, l, [k, k, k])
                for l in range(k + 1) for j in range(k + 1) for i in range(k + 1)}
        want_type = 72
    if sorted(slot.values()) != list(range(npc)):
        ck.fail("VTK's PointIndexFromIJK is not a permutation (checker bug)")
        return ck.errors
    basis_cache = {}

    for c in range(ncells):
        if grid.GetCellType(c) != want_type:
            ck.fail("cell %d has type %d, expected %d" % (c, grid.GetCellType(c), want_type))
            continue
        cell = grid.GetCell(c)
        if cell.GetNumberOfPoints() != npc:
            ck.fail("cell %d has %d points, expected %d" % (c, cell.GetNumberOfPoints(), npc))
            continue
        bounds = cell.GetBounds()
        x0 = [bounds[2 * d] for d in range(dim)]
        ids = [cell.GetPointIds().GetId(s) for s in range(npc)]

        # slot by slot: the point must be the cell's node (i,j,l)
        for (i, j, l), s in slot.items():
            want = [x0[d] + h[d] * gll[(i, j, l)[d]] for d in range(dim)]
            got = pts.GetPoint(ids[s])
            if any(abs(got[d] - want[d]) > TOL * box[d] for d in range(dim)):
                ck.fail("cell %d slot %d holds %s, expected node (%d,%d,%d) at %s"
                        % (c, s, got[:dim], i, j, l, want))

        # VTK's interpolation inside the cell
        for r in PARAM_POINTS:
            sub = reference(0)
            x = [0.0, 0.0, 0.0]
            w = [0.0] * npc
            cell.EvaluateLocation(sub, list(r), x, w)
            val = sum(w[s] * u[ids[s]] for s in range(npc))
            geo, fld = [], 1.0
            for d in range(dim):
                key = r[d]
                if key not in basis_cache:
                    basis_cache[key] = lagrange_equispaced(k, key)
                L = basis_cache[key]
                nodes = [x0[d] + h[d] * gll[i] for i in range(k + 1)]
                geo.append(sum(L[i] * nodes[i] for i in range(k + 1)))
                fld *= sum(L[i] * f1(d, nodes[i]) for i in range(k + 1))
            if any(abs(x[d] - geo[d]) > TOL * box[d] for d in range(dim)):
                ck.fail("cell %d: location at %s is %s, expected %s" % (c, r[:dim], x[:dim], geo))
            if abs(val - fld) > TOL:
                ck.fail("cell %d: interpolated u at %s is %.17g, expected %.17g"
                        % (c, r[:dim], val, fld))
            if k == 2 and abs(val - exact(x)) > TOL:
                ck.fail("cell %d: interpolated u at %s is %.17g, exact %.17g"
                        % (c, x[:dim], val, exact(x)))
    if ck.errors == 0:
        print("ok   %s: %d points, %d cells of type %d" % (path, npoints, ncells, want_type))
    return ck.errors


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    log = vtkStringOutputWindow()
    vtkOutputWindow.SetInstance(log)
    errors = 0
    for spec in argv[1:]:
        path, dim, k, cells, box = spec.rsplit(":", 4)
        errors += check_file(path, int(dim), int(k), [int(v) for v in cells.split(",")],
                             [float(v) for v in box.split(",")], log)
    print("check_vtu: %d file(s), %d failure(s)" % (len(argv) - 1, errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
