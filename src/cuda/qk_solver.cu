/* The whole Chebyshev-smoothed Q_k multigrid solve on the GPU: the CPU
 * algorithm of src/mg/mg.c (V-cycle, FMG), src/smoothers/chebyshev.c,
 * jacobi.c, src/la/krylov.c (hpmg_pcg, hpmg_richardson, hpmg_gmres) and
 * src/api/solver.c (fmg_solve) step for step, on device vectors. Setup builds the 1D matrices and transfers on the host (they are
 * 1D, tiny), factorizes the coarsest operator there (dense Cholesky, uploaded
 * once as the explicit inverse) and estimates lambda_max per level on the
 * GPU. Per iteration only scalars (dot products) cross to the host. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "qk_cuda.h"
extern "C" {
#include "api/problem_impl.h"
#include "la/krylov.h"
#include "smoothers/chebyshev.h"
hpmg_error hpmg_problem_builtin_rhs(hpmg_problem p, double *b);
int LAPACKE_dpotrf(int layout, char uplo, int n, double *a, int lda);
int LAPACKE_dpotri(int layout, char uplo, int n, double *a, int lda);
}

#define QK_DENSE_COARSE_MAX 3000 /* as src/mg/mg.c */

typedef struct {
  hpmg_grid g;
  hpmg_laplace op; /* host: 1D matrices */
  hpmg_cuda_op dop;
  hpmg_kron3 P, R;
  hpmg_cuda_kron3 dP, dR; /* to the next coarser level */
  void *b, *x, *r, *d, *t; /* cycle precision; finest b/x may alias the caller's */
  void *own_b, *own_x;
  double lmax; /* 1.2 x estimate (Chebyshev) */
  hpmg_cuda_patch patch; /* vertex-patch smoother (qk_patch.cu) or NULL */
  int64_t matvecs;
  double ts, to, tt; /* --profile: seconds of smoothing, residual, transfers from/to the level */
} qk_level;

struct hpmg_cuda_solver_s {
  hpmg_problem prob;
  hpmg_problem_options po;
  hpmg_solver_options so;
  hpmg_smoother_kind smoother;
  hpmg_real real;  /* cycle precision */
  hpmg_real kreal; /* outer iteration precision: float for --precision float, else double */
  int nlevels;
  qk_level *lv; /* lv[0] coarsest */
  double *cinv; /* dense inverse of the coarsest operator (device) or NULL: CG */
  double *cw[5]; /* double coarse scratch (device) */
  double *w[4];  /* outer vectors r z p q (device, finest size, n doubles: also n floats) */
  double *db, *dx; /* device b and x for host callers */
  void *kb, *kx;   /* --precision float: float copies of b and x (device) */
  /* GMRES(m): basis v[0..m] and z[0..m-1] in kreal (device, allocated on
   * first use: v0 z0 v1 z1 are w[0..3]), Hessenberg least squares on the host */
  void **gv, **gz;
  double *gH, *gcs, *gsn, *gg, *gy;
  void *tscratch; /* transfer scratch */
  int profile;
  double t_op, t_smooth, t_transfer, t_coarse;
  int64_t outer_matvecs, mg_matvecs;
  hpmg_stats st;
  double *hist; /* residual norm per outer iteration of the last solve (0 = initial) */
  int nhist;
};

/* iteration it's residual norm: history and --verbose line (the CPU solver's monitor) */
static void monitor(hpmg_cuda_solver s, int it, double rn, double r0) {
  hpmg_history_record(s->hist, &s->nhist, s->so.maxit + 2, it, rn, r0, s->so.verbose);
}

static double qk_now(int sync) {
  if (sync) cudaDeviceSynchronize();
  return hpmg_wtime();
}

static size_t rsz(hpmg_real r) { return r == HPMG_REAL_DOUBLE ? 8 : 4; }

/* --profile: synchronize and read the clock (0 without profiling) ... */
static double prof_start(hpmg_cuda_solver s) { return s->profile ? qk_now(1) : 0.0; }
/* ... and add the time since t0 to a phase total and, if given, to a level's
 * slot (nothing without profiling) */
static void prof_stop(hpmg_cuda_solver s, double t0, double *total, double *level) {
  if (!s->profile) return;
  const double dt = qk_now(1) - t0;
  *total += dt;
  if (level) *level += dt;
}

static int first_level(int k, int coarse) { return (int64_t)k * coarse - 1 > 0 ? 0 : 1; }

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

/* GMRES(m) basis beyond the 4 outer vectors it reuses: 2m+1 vectors in the
 * outer precision, allocated on first use (a solve that converges in j < m
 * iterations holds 2j+1) */
static double gmres_basis_bytes(const hpmg_solver_options *so, double nf) {
  if (so->solver != HPMG_SOLVER_GMRES) return 0.0;
  const double extra = 2.0 * so->restart + 1.0 - 4.0;
  return (extra > 0 ? extra : 0.0) * nf * (so->precision == HPMG_PREC_FLOAT ? 4.0 : 8.0);
}

extern "C" hpmg_error hpmg_cuda_memory_estimate(const hpmg_problem_options *po, const hpmg_solver_options *so,
                                                double *bytes) {
  HPMG_CALL(options_check(po, so));
  const double rs = so->precision == HPMG_PREC_DOUBLE ? 8.0 : 4.0;
  const int cheb = so->smoother == HPMG_SMOOTHER_CHEBYSHEV || so->smoother == HPMG_SMOOTHER_AUTO;
  double total = 0.0, nf = 0.0, n0 = 0.0;
  const int l0 = first_level(po->degree, po->coarse);
  for (int l = l0; l <= po->refine; l++) {
    double n = 1.0, cells = (double)po->coarse * ldexp(1.0, l);
    for (int d = 0; d < po->dim; d++) n *= po->degree * cells - 1;
    const int alias = l == po->refine && so->precision != HPMG_PREC_MIXED;
    total += (1 + 1 + cheb + (alias ? 0 : 2)) * n * rs; /* r, d, t, b, x */
    if (l == l0) n0 = n;
    nf = n;
  }
  total += 0.75 * nf * rs;            /* transfer scratch */
  total += 6 * nf * 8.0;              /* outer r z p q, b, x */
  if (so->precision == HPMG_PREC_FLOAT) total += 2 * nf * 4.0; /* float b, x */
  total += n0 <= QK_DENSE_COARSE_MAX ? n0 * n0 * 8.0 + 2 * n0 * 8.0 : 5 * n0 * 8.0;
  *bytes = total + gmres_basis_bytes(so, nf);
  return HPMG_SUCCESS;
}

