/* The Krylov methods of src/la/krylov.c on the host backend, on a 1D
 * variable-coefficient Laplacian (SPD, tridiagonal) with Jacobi
 * preconditioning: CG and flexible CG agree with a fixed preconditioner
 * (same iterations, same solution to rounding); flexible CG converges with a
 * preconditioner that changes at every application; GMRES reaches the same
 * solution, with or without the lent vectors; x0_zero skips exactly one
 * operator application; float vectors converge to float accuracy. */
#include <string.h>
#include "check.h"
#include "la/krylov.h"

#define N 400
#define SHIFT 0.3 /* a reaction term: the condition number stays moderate */
static double coef[N + 1];
static int applies;

static hpmg_error lap(void *ctx, const hpmg_vec *x, hpmg_vec *y) {
  (void)ctx;
  applies++;
  for (int i = 0; i < N; i++) {
    const double xl = i > 0 ? (x->real ? ((float *)x->data)[i - 1] : ((double *)x->data)[i - 1]) : 0.0;
    const double xr = i < N - 1 ? (x->real ? ((float *)x->data)[i + 1] : ((double *)x->data)[i + 1]) : 0.0;
    const double xc = x->real ? ((float *)x->data)[i] : ((double *)x->data)[i];
    const double v = (coef[i] + coef[i + 1] + SHIFT) * xc - coef[i] * xl - coef[i + 1] * xr;
    if (y->real) ((float *)y->data)[i] = (float)v;
    else ((double *)y->data)[i] = v;
  }
  return HPMG_SUCCESS;
}

static int vary; /* 1: every application scales the Jacobi step by a new factor per entry in [0.5, 2] */
static hpmg_error jacobi(void *ctx, const hpmg_vec *r, hpmg_vec *z) {
  (void)ctx;
  for (int i = 0; i < N; i++) {
    const double f = vary ? 1.25 + 0.75 * check_rand() : 1.0;
    const double v = (r->real ? ((float *)r->data)[i] : ((double *)r->data)[i]) * f / (coef[i] + coef[i + 1] + SHIFT);
    if (z->real) ((float *)z->data)[i] = (float)v;
    else ((double *)z->data)[i] = v;
  }
  return HPMG_SUCCESS;
}

static double true_rel_residual(const hpmg_vec *b, const hpmg_vec *x) {
  hpmg_vec r;
  hpmg_vec_create(hpmg_backend_host(), HPMG_REAL_DOUBLE, N, &r);
  hpmg_vec xd;
  hpmg_vec_create(hpmg_backend_host(), HPMG_REAL_DOUBLE, N, &xd);
  hpmg_v_convert(x, &xd);
  lap(NULL, &xd, &r);
  double rr = 0, bb = 0;
  for (int i = 0; i < N; i++) {
    const double bi = b->real ? ((float *)b->data)[i] : ((double *)b->data)[i];
    const double d = bi - ((double *)r.data)[i];
    rr += d * d;
    bb += bi * bi;
  }
  hpmg_vec_destroy(&r);
  hpmg_vec_destroy(&xd);
  return sqrt(rr / bb);
}

static double max_diff(const hpmg_vec *a, const hpmg_vec *b) {
  double m = 0;
  for (int i = 0; i < N; i++) m = fmax(m, fabs(((double *)a->data)[i] - ((double *)b->data)[i]));
  return m;
}

