/* Every CPU kernel variant this processor runs (core/isa.h) against the
 * reference, the architecture's baseline variant (sse2 on x86-64, neon on
 * aarch64): the same results to rounding, and bitwise among variants that
 * evaluate the same expressions in the same order. That holds for every
 * kernel that computes each output element on its own (operator with its
 * fused epilogues, diagonal, Gauss-Seidel, transfers, patch sweeps, FD
 * stencils, smoothers and transfers) between variants that agree on fused
 * multiply-adds; reductions (dot products, norms) sum in another order at
 * another SIMD width and agree to rounding only. A whole FMG solve with each
 * variant needs the same iterations and reaches the same solution.
 * usage: test_isa */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/isa.h"
#include "la/vec.h"
#include "disc/qk/transfer.h"
#include "disc/fd/fd_stencil.h"
#include "disc/qk/patch.h"

static void *rand_vec(hpmg_real r, int64_t n) {
  void *v = malloc((size_t)(n > 0 ? n : 1) * hpmg_real_size(r));
  for (int64_t i = 0; i < n; i++) {
    if (r == HPMG_REAL_DOUBLE) ((double *)v)[i] = 0.5 * check_rand();
    else ((float *)v)[i] = (float)0.5 * check_rand();
  }
  return v;
}
static double get(hpmg_real r, const void *v, int64_t i) {
  return r == HPMG_REAL_DOUBLE ? ((const double *)v)[i] : ((const float *)v)[i];
}

/* The variants under test and the two comparisons of a result. */
static int nvar, var[HPMG_ISA_COUNT], ref;
static const char *cur = "";

/* compare a variant's result with the reference's: bitwise if `bitwise`,
 * else |a - b| <= tol max|ref| */
static void compare(const char *what, hpmg_real r, int64_t n, const void *ref_v, const void *v, int bitwise,
                    double tol) {
  if (bitwise) {
    CHECK(!memcmp(ref_v, v, (size_t)n * hpmg_real_size(r)), "%s [%s] differs bitwise from %s", what, cur,
          hpmg_isa_get(ref)->name);
    return;
  }
  double scale = 0, diff = 0;
  for (int64_t i = 0; i < n; i++) {
    scale = fmax(scale, fabs(get(r, ref_v, i)));
    diff = fmax(diff, fabs(get(r, ref_v, i) - get(r, v, i)));
  }
  CHECK(diff <= tol * fmax(scale, 1e-300), "%s [%s] differs from %s by %.3e (scale %.3e, tolerance %.1e)", what, cur,
        hpmg_isa_get(ref)->name, diff, scale, tol);
}
/* rounding-level tolerance of a precision */
static double tol_of(hpmg_real r) { return r == HPMG_REAL_DOUBLE ? 1e-12 : 2e-5; }

/* Run `run(ctx, out)` with the reference and every other variant; compare
 * outputs of n entries: bitwise where both agree on FMA and `elementwise`. */
typedef void (*run_fn)(void *ctx, void *out);
static void across_tol(const char *what, hpmg_real r, int64_t n, int elementwise, run_fn run, void *ctx, double tol) {
  const size_t bytes = (size_t)(n > 0 ? n : 1) * hpmg_real_size(r);
  void *R = calloc(1, bytes), *V = calloc(1, bytes);
  hpmg_isa_select(hpmg_isa_get(ref)->name);
  run(ctx, R);
  for (int t = 0; t < nvar; t++) {
    if (var[t] == ref) continue;
    cur = hpmg_isa_get(var[t])->name;
    hpmg_isa_select(cur);
    memset(V, 0, bytes);
    run(ctx, V);
    const int same_fma = hpmg_isa_get(var[t])->fma == hpmg_isa_get(ref)->fma;
    compare(what, r, n, R, V, elementwise && same_fma, tol);
  }
  free(R);
  free(V);
}
static void across(const char *what, hpmg_real r, int64_t n, int elementwise, run_fn run, void *ctx) {
  across_tol(what, r, n, elementwise, run, ctx, tol_of(r));
}
/* The same among the FMA variants only, bitwise against the first of them
 * (the reference may lack FMA: sse2). */
