/* VTK XML unstructured-grid (.vtu) output of a continuous Q_k function on a
 * uniform Cartesian mesh, as high-order Lagrange cells (VTK types 70/72) that
 * ParaView and VTK >= 9 render and interpolate directly. */
#ifndef HPMG_IO_VTU_H
#define HPMG_IO_VTU_H

#include <stdio.h>

#include "core/core.h"

/* Write the Q_k function u on [0,box[0]] x [0,box[1]] (x [0,box[2]]) with
 * cells[d] cells per direction to the file `path`.
 *
 * dim:        2 or 3 (cells[2] and box[2] are ignored in 2D)
 * degree:     polynomial degree k, 1..10; nodes are the Gauss-Lobatto points
 *             of each cell
 * u:          values at the interior nodes, n_d = k*cells[d]-1 per direction,
 *             index i0 + n0*(i1 + n1*i2); boundary nodes are written as 0.
 *             May be NULL only when there are no interior nodes.
 * field_name: name of the point-data array (letters, digits, and _ - . only)
 *
 * Every global node is one VTK point shared by its cells. The data is written
 * in binary (appended raw, UInt64 headers) to path.tmp, which is renamed to
 * path once complete, so an error never leaves a partial file at path.
 * Returns HPMG_ERR_ARG (nothing written) for bad arguments, HPMG_ERR_IO with
 * the path and the system's reason if the file cannot be written. */
hpmg_error hpmg_vtu_write(const char *path, int dim, int degree, const int cells[3],
                          const double box[3], const double *u, const char *field_name);

/* Write a continuous function of degree k (1..32) on a Cartesian mesh of
 * cells[d] cells per direction of any widths, given at its lattice nodes (the
 * Gauss-Lobatto points of each cell), one Lagrange cell per mesh cell, cells
 * and points lexicographic (x fastest). xl[d]: the k cells[d] + 1 node
 * coordinates of direction d; u: nlat[0] nlat[1] (nlat[2]) values, index
 * g0 + nlat[0] (g1 + nlat[1] g2); nlat[d] = k cells[d] + 1, or k cells[d] for
 * a periodic direction, whose last node plane is written again with the
 * first plane's values. Written to path.tmp and renamed, as hpmg_vtu_write;
 * HPMG_ERR_ARG for inconsistent sizes, HPMG_ERR_IO naming the path. */
hpmg_error hpmg_vtu_write_lattice(const char *path, int dim, int k, const int64_t cells[3], double *const xl[3],
                                  const int64_t nlat[3], const double *u, const char *name);

/* Position of node (i,j,l), 0 <= i,j,l <= k, of a Lagrange cell of degree k in
 * VTK's point ordering of VTK_LAGRANGE_QUADRILATERAL (dim 2, l ignored) or
 * VTK_LAGRANGE_HEXAHEDRON (dim 3): corners, edges, faces, then the interior. */
int hpmg_vtu_lagrange_index(int dim, int k, int i, int j, int l);

/* Building blocks shared by the VTU writers (this one and the P1 mesh's):
 * a binary file written to path.tmp and renamed to path once complete, with
 * the first write failure remembered so writes can be chained. */
typedef struct {
  FILE *f;
  int err;   /* errno of the first failure, 0 while all is well */
  char *tmp; /* path.tmp */
} hpmg_vtu_file;

/* Create path.tmp; HPMG_ERR_IO naming it (or HPMG_ERR_MEMORY) on failure. */
hpmg_error hpmg_vtu_file_open(hpmg_vtu_file *s, const char *path);
void hpmg_vtu_file_write(hpmg_vtu_file *s, const void *data, size_t bytes);
/* One appended-raw block header: the UInt64 byte count of the data after it. */
void hpmg_vtu_file_block(hpmg_vtu_file *s, uint64_t bytes);
void hpmg_vtu_file_printf(hpmg_vtu_file *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The XML of an unstructured grid whose arrays follow as appended raw data,
 * up to the "_" that starts the data: np points, nc cells, an optional
 * Float64 point array (point_field NULL: none) and Int32 cell array
 * (cell_field NULL: none) at their offsets, then the points, connectivity,
 * offsets and types at theirs. version: the VTK file version ("2.2" for the
 * Lagrange hexahedra's edge order). */
void hpmg_vtu_file_xml_header(hpmg_vtu_file *s, const char *version, int64_t np, int64_t nc, const char *point_field,
                              uint64_t off_point, const char *cell_field, uint64_t off_cell, uint64_t off_pts,
                              uint64_t off_conn, uint64_t off_offs, uint64_t off_types);
/* Close and rename to path (or remove path.tmp if anything failed); returns
 * HPMG_ERR_IO naming path on failure. */
hpmg_error hpmg_vtu_file_close(hpmg_vtu_file *s, const char *path);
/* "LittleEndian" or "BigEndian": this machine's order, for the XML header. */
const char *hpmg_vtu_byte_order(void);
/* Non-empty, at most 255 characters of [A-Za-z0-9_.-]: safe inside XML quotes. */
int hpmg_vtu_name_ok(const char *name);

#endif