extern "C" void hpmg_cuda_solver_destroy(hpmg_cuda_solver *sp) {
  hpmg_cuda_solver s = *sp;
  if (!s) return;
  cudaDeviceSynchronize();
  for (int i = 0; s->lv && i < s->nlevels; i++) {
    qk_level *L = &s->lv[i];
    hpmg_laplace_destroy(&L->op);
    hpmg_cuda_op_destroy(&L->dop);
    hpmg_cuda_patch_destroy(&L->patch);
    hpmg_kron3_destroy(&L->P);
    hpmg_kron3_destroy(&L->R);
    hpmg_cuda_kron3_destroy(&L->dP);
    hpmg_cuda_kron3_destroy(&L->dR);
    hpmg_cuda_free(L->r);
    hpmg_cuda_free(L->d);
    hpmg_cuda_free(L->t);
    hpmg_cuda_free(L->own_b);
    hpmg_cuda_free(L->own_x);
  }
  free(s->lv);
  free(s->hist);
  hpmg_cuda_free(s->cinv);
  for (int i = 0; i < 5; i++) hpmg_cuda_free(s->cw[i]);
  for (int i = 0; i < 4; i++) hpmg_cuda_free(s->w[i]);
  hpmg_cuda_free(s->db);
  hpmg_cuda_free(s->dx);
  hpmg_cuda_free(s->kb);
  hpmg_cuda_free(s->kx);
  for (int i = 0; s->gv && i <= s->so.restart; i++)
    if (i >= 2) hpmg_cuda_free(s->gv[i]);
  for (int i = 0; s->gz && i < s->so.restart; i++)
    if (i >= 2) hpmg_cuda_free(s->gz[i]);
  free(s->gv);
  free(s->gz);
  free(s->gH);
  free(s->gcs);
  free(s->gsn);
  free(s->gg);
  free(s->gy);
  hpmg_cuda_free(s->tscratch);
  if (s->prob) hpmg_problem_destroy(&s->prob);
  free(s);
  *sp = NULL;
}

static hpmg_error dalloc(size_t bytes, void *p) { return hpmg_cuda_malloc(bytes, (void **)p); }