static void across_fma(const char *what, hpmg_real r, int64_t n, run_fn run, void *ctx) {
  int first = -1;
  const size_t bytes = (size_t)(n > 0 ? n : 1) * hpmg_real_size(r);
  void *R = calloc(1, bytes), *V = calloc(1, bytes);
  for (int t = 0; t < nvar; t++) {
    if (!hpmg_isa_get(var[t])->fma) continue;
    hpmg_isa_select(hpmg_isa_get(var[t])->name);
    if (first < 0) {
      first = var[t];
      run(ctx, R);
      continue;
    }
    cur = hpmg_isa_get(var[t])->name;
    memset(V, 0, bytes);
    run(ctx, V);
    CHECK(!memcmp(R, V, bytes), "%s [%s] differs bitwise from %s", what, cur, hpmg_isa_get(first)->name);
  }
  free(R);
  free(V);
}
static void both(const char *what, hpmg_real r, int64_t n, int elementwise, run_fn run, void *ctx) {
  across(what, r, n, elementwise, run, ctx);
  if (elementwise) across_fma(what, r, n, run, ctx);
}

/* ------------------------------------------------------------ operator */
typedef struct {
  const hpmg_laplace *op;
  hpmg_real r;
  hpmg_kernel_mode mode;
  int with_d;
  const void *x, *b, *d;
  const hpmg_kron3 *T;
  int add, reverse;
  const hpmg_patch_options *po;
  int simd;
} qk_ctx;

/* y, then (with d) the updated d in out[N..2N) */
static void run_kernel(void *c, void *out) {
  qk_ctx *q = c;
  const int64_t N = q->op->g.N;
  const size_t bytes = (size_t)N * hpmg_real_size(q->r);
  void *d = q->with_d ? (char *)out + bytes : NULL;
  if (d) memcpy(d, q->d, bytes);
  hpmg_kernel_args a = {.mode = q->mode, .x = q->x, .y = out, .b = q->b, .d = d, .c1 = 0.3, .c2 = 0.7};
  hpmg_laplace_kernel(q->op, q->r, &a);
}
/* the fused kernel in every mode (smooth with and without d) on q, each
 * variant against the reference; name: the case */
static void kernel_modes(const char *name, qk_ctx *q, int64_t N) {
  const char *modes[] = {"apply", "residual", "smooth"};
  char what[200];
  for (int m = 0; m < 3; m++)
    for (int wd = 0; wd < (m == 2 ? 2 : 1); wd++) {
      q->mode = (hpmg_kernel_mode)m;
      q->with_d = wd;
      snprintf(what, sizeof what, "%s operator %s%s", name, modes[m], wd ? " with d" : "");
      both(what, q->r, wd ? 2 * N : N, 1, run_kernel, q);
    }
}
static void run_dinv(void *c, void *out) {
  qk_ctx *q = c;
  hpmg_laplace_inverse_diagonal(q->op, q->r, 0.9, q->x, out, NULL);
}
static void run_gs(void *c, void *out) {
  qk_ctx *q = c;
  memcpy(out, q->x, (size_t)q->op->g.N * hpmg_real_size(q->r));
  hpmg_laplace_gauss_seidel(q->op, q->r, q->b, out, NULL, q->reverse);
}
static void run_kron(void *c, void *out) {
  qk_ctx *q = c;
  const hpmg_kron3 *T = q->T;
  const int64_t n = (int64_t)T->A[0].nrows * T->A[1].nrows * T->A[2].nrows;
  if (q->add) memcpy(out, q->b, (size_t)n * hpmg_real_size(q->r));
  hpmg_kron3_apply(T, q->r, q->x, out, q->add);
}
static void run_patch(void *c, void *out) {
  qk_ctx *q = c;
  hpmg_smoother *s = NULL;
  if (hpmg_smoother_patch(q->op, q->r, q->po, &s)) {
    CHECK(0, "patch smoother setup: %s", hpmg_last_error());
    hpmg_smoother_destroy(&s);
    return;
  }
  hpmg_patch_set_simd(s, q->simd);
  memcpy(out, q->x, (size_t)q->op->g.N * hpmg_real_size(q->r));
  s->apply(s, q->b, out, 0, 0, 2);
  hpmg_smoother_destroy(&s);
}

