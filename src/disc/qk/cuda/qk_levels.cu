/* The Q_k levels on the GPU: the level operator kernels of qk_ops.cu, the
 * Chebyshev, Jacobi and vertex-patch (qk_patch.cu) smoothers, the Kronecker
 * transfers and the coarse solve, behind the slots of hpmg_level_ops
 * (mg/mg.h). The V-cycle, FMG, the Krylov methods and the mixed-precision
 * loop are the ones every discretization uses (src/mg/, src/la/krylov.c),
 * running on the CUDA backend's vectors. Setup builds the 1D matrices and
 * transfers on the host (they are 1D, tiny), factorizes the coarsest
 * operator there (dense Cholesky, uploaded once as the explicit inverse) and
 * estimates lambda_max per level on the GPU. Per iteration only scalars
 * (dot products) cross to the host. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "qk_cuda.h"
extern "C" {
#include "api/problem_impl.h"
#include "disc/qk/qk_box.h"
#include "disc/qk/qk_host.h"
#include "la/krylov.h"
#include "mg/solve.h"
#include "disc/qk/chebyshev.h"
hpmg_error hpmg_problem_builtin_rhs(hpmg_problem p, double *b);
int LAPACKE_dpotrf(int layout, char uplo, int n, double *a, int lda);
int LAPACKE_dpotri(int layout, char uplo, int n, double *a, int lda);
}

#define QK_DENSE_COARSE_MAX 3000 /* as src/disc/qk/qk_host.c */

struct hpmg_cuda_solver_s;

typedef struct {
  struct hpmg_cuda_solver_s *s;
  hpmg_grid g;
  hpmg_laplace op; /* host: 1D matrices */
  hpmg_cuda_op dop;
  hpmg_kron3 P, R;
  hpmg_cuda_kron3 dP, dR; /* to the next coarser level */
  void *d, *t;            /* smoother scratch (cycle precision) */
  double lmax;            /* 1.2 x estimate (Chebyshev) */
  hpmg_cuda_patch patch;  /* vertex-patch smoother (qk_patch.cu) or NULL */
  double *xn[3];          /* general box: this level's cell boundaries where coarsened (owned) */
} qk_level;

struct hpmg_cuda_solver_s {
  hpmg_problem prob;
  hpmg_problem_options po;
  hpmg_solver_options so;
  hpmg_smoother_kind smoother;
  hpmg_real real;  /* cycle precision */
  hpmg_real kreal; /* outer iteration precision: float for --precision float, else double */
  const hpmg_backend *be;
  hpmg_mg mg;
  hpmg_mg_solver drv;
  double *cinv;   /* dense inverse of the coarsest operator (device) or NULL: CG */
  double *cw[6];  /* double coarse scratch (device): b, x, and CG's r z p q */
  double *db, *dx; /* device b and x for host callers */
  void *tscratch; /* transfer scratch */
  hpmg_stats st;
  /* Q_k on a general box (prob->qkbox, docs/bc.md): the right-hand side is
   * built on the host (qk_box_solve_rhs). singular (no Dirichlet face,
   * lambda = 0): the weights m = M 1 on the host and the device (the zero-mean
   * solution), their sum, and a vector of ones per precision (the Krylov
   * methods' and the coarse solve's projection of the constants) */
  int singular;
  double *hw, *dw, sumw;
  void *ones[2]; /* hpmg_real indexed */
  int fmg_shift_builtin; /* with FMG: the builtin flag of the solve FMG's shifts were made for, -1: none yet */
};

static qk_level *Q(const hpmg_level *L) { return (qk_level *)L->ctx; }
static hpmg_error options_check(const hpmg_problem_options *po, const hpmg_solver_options *so) {
  HPMG_CALL(hpmg_problem_options_check(po));
  HPMG_CHECK_ARG(so, "solver options are NULL");
  HPMG_CHECK_ARG(so->solver == HPMG_SOLVER_CG || so->solver == HPMG_SOLVER_VCYCLE || so->solver == HPMG_SOLVER_GMRES ||
                     so->solver == HPMG_SOLVER_FMG,
                 "--device cuda: unknown solver %d", (int)so->solver);
  HPMG_CHECK_ARG(so->restart >= 1 && so->restart <= 1000, "--restart must be in 1..1000 (got %d)", so->restart);
  if (!(so->smoother == HPMG_SMOOTHER_CHEBYSHEV || so->smoother == HPMG_SMOOTHER_JACOBI ||
        so->smoother == HPMG_SMOOTHER_PATCH || so->smoother == HPMG_SMOOTHER_AUTO))
    return hpmg_error_set(HPMG_ERR_BACKEND,
                          "--device cuda: only --smoother chebyshev, jacobi and patch run on the GPU so far");
  HPMG_CHECK_ARG(so->gs_order == HPMG_GS_ORDER_LEXICOGRAPHIC, "--gs-order applies to --smoother gs and sgs only (CPU)");
  if (so->smoother == HPMG_SMOOTHER_PATCH)
    HPMG_CALL(hpmg_cuda_patch_check(po->dim, po->degree, so->patch_mode, so->local_solver, so->patch_kernel));
  HPMG_CHECK_ARG(so->precision == HPMG_PREC_DOUBLE || so->precision == HPMG_PREC_FLOAT ||
                     so->precision == HPMG_PREC_MIXED,
                 "--device cuda: unknown precision %d", (int)so->precision);
  HPMG_CHECK_ARG(po->degree <= QK_MAX_K, "--device cuda: degree must be <= %d", QK_MAX_K);
  HPMG_CHECK_ARG(so->cheby_degree >= 1 && so->cheby_degree <= 100, "--cheby-degree must be in 1..100");
  HPMG_CHECK_ARG(so->cheby_range > 1, "--cheby-range must be > 1");
  HPMG_CHECK_ARG(so->cheby_eig_iters >= 1 && so->cheby_eig_iters <= 1000, "eigenvalue iterations must be in 1..1000");
  HPMG_CHECK_ARG(so->jacobi_omega > 0 && so->jacobi_omega < 2, "--jacobi-omega must be in (0,2)");
  HPMG_CHECK_ARG(so->pre >= 0 && so->pre <= 100 && so->post >= 0 && so->post <= 100 && so->pre + so->post >= 1,
                 "--pre/--post must be in 0..100 and not both 0");
  HPMG_CALL(hpmg_cycle_check(so->solver, so->cycle));
  HPMG_CHECK_ARG(so->tol > 0 && so->tol < 1, "--tol must be in (0,1)");
  HPMG_CHECK_ARG(so->maxit >= 1 && so->maxit <= 1000000, "--maxit must be in 1..1000000");
  return HPMG_SUCCESS;
}