static hpmg_error coarse_setup(hpmg_cuda_solver s) {
  const hpmg_laplace *op = &s->lv[0].op;
  const int64_t n = op->g.N;
  for (int i = 0; i < 5; i++) HPMG_CALL(dalloc(sizeof(double) * (size_t)(n > 0 ? n : 1), &s->cw[i]));
  if (n > QK_DENSE_COARSE_MAX || n == 0) return HPMG_SUCCESS;
  double *A = (double *)malloc(sizeof(double) * (size_t)(n * n));
  if (!A) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the coarse matrix");
  hpmg_error e = hpmg_laplace_dense(op, A);
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

extern "C" hpmg_error hpmg_cuda_solver_create(const hpmg_problem_options *po, const hpmg_solver_options *so,
                                              hpmg_cuda_solver *out) {
  *out = NULL;
  HPMG_CALL(options_check(po, so));
  HPMG_CALL(hpmg_cuda_check());
  double need;
  HPMG_CALL(hpmg_cuda_memory_estimate(po, so, &need));
  { /* the GMRES basis is allocated on first use: require 2 more vectors now */
    double nf = 1.0, cells = (double)po->coarse * ldexp(1.0, po->refine);
    for (int d = 0; d < po->dim; d++) nf *= po->degree * cells - 1;
    const double basis = gmres_basis_bytes(so, nf), two = 2.0 * nf * (so->precision == HPMG_PREC_FLOAT ? 4.0 : 8.0);
    if (basis > two) need -= basis - two;
  }
  size_t fr = 0, tot = 0;
  QK_CU(cudaMemGetInfo(&fr, &tot));
  if (need > 0.95 * (double)fr) {
    char a[32], b[32];
    return hpmg_error_set(HPMG_ERR_MEMORY, "--device cuda: problem needs about %s of GPU memory, %s is free",
                          hpmg_format_bytes(need, a, sizeof a), hpmg_format_bytes((double)fr, b, sizeof b));
  }
  hpmg_cuda_solver s = (hpmg_cuda_solver)calloc(1, sizeof *s);
  if (!s) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate cuda solver");
  *out = s;
  const double t0 = qk_now(1);
  s->po = *po;
  s->so = *so;
  s->smoother = so->smoother == HPMG_SMOOTHER_JACOBI || so->smoother == HPMG_SMOOTHER_PATCH ? so->smoother
                                                                                           : HPMG_SMOOTHER_CHEBYSHEV;
  s->real = so->precision == HPMG_PREC_DOUBLE ? HPMG_REAL_DOUBLE : HPMG_REAL_FLOAT;
  s->kreal = so->precision == HPMG_PREC_FLOAT ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
  const char *prof = getenv("HPMG_CUDA_PROFILE");
  s->profile = so->profile || (prof && atoi(prof) > 0);
  hpmg_error e = hpmg_problem_create(po, &s->prob);
  if (!e && !(s->hist = (double *)calloc((size_t)(so->maxit > 0 ? so->maxit : 0) + 2, sizeof(double))))
    e = hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the residual history");
  const int l0 = first_level(po->degree, po->coarse);
  if (!e && po->refine < l0) e = hpmg_error_set(HPMG_ERR_ARG, "degree 1 on a single coarse cell needs at least one refinement");
  if (e) goto fail;
  s->nlevels = po->refine - l0 + 1;
  s->lv = (qk_level *)calloc((size_t)s->nlevels, sizeof(qk_level));
  if (!s->lv) {
    e = hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate levels");
    goto fail;
  }
  {
    const size_t rs = rsz(s->real);
    size_t scratch = 0;
    for (int i = 0; i < s->nlevels && !e; i++) {
      qk_level *L = &s->lv[i];
      int64_t c = (int64_t)po->coarse << (l0 + i), cells[3] = {c, c, c};
      e = hpmg_grid_init(po->dim, po->degree, cells, po->box, &L->g);
      if (!e) e = hpmg_laplace_create(&L->g, po->lambda, &L->op);
      if (!e) e = hpmg_cuda_op_create(&L->op, &L->dop);
      const size_t bytes = (size_t)L->g.N * rs;
      if (!e) e = dalloc(bytes, &L->r);
      if (!e && i > 0) e = dalloc(bytes, &L->d);
      /* d starts at 0: a Chebyshev sweep on a nonzero x (FMG's first cycle on a
       * level, --pre 0) begins with c1 = 0, and 0 * (uninitialized NaN) is NaN */
      if (!e && i > 0 && cudaMemset(L->d, 0, bytes) != cudaSuccess)
        e = hpmg_error_set(HPMG_ERR_BACKEND, "cudaMemset failed");
      if (!e && i > 0 && s->smoother == HPMG_SMOOTHER_CHEBYSHEV) e = dalloc(bytes, &L->t);
      if (!e && i > 0 && s->smoother == HPMG_SMOOTHER_PATCH) /* work vector: L->d */
        e = hpmg_cuda_patch_create(&L->op, L->dop, so->patch_mode, so->local_solver, so->patch_damping,
                                   so->patch_kernel, &L->patch);
      if (!e && !(i == s->nlevels - 1 && s->real == s->kreal)) { /* finest: aliases the outer vectors */
        e = dalloc(bytes, &L->own_b);
        if (!e) e = dalloc(bytes, &L->own_x);
        if (!e) e = cudaMemset(L->own_b, 0, bytes) == cudaSuccess ? HPMG_SUCCESS : hpmg_error_set(HPMG_ERR_BACKEND, "cudaMemset failed");
        if (!e) e = cudaMemset(L->own_x, 0, bytes) == cudaSuccess ? HPMG_SUCCESS : hpmg_error_set(HPMG_ERR_BACKEND, "cudaMemset failed");
        L->b = L->own_b;
        L->x = L->own_x;
      }
      if (!e && i > 0) {
        e = hpmg_transfer_create(&s->lv[i - 1].g, &L->P, &L->R);
        if (!e) e = hpmg_cuda_kron3_create(&L->P, &L->dP);
        if (!e) e = hpmg_cuda_kron3_create(&L->R, &L->dR);
        if (!e) {
          size_t a = hpmg_cuda_kron3_scratch_bytes(L->dP, s->real), b = hpmg_cuda_kron3_scratch_bytes(L->dR, s->real);
          if (a > scratch) scratch = a;
          if (b > scratch) scratch = b;
        }
      }
    }
    if (!e) e = dalloc(scratch, &s->tscratch);
    const int64_t nf = s->lv[s->nlevels - 1].g.N;
    for (int i = 0; i < 4 && !e; i++) e = dalloc(sizeof(double) * (size_t)(nf > 0 ? nf : 1), &s->w[i]);
    if (!e) e = coarse_setup(s);
    if (!e && s->kreal == HPMG_REAL_FLOAT) e = dalloc(sizeof(float) * (size_t)(nf > 0 ? nf : 1), &s->kb);
    if (!e && s->kreal == HPMG_REAL_FLOAT) e = dalloc(sizeof(float) * (size_t)(nf > 0 ? nf : 1), &s->kx);
    if (!e && so->solver == HPMG_SOLVER_GMRES) {
      const size_t m = (size_t)so->restart;
      s->gv = (void **)calloc(m + 1, sizeof(void *));
      s->gz = (void **)calloc(m, sizeof(void *));
      s->gH = (double *)calloc((m + 1) * m, sizeof(double));
      s->gcs = (double *)calloc(m, sizeof(double));
      s->gsn = (double *)calloc(m, sizeof(double));
      s->gg = (double *)calloc(m + 1, sizeof(double));
      s->gy = (double *)calloc(m, sizeof(double));
      if (!s->gv || !s->gz || !s->gH || !s->gcs || !s->gsn || !s->gg || !s->gy)
        e = hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate GMRES(%d) workspace", so->restart);
      else { /* the outer vectors are free during GMRES: they hold v0 z0 v1 z1 */
        s->gv[0] = s->w[0];
        s->gz[0] = s->w[1];
        if (m >= 2) {
          s->gv[1] = s->w[2];
          s->gz[1] = s->w[3];
        } else s->gv[1] = s->w[2];
      }
    }
    /* lambda_max of every smoothed level, on the GPU, in double (as the CPU) */
    for (int i = 1; i < s->nlevels && !e && s->smoother == HPMG_SMOOTHER_CHEBYSHEV; i++) {
      double est;
      e = hpmg_cuda_estimate_lambda_max(s->lv[i].dop, so->cheby_eig_iters, s->w, &est);
      s->lv[i].lmax = 1.2 * est;
    }
  }
  if (e) goto fail;
  s->st.dofs = s->lv[s->nlevels - 1].g.N;
  s->st.levels = s->nlevels;
  s->st.t_setup = qk_now(1) - t0;
  return HPMG_SUCCESS;
fail:
  hpmg_cuda_solver_destroy(out);
  return e;
}

/* ------------------------------------------------------------ smoothers */

static hpmg_error smooth_kernel(hpmg_cuda_solver s, qk_level *L, const void *x, void *y, const void *b, void *d,
                                double c1, double c2) {
  hpmg_kernel_args a = qk_kargs(HPMG_KERNEL_SMOOTH, x, y, b);
  a.d = d;
  a.c1 = c1;
  a.c2 = c2;
  L->matvecs++;
  return hpmg_cuda_op_kernel(L->dop, s->real, &a);
}

static hpmg_error vcopy(hpmg_real r, int64_t n, const void *x, void *y) {
  if (n > 0 && x != y) QK_CU(cudaMemcpyAsync(y, x, (size_t)n * rsz(r), cudaMemcpyDeviceToDevice));
  return HPMG_SUCCESS;
}

/* chebyshev.c: the same schedule (smoothers/chebyshev.h), GPU passes */
static hpmg_error cheb_apply(hpmg_cuda_solver s, qk_level *L, int x_is_zero, int sweeps) {
  const int64_t n = L->g.N;
  void *x = L->x, *d = L->d, *tmp = L->t;
  const void *b = L->b;
  if (n == 0) return HPMG_SUCCESS;
  for (int sw = 0; sw < sweeps; sw++) {
    hpmg_chebyshev_schedule cs;
    hpmg_chebyshev_schedule_make(L->lmax, s->so.cheby_range, s->so.cheby_degree, x_is_zero && sw == 0, &cs);
    void *cur = x, *other = tmp;
    if (x_is_zero && sw == 0) {
      cur = cs.first_to_x ? x : tmp;
      other = cs.first_to_x ? tmp : x;
      HPMG_CALL(hpmg_cuda_op_inverse_diagonal(L->dop, s->real, cs.first_scale, b, d, cur));
    }
    for (int p = 0; p < cs.passes; p++) {
      HPMG_CALL(smooth_kernel(s, L, cur, other, b, d, cs.c1[p], cs.c2[p]));
      void *t = cur;
      cur = other;
      other = t;
    }
    if (cur != x) HPMG_CALL(vcopy(s->real, n, cur, x));
  }
  return HPMG_SUCCESS;
}

/* jacobi.c: jacobi_apply (scratch: L->d) */
static hpmg_error jacobi_apply(hpmg_cuda_solver s, qk_level *L, int x_is_zero, int sweeps) {
  const int64_t n = L->g.N;
  const double omega = s->so.jacobi_omega;
  if (n == 0) return HPMG_SUCCESS;
  void *cur = L->x, *other = L->d;
  int k = 0;
  if (x_is_zero && sweeps > 0) {
    const int passes = sweeps - 1;
    void *dst = passes % 2 == 0 ? L->x : other;
    HPMG_CALL(hpmg_cuda_op_inverse_diagonal(L->dop, s->real, omega, L->b, dst, NULL));
    cur = dst;
    other = dst == L->x ? L->d : L->x;
    k = 1;
  }
  for (; k < sweeps; k++) {
    HPMG_CALL(smooth_kernel(s, L, cur, other, L->b, NULL, 0.0, omega));
    void *t = cur;
    cur = other;
    other = t;
  }
  if (cur != L->x) HPMG_CALL(vcopy(s->real, n, cur, L->x));
  return HPMG_SUCCESS;
}

/* qk_patch.cu; scratch: L->d. post: the colors run backward if the solver
 * is CG (symmetric V-cycle), as mg.c's smooth() with opt.symmetric */
static hpmg_error patch_apply(hpmg_cuda_solver s, qk_level *L, int x_is_zero, int post, int sweeps) {
  const int64_t m0 = hpmg_cuda_patch_matvecs(L->patch);
  hpmg_error e = hpmg_cuda_patch_apply(L->patch, s->real, L->b, L->x, L->d, x_is_zero,
                                       post && s->so.solver == HPMG_SOLVER_CG, sweeps);
  L->matvecs += hpmg_cuda_patch_matvecs(L->patch) - m0; /* full residuals (global, additive) */
  return e;
}

static hpmg_error smooth(hpmg_cuda_solver s, qk_level *L, int x_is_zero, int post, int sweeps) {
  if (sweeps == 0) {
    if (x_is_zero) QK_CU(cudaMemsetAsync(L->x, 0, (size_t)L->g.N * rsz(s->real)));
    return HPMG_SUCCESS;
  }
  const double t0 = prof_start(s);
  hpmg_error e = s->smoother == HPMG_SMOOTHER_JACOBI ? jacobi_apply(s, L, x_is_zero, sweeps)
                 : s->smoother == HPMG_SMOOTHER_PATCH ? patch_apply(s, L, x_is_zero, post, sweeps)
                                                      : cheb_apply(s, L, x_is_zero, sweeps);
  prof_stop(s, t0, &s->t_smooth, &L->ts);
  return e;
}

/* ----------------------------------------------------------- coarse solve */

/* y = A x, A dense n x n row-major: one warp per row, fixed-order sums */
__global__ void qk_gemv_kernel(int n, const double *__restrict__ A, const double *__restrict__ x, double *__restrict__ y) {
  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= n) return;
  double sum = 0;
  for (int j = lane; j < n; j += 32) sum += A[(int64_t)row * n + j] * x[j];
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
  if (lane == 0) y[row] = sum;
}