static void qk_case(int dim, int k, int64_t c0, int64_t c1, int64_t c2, double lambda) {
  const int64_t cells[3] = {c0, c1, c2}, cc[3] = {c0 / 2, c1 / 2, c2 / 2};
  const double box[3] = {1.0, 0.7, 1.3};
  hpmg_grid g, gc;
  hpmg_laplace op;
  hpmg_kron3 P, R;
  if (hpmg_grid_init(dim, k, cells, box, &g) || hpmg_laplace_create(&g, lambda, &op) ||
      hpmg_grid_init(dim, k, cc, box, &gc) || hpmg_transfer_create(&gc, &P, &R)) {
    CHECK(0, "setup %dD Q%d: %s", dim, k, hpmg_last_error());
    return;
  }
  char what[160];
  for (int ri = 0; ri < 2; ri++) {
    const hpmg_real r = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
    const char *pn = ri ? "float" : "double";
    void *x = rand_vec(r, g.N), *b = rand_vec(r, g.N), *d = rand_vec(r, g.N), *xc = rand_vec(r, gc.N);
    qk_ctx q = {.op = &op, .r = r, .x = x, .b = b, .d = d};
    snprintf(what, sizeof what, "%dD Q%d %lldx%lldx%lld %s", dim, k, (long long)c0, (long long)c1, (long long)c2, pn);
    kernel_modes(what, &q, g.N);
    snprintf(what, sizeof what, "%dD Q%d %s inverse diagonal", dim, k, pn);
    both(what, r, g.N, 1, run_dinv, &q);
    if (g.N <= 20000)
      for (int rev = 0; rev < 2; rev++) {
        q.reverse = rev;
        snprintf(what, sizeof what, "%dD Q%d %s Gauss-Seidel %s", dim, k, pn, rev ? "backward" : "forward");
        both(what, r, g.N, 1, run_gs, &q);
      }
    for (int add = 0; add < 2; add++) {
      qk_ctx t = {.r = r, .T = &P, .x = xc, .b = b, .add = add};
      snprintf(what, sizeof what, "%dD Q%d %s prolongation%s", dim, k, pn, add ? " (add)" : "");
      both(what, r, g.N, 1, run_kron, &t);
      qk_ctx u = {.r = r, .T = &R, .x = x, .b = xc, .add = add};
      snprintf(what, sizeof what, "%dD Q%d %s restriction%s", dim, k, pn, add ? " (add)" : "");
      both(what, r, gc.N, 1, run_kron, &u);
    }
    if (c0 >= 2 && c1 >= 2 && (dim == 2 || c2 >= 2))
      for (int mode = 0; mode < 2; mode++)
        for (int simd = mode; simd < 2; simd++) {
          hpmg_patch_options po = {.mode = mode ? HPMG_PATCH_ADDITIVE : HPMG_PATCH_MULTIPLICATIVE,
                                   .local = HPMG_LOCAL_FDM, .order = HPMG_PATCH_ORDER_ZORDER};
          q.po = &po;
          q.simd = simd;
          snprintf(what, sizeof what, "%dD Q%d %s patch sweep %s%s", dim, k, pn, mode ? "additive" : "multiplicative",
                   mode ? "" : simd ? " (SIMD over patches)" : " (one patch at a time)");
          both(what, r, g.N, 1, run_patch, &q);
        }
    free(x);
    free(b);
    free(d);
    free(xc);
  }
  hpmg_laplace_destroy(&op);
  hpmg_kron3_destroy(&P);
  hpmg_kron3_destroy(&R);
}

/* The operator on a box periodic in the directions of `per` (bit d), the
 * others Neumann: the kernel plus the wrap pass (laplace.c: the kernel on
 * the gathered boundary layers) in every fused mode, and Gauss-Seidel
 * (hpmg_laplace_row, the wrap included). */
