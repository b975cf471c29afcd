/* Structured Cartesian level: cells per direction, free (interior) nodes per
 * direction and their lexicographic numbering (x fastest). 2D is stored as 3D
 * with one node in z, so every kernel has a single code path. */
#ifndef HPMG_GRID_H
#define HPMG_GRID_H

#include "core/core.h"
#include "grid/box.h"
#include "hpmg.h"

/* A level of a general box (grid/box.h) adds, per direction d < dim:
 *   bc[2d], bc[2d+1]: the conditions at the min and max end (HPMG_BC_DIRICHLET
 *     by default: the end node is eliminated; NEUMANN: it is an unknown;
 *     PERIODIC on both ends: global node k*cells is node 0);
 *   xn[d]: cells[d]+1 cell-boundary coordinates, or NULL for uniform cells
 *     (x_c = c h[d]); not owned by the grid: the holder of the level keeps it
 *     alive as long as every copy of the grid;
 *   off[d]: global node index (0 .. k*cells) of free node 0: 1 behind a
 *     Dirichlet end, else 0.
 * Free nodes of direction d: k*cells - 1 + (min Neumann) + (max Neumann), or
 * k*cells when periodic; free node i is global node i + off[d]. */
typedef struct {
  int dim, k;
  int64_t cells[3]; /* cells per direction (1 in z for 2D) */
  int64_t n[3];     /* free nodes per direction (1 in z for 2D) */
  int64_t N;        /* n[0]*n[1]*n[2] */
  double h[3];      /* cell lengths (1 in z for 2D); the mean width when xn[d] is set */
  hpmg_bc_kind bc[6];
  const double *xn[3];
  int64_t off[3];
} hpmg_grid;

/* Width of cell c (0 .. cells-1) of direction d. */
static inline double hpmg_grid_cell_width(const hpmg_grid *g, int d, int64_t c) {
  return g->xn[d] ? g->xn[d][c + 1] - g->xn[d][c] : g->h[d];
}

/* 1 for the level hpmg_grid_init describes: uniform cells, Dirichlet on every face. */
static inline int hpmg_grid_is_plain(const hpmg_grid *g) {
  for (int d = 0; d < g->dim; d++)
    if (g->xn[d] || g->bc[2 * d] != HPMG_BC_DIRICHLET || g->bc[2 * d + 1] != HPMG_BC_DIRICHLET) return 0;
  return 1;
}

/* Describe the level with cells[d] uniform cells over box[d], Dirichlet on
 * every face; validates sizes and refuses index overflow (64-bit counts;
 * per-direction counts < 2^31). */
hpmg_error hpmg_grid_init(int dim, int k, const int64_t cells[3], const double box[3], hpmg_grid *g);

/* The finest Q_k level of degree k on box b: its cells and conditions, xn[d]
 * = b->x[d] (NULL where b->uniform[d]; b must outlive the grid), h[d] the
 * mean width. Refuses a periodic direction with fewer than 2 cells and what
 * hpmg_grid_init refuses. */
hpmg_error hpmg_grid_init_box(const hpmg_box *b, int k, hpmg_grid *g);
/* 1 when direction d of f can be coarsened: an even cell count, and at
 * least 2 cells left where periodic. */
int hpmg_grid_coarsenable(const hpmg_grid *f, int d);
/* The next coarser level of f: direction d's uniform cells merged in pairs
 * where coarsen[d] (hpmg_grid_coarsenable; a direction with node
 * coordinates is refused: hpmg_grid_with_nodes), kept otherwise; a direction
 * not coarsened keeps f's xn[d] pointer. */
hpmg_error hpmg_grid_coarsen(const hpmg_grid *f, const int coarsen[3], hpmg_grid *c);
/* f with direction d's cells given by the cells + 1 increasing nodes x (the
 * caller's, kept alive with c): a coarser level that merges some cells of d
 * only (partial semi-coarsening); h[d] the mean width. */
hpmg_error hpmg_grid_with_nodes(const hpmg_grid *f, int d, int64_t cells, const double *x, hpmg_grid *c);

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