static hpmg_mg_solve_options drv_options(const hpmg_solver_options *so) {
  hpmg_mg_solve_options d;
  memset(&d, 0, sizeof d);
  d.solver = so->solver;
  d.tol = so->tol;
  d.maxit = so->maxit;
  d.restart = so->restart;
  d.verbose = so->verbose;
  return d;
}

/* Unknowns per level, coarsest first (N[0..*nl-1]): the uniform mesh's
 * levels l0..refine, or a general box's semi-coarsened levels
 * (hpmg_qk_box_levels_build, as the host hierarchy). */
static hpmg_error level_sizes(const hpmg_problem_options *po, int64_t N[QK_BOX_MAX_LEVELS], int *nl) {
  if (!qk_box_needed(po)) {
    const int l0 = hpmg_qk_first_level(po->degree, po->coarse);
    HPMG_CHECK_ARG(po->refine >= l0, "degree 1 on a single coarse cell needs at least one refinement");
    HPMG_CHECK_ARG(po->refine - l0 + 1 <= QK_BOX_MAX_LEVELS, "--refine %d: too many levels", po->refine);
    *nl = po->refine - l0 + 1;
    for (int l = l0; l <= po->refine; l++) {
      const int64_t cells = (int64_t)po->coarse << l;
      int64_t n = 1;
      for (int d = 0; d < po->dim; d++) n *= po->degree * cells - 1;
      N[l - l0] = n;
    }
    return HPMG_SUCCESS;
  }
  hpmg_box b;
  hpmg_grid g;
  hpmg_qk_box_levels *B = (hpmg_qk_box_levels *)malloc(sizeof *B);
  if (!B) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the box levels");
  hpmg_error e = hpmg_box_init(po, &b);
  if (e) {
    free(B);
    return e;
  }
  e = hpmg_grid_init_box(&b, po->degree, &g);
  if (!e && g.N <= 0) e = hpmg_error_set(HPMG_ERR_ARG, "the grid has no unknowns");
  if (!e) e = hpmg_qk_box_levels_build(&g, B);
  if (!e) {
    *nl = B->nl;
    for (int i = 0; i < *nl; i++) N[i] = B->g[*nl - 1 - i].N;
    hpmg_qk_box_levels_free(B);
  }
  free(B);
  hpmg_box_destroy(&b);
  return e;
}

extern "C" hpmg_error hpmg_cuda_memory_estimate(const hpmg_problem_options *po, const hpmg_solver_options *so,
                                                double *bytes) {
  HPMG_CALL(options_check(po, so));
  const hpmg_real real = so->precision == HPMG_PREC_DOUBLE ? HPMG_REAL_DOUBLE : HPMG_REAL_FLOAT;
  const hpmg_real kreal = so->precision == HPMG_PREC_FLOAT ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
  const double rs = (double)hpmg_real_size(real);
  const int cheb = so->smoother == HPMG_SMOOTHER_CHEBYSHEV || so->smoother == HPMG_SMOOTHER_AUTO;
  int64_t N[QK_BOX_MAX_LEVELS];
  int nl;
  HPMG_CALL(level_sizes(po, N, &nl));
  double total = 0.0;
  const double nf = (double)N[nl - 1], n0 = (double)N[0];
  for (int i = 0; i < nl; i++) {
    const double n = (double)N[i];
    const int alias = i == nl - 1 && so->precision != HPMG_PREC_MIXED;
    total += hpmg_mg_level_bytes(real, n, !alias, 1) + (i > 0 ? 1 + cheb : 0) * n * rs; /* b x r, d t */
  }
  total += 0.75 * nf * rs; /* transfer scratch */
  const hpmg_mg_solve_options d = drv_options(so);
  total += hpmg_mg_solver_memory(nf, kreal, &d) + 2 * nf * 8.0; /* outer vectors; b, x of host callers */
  total += n0 <= QK_DENSE_COARSE_MAX ? n0 * n0 * 8.0 + 6 * n0 * 8.0 : 6 * n0 * 8.0;
  if (qk_box_needed(po)) total += 2 * nf * 8.0; /* the weights, ones (singular) */
  if (qk_box_needed(po) && qk_box_dirichlet(po) && d.solver == HPMG_SOLVER_FMG) /* FMG's shifts: a vector per level */
    for (int i = 0; i < nl; i++) total += (double)N[i] * rs;
  *bytes = total;
  return HPMG_SUCCESS;
}

