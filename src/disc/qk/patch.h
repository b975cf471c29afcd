/* Vertex-patch Schwarz smoother (paper 000 Sec. 2.2, paper 004 Sec. 3).
 *
 * A patch is the 2^d cells around an interior vertex v (vertex indices
 * v_d = 1..cells_d-1 on a plain grid; general boxes below); its local space is the (2k-1)^d free nodes interior to
 * the patch, its closure the (2k+1)^d nodes including the patch boundary. In
 * free-node indices (grid.h) the closed patch of v spans, per direction,
 * i_d = (v_d-1)k - 1 + j, j = 0..2k; only j = 0 and j = 2k can fall on the
 * Dirichlet boundary (they are gathered as 0), interior nodes are always free.
 *
 * Coloring: color = parity of (v_0-1, v_1-1, v_2-1), 2^d colors. Two patches
 * of one color are two vertices apart in some direction: their closures meet
 * only on patch boundaries, which are read but never written, so the patches
 * of a color are updated in parallel without races, and in any order with
 * the same result.
 *
 * Multiplicative mode (paper 000 Algorithm 3): per color, per patch,
 *   r_j = R_j b - Abar_j Rbar_j x   (localized residual from the closed patch)
 *   x  += R_j^T A_j^{-1} r_j        (fdm or dense local solve)
 * Pre-smoothing runs the colors forward. Post-smoothing runs them forward too
 * (paper 000's cycle, for GMRES, FMG and the V-cycle iteration), or backward
 * when the cycle must be symmetric (CG: mg option symmetric): then the
 * post-smoother is the A-adjoint of the pre-smoother and a V-cycle with equal
 * pre/post counts is symmetric.
 *
 * Additive mode: r = b - A x once per step (one global matvec), then
 *   x += omega sum_j R_j^T A_j^{-1} R_j r.
 * sum_j R_j^T A_j^{-1} R_j A is a sum of 2^d colors of A-orthogonal projections
 * (patches of one color have A-orthogonal local spaces), so its spectrum lies
 * in (0, 2^d]; omega = 1/2^d keeps the damped step a contraction in the
 * energy norm for every k and h. The smoother is symmetric for any omega.
 *
 * General boxes (grid.h: cell widths per direction, Neumann and periodic
 * ends; any grid hpmg_grid_is_plain rejects): per direction the patch
 * vertices are v = 1..cells-1 behind Dirichlet ends, v = 0 (cells) at a
 * Neumann min (max) end too, a half patch of one cell whose local space holds
 * the end node, and v = 0..cells-1 when periodic, closures wrapping around.
 * Each patch uses its own 1D factors (fdm.h: one set per distinct pair of cell
 * widths around a vertex). Colors per direction: parity of v - vmin, and a
 * third color for the last vertex of an odd periodic count (it neighbours
 * vertex 0); a periodic direction needs 2 cells or more. Colors and batch
 * orders as above, additive mode through the same patch lists; SIMD over
 * patches runs lane groups of patches that share their three 1D factor sets
 * (sorted next to each other inside each batch and color), the rest one
 * patch at a time. */
#ifndef HPMG_SMOOTHERS_PATCH_H
#define HPMG_SMOOTHERS_PATCH_H

#include "disc/qk/fdm.h"
#include "disc/qk/smoother.h"

/* Largest local system kept as an explicit inverse (3D k = 8: 3375^2 doubles,
 * 91 MB per level); beyond it the dense reference is refused. */
#define HPMG_PATCH_DENSE_MAX 3375

typedef struct {
  hpmg_patch_mode mode;
  hpmg_local_solver local;
  double damping; /* additive only; 0 selects 1/2^dim */
  hpmg_patch_order order; /* multiplicative sweep order */
  int64_t batch;          /* patches per batch; 0 auto, -1 whole level */
} hpmg_patch_options;

/* Patches per batch for --patch-batch auto: the batch's share of x and b
 * (about 2 k^dim values per patch, doubled for the closures' overlap) fills
 * half the private caches of the cores (per-core L2 size read at run time,
 * 1 MiB if unknown, times ncores = omp_get_num_procs(), not the thread
 * count, so the sweep order never depends on the thread count), at least
 * 2^dim patches. */