static hpmg_error coarse_solve(hpmg_cuda_solver s, const void *b, void *x) {
  qk_level *L = &s->lv[0];
  const int64_t n = L->g.N;
  if (n == 0) return HPMG_SUCCESS;
  double *cb = s->cw[0], *cx = s->cw[1];
  HPMG_CALL(hpmg_cuda_convert(n, s->real, b, HPMG_REAL_DOUBLE, cb));
  if (s->cinv) {
    qk_gemv_kernel<<<(unsigned)((n + 7) / 8), 256>>>((int)n, s->cinv, cb, cx);
    QK_LAUNCH();
  } else { /* Jacobi-preconditioned CG to 1e-14, as mg.c */
    const hpmg_real D = HPMG_REAL_DOUBLE;
    double *r = s->cw[2], *z = s->cw[3], *p = s->cw[4], *q = cb;
    double r0, rz;
    QK_CU(cudaMemsetAsync(cx, 0, sizeof(double) * (size_t)n));
    HPMG_CALL(vcopy(D, n, cb, r));
    HPMG_CALL(hpmg_cuda_norm(D, n, r, &r0));
    HPMG_CALL(hpmg_cuda_op_inverse_diagonal(L->dop, D, 1.0, r, z, p));
    HPMG_CALL(hpmg_cuda_dot(D, n, r, z, &rz));
    for (int64_t it = 0; it < 10 * n + 100 && r0 > 0; it++) {
      const hpmg_kernel_args a = qk_kargs(HPMG_KERNEL_APPLY, p, q, NULL);
      HPMG_CALL(hpmg_cuda_op_kernel(L->dop, D, &a));
      double pq, rr, rz_new;
      HPMG_CALL(hpmg_cuda_dot(D, n, p, q, &pq));
      const double alpha = rz / pq;
      HPMG_CALL(qk_cg_update(n, alpha, p, q, cx, r, &rr));
      if (sqrt(rr) <= 1e-14 * r0) break;
      HPMG_CALL(hpmg_cuda_op_inverse_diagonal(L->dop, D, 1.0, r, z, NULL));
      HPMG_CALL(hpmg_cuda_dot(D, n, r, z, &rz_new));
      HPMG_CALL(hpmg_cuda_xpby(D, n, z, rz_new / rz, p));
      rz = rz_new;
    }
  }
  return hpmg_cuda_convert(n, HPMG_REAL_DOUBLE, cx, s->real, x);
}

