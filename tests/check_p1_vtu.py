#!/usr/bin/python3
"""Read P1 mesh .vtu files (hpmg_p1_mesh_write_vtu) back with VTK's XML reader.

usage: check_p1_vtu.py SPEC...   SPEC = PATH:DIM:POINTS:CELLS:VOLUME:REGIONS:HAS_U

Checks: no reader errors or warnings; the number of points and cells; every
cell is a VTK_TETRA (DIM 3) or VTK_TRIANGLE (DIM 2) with positive orientation;
the cells' volumes (areas) add up to VOLUME; the Int32 cell array 'region'
holds REGIONS distinct values; with HAS_U, the point array 'u' equals
x + 2y + 3z at every point (the field the test writes).

Exits 77 when the vtk Python module is missing (install python3-vtk9)."""
import sys

try:
    from vtkmodules.vtkCommonCore import vtkOutputWindow, vtkStringOutputWindow
    from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridReader
except ImportError as exc:
    print("SKIP: cannot import vtk (%s); install python3-vtk9" % exc)
    sys.exit(77)


def signed_size(p, dim):
    a = [p[1][d] - p[0][d] for d in range(3)]
    b = [p[2][d] - p[0][d] for d in range(3)]
    if dim == 2:
        return 0.5 * (a[0] * b[1] - a[1] * b[0])
    c = [p[3][d] - p[0][d] for d in range(3)]
    return (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
            + a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0


def check(spec, log):
    path, dim, npts, ncells, volume, nreg, has_u = spec.rsplit(":", 6)
    dim, npts, ncells, volume, nreg, has_u = int(dim), int(npts), int(ncells), float(volume), int(nreg), has_u == "1"
    errors = []
    before = len(log.GetOutput())
    reader = vtkXMLUnstructuredGridReader()
    reader.SetFileName(path)
    reader.Update()
    text = log.GetOutput()[before:].strip()
    if text:
        errors.append("reader reported: " + text[:500])
    grid = reader.GetOutput()
    if grid.GetNumberOfPoints() != npts or grid.GetNumberOfCells() != ncells:
        errors.append("%d points, %d cells; expected %d, %d" % (grid.GetNumberOfPoints(), grid.GetNumberOfCells(), npts, ncells))
    else:
        want_type, nv = (10, 4) if dim == 3 else (5, 3)
        pts = grid.GetPoints()
        total = 0.0
        for c in range(ncells):
            cell = grid.GetCell(c)
            if grid.GetCellType(c) != want_type or cell.GetNumberOfPoints() != nv:
                errors.append("cell %d: type %d with %d points" % (c, grid.GetCellType(c), cell.GetNumberOfPoints()))
                break
            v = signed_size([pts.GetPoint(cell.GetPointId(k)) for k in range(nv)], dim)
            if v <= 0:
                errors.append("cell %d is not positively oriented (%g)" % (c, v))
                break
            total += v
        if abs(total - volume) > 1e-12 * volume:
            errors.append("cells add up to %.17g, expected %g" % (total, volume))
        reg = grid.GetCellData().GetArray("region")
        if reg is None or reg.GetDataTypeAsString() != "int":
            errors.append("no Int32 cell array 'region'")
        elif len({reg.GetValue(c) for c in range(ncells)}) != nreg:
            errors.append("region holds %d distinct values, expected %d" % (len({reg.GetValue(c) for c in range(ncells)}), nreg))
        u = grid.GetPointData().GetArray("u")
        if has_u:
            if u is None or u.GetDataTypeAsString() != "double":
                errors.append("no Float64 point array 'u'")
            else:
                for p in range(npts):
                    x = pts.GetPoint(p)
                    if dim == 2 and x[2] != 0.0:
                        errors.append("point %d has z = %g in 2D" % (p, x[2]))
                        break
                    if abs(u.GetValue(p) - (x[0] + 2 * x[1] + 3 * x[2])) > 1e-12:
                        errors.append("u at point %d is %.17g, expected x + 2y + 3z at %s" % (p, u.GetValue(p), x))
                        break
        elif grid.GetPointData().GetNumberOfArrays() != 0:
            errors.append("point data present in a geometry-only file")
    for e in errors:
        print("FAIL %s: %s" % (path, e))
    if not errors:
        print("ok   %s: %d points, %d cells" % (path, npts, ncells))
    return len(errors)


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    log = vtkStringOutputWindow()
    vtkOutputWindow.SetInstance(log)
    errors = sum(check(spec, log) for spec in argv[1:])
    print("check_p1_vtu: %d file(s), %d failure(s)" % (len(argv) - 1, errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