static void qk_periodic_case(int dim, int k, int64_t c0, int64_t c1, int64_t c2, double lambda, int per) {
  const int64_t cells[3] = {c0, c1, c2};
  const double box[3] = {1.0, 0.7, 1.3};
  hpmg_grid g;
  hpmg_laplace op;
  if (hpmg_grid_init(dim, k, cells, box, &g)) {
    CHECK(0, "setup %dD Q%d: %s", dim, k, hpmg_last_error());
    return;
  }
  for (int d = 0; d < dim; d++) {
    g.bc[2 * d] = g.bc[2 * d + 1] = per >> d & 1 ? HPMG_BC_PERIODIC : HPMG_BC_NEUMANN;
    const hpmg_dir1d L = hpmg_grid_dir(&g, d);
    g.n[d] = hpmg_dir1d_n(&L);
    g.off[d] = hpmg_dir1d_off(&L);
  }
  g.N = g.n[0] * g.n[1] * g.n[2];
  if (hpmg_laplace_create(&g, lambda, &op)) {
    CHECK(0, "setup %dD Q%d periodic %d: %s", dim, k, per, hpmg_last_error());
    return;
  }
  char what[160];
  for (int ri = 0; ri < 2; ri++) {
    const hpmg_real r = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
    const char *pn = ri ? "float" : "double";
    void *x = rand_vec(r, g.N), *b = rand_vec(r, g.N), *d = rand_vec(r, g.N);
    qk_ctx q = {.op = &op, .r = r, .x = x, .b = b, .d = d};
    snprintf(what, sizeof what, "%dD Q%d %lldx%lldx%lld periodic %d %s", dim, k, (long long)c0, (long long)c1,
             (long long)c2, per, pn);
    kernel_modes(what, &q, g.N);
    q.reverse = 0;
    snprintf(what, sizeof what, "%dD Q%d periodic %d %s Gauss-Seidel", dim, k, per, pn);
    both(what, r, g.N, 1, run_gs, &q);
    free(x);
    free(b);
    free(d);
  }
  hpmg_laplace_destroy(&op);
}

/* ------------------------------------------------------------- vectors */
typedef struct {
  hpmg_real r;
  int64_t n;
  const void *x, *y;
  int which;
} vec_ctx;
static void run_vec(void *c, void *out) {
  vec_ctx *v = c;
  const size_t bytes = (size_t)v->n * hpmg_real_size(v->r);
  memcpy(out, v->y, bytes);
  switch (v->which) {
  case 0: hpmg_vec_axpy(v->r, v->n, 0.37, v->x, out); break;
  case 1: hpmg_vec_xpby(v->r, v->n, v->x, -1.7, out); break;
  case 2: hpmg_vec_scale(v->r, v->n, 2.3, out); break;
  }
}
static void run_dot(void *c, void *out) {
  vec_ctx *v = c;
  ((double *)out)[0] = hpmg_vec_dot(v->r, v->n, v->x, v->y);
  ((double *)out)[1] = hpmg_vec_norm(v->r, v->n, v->x);
  ((double *)out)[2] = (double)hpmg_vec_count_nonfinite(v->r, v->n, v->x);
}
static void vec_cases(void) {
  const int64_t n = 100003;
  char what[96];
  for (int ri = 0; ri < 2; ri++) {
    const hpmg_real r = ri ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
    void *x = rand_vec(r, n), *y = rand_vec(r, n);
    vec_ctx v = {.r = r, .n = n, .x = x, .y = y};
    const char *names[] = {"axpy", "xpby", "scale"};
    for (v.which = 0; v.which < 3; v.which++) {
      snprintf(what, sizeof what, "%s %s", ri ? "float" : "double", names[v.which]);
      both(what, r, n, 1, run_vec, &v);
    }
    snprintf(what, sizeof what, "%s dot, norm, non-finite count", ri ? "float" : "double");
    across_tol(what, HPMG_REAL_DOUBLE, 3, 0, run_dot, &v, tol_of(r)); /* sums of r-precision data */
    free(x);
    free(y);
  }
}