/* ------------------------------------------------------------ the slots */

static hpmg_error smooth_kernel(hpmg_level *L, const void *x, void *y, const void *b, void *d, double c1, double c2) {
  hpmg_kernel_args a = qk_kargs(HPMG_KERNEL_SMOOTH, x, y, b);
  a.d = d;
  a.c1 = c1;
  a.c2 = c2;
  L->matvecs++;
  return hpmg_cuda_op_kernel(Q(L)->dop, L->x.real, &a);
}

/* chebyshev.c: the same schedule (smoothers/chebyshev.h), GPU passes */
static hpmg_error cheb_apply(hpmg_level *L, int x_is_zero, int sweeps) {
  qk_level *q = Q(L);
  const hpmg_solver_options *so = &q->s->so;
  const hpmg_real real = L->x.real;
  const int64_t n = L->n;
  void *x = L->x.data, *d = q->d, *tmp = q->t;
  const void *b = L->b.data;
  if (n == 0) return HPMG_SUCCESS;
  for (int sw = 0; sw < sweeps; sw++) {
    hpmg_chebyshev_schedule cs;
    hpmg_chebyshev_schedule_make(q->lmax, so->cheby_range, so->cheby_degree, x_is_zero && sw == 0, &cs);
    void *cur = x, *other = tmp;
    if (x_is_zero && sw == 0) {
      cur = cs.first_to_x ? x : tmp;
      other = cs.first_to_x ? tmp : x;
      HPMG_CALL(hpmg_cuda_op_inverse_diagonal(q->dop, real, cs.first_scale, b, d, cur));
    }
    for (int p = 0; p < cs.passes; p++) {
      HPMG_CALL(smooth_kernel(L, cur, other, b, d, cs.c1[p], cs.c2[p]));
      void *t = cur;
      cur = other;
      other = t;
    }
    if (cur != x) HPMG_CALL(Q(L)->s->be->copy(real, n, cur, x));
  }
  return HPMG_SUCCESS;
}

/* jacobi.c: jacobi_apply (scratch: d) */
static hpmg_error jacobi_apply(hpmg_level *L, int x_is_zero, int sweeps) {
  qk_level *q = Q(L);
  const hpmg_real real = L->x.real;
  const int64_t n = L->n;
  const double omega = q->s->so.jacobi_omega;
  if (n == 0) return HPMG_SUCCESS;
  void *x = L->x.data, *cur = x, *other = q->d;
  int k = 0;
  if (x_is_zero && sweeps > 0) {
    const int passes = sweeps - 1;
    void *dst = passes % 2 == 0 ? x : other;
    HPMG_CALL(hpmg_cuda_op_inverse_diagonal(q->dop, real, omega, L->b.data, dst, NULL));
    cur = dst;
    other = dst == x ? q->d : x;
    k = 1;
  }
  for (; k < sweeps; k++) {
    HPMG_CALL(smooth_kernel(L, cur, other, L->b.data, NULL, 0.0, omega));
    void *t = cur;
    cur = other;
    other = t;
  }
  if (cur != x) HPMG_CALL(Q(L)->s->be->copy(real, n, cur, x));
  return HPMG_SUCCESS;
}

/* qk_patch.cu; scratch: d. post: the colors run backward if the solver is CG
 * (symmetric V-cycle), as the host smoother with symmetric = 1 */
static hpmg_error patch_apply(hpmg_level *L, int x_is_zero, int post, int sweeps) {
  qk_level *q = Q(L);
  const int64_t m0 = hpmg_cuda_patch_matvecs(q->patch);
  hpmg_error e = hpmg_cuda_patch_apply(q->patch, L->x.real, L->b.data, L->x.data, q->d, x_is_zero,
                                       post && q->s->so.solver == HPMG_SOLVER_CG, sweeps);
  L->matvecs += hpmg_cuda_patch_matvecs(q->patch) - m0; /* full residuals (global, additive) */
  return e;
}

static hpmg_error smooth(hpmg_level *L, int x_is_zero, int post, int sweeps) {
  const hpmg_smoother_kind k = Q(L)->s->smoother;
  return k == HPMG_SMOOTHER_JACOBI ? jacobi_apply(L, x_is_zero, sweeps)
         : k == HPMG_SMOOTHER_PATCH ? patch_apply(L, x_is_zero, post, sweeps)
                                    : cheb_apply(L, x_is_zero, sweeps);
}

static hpmg_error residual(hpmg_level *L) {
  const hpmg_kernel_args a = qk_kargs(HPMG_KERNEL_RESIDUAL, L->x.data, L->r.data, L->b.data);
  return hpmg_cuda_op_kernel(Q(L)->dop, L->r.real, &a);
}

static hpmg_error restrict_to(hpmg_level *L, const hpmg_vec *fine, hpmg_vec *coarse) {
  return hpmg_cuda_kron3_apply(Q(L)->dR, fine->real, fine->data, coarse->data, 0, Q(L)->s->tscratch);
}

