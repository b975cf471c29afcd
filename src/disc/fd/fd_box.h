/* Finite differences on a general box (grid/box.h: per-face BCs, stretched
 * grids, any cell count, vertex or cell unknowns): the operator of the
 * contract in box.h, its multigrid levels behind hpmg_level_ops (rediscretized
 * coarse grids, linear interpolation in the coordinates and its transpose),
 * point multicolour or line Gauss-Seidel, the right-hand side with BC data
 * and the manufactured solution, the solve through the generic driver
 * (mg/solve.h) with the null space handled. Double precision, on the CPU,
 * or on the GPU (device 1: the finer levels and the outer method on the
 * CUDA backend, the kernels of fd_box_cuda.h; levels below gpu_min unknowns
 * and the coarsest, Cholesky, level on the host: the core's level split).
 * The unit-box homogeneous-Dirichlet 2^L problems keep fd_mg.c. */
#ifndef HPMG_FD_BOX_H
#define HPMG_FD_BOX_H

#include "grid/box.h"
#include "la/backend.h"

/* Per-direction 1D data of one level: n unknowns; dual widths w; the 1D
 * stiffness K as its diagonal kd and its couplings klo (to i-1, wrapping to
 * n-1 in a periodic direction; 0 where there is none) and khi (to i+1). */
typedef struct {
  int dim;
  int64_t n[3], N;
  double *w[3], *kd[3], *klo[3], *khi[3];
  double lambda;
} fdb_geom;

/* the diagonal of A at point (i, j, k): W_yz kd_x + w_x (w_z kd_y + w_y kd_z + lambda W_yz) */
static inline double fdb_point_diag(const fdb_geom *g, int64_t i, int64_t j, int64_t k) {
  const double wx = g->w[0][i], wy = g->w[1][j], wz = g->w[2][k];
  return wy * wz * g->kd[0][i] + wx * (wz * g->kd[1][j] + wy * g->kd[2][k] + g->lambda * wy * wz);
}

/* a 1D sparse matrix by rows (prolongation, restriction per direction) */
typedef struct {
  int64_t rows, cols;
  int64_t *ptr, *col;
  double *val;
} fdb_csr;

/* The kernels, compiled per instruction set (fd_box_kernels.c). */
typedef struct {
  /* y = A x (b NULL) or y = b - A x */
  void (*apply)(const fdb_geom *g, const double *x, const double *b, double *y);
  /* ||b - A x||_2 */
  double (*residual_norm)(const fdb_geom *g, const double *x, const double *b);
  /* one multicolour Gauss-Seidel sweep with weight omega, colours in
   * reverse order if backward; per[d]: periodic direction */
  void (*gs_sweep)(const fdb_geom *g, const int per[3], double omega, int backward, double *x, const double *b);
  /* one line Gauss-Seidel sweep along direction dl (cyclic lines along a
   * periodic one), the lines coloured in the other directions: checker 1 a
   * checkerboard where fd_box_line_checker allows it, else (and checker 0)
   * the product of per-direction colours; scratch: the level's, for
   * fd_box_line_scratch doubles per thread (core.h) */
  void (*line_sweep)(const fdb_geom *g, const int per[3], int dl, int checker, int backward, double *x,
                     const double *b, const hpmg_scratch *scratch);
  /* y (+)= M x along direction d; nin: x's dims, y's are nin with M.rows in d */
  void (*apply1d)(int d, const int64_t nin[3], const fdb_csr *M, const double *x, double *y, int add);
} fdb_kernels;

#include "core/isa.h"
HPMG_ISA_TABLE(fdb_kernels, hpmg_fdb_kernels)
/* The colours of the lines along dl, by their indices (a, b) in the two
 * directions across. The product of per-direction colours (parity, and a
 * third colour for the last index of a periodic direction with an odd count,
 * whose wrap neighbour 0 has its parity): 4 in 3D, visited as a zebra in b
 * of zebras in a; or two colours, a checkerboard, line (a, b) of colour
 * (a + b) mod 2 (no two lines of a colour are neighbours; in 2D the same as
 * the product), possible (1 returned) where neither direction across is
 * periodic with an odd count. The checkerboard costs a GPU sweep less memory
 * traffic (x read twice instead of four times) and half the launches, and
 * smooths the channel a little worse (docs/bc.md); fd_box_config.line_colours
 * picks. The CPU and GPU sweeps visit the same colours in the same order. */
