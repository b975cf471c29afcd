/* P1 finite-element assembly on simplex meshes (docs/p1.md, "Assembly").
 *
 * Symbolic phase (once per mesh): the node -> (cell, local index)
 * incidence, the full symmetric CSR pattern with sorted columns, and for
 * every cell the position of each of its (dim+1)^2 local entries inside the
 * row (16-bit offsets from the row start).
 *
 * Numeric phase (per set of coefficients): the local matrices of all cells
 * (upper triangles) into a scratch array, then a row-wise gather: row i sums, for its
 * incident cells in ascending order, their local rows into its entries. No
 * two threads write one entry and every entry adds its terms in the order of
 * the serial element loop (Algorithm 3.1 of paper 003), so the threaded
 * matrix is bitwise the serial one, whatever the thread count. */
#ifndef HPMG_P1_ASSEMBLY_H
#define HPMG_P1_ASSEMBLY_H

#include "disc/p1/mesh.h"

typedef struct {
  int dim, nv;             /* nv = dim + 1 nodes per cell */
  int64_t n, ncells, nnz;
  int64_t *rowptr;         /* n + 1 */
  int32_t *col;            /* nnz, sorted within each row */
  int64_t *diag;           /* n: position of the diagonal entry */
  int64_t *inc_ptr;        /* n + 1 */
  int64_t *inc;            /* cell * nv + k for node i = cell's k-th node, ascending cell */
  uint16_t *slot;          /* ncells * nv * nv: col position of node l in row node k, minus rowptr */
  int max_row;             /* longest row */
} hpmg_p1_pattern;

hpmg_error hpmg_p1_pattern_build(const hpmg_p1_mesh *m, hpmg_p1_pattern *p);
void hpmg_p1_pattern_destroy(hpmg_p1_pattern *p);

/* Coefficients of -div(sigma grad u) + lambda u. sigma NULL: 1; comps 1: a
 * scalar per cell; comps 6 (3D: xx yy zz xy xz yz) or 3 (2D: xx yy xy): a
 * symmetric tensor per cell. */
typedef struct {
  const double *sigma;
  int comps;
  double lambda;
} hpmg_p1_coef;

/* Stiffness + lambda mass of cell c: out[k * nv + l]; returns the cell's
 * measure (volume or area; negative for a negatively oriented cell). */
double hpmg_p1_local_matrix(const hpmg_p1_mesh *m, const hpmg_p1_coef *cf, int64_t c, double *out);

/* Threaded numeric phase: val (nnz) = A. scratch: ncells * nv (nv + 1) / 2
 * doubles (the local upper triangles). */
void hpmg_p1_assemble(const hpmg_p1_mesh *m, const hpmg_p1_pattern *p, const hpmg_p1_coef *cf, double *scratch,
                      double *val);
/* The serial element loop (reference and benchmark baseline): bitwise equal
 * to hpmg_p1_assemble. */
void hpmg_p1_assemble_serial(const hpmg_p1_mesh *m, const hpmg_p1_pattern *p, const hpmg_p1_coef *cf, double *val);

/* Row-wise gather of per-cell vectors loc[c * nv + k] into b (n). */
void hpmg_p1_gather_vector(const hpmg_p1_pattern *p, const double *loc, double *b);

/* position of column j in row i, -1 if absent */
int64_t hpmg_p1_find(const hpmg_p1_pattern *p, int64_t i, int64_t j);

/* For the GPU's per-entry gather (cuda/p1_cuda.h): the contributions of
 * every CSR entry, as indices e * ncells + c into an entry-major scratch of
 * the cells' local upper triangles (e = hpmg_p1_packed(k, l)), in ascending
 * cell order; cptr (nnz + 1) and cidx (ncells nv^2), 32-bit (HPMG_ERR_ARG
 * beyond). And the cells' nodes as nv arrays of 32-bit indices. */
static inline int hpmg_p1_packed(int k, int l, int nv) {
  if (k > l) {
    const int t = k;
    k = l, l = t;
  }
  return k * nv - k * (k - 1) / 2 + (l - k);
}
hpmg_error hpmg_p1_contributions(const hpmg_p1_pattern *p, uint32_t **cptr, uint32_t **cidx);
hpmg_error hpmg_p1_cells_soa(const hpmg_p1_mesh *m, int32_t **cells);

/* The boundary conditions' changes to an assembled matrix (docs/p1.md,
 * "Boundary conditions"), prepared once on the host from the mesh's facets
 * (src/api/p1.c) and applied by hpmg_p1_apply_bc here or by the GPU's
 * kernels (cuda/p1_cuda.h), which perform the same operations:
 * 1. Robin facet mass: entry rob_pos[r] += rob_w[t] for t in
 *    rob_ptr[r]..rob_ptr[r+1]-1, in this order (the facets' order);
 *    rob_pos ascending and distinct, so rows are independent;
 * 2. symmetric Dirichlet elimination: row i with dir[i] becomes the identity
 *    row; any other row i gets lift[i] = sum of A_ij gd[j] over its Dirichlet
 *    columns j (A after step 1, in column order) and those entries set to 0. */
typedef struct {
  int64_t n;            /* nodes */
  const uint8_t *dir;   /* n: Dirichlet nodes */
  const double *gd;     /* n: their values (0 elsewhere) */
  int64_t ndir;         /* Dirichlet nodes */
  int64_t nrob;         /* entries with Robin terms */
  const int64_t *rob_ptr; /* nrob + 1 */
  const int64_t *rob_pos; /* nrob: CSR positions */
  const double *rob_w;    /* rob_ptr[nrob]: the terms */
} hpmg_p1_bc_data;

/* val (nnz) gets the conditions; lift (n, may be NULL when ndir = 0): the
 * Dirichlet lift (0 on Dirichlet rows). Threaded, independent of the thread
 * count. */
void hpmg_p1_apply_bc(const hpmg_p1_pattern *p, const hpmg_p1_bc_data *bc, double *val, double *lift);

/* y = A x (threaded CSR) */
void hpmg_p1_spmv(const hpmg_p1_pattern *p, const double *val, const double *x, double *y);

#endif