static hpmg_error prolong(hpmg_level *L, const hpmg_vec *xc, int add) {
  return hpmg_cuda_kron3_apply(Q(L)->dP, xc->real, xc->data, L->x.data, add, Q(L)->s->tscratch);
}

/* v -= mean(v) on the device (qk_box_project_mean's GPU twin: the Krylov
 * methods' projection of the constants, and the coarse right-hand side's) */
static hpmg_error project_mean(void *ctx, hpmg_vec *v) {
  hpmg_cuda_solver s = (hpmg_cuda_solver)ctx;
  if (v->n == 0) return HPMG_SUCCESS;
  double sum;
  HPMG_CALL(hpmg_cuda_dot(v->real, v->n, v->data, s->ones[v->real], &sum));
  return hpmg_cuda_axpy(v->real, v->n, -sum / (double)v->n, s->ones[v->real], v->data);
}

/* y = A x, A dense n x n row-major: one warp per row, fixed-order sums */
__global__ void qk_gemv_kernel(int n, const double *__restrict__ A, const double *__restrict__ x, double *__restrict__ y) {
  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= n) return;
  double sum = 0;
  for (int j = lane; j < n; j += 32) sum += A[(int64_t)row * n + j] * x[j];
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
  if (lane == 0) y[row] = sum;
}

/* the coarse operator and its Jacobi preconditioner, in double, for CG */
static hpmg_error coarse_apply(void *ctx, const hpmg_vec *x, hpmg_vec *y) {
  const hpmg_kernel_args a = qk_kargs(HPMG_KERNEL_APPLY, x->data, y->data, NULL);
  return hpmg_cuda_op_kernel((hpmg_cuda_op)ctx, HPMG_REAL_DOUBLE, &a);
}
static hpmg_error coarse_jacobi(void *ctx, const hpmg_vec *r, hpmg_vec *z) {
  return hpmg_cuda_op_inverse_diagonal((hpmg_cuda_op)ctx, HPMG_REAL_DOUBLE, 1.0, r->data, z->data, NULL);
}

/* in double whatever the cycle precision: the explicit inverse, or
 * Jacobi-preconditioned CG to 1e-14 (hpmg_mg_coarse_cg), as the host coarse solve */
static hpmg_error coarse_solve(hpmg_level *L) {
  qk_level *q = Q(L);
  hpmg_cuda_solver s = q->s;
  const int64_t n = L->n;
  if (n == 0) return HPMG_SUCCESS;
  hpmg_vec cb = hpmg_vec_wrap(s->be, HPMG_REAL_DOUBLE, n, s->cw[0]), cx = hpmg_vec_wrap(s->be, HPMG_REAL_DOUBLE, n, s->cw[1]);
  HPMG_CALL(hpmg_v_convert(&L->b, &cb));
  if (s->singular) HPMG_CALL(project_mean(s, &cb)); /* the compatible part of b (1 spans the null space) */
  if (s->cinv) {
    qk_gemv_kernel<<<(unsigned)((n + 7) / 8), 256>>>((int)n, s->cinv, s->cw[0], s->cw[1]);
    HPMG_CU_LAUNCH();
  } else {
    hpmg_linop A, M;
    memset(&A, 0, sizeof A);
    memset(&M, 0, sizeof M);
    A.ctx = M.ctx = q->dop;
    A.apply = coarse_apply;
    M.apply = coarse_jacobi;
    hpmg_vec w[4];
    for (int i = 0; i < 4; i++) w[i] = hpmg_vec_wrap(s->be, HPMG_REAL_DOUBLE, n, s->cw[2 + i]);
    HPMG_CALL(hpmg_mg_coarse_cg(&A, &M, &cb, &cx, w));
  }
  return hpmg_v_convert(&cx, &L->x);
}

static void level_destroy(hpmg_level *L) {
  qk_level *q = Q(L);
  if (!q) return;
  hpmg_laplace_destroy(&q->op);
  hpmg_cuda_op_destroy(&q->dop);
  hpmg_cuda_patch_destroy(&q->patch);
  hpmg_kron3_destroy(&q->P);
  hpmg_kron3_destroy(&q->R);
  hpmg_cuda_kron3_destroy(&q->dP);
  hpmg_cuda_kron3_destroy(&q->dR);
  for (int d = 0; d < 3; d++) free(q->xn[d]);
  hpmg_cuda_free(q->d);
  hpmg_cuda_free(q->t);
  free(q);
  L->ctx = NULL;
}

static const hpmg_level_ops qk_cuda_ops = {
    smooth, residual, restrict_to, prolong, coarse_solve,
    /* residual_restrict */ NULL, /* restrict_update */ NULL, /* correct_smooth */ NULL,
    /* fmg_interp */ NULL, /* interp_smooth */ NULL, level_destroy,
};

/* the finest operator in the precision of its vectors (outer iteration, true residual) */
static hpmg_error op_apply(void *ctx, const hpmg_vec *x, hpmg_vec *y) {
  const hpmg_kernel_args a = qk_kargs(HPMG_KERNEL_APPLY, x->data, y->data, NULL);
  return hpmg_cuda_op_kernel((hpmg_cuda_op)ctx, x->real, &a);
}
static hpmg_error op_residual(void *ctx, const hpmg_vec *b, const hpmg_vec *x, hpmg_vec *r) {
  const hpmg_kernel_args a = qk_kargs(HPMG_KERNEL_RESIDUAL, x->data, r->data, b->data);
  return hpmg_cuda_op_kernel((hpmg_cuda_op)ctx, x->real, &a);
}