/* ----------------------------------------------------------------- V-cycle */

static hpmg_error vcycle(hpmg_cuda_solver s, int l, int x_is_zero) {
  qk_level *L = &s->lv[l];
  const hpmg_real real = s->real;
  if (l == 0) {
    const double t0 = prof_start(s);
    hpmg_error e = coarse_solve(s, L->b, L->x);
    prof_stop(s, t0, &s->t_coarse, NULL);
    return e;
  }
  HPMG_CALL(smooth(s, L, x_is_zero, 0, s->so.pre));
  double t0 = prof_start(s);
  if (x_is_zero && s->so.pre == 0) HPMG_CALL(vcopy(real, L->g.N, L->b, L->r));
  else {
    const hpmg_kernel_args a = qk_kargs(HPMG_KERNEL_RESIDUAL, L->x, L->r, L->b);
    HPMG_CALL(hpmg_cuda_op_kernel(L->dop, real, &a));
    s->mg_matvecs++;
  }
  prof_stop(s, t0, &s->t_op, &L->to);
  t0 = prof_start(s);
  HPMG_CALL(hpmg_cuda_kron3_apply(L->dR, real, L->r, s->lv[l - 1].b, 0, s->tscratch));
  prof_stop(s, t0, &s->t_transfer, &L->tt);
  HPMG_CALL(vcycle(s, l - 1, 1));
  t0 = prof_start(s);
  HPMG_CALL(hpmg_cuda_kron3_apply(L->dP, real, s->lv[l - 1].x, L->x, 1, s->tscratch));
  if (s->so.cycle == HPMG_CYCLE_ADD_RESIDUAL) HPMG_CALL(hpmg_cuda_axpy(real, L->g.N, 1.0, L->r, L->x)); /* as mg.c */
  prof_stop(s, t0, &s->t_transfer, &L->tt);
  return smooth(s, L, 0, 1, s->so.post);
}

/* z = V r in the outer precision (mixed: double r and z, float cycle) */
static hpmg_error precondition(hpmg_cuda_solver s, const void *r, void *z) {
  qk_level *F = &s->lv[s->nlevels - 1];
  if (s->real == s->kreal) {
    F->b = (void *)r;
    F->x = z;
    return vcycle(s, s->nlevels - 1, 1);
  }
  HPMG_CALL(hpmg_cuda_convert(F->g.N, s->kreal, r, s->real, F->b));
  HPMG_CALL(vcycle(s, s->nlevels - 1, 1));
  return hpmg_cuda_convert(F->g.N, s->real, F->x, s->kreal, z);
}

/* finest operator in precision r (outer iteration: s->kreal; true residual: double) */
static hpmg_error outer_kernel_r(hpmg_cuda_solver s, hpmg_real r, hpmg_kernel_mode mode, const void *x, void *y,
                                 const void *b) {
  qk_level *F = &s->lv[s->nlevels - 1];
  const hpmg_kernel_args a = qk_kargs(mode, x, y, b);
  const double t0 = prof_start(s);
  HPMG_CALL(hpmg_cuda_op_kernel(F->dop, r, &a));
  prof_stop(s, t0, &s->t_op, NULL);
  s->outer_matvecs++;
  return HPMG_SUCCESS;
}
static hpmg_error outer_kernel(hpmg_cuda_solver s, hpmg_kernel_mode mode, const void *x, void *y, const void *b) {
  return outer_kernel_r(s, s->kreal, mode, x, y, b);
}

/* krylov.c: hpmg_pcg, with r = b - A x in one fused pass and (double) the
 * x, r updates fused with ||r|| */
