#include <limits.h>
#include <math.h>
#include "grid.h"

hpmg_error hpmg_grid_init(int dim, int k, const int64_t cells[3], const double box[3], hpmg_grid *g) {
  HPMG_CHECK_ARG(dim == 2 || dim == 3, "dimension must be 2 or 3 (got %d)", dim);
  HPMG_CHECK_ARG(k >= 1 && k <= 15, "degree must be in 1..15 (got %d)", k);
  g->dim = dim;
  g->k = k;
  g->N = 1;
  for (int f = 0; f < 6; f++) g->bc[f] = HPMG_BC_DIRICHLET;
  for (int d = 0; d < 3; d++) {
    g->xn[d] = NULL;
    g->off[d] = d < dim;
    if (d >= dim) {
      g->cells[d] = 1;
      g->n[d] = 1;
      g->h[d] = 1.0;
      continue;
    }
    HPMG_CHECK_ARG(cells[d] >= 1, "cells per direction must be >= 1");
    HPMG_CHECK_ARG(cells[d] <= (INT_MAX - 1) / k,
                   "%lld cells of degree %d in one direction exceed 2^31 nodes",
                   (long long)cells[d], k);
    HPMG_CHECK_ARG(box[d] > 0 && isfinite(box[d]), "box lengths must be positive and finite");
    g->cells[d] = cells[d];
    g->n[d] = (int64_t)k * cells[d] - 1;
    g->h[d] = box[d] / (double)cells[d];
    HPMG_CHECK_ARG(g->n[d] == 0 || g->N <= INT64_MAX / g->n[d], "number of unknowns overflows 64 bits");
    g->N *= g->n[d];
  }
  return HPMG_SUCCESS;
}

/* free nodes and the first one's global index from cells, k and the ends */
static hpmg_error grid_counts(hpmg_grid *g) {
  g->N = 1;
  for (int d = 0; d < 3; d++) {
    if (d >= g->dim) {
      g->n[d] = 1, g->off[d] = 0;
      continue;
    }
    const hpmg_bc_kind lo = g->bc[2 * d], hi = g->bc[2 * d + 1];
    HPMG_CHECK_ARG((lo == HPMG_BC_PERIODIC) == (hi == HPMG_BC_PERIODIC), "direction %d: periodic on one end only", d);
    HPMG_CHECK_ARG(lo != HPMG_BC_PERIODIC || g->cells[d] >= 2,
                   "direction %d: Q_k needs at least 2 cells in a periodic direction (got %lld)", d, (long long)g->cells[d]);
    HPMG_CHECK_ARG(g->cells[d] >= 1 && g->cells[d] <= (INT_MAX - 1) / g->k,
                   "direction %d: %lld cells of degree %d must be in 1 .. 2^31 nodes", d, (long long)g->cells[d], g->k);
    const int64_t kc = (int64_t)g->k * g->cells[d];
    g->off[d] = lo == HPMG_BC_DIRICHLET;
    g->n[d] = lo == HPMG_BC_PERIODIC ? kc : kc - 1 + (lo == HPMG_BC_NEUMANN) + (hi == HPMG_BC_NEUMANN);
    HPMG_CHECK_ARG(g->n[d] == 0 || g->N <= INT64_MAX / g->n[d], "number of unknowns overflows 64 bits");
    g->N *= g->n[d];
  }
  return HPMG_SUCCESS;
}

hpmg_error hpmg_grid_init_box(const hpmg_box *b, int k, hpmg_grid *g) {
  int64_t cells[3] = {1, 1, 1};
  for (int d = 0; d < b->dim; d++) cells[d] = b->cells[d];
  HPMG_CALL(hpmg_grid_init(b->dim, k, cells, b->len, g));
  for (int f = 0; f < 2 * b->dim; f++) g->bc[f] = b->bc[f];
  for (int d = 0; d < b->dim; d++) g->xn[d] = b->uniform[d] ? NULL : b->x[d];
  return grid_counts(g);
}

int hpmg_grid_coarsenable(const hpmg_grid *f, int d) {
  if (d >= f->dim || f->cells[d] % 2) return 0;
  return f->bc[2 * d] != HPMG_BC_PERIODIC || f->cells[d] >= 4;
}

hpmg_error hpmg_grid_coarsen(const hpmg_grid *f, const int coarsen[3], hpmg_grid *c) {
  *c = *f;
  for (int d = 0; d < f->dim; d++) {
    if (!coarsen[d]) continue; /* the same cells: f's coordinates */
    HPMG_CHECK_ARG(hpmg_grid_coarsenable(f, d), "direction %d: %lld cells cannot be coarsened", d, (long long)f->cells[d]);
    HPMG_CHECK_ARG(!f->xn[d], "direction %d has node coordinates: coarsen it with hpmg_grid_with_nodes", d);
    c->cells[d] = f->cells[d] / 2;
    c->h[d] = 2 * f->h[d];
  }
  return grid_counts(c);
}

hpmg_error hpmg_grid_with_nodes(const hpmg_grid *f, int d, int64_t cells, const double *x, hpmg_grid *c) {
  HPMG_CHECK_ARG(d >= 0 && d < f->dim && cells >= 1 && x, "hpmg_grid_with_nodes: direction %d, %lld cells", d,
                 (long long)cells);
  *c = *f;
  c->cells[d] = cells;
  c->xn[d] = x;
  c->h[d] = (x[cells] - x[0]) / (double)cells;
  return grid_counts(c);
}