/* ---------------------------------------------------------------- setup */

extern "C" void hpmg_cuda_solver_destroy(hpmg_cuda_solver *sp) {
  hpmg_cuda_solver s = *sp;
  if (!s) return;
  cudaDeviceSynchronize();
  hpmg_mg_solver_destroy(&s->drv);
  hpmg_mg_destroy(&s->mg);
  hpmg_cuda_free(s->cinv);
  for (int i = 0; i < 6; i++) hpmg_cuda_free(s->cw[i]);
  hpmg_cuda_free(s->db);
  hpmg_cuda_free(s->dx);
  hpmg_cuda_free(s->tscratch);
  hpmg_cuda_free(s->dw);
  for (int r = 0; r < 2; r++) hpmg_cuda_free(s->ones[r]);
  free(s->hw);
  if (s->prob) hpmg_problem_destroy(&s->prob);
  free(s);
  *sp = NULL;
}

static hpmg_error dalloc(size_t bytes, void *p) { return hpmg_cuda_malloc(bytes, (void **)p); }

static hpmg_error coarse_setup(hpmg_cuda_solver s) {
  const hpmg_laplace *op = &Q(&s->mg.lv[0])->op;
  const int64_t n = op->g.N;
  for (int i = 0; i < 6; i++) HPMG_CALL(dalloc(sizeof(double) * (size_t)(n > 0 ? n : 1), &s->cw[i]));
  if (n > QK_DENSE_COARSE_MAX || n == 0) return HPMG_SUCCESS;
  double *A = (double *)malloc(sizeof(double) * (size_t)(n * n));
  if (!A) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the coarse matrix");
  hpmg_error e = hpmg_laplace_dense(op, A);
  if (!e && s->singular) { /* A + a 1 1^T (a = mean diagonal / n): regular, the same on 1-perp (as the host) */
    double a = 0;
    for (int64_t i = 0; i < n; i++) a += A[i * n + i] / (double)n;
    for (int64_t i = 0; i < n * n; i++) A[i] += a / (double)n;
  }
  int info = e ? 0 : LAPACKE_dpotrf(101 /* row major */, 'L', (int)n, A, (int)n);
  if (!e && info) e = hpmg_error_set(HPMG_ERR_NUMERIC, "coarse Cholesky factorization failed (info %d)", info);
  if (!e && (info = LAPACKE_dpotri(101, 'L', (int)n, A, (int)n)))
    e = hpmg_error_set(HPMG_ERR_NUMERIC, "coarse inverse failed (info %d)", info);
  if (!e) { /* dpotri leaves the lower triangle: symmetrize */
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = i + 1; j < n; j++) A[i * n + j] = A[j * n + i];
    e = dalloc(sizeof(double) * (size_t)(n * n), &s->cinv);
    if (!e) e = hpmg_cuda_upload(s->cinv, A, sizeof(double) * (size_t)(n * n));
  }
  free(A);
  return e;
}

/* a general box: singular or not; the weights and the ones of the projections */
static hpmg_error box_setup(hpmg_cuda_solver s) {
  const hpmg_grid *g = &s->prob->g;
  const int64_t n = g->N;
  s->singular = qk_box_singular(g, s->po.lambda);
  if (!s->singular) return HPMG_SUCCESS;
  const size_t bytes = sizeof(double) * (size_t)(n > 0 ? n : 1);
  s->hw = (double *)malloc(bytes);
  double *one = (double *)malloc(bytes);
  hpmg_error e = s->hw && one ? HPMG_SUCCESS : hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the weights");
  if (!e) e = qk_box_weights(g, s->hw);
  for (int64_t i = 0; i < n && !e; i++) s->sumw += s->hw[i], one[i] = 1.0;
  if (!e) e = dalloc(bytes, &s->dw);
  if (!e) e = hpmg_cuda_upload(s->dw, s->hw, sizeof(double) * (size_t)n);
  if (!e) e = dalloc(bytes, &s->ones[HPMG_REAL_DOUBLE]);
  if (!e) e = dalloc(sizeof(float) * (size_t)(n > 0 ? n : 1), &s->ones[HPMG_REAL_FLOAT]);
  if (!e) e = hpmg_cuda_upload(s->ones[HPMG_REAL_DOUBLE], one, sizeof(double) * (size_t)n);
  if (!e) e = hpmg_cuda_convert(n, HPMG_REAL_DOUBLE, s->ones[HPMG_REAL_DOUBLE], HPMG_REAL_FLOAT, s->ones[HPMG_REAL_FLOAT]);
  free(one);
  return e;
}

/* the levels' grids: the uniform mesh's cells coarse*2^l, or a general
 * box's semi-coarsened levels from the problem's grid (as
 * hpmg_qk_host_create_box; the finest grid's node arrays are the problem's) */