static hpmg_error pcg(hpmg_cuda_solver s, const void *b, void *x, hpmg_krylov_info *info) {
  const int64_t n = s->st.dofs;
  const hpmg_real K = s->kreal;
  void *r = s->w[0], *z = s->w[1], *p = s->w[2], *q = s->w[3];
  HPMG_CALL(outer_kernel(s, HPMG_KERNEL_RESIDUAL, x, r, b));
  double rn;
  HPMG_CALL(hpmg_cuda_norm(K, n, r, &rn));
  const double r0 = rn;
  info->r0 = r0;
  info->rnorm = rn;
  info->iterations = 0;
  info->converged = rn == 0.0;
  HPMG_CALL(hpmg_check_residual(rn, 0));
  monitor(s, 0, rn, r0);
  if (info->converged) return HPMG_SUCCESS;
  HPMG_CALL(precondition(s, r, z));
  HPMG_CALL(vcopy(K, n, z, p));
  double rz;
  HPMG_CALL(hpmg_cuda_dot(K, n, r, z, &rz));
  for (int it = 1; it <= s->so.maxit; it++) {
    HPMG_CALL(outer_kernel(s, HPMG_KERNEL_APPLY, p, q, NULL));
    double pq, rr, rz_new;
    HPMG_CALL(hpmg_cuda_dot(K, n, p, q, &pq));
    if (!(pq > 0))
      return hpmg_error_set(HPMG_ERR_NUMERIC, "CG breakdown: p.Ap = %g at iteration %d", pq, it);
    const double alpha = rz / pq;
    if (K == HPMG_REAL_DOUBLE) {
      HPMG_CALL(qk_cg_update(n, alpha, (const double *)p, (const double *)q, (double *)x, (double *)r, &rr));
      rn = sqrt(rr);
    } else {
      HPMG_CALL(hpmg_cuda_axpy(K, n, alpha, p, x));
      HPMG_CALL(hpmg_cuda_axpy(K, n, -alpha, q, r));
      HPMG_CALL(hpmg_cuda_norm(K, n, r, &rn));
    }
    info->iterations = it;
    info->rnorm = rn;
    HPMG_CALL(hpmg_check_residual(rn, it));
    monitor(s, it, rn, r0);
    if (rn <= s->so.tol * r0) {
      info->converged = 1;
      return HPMG_SUCCESS;
    }
    HPMG_CALL(precondition(s, r, z));
    HPMG_CALL(hpmg_cuda_dot(K, n, r, z, &rz_new));
    HPMG_CALL(hpmg_cuda_xpby(K, n, z, rz_new / rz, p));
    rz = rz_new;
  }
  return HPMG_SUCCESS;
}

/* krylov.c: hpmg_richardson */
static hpmg_error richardson(hpmg_cuda_solver s, const void *b, void *x, hpmg_krylov_info *info) {
  const int64_t n = s->st.dofs;
  void *r = s->w[0], *z = s->w[1];
  double r0 = 0.0, ring[HPMG_STAGNATION_WINDOW];
  info->iterations = 0;
  info->converged = 0;
  for (int it = 0;; it++) {
    double rn;
    HPMG_CALL(outer_kernel(s, HPMG_KERNEL_RESIDUAL, x, r, b));
    HPMG_CALL(hpmg_cuda_norm(s->kreal, n, r, &rn));
    HPMG_CALL(hpmg_check_residual(rn, it));
    if (it == 0) r0 = info->r0 = rn;
    info->rnorm = rn;
    info->iterations = it;
    monitor(s, it, rn, r0);
    if (rn <= s->so.tol * r0) {
      info->converged = 1;
      return HPMG_SUCCESS;
    }
    if (it == s->so.maxit || (info->stagnated = hpmg_stagnation(ring, it, rn))) return HPMG_SUCCESS;
    HPMG_CALL(precondition(s, r, z));
    HPMG_CALL(hpmg_cuda_axpy(s->kreal, n, 1.0, z, x));
  }
}

static hpmg_error gmres_vector(hpmg_cuda_solver s, void **slot, const char *what, int j) {
  if (*slot) return HPMG_SUCCESS;
  hpmg_error e = dalloc((size_t)s->st.dofs * rsz(s->kreal), slot);
  if (e == HPMG_ERR_MEMORY)
    return hpmg_error_set(HPMG_ERR_MEMORY, "--device cuda: GMRES(%d) basis vector %s%d does not fit in GPU memory "
                          "(use a smaller --restart)", s->so.restart, what, j);
  return e;
}

/* krylov.c: hpmg_gmres, restarted, right-preconditioned (flexible: the
 * preconditioned vectors z_j are kept, as the CPU), modified Gram-Schmidt in
 * the outer precision on the device; the Givens rotations and the triangular
 * solve on the host. */
static hpmg_error gmres(hpmg_cuda_solver s, const void *b, void *x, hpmg_krylov_info *info) {
  const int64_t n = s->st.dofs;
  const hpmg_real K = s->kreal;
  const int m = s->so.restart;
  const double rtol = s->so.tol;
  const int maxit = s->so.maxit;
  double *H = s->gH, *cs = s->gcs, *sn = s->gsn, *g = s->gg, *y = s->gy;
#define HH(i, j) H[(size_t)(j) * (m + 1) + (i)]
  info->iterations = 0;
  info->converged = 0;
  int it = 0;
  double r0 = 0.0;
  for (;;) { /* restart cycles */
    void *v0 = s->gv[0];
    HPMG_CALL(outer_kernel(s, HPMG_KERNEL_RESIDUAL, x, v0, b)); /* v0 = b - A x */
    double beta;
    HPMG_CALL(hpmg_cuda_norm(K, n, v0, &beta));
    HPMG_CALL(hpmg_check_residual(beta, it));
    if (it == 0) {
      r0 = info->r0 = beta;
      monitor(s, 0, beta, r0);
    }
    info->rnorm = beta;
    if (beta <= rtol * r0 || beta == 0.0) {
      info->converged = 1;
      return HPMG_SUCCESS;
    }
    if (it >= maxit) return HPMG_SUCCESS;
    HPMG_CALL(hpmg_cuda_scale(K, n, 1.0 / beta, v0));
    g[0] = beta;
    int j = 0, done = 0;
    while (!done) {
      HPMG_CALL(gmres_vector(s, &s->gz[j], "z", j));
      HPMG_CALL(gmres_vector(s, &s->gv[j + 1], "v", j + 1));
      HPMG_CALL(precondition(s, s->gv[j], s->gz[j]));
      HPMG_CALL(outer_kernel(s, HPMG_KERNEL_APPLY, s->gz[j], s->gv[j + 1], NULL));
      void *u = s->gv[j + 1];
      for (int i = 0; i <= j; i++) { /* modified Gram-Schmidt */
        HPMG_CALL(hpmg_cuda_dot(K, n, u, s->gv[i], &HH(i, j)));
        HPMG_CALL(hpmg_cuda_axpy(K, n, -HH(i, j), s->gv[i], u));
      }
      double hn;
      HPMG_CALL(hpmg_cuda_norm(K, n, u, &hn));
      HH(j + 1, j) = hn;
      if (hn > 0) HPMG_CALL(hpmg_cuda_scale(K, n, 1.0 / hn, u));
      double rho;
      const double res = hpmg_gmres_rotate(m, H, cs, sn, g, j, &rho);
      it++;
      j++;
      HPMG_CALL(hpmg_check_residual(res, it));
      info->iterations = it;
      info->rnorm = res;
      monitor(s, it, res, r0);
      done = res <= rtol * r0 || it >= maxit || j == m || hn == 0.0;
      if (rho == 0.0)
        return hpmg_error_set(HPMG_ERR_NUMERIC, "GMRES breakdown at iteration %d (singular Hessenberg matrix)", it);
    }
    hpmg_gmres_backsolve(m, H, g, j, y); /* x += Z y */
    for (int i = 0; i < j; i++) HPMG_CALL(hpmg_cuda_axpy(K, n, y[i], s->gz[i], x));
    if (info->rnorm <= rtol * r0) {
      info->converged = 1;
      return HPMG_SUCCESS;
    }
    if (it >= maxit) return HPMG_SUCCESS;
  }
#undef HH
}

