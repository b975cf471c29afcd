/* Structured Cartesian level: cells per direction, free (interior) nodes per
 * direction and their lexicographic numbering (x fastest). 2D is stored as 3D
 * with one node in z, so every kernel has a single code path. */
#ifndef HPMG_GRID_H
#define HPMG_GRID_H

#include "core/core.h"

typedef struct {
  int dim, k;
  int64_t cells[3]; /* cells per direction (1 in z for 2D) */
  int64_t n[3];     /* free nodes per direction: k*cells-1 (1 in z for 2D) */
  int64_t N;        /* n[0]*n[1]*n[2] */
  double h[3];      /* cell lengths (1 in z for 2D) */
} hpmg_grid;

/* Describe the level with cells[d] cells over box[d]; validates sizes and
 * refuses index overflow (64-bit counts; per-direction counts < 2^31). */
hpmg_error hpmg_grid_init(int dim, int k, const int64_t cells[3], const double box[3], hpmg_grid *g);

static inline int64_t hpmg_grid_index(const hpmg_grid *g, int64_t i0, int64_t i1, int64_t i2) {
  return i0 + g->n[0] * (i1 + g->n[1] * i2);
}

/* The free nodes in deal.II's level DoF numbering (DoFHandler::distribute_mg_dofs,
 * FE_Q, on a globally refined subdivided hyper-cube): cells in hierarchical
 * order (coarse cells lexicographic, then each cell's 2^dim children in child
 * order x + 2y + 4z, recursively), each cell numbering its nodes not yet
 * numbered: vertices, lines, faces (3D), interior, in FE_Q's cell-local order.
 * coarse: cells per direction of the coarse mesh (g->cells[d] = coarse 2^l).
 * ord[s] = lexicographic index of the s-th node; ord has g->N entries. This is
 * the order of paper 000's point Gauss-Seidel (Table 3). */
hpmg_error hpmg_grid_cellwise_order(const hpmg_grid *g, int64_t coarse, int64_t *ord);

#endif