static hpmg_error level_grids(hpmg_cuda_solver s) {
  const hpmg_problem_options *po = &s->po;
  hpmg_mg *mg = &s->mg;
  const int nl = mg->nlevels;
  for (int i = 0; i < nl; i++) {
    hpmg_level *L = &mg->lv[i];
    qk_level *q = (qk_level *)calloc(1, sizeof *q);
    if (!q) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate a level");
    L->ops = &qk_cuda_ops;
    L->ctx = q;
    L->be = s->be;
    q->s = s;
  }
  if (!s->prob->qkbox) {
    const int l0 = hpmg_qk_first_level(po->degree, po->coarse);
    for (int i = 0; i < nl; i++) {
      int64_t c = (int64_t)po->coarse << (l0 + i), cells[3] = {c, c, c};
      HPMG_CALL(hpmg_grid_init(po->dim, po->degree, cells, po->box, &Q(&mg->lv[i])->g));
    }
    return HPMG_SUCCESS;
  }
  hpmg_qk_box_levels *B = (hpmg_qk_box_levels *)malloc(sizeof *B);
  if (!B) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the box levels");
  hpmg_error e = hpmg_qk_box_levels_build(&s->prob->g, B);
  if (e) {
    free(B);
    return e;
  }
  if (B->nl != nl) e = hpmg_error_set(HPMG_ERR_NUMERIC, "box levels: the hierarchy changed between estimate and setup");
  for (int i = nl - 1; i >= 0 && !e; i--) { /* level i = B's level nl-1-i (B: finest first) */
    qk_level *q = Q(&mg->lv[i]);
    hpmg_qk_box_levels_take(B, nl - 1 - i, &q->g, q->xn); /* the nodes are freed with the level */
  }
  hpmg_qk_box_levels_free(B);
  free(B);
  return e;
}

/* the levels: operators, transfers, smoother data, then the level vectors */
static hpmg_error levels_create(hpmg_cuda_solver s) {
  const hpmg_problem_options *po = &s->po;
  const hpmg_solver_options *so = &s->so;
  int64_t N[QK_BOX_MAX_LEVELS];
  int nl;
  HPMG_CALL(level_sizes(po, N, &nl));
  hpmg_cycle_options co;
  memset(&co, 0, sizeof co);
  co.pre = so->pre;
  co.post = so->post;
  co.add_residual = so->cycle == HPMG_CYCLE_ADD_RESIDUAL;
  co.timing = s->so.profile ? 2 : 0;
  HPMG_CALL(hpmg_mg_init(&s->mg, nl, s->real, &co, so->precision != HPMG_PREC_MIXED));
  HPMG_CALL(level_grids(s));
  const size_t rs = hpmg_real_size(s->real);
  size_t scratch = 0;
  for (int i = 0; i < s->mg.nlevels; i++) {
    hpmg_level *L = &s->mg.lv[i];
    qk_level *q = Q(L);
    HPMG_CALL(hpmg_laplace_create(&q->g, po->lambda, &q->op));
    HPMG_CALL(hpmg_cuda_op_create(&q->op, &q->dop));
    L->n = q->g.N;
    if (i == 0) continue; /* the coarsest level is solved exactly */
    const size_t bytes = (size_t)L->n * rs;
    /* d starts at 0: a Chebyshev sweep on a nonzero x (FMG's first cycle on a
     * level, --pre 0) begins with c1 = 0, and 0 * (uninitialized NaN) is NaN */
    HPMG_CALL(s->be->alloc(bytes, &q->d));
    if (s->smoother == HPMG_SMOOTHER_CHEBYSHEV) HPMG_CALL(dalloc(bytes, &q->t));
    if (s->smoother == HPMG_SMOOTHER_PATCH) /* work vector: d */
      HPMG_CALL(hpmg_cuda_patch_create(&q->op, q->dop, so->patch_mode, so->local_solver, so->patch_damping,
                                       so->patch_kernel, &q->patch));
    if (s->prob->qkbox) HPMG_CALL(hpmg_transfer_create_grids(&Q(&s->mg.lv[i - 1])->g, &q->g, &q->P, &q->R));
    else HPMG_CALL(hpmg_transfer_create(&Q(&s->mg.lv[i - 1])->g, &q->P, &q->R));
    HPMG_CALL(hpmg_cuda_kron3_create(&q->P, &q->dP));
    HPMG_CALL(hpmg_cuda_kron3_create(&q->R, &q->dR));
    size_t a = hpmg_cuda_kron3_scratch_bytes(q->dP, s->real), b = hpmg_cuda_kron3_scratch_bytes(q->dR, s->real);
    if (a > scratch) scratch = a;
    if (b > scratch) scratch = b;
  }
  HPMG_CALL(dalloc(scratch, &s->tscratch));
  HPMG_CALL(coarse_setup(s));
  HPMG_CALL(hpmg_mg_setup(&s->mg, NULL));
  if (s->smoother != HPMG_SMOOTHER_CHEBYSHEV) return HPMG_SUCCESS;
  /* lambda_max of every smoothed level, on the GPU, in float (as the host) */
  const int64_t nf = s->mg.lv[s->mg.nlevels - 1].n;
  void *w[6] = {NULL, NULL, NULL, NULL, NULL, NULL}; /* fewer than the outer vectors to come */
  hpmg_error e = HPMG_SUCCESS;
  for (int i = 0; i < 6 && !e; i++) e = dalloc(sizeof(float) * (size_t)(nf > 0 ? nf : 1), &w[i]);
  for (int i = 1; i < s->mg.nlevels && !e; i++) {
    double est;
    e = hpmg_cuda_estimate_lambda_max(Q(&s->mg.lv[i])->dop, so->cheby_eig_iters, w, &est);
    Q(&s->mg.lv[i])->lmax = 1.2 * est;
  }
  for (int i = 0; i < 6; i++) hpmg_cuda_free(w[i]);
  return e;
}

