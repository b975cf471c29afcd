/* Matrix-free Q_k operator -Laplace + lambda on a Cartesian level.
 *
 * With tensor-product bases and tensor-product Gauss quadrature on a mesh that
 * is a Cartesian product of 1D meshes, the assembled (Dirichlet-eliminated)
 * stiffness matrix is exactly the Kronecker sum of assembled 1D matrices:
 *     A = Kz(x)My(x)Mx + Mz(x)Ky(x)Mx + Mz(x)My(x)Kx + lambda Mz(x)My(x)Mx,
 * (x fastest; 2D: Mz = [1], Kz = [0]). It is applied by sum factorization over
 * the whole tensor grid, output plane by output plane:
 *     t1 = Mz x, t2 = Kz x  (z window of 2k+1 input planes, tiled in y)
 *     a  = My t1, b = Ky t1 + My t2 + lambda a          (per x-line)
 *     y  = Kx a + Mx b      (SIMD across a group of y-lines held
 *                            transposed, cell block by cell block: the
 *                            x blocks below; k <= 2: per line, full band)
 * about 7k+15 multiply-adds per unknown, no scatter conflicts (every output
 * line is written by one thread) and one pass over x and y in memory.
 * The per-line epilogue fuses the vector updates of residuals, Jacobi and
 * Chebyshev steps into the same pass.
 *
 * General boxes (grid.h: stretched cells, Neumann and periodic ends): the 1D
 * matrices are assembled cell by cell (hpmg_assemble_1d) and the kernel above
 * runs unchanged on their band. A periodic direction's matrices also couple
 * row 0 to columns n-k..n-1 and rows n-k..n-1 to column 0 (the last cell wraps
 * to node 0): those wrap parts Mw, Kw stay out of the band and out of the
 * kernel. A is multilinear in the directions' pairs (M_d, K_d); with P_d the
 * band (what the kernel applies), Q_d the wrap part and F_d = P_d + Q_d,
 *     A(F,F,F) - A(P,P,P) = sum over the nonempty sets S of periodic
 *                           directions of A(Q in S, P elsewhere),
 * and the term of S has nonzero rows and columns only where the index of
 * each direction in S is 0 or n-k..n-1: k+1 node layers. hpmg_laplace_kernel
 * adds these terms after the kernel (laplace_wrap in laplace.c): each is the
 * same kernel on its layers gathered into a small grid whose directions in S
 * have k+1 nodes and the 1D matrices Q (banded there: local node 0 is node 0,
 * local w the node n-k-1+w), the other directions first (x, if not in S,
 * stays the contiguous one), so the pass is vectorized and threaded like the
 * kernel: about (k+1)/n of it per periodic direction, plus the gather and the
 * update of the layers (x periodic: two cache lines of every x-line each). The fused
 * modes are linear in (Ax), so with c = the sum of the terms: APPLY y += c;
 * RESIDUAL y -= c; SMOOTH y -= c2 D^-1 c and d -= c2 D^-1 c. K is applied in
 * difference form in both parts (below), the wrap part with row sum 0, so A 1 = 0 holds to the last
 * bit on a periodic or Neumann box with lambda = 0. */
#ifndef HPMG_OPS_LAPLACE_H
#define HPMG_OPS_LAPLACE_H

#include "core/isa.h"
#include "fem/fem.h"
#include "grid/grid.h"


/* smallest x band width (k) whose x stage runs on transposed line groups
 * (the x blocks). Below it the transposes cost more than the per-line full
 * band saves, at k = 2 with 64-byte vectors: one thread, 3D Q2 L6 double,
 * blocks from k = 2 on took 1.3x the time on Sapphire Rapids (8.1-8.5
 * against 6.3 ms), 0.8-1.0x with 32-byte vectors and on Zen 4, and k = 1
 * 0.9-1.2x. One width for every instruction set keeps their results
 * bitwise equal (test_isa). */
#define HPMG_LAPLACE_XT_MIN_BW 3

/* The rows of one direction's 1D matrices as the CPU kernel reads them: row
 * i couples the columns j0[i] .. j0[i] + n[i] - 1 (its structural band:
 * hpmg_laplace_band), with the (K, M) coefficient pairs from c[2 off[i]] in
 * band order (cf: float). */