static inline int fd_box_line_checker(const int64_t n[3], const int per[3], int dl) {
  for (int d = 0; d < 3; d++)
    if (d != dl && n[d] > 1 && per[d] && (n[d] & 1)) return 0;
  return 1;
}

/* line_sweep's scratch per thread (the recursion's two right-hand sides and
 * its upper diagonal, a row's residual and diagonal, a factor per line):
 * lines along y and z go 64 at a time */
static inline int64_t fd_box_line_scratch(int dl, int64_t m) { return (3 * m + 3) * (dl == 0 ? 1 : 64); }

/* 1 when the options need the general path (anything beyond the unit-box,
 * 2^refine, homogeneous-Dirichlet, vertex, lambda 0 problem). */
int fd_box_needed(const hpmg_problem_options *o);

/* The finest level's 1D data of box b (fills g; owned arrays). */
hpmg_error fd_box_geom(const hpmg_box *b, double lambda, fdb_geom *g);
void fd_box_geom_free(fdb_geom *g);
/* Coordinates of the unknowns of direction d (n[d] values). */
hpmg_error fd_box_points(const hpmg_box *b, int d, double **p);

/* The right-hand side b = W f + Dirichlet couplings + Neumann fluxes.
 * f: f at the unknowns (NULL: the manufactured solution's f, with the BC
 * data from it); BC data from o->bc otherwise. HPMG_ERR_NUMERIC for a
 * non-finite f or BC function value. */
hpmg_error fd_box_rhs(const hpmg_problem_options *o, const hpmg_box *b, const double *f, double *rhs);
/* The built-in right-hand sides with a manufactured solution: SINE, the box's
 * (docs/bc.md, matching every BC mix), and WAVES, paper 001's eq. 27 (its
 * boundary data are the solution's; Q_k and spectral elements). */
static inline int fd_box_rhs_manufactured(hpmg_rhs_kind r) { return r == HPMG_RHS_SINE || r == HPMG_RHS_WAVES; }
/* Paper 001, eq. 27 (k = 5): u = cos(k(x1 - 3x2 + 2x3)) sin(k(1 + x1))
 * sin(k(1 - x2)) sin(k(2x1 + x2)) sin(k(3x1 - 2x2 + 2x3)) (x3 = 0 in 2D),
 * its gradient and f = lambda u - Laplace u. */
void fd_box_waves(int dim, double lambda, const double x[3], double *u, double grad[3], double *f);
/* The manufactured solution u at a point (o->rhs SINE or WAVES). */
double fd_box_exact(const hpmg_problem_options *o, const hpmg_box *b, const double x[3]);
/* The manufactured solution's value, gradient and f = lambda u - Laplace u at a point. SINE is
 * u = g_x g_y g_z + 1/4 with one 1D factor per direction (g = 1 beyond dim; docs/bc.md):
 * fd_box_manu_combine forms the values from the factors' g, g', g''. */
typedef struct {
  double u, grad[3], f;
} fd_box_manu_val;
static inline fd_box_manu_val fd_box_manu_combine(double lambda, const double g[3], const double g1[3],
                                                  const double g2[3]) {
  fd_box_manu_val v;
  v.u = g[0] * g[1] * g[2] + 0.25;
  v.grad[0] = g1[0] * g[1] * g[2];
  v.grad[1] = g[0] * g1[1] * g[2];
  v.grad[2] = g[0] * g[1] * g1[2];
  v.f = -(g2[0] * g[1] * g[2] + g[0] * g2[1] * g[2] + g[0] * g[1] * g2[2]) + lambda * v.u;
  return v;
}
/* The manufactured solution on the lattice of points (x[0][i0], x[1][i1], x[2][i2]), i_d <
 * n[d] (x[d] must outlive L; d >= dim: n[d] = 1): SINE from per-direction tables of its 1D
 * factors, built once (a few multiplications per point instead of a sine and cosine per
 * direction: most of a box solve's wall time at 1.7e7 Q2 unknowns was their evaluation at
 * the quadrature points of the load and the error), WAVES point by point. */