/* Cell-local node tables of deal.II's FE_Q on GeometryInfo's reference cell:
 * vertex v at (v & 1, (v >> 1) & 1, v >> 2); lines and faces as in
 * GeometryInfo<dim>::line_to_cell_vertices / face_to_cell_vertices (a line runs
 * from its first vertex to its second; a face's nodes are lexicographic in the
 * face coordinates u (vertex 0 -> 1), v (vertex 0 -> 2)). */
static const int lines2[4][2] = {{0, 2}, {1, 3}, {0, 1}, {2, 3}};
static const int lines3[12][2] = {{0, 2}, {1, 3}, {0, 1}, {2, 3}, {4, 6}, {5, 7},
                                  {4, 5}, {6, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
static const int faces3[6][3] = {{0, 2, 4}, {1, 3, 5}, {0, 4, 1}, {2, 6, 3}, {0, 1, 2}, {4, 5, 6}};

typedef struct {
  const hpmg_grid *g;
  int64_t *ord, cnt, o[3]; /* output, nodes numbered so far, cell origin (node units) */
  unsigned char *seen;
} cw_state;

static void cw_node(cw_state *c, const int a[3]) {
  const hpmg_grid *g = c->g;
  int64_t q[3];
  for (int d = 0; d < 3; d++) {
    q[d] = c->o[d] + a[d] - (d < g->dim); /* free-node index (boundary nodes excluded) */
    if (q[d] < 0 || q[d] >= g->n[d]) return;
  }
  const int64_t i = hpmg_grid_index(g, q[0], q[1], q[2]);
  if (c->seen[i]) return;
  c->seen[i] = 1;
  c->ord[c->cnt++] = i;
}

static void cw_vertex(int k, int v, int a[3]) {
  for (int d = 0; d < 3; d++) a[d] = ((v >> d) & 1) * k;
}

static void cw_cell(cw_state *c) {
  const int k = c->g->k, dim = c->g->dim, nv = 1 << dim;
  int a[3], p[3], q[3], r[3];
  for (int v = 0; v < nv; v++) {
    cw_vertex(k, v, a);
    cw_node(c, a);
  }
  const int nl = dim == 2 ? 4 : 12;
  for (int l = 0; l < nl; l++) {
    const int *lv = dim == 2 ? lines2[l] : lines3[l];
    cw_vertex(1, lv[0], p);
    cw_vertex(1, lv[1], q);
    for (int t = 1; t < k; t++) {
      for (int d = 0; d < 3; d++) a[d] = p[d] * k + t * (q[d] - p[d]);
      cw_node(c, a);
    }
  }
  if (dim == 3)
    for (int f = 0; f < 6; f++) {
      cw_vertex(1, faces3[f][0], p);
      cw_vertex(1, faces3[f][1], q);
      cw_vertex(1, faces3[f][2], r);
      for (int v = 1; v < k; v++)
        for (int u = 1; u < k; u++) {
          for (int d = 0; d < 3; d++) a[d] = p[d] * k + u * (q[d] - p[d]) + v * (r[d] - p[d]);
          cw_node(c, a);
        }
    }
  const int z0 = dim == 3 ? 1 : 0, z1 = dim == 3 ? k : 1; /* 2D: the one plane z = 0 */
  for (int z = z0; z < z1; z++)
    for (int y = 1; y < k; y++)
      for (int x = 1; x < k; x++) {
        a[0] = x, a[1] = y, a[2] = z;
        cw_node(c, a);
      }
}

hpmg_error hpmg_grid_cellwise_order(const hpmg_grid *g, int64_t coarse, int64_t *ord) {
  const int dim = g->dim;
  HPMG_CHECK_ARG(coarse >= 1, "coarse cells per direction must be >= 1");
  int L = 0;
  while ((coarse << L) < g->cells[0]) L++;
  for (int d = 0; d < dim; d++)
    HPMG_CHECK_ARG(g->cells[d] == (coarse << L), "cellwise order: %lld cells per direction is not %lld * 2^l",
                   (long long)g->cells[d], (long long)coarse);
  HPMG_CHECK_ARG(dim * L < 62, "cellwise order: too many refinements (%d)", L);
  cw_state c = {g, ord, 0, {0, 0, 0}, NULL};
  HPMG_CALL(hpmg_calloc((size_t)(g->N > 0 ? g->N : 1), &c.seen));
  const int64_t nchild = (int64_t)1 << (dim * L), cz = dim == 3 ? coarse : 1;
  for (int64_t c2 = 0; c2 < cz; c2++)
    for (int64_t c1 = 0; c1 < coarse; c1++)
      for (int64_t c0 = 0; c0 < coarse; c0++)
        for (int64_t m = 0; m < nchild; m++) { /* m: child indices, most significant = coarsest */
          int64_t x[3] = {c0, c1, c2};
          for (int j = L - 1; j >= 0; j--) {
            const int64_t ch = (m >> (dim * j)) & ((1 << dim) - 1);
            for (int d = 0; d < dim; d++) x[d] = 2 * x[d] + ((ch >> d) & 1);
          }
          for (int d = 0; d < 3; d++) c.o[d] = d < dim ? x[d] * g->k : 0;
          cw_cell(&c);
        }
  hpmg_free(&c.seen);
  if (c.cnt != g->N)
    return hpmg_error_set(HPMG_ERR_ARG, "internal error: cellwise order numbered %lld of %lld nodes", (long long)c.cnt,
                          (long long)g->N);
  return HPMG_SUCCESS;
}