typedef struct {
  int *j0, *n;
  int64_t *off;
  double *c;
  float *cf;
} hpmg_laplace_rows;

/* The x direction's matrices as the CPU kernel's x stage reads them
 * (laplace_kernels.inc): ne blocks of k+1 consecutive rows, block e holding
 * rows e k .. e k + k of the padded row space (np = ne k + 1 rows; free row i
 * is padded row i + off; the padded rows without a free row, an eliminated
 * Dirichlet node or a periodic direction's last node, hold zeros), consecutive
 * blocks sharing one row. Block e's coefficients start at c + eo[e], column by
 * column: for b = 0..k, K'_{0..k,b} then M_{0..k,b}; a block equal to the one
 * before it shares its coefficients (one block on a uniform grid).
 * Every coupling of the band sits in exactly one block (a diagonal mass entry
 * in the block whose first row it is, or the last block), and each block
 * applies
 *     sum_b K'_ab (a_b - a_0) + sum_b M_ab b_b
 * with K'_aa = -sum_{b != a} K'_ab: algebraically sum_b K'_ab (a_b - a_a),
 * so over the blocks the band's difference form (laplace.h above), the row
 * sums s_i (next to a Dirichlet end) entering as a coupling -s_i to the zero
 * row of the eliminated node. The reference a_0 is shared by the block's
 * rows: one subtraction per loaded value instead of one per product. */
typedef struct {
  int ne, k, off;
  int64_t np;
  int64_t *eo;
  double *c;
  float *cf;
} hpmg_laplace_xblocks;

typedef struct hpmg_laplace {
  hpmg_grid g;
  double lambda;
  hpmg_sp1d M[3], K[3];    /* assembled 1D matrices (banded); z is 1x1 in 2D */
  double *dM[3], *dK[3];   /* their diagonals */
  float *dMf[3], *dKf[3];
  /* Row sums of the Dirichlet-restricted 1D stiffness matrices: exactly 0
   * except in rows next to the boundary (-K_e entry of the eliminated node).
   * The kernels apply K in difference form, (K a)_i = sum_o K_{i,i+o}
   * (a_{i+o} - a_i) + s_i a_i: the rounding of the assembled entries then
   * cannot act as a spurious smooth term (row-sum defect ~ eps/h), which
   * otherwise limits the attainable accuracy to ~ eps/h^2 relative. */
  double *sK[3];
  float *sKf[3];
  /* periodic directions: the wrap couplings (hpmg_assemble_1d's W; empty,
   * nrows 0, elsewhere), and whether any direction has them */
  hpmg_sp1d Mw[3], Kw[3];
  int wrap;
  /* the wrap pass's terms (laplace.c), one per nonempty set of periodic
   * directions, built by hpmg_laplace_create */
  struct hpmg_laplace_wrap *wt;
  int nwt;
  int tile;                /* x-lines per y-tile of the plane kernel */
  /* the y and z directions' rows (laplace_kernels.inc; z: 3D only; rows[0]
   * unused) */
  hpmg_laplace_rows rows[3];
  /* x's blocks from HPMG_LAPLACE_XT_MIN_BW on (xb.eo NULL below it, where
   * the x stage runs per line over the full band) */
  hpmg_laplace_xblocks xb;
  /* the kernel's per-thread lines and planes (core.h), reserved by its first
   * call in each precision and instruction set that needs more */
  hpmg_scratch scratch;
} hpmg_laplace;

/* Direction d of grid g as a 1D description (fem.h). */
static inline hpmg_dir1d hpmg_grid_dir(const hpmg_grid *g, int d) {
  hpmg_dir1d L = {g->k, (int)g->cells[d], g->xn[d], g->h[d], g->bc[2 * d], g->bc[2 * d + 1]};
  return L;
}

hpmg_error hpmg_laplace_create(const hpmg_grid *g, double lambda, hpmg_laplace *op);
void hpmg_laplace_destroy(hpmg_laplace *op);

/* What the fused kernel writes for every unknown i, with (Ax)_i computed:
 *   APPLY:    y = Ax
 *   RESIDUAL: y = b - Ax
 *   SMOOTH:   r = b - Ax;  d = c1*d + c2*D^{-1} r  (d may be NULL: c1 ignored);
 *             y = x + d    (y must not alias x; D = diag(A) computed on the fly) */