int main(void) {
  const hpmg_backend *H = hpmg_backend_host();
  for (int i = 0; i <= N; i++) coef[i] = 1.0 + 0.9 * sin(0.37 * i) * sin(0.37 * i) + (i > N / 2 ? 50.0 : 0.0);
  hpmg_linop A = {NULL, lap, NULL, NULL}, M = {NULL, jacobi, NULL, NULL};
  hpmg_vec b, x[6], w[4];
  CHECK_OK(hpmg_vec_create(H, HPMG_REAL_DOUBLE, N, &b));
  for (int i = 0; i < N; i++) ((double *)b.data)[i] = check_rand();
  for (int i = 0; i < 6; i++) CHECK_OK(hpmg_vec_create(H, HPMG_REAL_DOUBLE, N, &x[i]));
  for (int i = 0; i < 4; i++) CHECK_OK(hpmg_vec_create(H, HPMG_REAL_DOUBLE, N, &w[i]));
  hpmg_krylov_params prm = {.rtol = 1e-10, .maxit = 5000};
  hpmg_krylov_info cg, fcg, cgz, var, gm, gml;

  CHECK_OK(hpmg_pcg(&A, &M, &b, &x[0], w, 0, &prm, &cg));
  CHECK_OK(hpmg_pcg(&A, &M, &b, &x[1], w, 1, &prm, &fcg));
  CHECK(cg.converged && fcg.converged && true_rel_residual(&b, &x[0]) < 2e-10, "CG converged (%d iterations)",
        cg.iterations);
  CHECK(abs(cg.iterations - fcg.iterations) <= 1, "fixed preconditioner: CG %d, flexible CG %d iterations",
        cg.iterations, fcg.iterations);
  CHECK(max_diff(&x[0], &x[1]) < 1e-8, "CG and flexible CG solutions differ by %.2e", max_diff(&x[0], &x[1]));

  applies = 0;
  CHECK_OK(hpmg_pcg(&A, &M, &b, &x[2], w, 0, &prm, &cg)); /* x[2] = 0: one residual matvec */
  const int with_residual = applies;
  prm.x0_zero = 1;
  applies = 0;
  CHECK_OK(hpmg_pcg(&A, &M, &b, &x[3], w, 0, &prm, &cgz));
  CHECK(applies == with_residual - 1 && cgz.iterations == cg.iterations && max_diff(&x[2], &x[3]) == 0.0,
        "x0_zero: %d applications (else %d), same iterates", applies, with_residual);
  prm.x0_zero = 0;

  vary = 1;
  hpmg_v_zero(&x[4]);
  CHECK_OK(hpmg_pcg(&A, &M, &b, &x[4], w, 1, &prm, &var));
  CHECK(var.converged && true_rel_residual(&b, &x[4]) < 1e-9 && var.iterations <= 5 * cg.iterations,
        "variable preconditioner: flexible CG %d iterations (fixed: %d), residual %.2e", var.iterations,
        cg.iterations, true_rel_residual(&b, &x[4]));
  hpmg_krylov_info varcg; /* plain CG loses its conjugacy: it does not get there in 3x as many iterations */
  hpmg_v_zero(&x[5]);
  prm.maxit = 3 * var.iterations;
  CHECK_OK(hpmg_pcg(&A, &M, &b, &x[5], w, 0, &prm, &varcg));
  CHECK(!varcg.converged, "variable preconditioner: plain CG converged in %d iterations", varcg.iterations);
  prm.maxit = 5000;
  vary = 0;

  hpmg_gmres_work gw, gwl;
  CHECK_OK(hpmg_gmres_work_create(30, NULL, 0, &gw));
  CHECK_OK(hpmg_gmres_work_create(30, w, 4, &gwl));
  hpmg_v_zero(&x[4]);
  hpmg_v_zero(&x[5]);
  CHECK_OK(hpmg_gmres(&A, &M, &b, &x[4], &gw, &prm, &gm));
  CHECK_OK(hpmg_gmres(&A, &M, &b, &x[5], &gwl, &prm, &gml));
  CHECK(gm.converged && max_diff(&x[4], &x[0]) < 1e-7, "GMRES(30): %d iterations, differs from CG by %.2e",
        gm.iterations, max_diff(&x[4], &x[0]));
  CHECK(gml.iterations == gm.iterations && max_diff(&x[4], &x[5]) == 0.0, "GMRES with lent vectors: same iterates");
  hpmg_gmres_work_destroy(&gw);
  hpmg_gmres_work_destroy(&gwl);

  hpmg_vec bf, xf, wf[4]; /* float: the recursive residual to 1e-5 */
  CHECK_OK(hpmg_vec_create(H, HPMG_REAL_FLOAT, N, &bf));
  CHECK_OK(hpmg_vec_create(H, HPMG_REAL_FLOAT, N, &xf));
  for (int i = 0; i < 4; i++) CHECK_OK(hpmg_vec_create(H, HPMG_REAL_FLOAT, N, &wf[i]));
  CHECK_OK(hpmg_v_convert(&b, &bf));
  prm.rtol = 1e-5;
  hpmg_krylov_info fl;
  CHECK_OK(hpmg_pcg(&A, &M, &bf, &xf, wf, 0, &prm, &fl));
  CHECK(fl.converged && true_rel_residual(&bf, &xf) < 1e-4, "float CG: %d iterations, true residual %.2e",
        fl.iterations, true_rel_residual(&bf, &xf));
  printf("CG %d, flexible CG %d; variable preconditioner: flexible CG %d, CG not after %d; GMRES(30) %d, float CG %d "
         "iterations\n", cg.iterations, fcg.iterations, var.iterations, varcg.iterations, gm.iterations, fl.iterations);
  hpmg_vec_destroy(&b);
  hpmg_vec_destroy(&bf);
  hpmg_vec_destroy(&xf);
  for (int i = 0; i < 6; i++) hpmg_vec_destroy(&x[i]);
  for (int i = 0; i < 4; i++) hpmg_vec_destroy(&w[i]), hpmg_vec_destroy(&wf[i]);
  return check_report();
}
