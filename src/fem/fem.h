/* 1D finite-element building blocks. Everything hpmg does on a Cartesian mesh
 * is a tensor product of these: quadrature rules, Lagrange bases on
 * Gauss-Lobatto nodes, element matrices, and small sparse 1D matrices
 * (assembled mass/stiffness, transfers, interpolation to quadrature points). */
#ifndef HPMG_FEM_H
#define HPMG_FEM_H

#include "core/core.h"
#include "hpmg.h"

/* Gauss-Legendre (n points, exact to degree 2n-1) and Gauss-Lobatto (n >= 2
 * points, exact to degree 2n-3) rules on [0,1]; nodes ascending. */
void hpmg_gauss(int n, double *x, double *w);
void hpmg_gauss_lobatto(int n, double *x, double *w);

/* Values (and derivatives if dv != NULL) at point t of the n Lagrange
 * polynomials on the given nodes: v[j] = l_j(t). */
void hpmg_lagrange_eval(int n, const double *nodes, double t, double *v, double *dv);

/* Element matrices of Q_k on a 1D cell of length h with GLL nodes and
 * (k+1)-point Gauss quadrature, (k+1)x(k+1) row-major. */
void hpmg_element_mass(int k, double h, double *M);
void hpmg_element_stiffness(int k, double h, double *K);

/* Small sparse matrix in CSR form (1D operators). Values are kept in double
 * and float so kernels of either precision can read them. */
typedef struct {
  int nrows, ncols;
  int *rowptr, *col;
  double *val;
  float *valf;
  int bw;         /* for square banded matrices: max |i-j| of a nonzero, else -1 */
  double *dia;    /* banded: dia[(o+bw)*nrows + i] = A[i][i+o] (0 outside), else NULL */
  float *diaf;
} hpmg_sp1d;

void hpmg_sp1d_free(hpmg_sp1d *A);
/* Build from a dense row-major matrix, dropping exact zeros. */
hpmg_error hpmg_sp1d_from_dense(int nrows, int ncols, const double *D, hpmg_sp1d *A);
/* Add the diagonal-storage copy used by vectorized kernels (square matrices). */
hpmg_error hpmg_sp1d_make_banded(hpmg_sp1d *A);
/* The n x n identity. */
hpmg_error hpmg_sp1d_identity(int n, hpmg_sp1d *A);
/* Dense copy (row-major), for tests and coarse solves. */
void hpmg_sp1d_to_dense(const hpmg_sp1d *A, double *D);
hpmg_error hpmg_sp1d_transpose(const hpmg_sp1d *A, hpmg_sp1d *T);
double hpmg_sp1d_entry(const hpmg_sp1d *A, int i, int j);

/* Assembled 1D matrices of continuous Q_k on `cells` cells of length h,
 * restricted to the interior (free) nodes: size (k*cells-1)^2. */
hpmg_error hpmg_assemble_mass_1d(int k, int cells, double h, hpmg_sp1d *M);
hpmg_error hpmg_assemble_stiffness_1d(int k, int cells, double h, hpmg_sp1d *K);
/* Prolongation of interior nodes from `cells` cells to 2*cells cells (same k):
 * interpolation of the coarse Q_k function at the fine nodes. */
hpmg_error hpmg_prolongation_1d(int k, int cells, hpmg_sp1d *P);
/* Interpolation matrix for a change of degree on the same cells, kc -> kf. */
hpmg_error hpmg_degree_interpolation_1d(int kc, int kf, int cells, hpmg_sp1d *P);
/* Values of the interior basis functions at the nq-point Gauss points of every
 * cell: (cells*nq) x (k*cells-1). If xq/wq are given, they receive the physical
 * quadrature points and weights (cell length h). */
hpmg_error hpmg_quadrature_interpolation_1d(int k, int cells, double h, int nq, hpmg_sp1d *B,
                                            double *xq, double *wq);
/* Positions of the interior nodes (k*cells-1 values) for cells of length h. */
void hpmg_node_positions_1d(int k, int cells, double h, double *x);