/* ------------------------------------------------------ finite differences */
typedef struct {
  fd_prec p;
  int dim, which;
  int64_t n;
  const void *u, *f, *uc;
} fd_ctx;
static void run_fd(void *c, void *out) {
  fd_ctx *q = c;
  const fd_ops *o = fd_ops_cpu(q->p);
  const int64_t N = fd_points(q->dim, q->n);
  const size_t bytes = (size_t)N * fd_prec_size(q->p);
  void *tmp = calloc(1, bytes), *u = out;
  switch (q->which) {
  case 0: o->residual(q->dim, q->n, q->u, q->f, out); break;
  case 1: o->apply(q->dim, q->n, q->u, out); break;
  case 2: case 3: case 4: case 5: case 6: { /* smoothers: jacobi, rbgs, mcgs, mcgs SOR backward, rbgs SOR */
    const fd_smoother_kind kind[] = {FD_SMOOTH_JACOBI, FD_SMOOTH_RBGS, FD_SMOOTH_MCGS, FD_SMOOTH_MCGS, FD_SMOOTH_RBGS};
    const double omega[] = {0.8, 1.0, 1.0, 1.3, 1.3};
    memcpy(u, q->u, bytes);
    o->smooth(q->dim, q->n, kind[q->which - 2], omega[q->which - 2], 2, q->which == 5, &u, q->f, &tmp);
    if (u != out) memcpy(out, u, bytes);
  } break;
  case 7: o->restrict_rhs(q->dim, q->n, q->u, out); break; /* out: the coarse level */
  case 8: o->prolong(q->dim, q->n, q->uc, out, 0); break;
  case 9: memcpy(out, q->u, bytes); o->prolong(q->dim, q->n, q->uc, out, 1); break;
  case 10: o->prolong_cubic(q->dim, q->n, q->uc, out); break;
  }
  free(tmp == out ? u : tmp);
}
static void run_fd_norm(void *c, void *out) {
  fd_ctx *q = c;
  const fd_ops *o = fd_ops_cpu(q->p);
  o->residual_norm(q->dim, q->n, q->u, q->f, (double *)out);
}
/* random interior values, zero boundary */
static void *fd_rand(fd_prec p, int dim, int64_t n) {
  const int64_t N = fd_points(dim, n), s1 = n + 1;
  void *v = calloc((size_t)N, fd_prec_size(p));
  for (int64_t c = 0; c < N; c++) {
    const int64_t i = c % s1, j = (c / s1) % s1, k = dim == 3 ? c / (s1 * s1) : 1;
    if (i > 0 && i < n && j > 0 && j < n && k > 0 && (dim == 2 || k < n)) {
      if (p == FD_DOUBLE) ((double *)v)[c] = 0.5 * check_rand();
      else ((float *)v)[c] = (float)0.5 * check_rand();
    }
  }
  return v;
}
static void fd_cases(int dim, int64_t n) {
  const char *names[] = {"residual", "apply", "Jacobi", "red-black GS", "multicolor GS", "multicolor SOR backward",
                         "red-black SOR", "restriction", "prolongation", "prolongation (add)", "cubic interpolation"};
  char what[96];
  for (int pi = 0; pi < 2; pi++) {
    const fd_prec p = pi ? FD_FLOAT : FD_DOUBLE;
    const hpmg_real r = pi ? HPMG_REAL_FLOAT : HPMG_REAL_DOUBLE;
    void *u = fd_rand(p, dim, n), *f = fd_rand(p, dim, n), *uc = fd_rand(p, dim, n / 2);
    fd_ctx q = {.p = p, .dim = dim, .n = n, .u = u, .f = f, .uc = uc};
    for (q.which = 0; q.which <= 10; q.which++) {
      snprintf(what, sizeof what, "FD %dD n=%lld %s %s", dim, (long long)n, pi ? "float" : "double", names[q.which]);
      both(what, r, q.which == 7 ? fd_points(dim, n / 2) : fd_points(dim, n), 1, run_fd, &q);
    }
    snprintf(what, sizeof what, "FD %dD n=%lld %s residual norm", dim, (long long)n, pi ? "float" : "double");
    across_tol(what, HPMG_REAL_DOUBLE, 1, 0, run_fd_norm, &q, tol_of(r));
    free(u);
    free(f);
    free(uc);
  }
}