typedef struct {
  const hpmg_problem_options *o;
  int dim;
  const double *x[3];
  double *t[3]; /* SINE: g, g', g'' of direction d at its points, 3 n[d] values; NULL for WAVES */
} fd_box_manu_lattice;
hpmg_error fd_box_manu_lattice_init(const hpmg_problem_options *o, const hpmg_box *b, const int64_t n[3],
                                    const double *const x[3], fd_box_manu_lattice *L);
void fd_box_manu_lattice_free(fd_box_manu_lattice *L);
static inline fd_box_manu_val fd_box_manu_at(const fd_box_manu_lattice *L, int64_t i0, int64_t i1, int64_t i2) {
  const int64_t id[3] = {i0, i1, i2};
  if (!L->t[0]) {
    fd_box_manu_val v;
    const double x[3] = {L->x[0][i0], L->x[1][i1], L->dim == 3 ? L->x[2][i2] : 0.0};
    fd_box_waves(L->dim, L->o->lambda, x, &v.u, v.grad, &v.f);
    return v;
  }
  double g[3], g1[3], g2[3];
  for (int d = 0; d < 3; d++) g[d] = L->t[d][3 * id[d]], g1[d] = L->t[d][3 * id[d] + 1], g2[d] = L->t[d][3 * id[d] + 2];
  return fd_box_manu_combine(L->o->lambda, g, g1, g2);
}
/* The same solution with its gradient and f = lambda u - Laplace u (the
 * spectral elements' Neumann fluxes and load on the same box). */
void fd_box_manufactured(const hpmg_problem_options *o, const hpmg_box *b, const double x[3], double *u, double grad[3],
                         double *f);
/* x (the unknowns) as VTK XML (docs/bc.md): one linear cell per cell of a
 * lattice that covers the box, a periodic direction closed by its first plane
 * again. Vertex layout: the box's nodes, the Dirichlet faces' nodes with their
 * data (builtin: the solve had no b, so the manufactured solution's; else
 * o->bc's). Cell layout: the cell centres and, in a non-periodic direction,
 * a point on each face: a Dirichlet face's data, at a Neumann face the
 * nearest centre's value plus h/2 times the outward flux (second order).
 * HPMG_ERR_NUMERIC for non-finite boundary data, HPMG_ERR_IO naming the path. */
hpmg_error fd_box_write_vtu(const hpmg_problem_options *o, const hpmg_box *b, const double *x, int builtin,
                            const char *path);
/* W-weighted discrete L2 error sqrt(sum W e^2) and max error of x against the
 * manufactured u (singular problems: both shifted to W-mean zero). */
hpmg_error fd_box_error(const hpmg_problem_options *o, const hpmg_box *b, const double *x, double *l2, double *mx);

typedef struct {
  hpmg_solver_kind solver; /* CG, VCYCLE or FMG */
  double tol;
  int maxit, pre, post, verbose, threads;
  double sor;              /* GS weight (1: plain) */
  int line;                /* smoother: -1 auto (line GS along the most stretched direction
                              of a stretched grid, point GS otherwise), 0 point,
                              1 + d: line GS along direction d */
  int project_rhs;
  int device;              /* 0: CPU; 1: CUDA (levels of gpu_min unknowns or more on the GPU) */
  int64_t gpu_min;         /* 0: FDB_GPU_MIN */
  int fmg_cubic;           /* FMG's interpolation to a new level: 1 cubic, 0 linear (the prolongation) */
  int line_colours;        /* line GS colours (fd_box_line_checker): 0 (auto) a checkerboard on the
                              GPU's levels, the product on the host's; 1 the product everywhere;
                              2 a checkerboard everywhere */
} fd_box_config;

/* device 1: a level of fewer unknowns runs on the host (kernel launches cost
 * more than the work there); the finest level is always on the GPU */