typedef enum { HPMG_KERNEL_APPLY, HPMG_KERNEL_RESIDUAL, HPMG_KERNEL_SMOOTH } hpmg_kernel_mode;

typedef struct {
  hpmg_kernel_mode mode;
  const void *x;
  void *y;
  const void *b;
  void *d;
  double c1, c2;
} hpmg_kernel_args;

void hpmg_laplace_kernel(const hpmg_laplace *op, hpmg_real r, const hpmg_kernel_args *a);

/* The CPU kernels behind hpmg_laplace_kernel, _inverse_diagonal and
 * _gauss_seidel, one table per instruction set (laplace_kernels.c), indexed
 * by hpmg_real. */
typedef struct {
  void (*kernel[2])(const hpmg_laplace *op, const hpmg_kernel_args *a);
  void (*inverse_diagonal[2])(const hpmg_laplace *op, double c, const void *in, void *out, void *out2);
  void (*gauss_seidel[2])(const hpmg_laplace *op, const void *b, void *x, const int64_t *ord, int reverse);
} hpmg_laplace_kernels;
HPMG_ISA_TABLE(hpmg_laplace_kernels, hpmg_laplace_kernels)
/* y = A x */
void hpmg_laplace_apply(const hpmg_laplace *op, hpmg_real r, const void *x, void *y);
/* y = b - A x */
void hpmg_laplace_residual(const hpmg_laplace *op, hpmg_real r, const void *b, const void *x, void *y);
/* out = c D^{-1} in, and out2 = out if out2 != NULL (pointwise, no matvec) */
void hpmg_laplace_inverse_diagonal(const hpmg_laplace *op, hpmg_real r, double c, const void *in,
                                   void *out, void *out2);
/* Diagonal entry of row (i0,i1,i2). */
double hpmg_laplace_diagonal(const hpmg_laplace *op, int64_t i0, int64_t i1, int64_t i2);
/* One Gauss-Seidel sweep over the rows ord[0..N-1], or lexicographically if
 * ord is NULL; forward (reverse = 0) or backward. */
void hpmg_laplace_gauss_seidel(const hpmg_laplace *op, hpmg_real r, const void *b, void *x, const int64_t *ord,
                               int reverse);
/* (A x)_i of row (i0,i1,i2) with every coupling, the periodic wrap included
 * (Gauss-Seidel on a periodic grid). */
double hpmg_laplace_row(const hpmg_laplace *op, hpmg_real r, const void *x, int64_t i0, int64_t i1, int64_t i2);
/* Dense assembled matrix (N x N, row-major), for coarse solves and tests. */
hpmg_error hpmg_laplace_dense(const hpmg_laplace *op, double *A);
/* Flops of one application (multiply-add = 2), for performance reports:
 * the y and z stages over the rows' nonzeros; the x stage over the full band
 * 2k+1 of every row (what the GPU kernel executes), or, _cpu, over the x
 * blocks ((k+1) k stiffness and (k+1)^2 mass multiply-adds per block: what
 * the CPU kernel executes). */
double hpmg_laplace_flops(const hpmg_laplace *op);
double hpmg_laplace_flops_cpu(const hpmg_laplace *op);
/* Row i of direction d couples the columns j0 .. j0+n-1 (the union of the
 * 1D mass and stiffness rows, the wrap part of a periodic direction left out:
 * k+1 in a cell's interior, 2k+1 at a vertex). */
void hpmg_laplace_band(const hpmg_laplace *op, int d, int64_t i, int *j0, int *n);
/* Term t (0..op->nwt-1) of the periodic wrap pass, for other backends that
 * run the same pass (src/disc/qk/cuda/qk_ops.cu): its operator on the
 * gathered layers, and per direction e of that operator (e = 0 fastest) the
 * offsets off[e][j] in op's arrays of its index j (the layer's node times
 * the grid stride) and op's 1D diagonals dm[e][j], dk[e][j] there (the
 * smoothing step's D). Pointers into op, valid while op lives. */
const hpmg_laplace *hpmg_laplace_wrap_term(const hpmg_laplace *op, int t, const int64_t *off[3], const double *dm[3],
                                           const double *dk[3]);

#endif