/* ------------------------------------------------------------ whole solve */
static void solve_case(int dim, int k, int refine, hpmg_smoother_kind sm, hpmg_precision prec) {
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.dim = dim;
  po.degree = k;
  po.refine = refine;
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.smoother = sm;
  so.precision = prec;
  so.solver = HPMG_SOLVER_FMG;
  double *x0 = NULL;
  int it0 = -1;
  for (int t = 0; t < nvar; t++) {
    hpmg_isa_select(hpmg_isa_get(var[t])->name);
    hpmg_problem prob;
    hpmg_solver s;
    if (hpmg_problem_create(&po, &prob) || hpmg_solver_create(prob, &so, &s)) {
      CHECK(0, "solve setup: %s", hpmg_last_error());
      return;
    }
    const int64_t n = hpmg_problem_num_dofs(prob);
    double *x = calloc((size_t)n, sizeof *x);
    const hpmg_error e = hpmg_solver_solve(s, NULL, x);
    hpmg_stats st;
    hpmg_solver_get_stats(s, &st);
    CHECK(!e && st.converged, "%dD Q%d solve with %s did not converge", dim, k, hpmg_isa_get(var[t])->name);
    if (!x0) {
      x0 = x;
      it0 = st.iterations;
    } else {
      CHECK(st.iterations == it0, "%dD Q%d FMG iterations %s %d, %s %d", dim, k, hpmg_isa_get(var[0])->name, it0,
            hpmg_isa_get(var[t])->name, st.iterations);
      double dm = 0, sc = 0;
      for (int64_t i = 0; i < n; i++) {
        dm = fmax(dm, fabs(x[i] - x0[i]));
        sc = fmax(sc, fabs(x0[i]));
      }
      CHECK(dm <= 1e-8 * sc, "%dD Q%d solution with %s differs by %.2e", dim, k, hpmg_isa_get(var[t])->name, dm);
      free(x);
    }
    hpmg_solver_destroy(&s);
    hpmg_problem_destroy(&prob);
  }
  free(x0);
}

int main(void) {
  if (hpmg_isa_check_env()) {
    printf("FAIL: %s\n", hpmg_last_error());
    return 1;
  }
  const int initial = hpmg_isa_index();
  for (int i = 0; i < HPMG_ISA_COUNT; i++) {
    const hpmg_isa_info *v = hpmg_isa_get(i);
    printf("variant %-7s level %-7s %2d-byte vectors %2d registers fma %d: %s\n", v->name, v->level, v->vbytes,
           v->vregs, v->fma, hpmg_isa_runs(i) ? "runs here" : "not on this processor");
    if (hpmg_isa_runs(i)) var[nvar++] = i;
  }
  ref = HPMG_ISA_COUNT - 1; /* the baseline, last in the list */
  CHECK(hpmg_isa_runs(ref), "the baseline variant %s does not run", hpmg_isa_get(ref)->name);
  CHECK(!strcmp(hpmg_cpu_isa(), hpmg_isa_get(initial)->name), "hpmg_cpu_isa() names the variant in use");
  CHECK(hpmg_set_cpu_isa("no-such-isa") == HPMG_ERR_ARG, "an unknown variant is refused");
  printf("reference: %s; %d variants run here\n", hpmg_isa_get(ref)->name, nvar);

  /* lines shorter than a vector, than a chunk, partial chunks, 2D and 3D */
  qk_case(2, 1, 3, 2, 1, 0.0);
  qk_case(2, 3, 9, 6, 1, 1.5);
  qk_case(2, 7, 12, 4, 1, 0.0);
  qk_case(3, 1, 6, 5, 4, 0.0);
  qk_case(3, 2, 4, 3, 2, 2.0);
  qk_case(3, 4, 5, 4, 4, 0.0);
  qk_case(3, 5, 2, 2, 2, 0.0);
  qk_periodic_case(2, 3, 13, 4, 1, 0.0, 3);
  qk_periodic_case(3, 2, 9, 3, 2, 0.5, 1);
  qk_periodic_case(3, 3, 6, 3, 4, 0.0, 5);
  qk_periodic_case(3, 4, 3, 2, 2, 0.0, 7);
  vec_cases();
  fd_cases(2, 24);
  fd_cases(3, 16);
  fd_cases(3, 70); /* above FD_PAR_MIN: the threaded paths */
  solve_case(3, 3, 3, HPMG_SMOOTHER_AUTO, HPMG_PREC_DOUBLE);
  solve_case(2, 6, 4, HPMG_SMOOTHER_PATCH, HPMG_PREC_MIXED);
  hpmg_isa_select(hpmg_isa_get(initial)->name);
  return check_report();
}
