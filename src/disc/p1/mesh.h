/* Unstructured simplex meshes for P1 finite elements: tetrahedra in 3D,
 * triangles in 2D, stored as structure of arrays.
 *
 * Nodes are numbered 0..num_nodes-1 (the readers map the file's sparse tags to
 * this range and keep the file's tags in node_tag). Cells hold dim+1 node
 * indices each, positively oriented after reading: a file whose cells are all
 * negatively oriented (the opposite convention) is reversed cell by cell; one
 * with both orientations (inverted cells) or a degenerate cell is refused. Boundary
 * facets (triangles in 3D, segments in 2D) are the facet elements the file
 * lists (Gmsh writes only those of physical groups when the file has any);
 * the region/boundary identifiers are the file's physical tags (0 where the
 * file gives none), and `groups` maps names to tags ($PhysicalNames). Nodes
 * that no cell uses are dropped by the readers. Formats, errors and
 * measurements: docs/p1.md. */
#ifndef HPMG_P1_MESH_H
#define HPMG_P1_MESH_H

#include "core/core.h"

#define HPMG_P1_GROUP_NAME_MAX 64

typedef struct {
  int dim;     /* dimension of the group's entities: 3 (dim 3) / 2 (dim 2) regions, dim-1 boundaries */
  int tag;     /* physical tag */
  char name[HPMG_P1_GROUP_NAME_MAX];
} hpmg_p1_group;

typedef struct {
  int dim;                   /* 2 (triangles) or 3 (tetrahedra) */
  int64_t num_nodes;
  double *x[3];              /* node coordinates, one array per direction (x[2] NULL in 2D) */
  int64_t *node_tag;         /* the file's tag of each node (NULL for built-in meshes) */
  int64_t num_cells;
  int64_t *cell_nodes;       /* (dim+1) * num_cells: node indices of cell c at [(dim+1)c ...] */
  int *cell_region;          /* physical tag of each cell's region (0: none) */
  int64_t num_facets;
  int64_t *facet_nodes;      /* dim * num_facets: boundary facets carrying a physical tag */
  int *facet_region;         /* physical tag of each boundary facet */
  int num_groups;
  hpmg_p1_group *groups;     /* $PhysicalNames (or none) */
} hpmg_p1_mesh;

/* Read a mesh file; the format follows from the extension and the header:
 * Gmsh MSH 4.1 (ASCII or binary), Gmsh MSH 2.2 (ASCII), TetGen (.node/.ele
 * with the optional .face (.edge in 2D) next to them; path names any of them
 * or the common stem). Errors (HPMG_ERR_IO, or HPMG_ERR_MEMORY) name the file
 * and the line (ASCII) or byte offset (binary); nothing is allocated on
 * failure (*m zeroed). */
hpmg_error hpmg_p1_mesh_read(const char *path, hpmg_p1_mesh *m);

/* Built-in meshes (paper 003's "Regular" series and a perturbed variant):
 * spec "regular:L" or "irregular:L" (see hpmg_p1_mesh_builtin in mesh_builtin.c). */
hpmg_error hpmg_p1_mesh_builtin(const char *spec, int dim, hpmg_p1_mesh *m);

/* Renumber the nodes for locality (reverse Cuthill-McKee from a
 * pseudo-peripheral node); permutes coordinates, tags and cell/facet node
 * indices in place. perm (optional, num_nodes entries) receives new -> old. */
hpmg_error hpmg_p1_mesh_renumber(hpmg_p1_mesh *m, int64_t *perm);

/* Checks every cell's orientation/volume and every index; HPMG_ERR_ARG naming
 * the first offending cell. */
hpmg_error hpmg_p1_mesh_check(const hpmg_p1_mesh *m);

/* Find a physical group's tag by name (dimension dim), -1 if absent. */
int hpmg_p1_mesh_group_tag(const hpmg_p1_mesh *m, int dim, const char *name);

/* Write node values u (num_nodes entries; NULL: geometry only) and the cell
 * regions as a VTK XML unstructured grid (VTK_TETRA / VTK_TRIANGLE), through
 * path.tmp renamed on success. */
hpmg_error hpmg_p1_mesh_write_vtu(const hpmg_p1_mesh *m, const double *u, const char *field_name,
                                  const char *path);

void hpmg_p1_mesh_destroy(hpmg_p1_mesh *m);

#endif