int64_t hpmg_patch_batch_auto(int dim, int k, hpmg_real r, int ncores);

/* Validate the combination for Q_k in dim dimensions (before allocation). */
hpmg_error hpmg_patch_check(int dim, int k, const hpmg_patch_options *o);
/* Patch smoother on the level of op (cells >= 2 per direction for any patch
 * to exist; a level without interior vertices leaves x unchanged). */
hpmg_error hpmg_smoother_patch(const hpmg_laplace *op, hpmg_real r, const hpmg_patch_options *o,
                               hpmg_smoother **s);
/* Bytes hpmg_smoother_patch allocates for a level of N unknowns (factors,
 * dense inverse, per-thread buffers, the additive residual vector). */
double hpmg_patch_memory(int dim, int k, hpmg_real r, const hpmg_patch_options *o, double N, int nthreads);

/* Testing hook: run the multiplicative FDM sweep with SIMD over patches
 * (on = 1, the default) or one patch at a time (on = 0, the reference). */
hpmg_error hpmg_patch_set_simd(hpmg_smoother *s, int on);

/* The same smoother on the general-box path (one patch at a time, factors
 * per vertex index) whatever the grid; hpmg_smoother_patch takes it on every
 * grid that is not plain. Testing: on a plain grid it equals the plain path. */
hpmg_error hpmg_smoother_patch_general(const hpmg_laplace *op, hpmg_real r, const hpmg_patch_options *o,
                                       hpmg_smoother **s);

/* Testing hook: the localized residual R_j b - Abar_j Rbar_j x of the patch
 * of vertex v (v[2] ignored in 2D), in the smoother's precision (b, x level
 * vectors, r of (2k-1)^d entries, interior patch nodes lexicographic; the
 * placeholder positions of a half patch, in the missing cell, get 0). */
hpmg_error hpmg_patch_local_residual(const hpmg_smoother *s, const int64_t v[3], const void *b,
                                     const void *x, void *r);
/* Testing hook: y = R_j^T A_j^{-1} R_j r for the patch of vertex v (level
 * vectors in the smoother's precision; y is 0 outside the patch's local space). */
hpmg_error hpmg_patch_local_correction(const hpmg_smoother *s, const int64_t v[3], const void *r, void *y);


/* The local problems of the general-box path, for another backend (the GPU
 * patch smoother, src/disc/qk/cuda/qk_patch.cu): per direction d < dim the
 * patch vertices vmin[d] .. vmin[d]+nv[d]-1 and their colors (ncd[d]: 2, 3
 * for an odd periodic count, 1 in z for 2D; color c0 + ncd0 (c1 + ncd1 c2),
 * ncol in all; the 1D color of patch p = v - vmin is p & 1, and 2 for the
 * last patch of an odd periodic count), each vertex's 1D factor block
 * (vtype[d][v], v = 0..cells: block vtype of ntype[d], hpmg_fdm_1d_len(k)
 * entries each in fac_d[d] and fac_f[d], fdm.h's layout) and the closed-patch
 * index map (gmap[d][v (2k+1) + j]: the free node index of closed position j
 * of the patch of vertex v in direction d, periodic ends wrapped, -1 where
 * there is none). Exactly the data the CPU sweep reads. Checks the grid as
 * hpmg_smoother_patch does (periodic on one end only, fewer than 2 periodic
 * cells, a vanishing cell) before allocating; on failure *b is left zeroed. */
typedef struct {
  int dim, k;
  int64_t vmin[3], nv[3];
  int ncd[3], ncol;
  int ntype[3];
  int32_t *vtype[3];
  double *fac_d[3];
  float *fac_f[3];
  int64_t *gmap[3];
} hpmg_patch_box;
hpmg_error hpmg_patch_box_create(const hpmg_grid *g, hpmg_patch_box *b);
void hpmg_patch_box_destroy(hpmg_patch_box *b);

#endif