/* mg.c: hpmg_mg_fmg on the level vectors (finest b set by the caller):
 * b_c = R b_f down to the coarsest level, coarse solve, then per level
 * x_l = P x_{l-1} and one V-cycle with that start (on the finest level only
 * if finest_cycle) */
static hpmg_error fmg_cycle(hpmg_cuda_solver s, int finest_cycle) {
  const hpmg_real real = s->real;
  for (int l = s->nlevels - 1; l > 0; l--) {
    const double t0 = prof_start(s);
    HPMG_CALL(hpmg_cuda_kron3_apply(s->lv[l].dR, real, s->lv[l].b, s->lv[l - 1].b, 0, s->tscratch));
    prof_stop(s, t0, &s->t_transfer, &s->lv[l].tt);
  }
  HPMG_CALL(vcycle(s, 0, 1));
  for (int l = 1; l < s->nlevels; l++) {
    const double t0 = prof_start(s);
    HPMG_CALL(hpmg_cuda_kron3_apply(s->lv[l].dP, real, s->lv[l - 1].x, s->lv[l].x, 0, s->tscratch));
    prof_stop(s, t0, &s->t_transfer, &s->lv[l].tt);
    if (l < s->nlevels - 1 || finest_cycle) HPMG_CALL(vcycle(s, l, 0));
  }
  return HPMG_SUCCESS;
}

/* solver.c: fmg_solve (paper 000, Algorithm 2): FMG start in the cycle
 * precision, then x += V(b - Ax) in the outer precision while
 * ||b - Ax|| > tol ||b||; at least one V-cycle, the count excludes the start.
 * Mixed precision runs the start's finest cycle as such a correction too. */
static hpmg_error fmg(hpmg_cuda_solver s, const void *b, void *x, hpmg_krylov_info *info) {
  const int64_t n = s->st.dofs;
  const hpmg_real K = s->kreal;
  void *r = s->w[0], *z = s->w[1];
  double r0, ring[HPMG_STAGNATION_WINDOW];
  HPMG_CALL(hpmg_cuda_norm(K, n, b, &r0));
  info->r0 = r0;
  info->iterations = 0;
  info->converged = 0;
  if (!isfinite(r0)) return hpmg_error_set(HPMG_ERR_NUMERIC, "right-hand side norm is %g", r0);
  if (r0 == 0.0) { /* A x = 0 */
    QK_CU(cudaMemsetAsync(x, 0, (size_t)n * rsz(K)));
    info->rnorm = 0.0;
    info->converged = 1;
    return HPMG_SUCCESS;
  }
  qk_level *F = &s->lv[s->nlevels - 1];
  if (s->real != K) {
    const int correct = s->nlevels > 1;
    HPMG_CALL(hpmg_cuda_convert(n, K, b, s->real, F->b));
    HPMG_CALL(fmg_cycle(s, !correct));
    HPMG_CALL(hpmg_cuda_convert(n, s->real, F->x, K, x));
    if (correct) { /* the finest FMG cycle: x += V(b - Ax), residual in the outer precision */
      HPMG_CALL(outer_kernel(s, HPMG_KERNEL_RESIDUAL, x, r, b));
      HPMG_CALL(precondition(s, r, z));
      HPMG_CALL(hpmg_cuda_axpy(K, n, 1.0, z, x));
    }
  } else {
    F->b = (void *)b;
    F->x = x;
    HPMG_CALL(fmg_cycle(s, 1));
  }
  for (int it = 0;; it++) {
    double rn;
    HPMG_CALL(outer_kernel(s, HPMG_KERNEL_RESIDUAL, x, r, b));
    HPMG_CALL(hpmg_cuda_norm(K, n, r, &rn));
    if (!isfinite(rn)) return hpmg_error_set(HPMG_ERR_NUMERIC, "residual became %g after %d V-cycles", rn, it);
    info->rnorm = rn;
    info->iterations = it;
    monitor(s, it, rn, r0);
    if (it > 0 && rn <= s->so.tol * r0) {
      info->converged = 1;
      return HPMG_SUCCESS;
    }
    if (it == s->so.maxit || (info->stagnated = hpmg_stagnation(ring, it, rn))) return HPMG_SUCCESS;
    HPMG_CALL(precondition(s, r, z));
    HPMG_CALL(hpmg_cuda_axpy(K, n, 1.0, z, x));
  }
}