/* One direction of a general box (grid/grid.h): `cells` cells with
 * boundaries xn[0..cells] (NULL: uniform cells of length h), the condition
 * at each end. Global nodes 0..k*cells; free node i is global node i + off,
 * off = 1 behind a Dirichlet end; a periodic direction has k*cells free
 * nodes (global node k*cells is node 0). The plain direction (xn NULL,
 * Dirichlet both ends) gives the matrices of the functions above. */
typedef struct {
  int k;
  int cells;
  const double *xn;
  double h;
  hpmg_bc_kind lo, hi;
} hpmg_dir1d;

static inline int hpmg_dir1d_periodic(const hpmg_dir1d *L) { return L->lo == HPMG_BC_PERIODIC; }
static inline int hpmg_dir1d_off(const hpmg_dir1d *L) { return L->lo == HPMG_BC_DIRICHLET; }
static inline int hpmg_dir1d_n(const hpmg_dir1d *L) {
  if (hpmg_dir1d_periodic(L)) return L->k * L->cells;
  return L->k * L->cells - 1 + (L->lo != HPMG_BC_DIRICHLET) + (L->hi != HPMG_BC_DIRICHLET);
}
/* free index of global node gi (0..k*cells), or -1 for an eliminated node */
static inline int hpmg_dir1d_free(const hpmg_dir1d *L, int gi) {
  const int last = L->k * L->cells;
  if (hpmg_dir1d_periodic(L)) return gi == last ? 0 : gi;
  if ((gi == 0 && L->lo == HPMG_BC_DIRICHLET) || (gi == last && L->hi == HPMG_BC_DIRICHLET)) return -1;
  return gi - hpmg_dir1d_off(L);
}
static inline double hpmg_dir1d_x(const hpmg_dir1d *L, int c) { return L->xn ? L->xn[c] : c * L->h; }
static inline double hpmg_dir1d_width(const hpmg_dir1d *L, int c) {
  return L->xn ? L->xn[c + 1] - L->xn[c] : L->h;
}

/* Assembled 1D mass (stiffness = 0) or stiffness (1) matrix of direction L
 * on its free nodes, split into A, the band |i - j| <= k (banded storage
 * added), and W, the couplings that wrap around a periodic direction (row 0
 * with columns n-k..n-1 and rows n-k..n-1 with column 0, from the last
 * cell; W is left empty, nrows 0, unless periodic). A + W is the matrix.
 * Periodic needs cells >= 2. */
hpmg_error hpmg_assemble_1d(const hpmg_dir1d *L, int stiffness, hpmg_sp1d *A, hpmg_sp1d *W);
/* Row sums of the stiffness matrix A + W of L: exactly 0 except in rows
 * coupled to an eliminated Dirichlet node (minus that element entry; no
 * cancellation). s has hpmg_dir1d_n values. */
void hpmg_stiffness_row_sums_1d(const hpmg_dir1d *L, double *s);
/* Prolongation from the coarse direction C to the fine direction F, nested:
 * uniform cells halved (F.cells = 2 C.cells), or with coarse node coordinates every
 * coarse node a fine node (a coarse cell holds one fine cell or several:
 * partial semi-coarsening), the same ends: the coarse Q_k function
 * interpolated at the fine free nodes (a periodic direction wraps). */
hpmg_error hpmg_prolongation_1d_dir(const hpmg_dir1d *C, const hpmg_dir1d *F, hpmg_sp1d *P);
/* hpmg_quadrature_interpolation_1d for direction L: rows = cells*nq Gauss
 * points, columns = its free nodes (a periodic direction wraps). */
hpmg_error hpmg_quadrature_interpolation_1d_dir(const hpmg_dir1d *L, int nq, hpmg_sp1d *B, double *xq, double *wq);
/* Positions of the free nodes of L (hpmg_dir1d_n values). */
void hpmg_node_positions_1d_dir(const hpmg_dir1d *L, double *x);

#endif