extern "C" hpmg_error hpmg_cuda_solver_create(const hpmg_problem_options *po, const hpmg_solver_options *so,
                                              hpmg_cuda_solver *out) {
  *out = NULL;
  HPMG_CALL(options_check(po, so));
  const hpmg_backend *be;
  HPMG_CALL(hpmg_backend_cuda(&be));
  double need;
  HPMG_CALL(hpmg_cuda_memory_estimate(po, so, &need));
  if (so->solver == HPMG_SOLVER_GMRES) { /* the basis is allocated on first use: require 2 more vectors now */
    int64_t N[QK_BOX_MAX_LEVELS];
    int nl;
    HPMG_CALL(level_sizes(po, N, &nl));
    const double nf = (double)N[nl - 1];
    const double extra = hpmg_gmres_vectors(so->restart) - 4.0 - 2.0;
    if (extra > 0) need -= extra * nf * (so->precision == HPMG_PREC_FLOAT ? 4.0 : 8.0);
  }
  size_t fr = 0, tot = 0;
  HPMG_CU(cudaMemGetInfo(&fr, &tot));
  if (need > 0.95 * (double)fr) {
    char a[32], b[32];
    return hpmg_error_set(HPMG_ERR_MEMORY, "--device cuda: problem needs about %s of GPU memory, %s is free",
                          hpmg_format_bytes(need, a, sizeof a), hpmg_format_bytes((double)fr, b, sizeof b));
  }
  hpmg_cuda_solver s = (hpmg_cuda_solver)calloc(1, sizeof *s);
  if (!s) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate cuda solver");
  *out = s;
  cudaDeviceSynchronize();
  const double t0 = hpmg_wtime();
  s->po = *po;
  s->so = *so;
  s->be = be;
  s->fmg_shift_builtin = -1;
  const char *prof = getenv("HPMG_CUDA_PROFILE");
  s->so.profile = so->profile || (prof && atoi(prof) > 0);
  s->smoother = so->smoother == HPMG_SMOOTHER_JACOBI || so->smoother == HPMG_SMOOTHER_PATCH ? so->smoother
                                                                                           : HPMG_SMOOTHER_CHEBYSHEV;
  s->real = so->precision == HPMG_PREC_DOUBLE ? HPMG_REAL_DOUBLE : HPMG_REAL_FLOAT;
  s->kreal = so->precision == HPMG_PREC_FLOAT ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
  hpmg_error e = hpmg_problem_create(po, &s->prob);
  if (!e && s->prob->qkbox) e = box_setup(s);
  if (!e) e = levels_create(s);
  if (!e) {
    hpmg_linop A;
    memset(&A, 0, sizeof A);
    A.ctx = Q(&s->mg.lv[s->mg.nlevels - 1])->dop;
    A.apply = op_apply;
    A.residual = op_residual;
    hpmg_mg_solve_options d = drv_options(so);
    if (s->singular) { /* the constants are A's null space: projections in the Krylov methods */
      d.project = project_mean;
      d.pctx = s;
    }
    e = hpmg_mg_solver_create(&s->drv, &s->mg, A, be, s->mg.lv[s->mg.nlevels - 1].n, s->kreal, &d);
  }
  if (e) {
    hpmg_cuda_solver_destroy(out);
    return e;
  }
  s->st.dofs = s->mg.lv[s->mg.nlevels - 1].n;
  s->st.levels = s->mg.nlevels;
  cudaDeviceSynchronize();
  s->st.t_setup = hpmg_wtime() - t0;
  return HPMG_SUCCESS;
}

/* a general box: the right-hand side the solve iterates on, built on the
 * host from b (host or device array, or NULL: the built-in one) into s->db */
static hpmg_error box_rhs(hpmg_cuda_solver s, const double *b, int device_ptrs) {
  const int64_t n = s->st.dofs;
  const size_t bytes = sizeof(double) * (size_t)(n > 0 ? n : 1);
  double *hb = NULL, *rhs = (double *)malloc(bytes);
  hpmg_error e = rhs ? HPMG_SUCCESS : hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the right-hand side");
  if (!e && b && device_ptrs) { /* the boundary data join b on the host */
    hb = (double *)malloc(bytes);
    e = hb ? hpmg_cuda_download(hb, b, sizeof(double) * (size_t)n)
           : hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the right-hand side");
  }
  double c = 0;
  const struct hpmg_problem_s *p = s->prob;
  if (!e) e = qk_box_solve_rhs(&p->o, &p->box, &p->g, hb ? hb : b, s->singular ? s->hw : NULL, s->sumw, rhs, &c);
  if (!e) e = hpmg_cuda_upload(s->db, rhs, sizeof(double) * (size_t)n);
  s->st.compat_defect = c;
  free(hb);
  free(rhs);
  return e;
}