#define FDB_GPU_MIN 32768

/* The line recursion's coefficients along dl where they are the same for
 * every line (w and kd of the two other directions equal at every index to
 * 1e-12 relative, the rounding of uniform nodes' differences, as
 * in a channel's uniform periodic x and z; dl not periodic): tab[t] the
 * eliminated upper diagonal, tab[m + t] the lower diagonal, tab[2m + t] one
 * over the pivot, t < m = g->n[dl]. Returns 0 (tab untouched) where they
 * differ between lines. The GPU line sweep reads them instead of streaming
 * the upper diagonal per line. */
int fd_box_line_table(const fdb_geom *g, const int per[3], int dl, double *tab);

/* FMG's cubic interpolation in one direction: from the coarse unknowns
 * (nodes X, nc cells) to the fine ones (nodes x, cells), per fine unknown the
 * Lagrange weights of the 4 coarse unknowns around it (fewer where it sits on
 * one); a periodic direction wraps, a non-periodic end takes the 4 nearest,
 * so next to a face it extrapolates from the unknowns (a Dirichlet value is
 * not one). HPMG_ERR_ARG for fewer than 4 coarse unknowns. Exact for cubic
 * polynomials (non-periodic), 4th order for smooth periodic functions. */
hpmg_error fd_box_fmg_interp_1d(const double *x, int64_t cells, const double *X, int64_t nc, hpmg_bc_kind lo,
                                hpmg_bc_kind hi, hpmg_fd_layout lay, fdb_csr *Pc);

typedef struct fd_box_solver_s *fd_box_solver;
hpmg_error fd_box_solver_create(const hpmg_box *b, double lambda, const fd_box_config *c, fd_box_solver *s);
void fd_box_solver_destroy(fd_box_solver *s);
/* A x = rhs (fd_box_rhs's vector); singular problems: rhs projected (or
 * refused, project_rhs 0, when its defect exceeds round-off), x with W-mean 0. */
hpmg_error fd_box_solve(fd_box_solver s, const double *rhs, double *x);
/* stats of the last solve (compat_defect: sum rhs / sum W, the constant
 * removed from f by the projection) */
void fd_box_get_stats(fd_box_solver s, hpmg_stats *st);
int fd_box_history(fd_box_solver s, const double **h);
void fd_box_set_verbose(fd_box_solver s, int v);
/* the line direction of smoother auto on box b: the most stretched
 * direction (periodic or not) whose widths vary by more than 1.5x, else -1 */
int fd_box_auto_line(const hpmg_box *b);
/* the smoother the solver runs: -1 point GS, else the line direction */
int fd_box_line_dir(fd_box_solver s);
/* y = A x on the finest level (tests; host x and y, on the CPU kernels) */
hpmg_error fd_box_apply(fd_box_solver s, const double *x, double *y);
/* bytes of host memory the solver takes; *device (may be NULL): of GPU memory */
double fd_box_memory(const hpmg_box *b, const fd_box_config *c, double *device);
/* levels on the GPU (device 1), finest first; 0 on the CPU */
int fd_box_gpu_levels(fd_box_solver s);
/* A copy of g whose 1D arrays are on backend be (freed by fd_box_geom_device_free) */
hpmg_error fd_box_geom_to_device(const fdb_geom *g, const hpmg_backend *be, fdb_geom *d);
void fd_box_geom_device_free(const hpmg_backend *be, fdb_geom *d);
/* ||b - A x||_2 on box b (x NULL: ||b||) */
hpmg_error fd_box_residual_norm(const hpmg_box *b, double lambda, const double *x, const double *rhs, double *nrm);
/* singular problems: sum rhs, sum |rhs| and sum W (the compatibility test) */
hpmg_error fd_box_sums(const hpmg_box *b, const double *rhs, double *sum, double *sumabs, double *sumw);
/* the compatibility refusal of project_rhs = 0: HPMG_ERR_ARG when |sum| > 1e-11 sumabs */
hpmg_error fd_box_compat_check(double sum, double sumabs, double sumw, int project_rhs);

#endif