extern "C" hpmg_error hpmg_cuda_solver_solve(hpmg_cuda_solver s, const double *b, double *x, int device_ptrs) {
  HPMG_CHECK_ARG(s && x, "solve: solver and solution must be non-NULL");
  const int64_t n = s->st.dofs;
  const size_t bytes = sizeof(double) * (size_t)n;
  const double *db = b;
  double *dx = x;
  if (!b || !device_ptrs) { /* device copy of b */
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
  s->t_op = s->t_smooth = s->t_transfer = s->t_coarse = 0;
  s->outer_matvecs = s->mg_matvecs = 0;
  s->nhist = 0;
  for (int l = 0; l < s->nlevels; l++) s->lv[l].matvecs = 0, s->lv[l].ts = s->lv[l].to = s->lv[l].tt = 0;
  hpmg_krylov_info info;
  memset(&info, 0, sizeof info);
  const double t0 = qk_now(1);
  /* --precision float: the outer iteration on float copies (as solver.c) */
  const void *kb = db;
  void *kx = dx;
  hpmg_error e = HPMG_SUCCESS;
  if (s->kreal == HPMG_REAL_FLOAT) {
    e = hpmg_cuda_convert(n, HPMG_REAL_DOUBLE, db, HPMG_REAL_FLOAT, s->kb);
    if (!e) e = hpmg_cuda_convert(n, HPMG_REAL_DOUBLE, dx, HPMG_REAL_FLOAT, s->kx);
    kb = s->kb;
    kx = s->kx;
  }
  if (!e) switch (s->so.solver) {
    case HPMG_SOLVER_CG: e = pcg(s, kb, kx, &info); break;
    case HPMG_SOLVER_GMRES: e = gmres(s, kb, kx, &info); break;
    case HPMG_SOLVER_FMG: e = fmg(s, kb, kx, &info); break;
    default: e = richardson(s, kb, kx, &info);
    }
  if (!e && s->kreal == HPMG_REAL_FLOAT) e = hpmg_cuda_convert(n, HPMG_REAL_FLOAT, s->kx, HPMG_REAL_DOUBLE, dx);
  hpmg_stats *st = &s->st;
  st->t_solve = qk_now(1) - t0;
  /* judge convergence by the true residual, in double (as solver.c) */
  double true_res = 0.0;
  if (!e) e = outer_kernel_r(s, HPMG_REAL_DOUBLE, HPMG_KERNEL_RESIDUAL, dx, s->w[3], db);
  s->outer_matvecs--;
  if (!e) e = hpmg_cuda_norm(HPMG_REAL_DOUBLE, n, s->w[3], &true_res);
  if (!device_ptrs) {
    hpmg_error e2 = hpmg_cuda_download(x, dx, bytes);
    if (!e) e = e2;
  }
  st->iterations = info.iterations;
  st->residual0 = info.r0;
  st->residual = e ? info.rnorm : true_res;
  st->converged = info.converged && !(true_res > 10.0 * s->so.tol * info.r0);
  st->rate = info.iterations > 0 && info.r0 > 0 ? pow(st->residual / info.r0, 1.0 / info.iterations) : 0.0;
  st->t_operator = s->t_op;
  st->t_smoother = s->t_smooth;
  st->t_transfer = s->t_transfer;
  st->t_coarse = s->t_coarse;
  st->t_krylov = s->profile ? st->t_solve - st->t_operator - st->t_smoother - st->t_transfer - st->t_coarse : 0.0;
  st->operator_applications = s->outer_matvecs + s->mg_matvecs;
  for (int l = 0; l < s->nlevels; l++) st->operator_applications += s->lv[l].matvecs;
  for (int l = 0; l < s->nlevels && l < HPMG_STATS_MAX_LEVELS; l++) { /* zeros without --profile */
    st->level_dofs[l] = s->lv[l].g.N;
    st->t_level_smoother[l] = s->lv[l].ts;
    st->t_level_operator[l] = s->lv[l].to;
    st->t_level_transfer[l] = s->lv[l].tt;
  }
  HPMG_CALL(e);
  if (!st->converged) return hpmg_not_converged(&info, info.r0 > 0 ? st->residual / info.r0 : 0.0, s->so.tol);
  return HPMG_SUCCESS;
}

extern "C" void hpmg_cuda_solver_get_stats(hpmg_cuda_solver s, hpmg_stats *st) { *st = s->st; }

extern "C" int hpmg_cuda_solver_history(hpmg_cuda_solver s, const double **h) {
  *h = s->hist;
  return s->nhist;
}
extern "C" int64_t hpmg_cuda_solver_num_dofs(hpmg_cuda_solver s) { return s->st.dofs; }
extern "C" int hpmg_cuda_solver_num_levels(hpmg_cuda_solver s) { return s->nlevels; }
extern "C" double hpmg_cuda_solver_lambda_max(hpmg_cuda_solver s, int l) {
  return l >= 1 && l < s->nlevels ? s->lv[l].lmax : 0.0;
}

extern "C" hpmg_error hpmg_cuda_solver_time_operator(hpmg_cuda_solver s, hpmg_real r, hpmg_kernel_mode mode,
                                                     int reps, double *seconds) {
  qk_level *F = &s->lv[s->nlevels - 1];
  const int64_t n = F->g.N;
  HPMG_CHECK_ARG(reps >= 1 && reps <= 1000, "reps must be in 1..1000");
  /* vectors: the outer double vectors hold n doubles = 2n floats each */
  void *x = s->w[0], *y = s->w[1], *b = s->w[2], *d = s->w[3];
  HPMG_CALL(hpmg_cuda_fill_random(r, n, x));
  HPMG_CALL(hpmg_cuda_fill_random(r, n, b));
  HPMG_CALL(hpmg_cuda_fill_random(r, n, d));
  hpmg_kernel_args a = qk_kargs(mode, x, y, b);
  a.d = mode == HPMG_KERNEL_SMOOTH ? d : NULL;
  a.c1 = 0.1;
  a.c2 = 0.2;
  return qk_time_median(reps, [&](int) { return hpmg_cuda_op_kernel(F->dop, r, &a); }, seconds);
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