extern "C" hpmg_error hpmg_cuda_solver_solve(hpmg_cuda_solver s, const double *b, double *x, int device_ptrs) {
  HPMG_CHECK_ARG(s && x, "solve: solver and solution must be non-NULL");
  const int64_t n = s->st.dofs;
  const size_t bytes = sizeof(double) * (size_t)n;
  const double *db = b;
  double *dx = x;
  if (s->prob->qkbox) { /* docs/bc.md: the boundary data join b */
    if (!s->db) HPMG_CALL(dalloc(bytes, &s->db));
    HPMG_CALL(box_rhs(s, b, device_ptrs));
    db = s->db;
    if (s->so.solver == HPMG_SOLVER_FMG) {
      const hpmg_grid *g[QK_BOX_MAX_LEVELS];
      for (int l = 0; l < s->mg.nlevels; l++) g[l] = &Q(&s->mg.lv[l])->g;
      HPMG_CALL(qk_box_fmg_shifts(&s->prob->o, &s->prob->box, b == NULL, g, &s->mg, &s->fmg_shift_builtin,
                                  &s->st.t_setup));
    }
  } else if (!b || !device_ptrs) { /* device copy of b */
    if (!s->db) HPMG_CALL(dalloc(bytes, &s->db));
    if (!b) {
      double *hb = (double *)malloc(bytes > 0 ? bytes : 8);
      if (!hb) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the right-hand side");
      hpmg_error e = hpmg_problem_builtin_rhs(s->prob, hb);
      if (!e) e = hpmg_cuda_upload(s->db, hb, bytes);
      free(hb);
      HPMG_CALL(e);
    } else HPMG_CALL(hpmg_cuda_upload(s->db, b, bytes));
    db = s->db;
  }
  if (!device_ptrs) {
    if (!s->dx) HPMG_CALL(dalloc(bytes, &s->dx));
    HPMG_CALL(hpmg_cuda_upload(s->dx, x, bytes));
    dx = s->dx;
  }
  hpmg_vec vb = hpmg_vec_wrap(s->be, HPMG_REAL_DOUBLE, n, (void *)db), vx = hpmg_vec_wrap(s->be, HPMG_REAL_DOUBLE, n, dx);
  hpmg_error e = hpmg_mg_solver_solve(&s->drv, &vb, &vx, &s->st);
  if (s->singular && (e == HPMG_SUCCESS || e == HPMG_ERR_NOT_CONVERGED)) { /* mean zero: sum m x = 0 */
    double mx = 0;
    hpmg_error e2 = hpmg_cuda_dot(HPMG_REAL_DOUBLE, n, s->dw, dx, &mx);
    if (!e2) e2 = hpmg_cuda_axpy(HPMG_REAL_DOUBLE, n, -mx / s->sumw, s->ones[HPMG_REAL_DOUBLE], dx);
    if (e2) e = e2;
  }
  if (!device_ptrs) {
    hpmg_error e2 = hpmg_cuda_download(x, dx, bytes);
    if (!e) e = e2;
  }
  return e;
}

extern "C" void hpmg_cuda_solver_get_stats(hpmg_cuda_solver s, hpmg_stats *st) { *st = s->st; }

extern "C" int hpmg_cuda_solver_history(hpmg_cuda_solver s, const double **h) {
  *h = s->drv.hist;
  return s->drv.nhist;
}
extern "C" int64_t hpmg_cuda_solver_num_dofs(hpmg_cuda_solver s) { return s->st.dofs; }
extern "C" int hpmg_cuda_solver_num_levels(hpmg_cuda_solver s) { return s->mg.nlevels; }
extern "C" double hpmg_cuda_solver_lambda_max(hpmg_cuda_solver s, int l) {
  return l >= 1 && l < s->mg.nlevels ? Q(&s->mg.lv[l])->lmax : 0.0;
}

extern "C" hpmg_error hpmg_cuda_solver_time_operator(hpmg_cuda_solver s, hpmg_real r, hpmg_kernel_mode mode,
                                                     int reps, double *seconds) {
  hpmg_level *F = &s->mg.lv[s->mg.nlevels - 1];
  const int64_t n = F->n;
  HPMG_CHECK_ARG(reps >= 1 && reps <= 1000, "reps must be in 1..1000");
  void *v[4] = {NULL, NULL, NULL, NULL}; /* x, y, b, d */
  hpmg_error e = HPMG_SUCCESS;
  for (int i = 0; i < 4 && !e; i++) e = dalloc((size_t)(n > 0 ? n : 1) * hpmg_real_size(r), &v[i]);
  if (!e) e = hpmg_cuda_fill_random(r, n, v[0]);
  if (!e) e = hpmg_cuda_fill_random(r, n, v[2]);
  if (!e) e = hpmg_cuda_fill_random(r, n, v[3]);
  if (!e) {
    hpmg_kernel_args a = qk_kargs(mode, v[0], v[1], v[2]);
    a.d = mode == HPMG_KERNEL_SMOOTH ? v[3] : NULL;
    a.c1 = 0.1;
    a.c2 = 0.2;
    hpmg_cuda_op dop = Q(F)->dop;
    e = qk_time_median(reps, [&](int) { return hpmg_cuda_op_kernel(dop, r, &a); }, seconds);
  }
  cudaDeviceSynchronize();
  for (int i = 0; i < 4; i++) hpmg_cuda_free(v[i]);
  return e;
}

extern "C" hpmg_error hpmg_cuda_solve(const hpmg_problem_options *po, const hpmg_solver_options *so, const double *b,
                                      double *x, hpmg_stats *st) {
  hpmg_cuda_solver s;
  HPMG_CALL(hpmg_cuda_solver_create(po, so, &s));
  hpmg_error e = hpmg_cuda_solver_solve(s, b, x, 0);
  if (st) hpmg_cuda_solver_get_stats(s, st);
  hpmg_cuda_solver_destroy(&s);
  return e;
}
