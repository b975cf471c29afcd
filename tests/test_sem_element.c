/* Spectral-element building blocks (src/disc/sem): 1D standard matrices, the
 * matrix-free element operator against its Kronecker form, the O(p^dim)
 * condensed operator against the Schur complement formed with LAPACKE, and
 * condensation + interior recovery against the element system; the
 * SIMD kernels of the condensed operator against the single-element one. */
#include <lapacke.h>
#include <math.h>
#include <string.h>
#include "check.h"
#include "test_env.h"
#include "disc/sem/sem_element.h"
#include "disc/sem/sem_kernels.h"
#include "fem/fem.h"

/* entry (i, j) of H_e = sum of Kronecker products (x1 fastest, last factor on x1) */
static double H_entry(const hpmg_sem_element *el, const double *d, int i, int j) {
  const int n = el->n;
  int a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
  for (int k = 0; k < el->dim; k++) {
    a[k] = i % n;
    b[k] = j % n;
    i /= n;
    j /= n;
  }
  const double *M = el->M, *L = el->L;
  double v = 0.0;
  int same = 1;
  for (int k = 0; k < el->dim; k++) same &= a[k] == b[k];
  if (same) {
    double mm = 1.0;
    for (int k = 0; k < el->dim; k++) mm *= M[a[k]];
    v += d[0] * mm;
  }
  for (int k = 0; k < el->dim; k++) { /* L along x_{k+1}, M elsewhere */
    int ok = 1;
    double mm = 1.0;
    for (int l = 0; l < el->dim; l++)
      if (l != k) {
        ok &= a[l] == b[l];
        mm *= M[a[l]];
      }
    if (ok) v += d[k + 1] * mm * L[a[k] * n + b[k]];
  }
  return v;
}

static double norm2(int len, const double *x) {
  double s = 0.0;
  for (int i = 0; i < len; i++) s += x[i] * x[i];
  return sqrt(s);
}

static double rel_diff(int len, const double *x, const double *ref) {
  double s = 0.0;
  for (int i = 0; i < len; i++) s += (x[i] - ref[i]) * (x[i] - ref[i]);
  double r = norm2(len, ref);
  return sqrt(s) / (r > 0 ? r : 1.0);
}

static int test_1d(int p) {
  hpmg_sem_element el;
  CHECK_OK(hpmg_sem_element_create(2, p, &el));
  const int n = el.n, m = el.m;
  double sw = 0.0, lmax = 0.0, rowsum = 0.0;
  for (int i = 0; i < n; i++) {
    sw += el.M[i];
    double s = 0.0;
    for (int j = 0; j < n; j++) {
      s += el.L[i * n + j];
      lmax = fmax(lmax, fabs(el.L[i * n + j]));
      CHECK(el.L[i * n + j] == el.L[j * n + i], "p=%d: L_S not symmetric at (%d,%d)", p, i, j);
    }
    rowsum = fmax(rowsum, fabs(s));
  }
  CHECK_CLOSE(sw, 2.0, 1e-14, 2.0, "sum of M_S");
  CHECK(rowsum <= 1e-13 * lmax, "p=%d: |L_S 1| = %g", p, rowsum);
  CHECK(el.x[0] == -1.0 && el.x[p] == 1.0, "p=%d: GLL end nodes", p);
  /* quadrature: sum w x^k = int x^k for k <= 2p-1; stiffness: x^a L x^b = int a b x^{a+b-2} */
  for (int k = 0; k <= 2 * p - 1; k++) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += el.w[i] * pow(el.x[i], k);
    double exact = k % 2 ? 0.0 : 2.0 / (k + 1);
    CHECK_CLOSE(s, exact, 1e-13, 1.0, "GLL quadrature of x^k");
  }
  for (int a = 0; a <= p; a++)
    for (int b = 0; b <= p; b++) {
      double s = 0.0;
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) s += pow(el.x[i], a) * el.L[i * n + j] * pow(el.x[j], b);
      int e = a + b - 2;
      double exact = (a == 0 || b == 0 || e % 2) ? 0.0 : 2.0 * a * b / (e + 1);
      CHECK_CLOSE(s, exact, 1e-11, fabs(exact), "x^a L_S x^b");
    }
  /* the exact-integration stiffness of src/fem on a cell of length 2 (k <= 15) */
  if (p <= 15) {
    double K[16 * 16];
    hpmg_element_stiffness(p, 2.0, K);
    double diff = 0.0;
    for (int i = 0; i < n * n; i++) diff = fmax(diff, fabs(K[i] - el.L[i]));
    CHECK(diff <= 1e-12 * lmax, "p=%d: L_S vs hpmg_element_stiffness: %g", p, diff);
  }
  /* fast diagonalization: S^T L_II S = Lambda, S^T M_II S = I, Sinv S = I */
  double e1 = 0.0, e2 = 0.0, e3 = 0.0;
  for (int k = 0; k < m; k++)
    for (int l = 0; l < m; l++) {
      double sl = 0.0, sm = 0.0, si = 0.0;
      for (int i = 0; i < m; i++) {
        sm += el.S[i * m + k] * el.M[i + 1] * el.S[i * m + l];
        si += el.Sinv[k * m + i] * el.S[i * m + l];
        for (int j = 0; j < m; j++) sl += el.S[i * m + k] * el.L[(i + 1) * n + j + 1] * el.S[j * m + l];
      }
      e1 = fmax(e1, fabs(sl - (k == l ? el.lam[k] : 0.0)) / el.lam[m - 1]);
      e2 = fmax(e2, fabs(sm - (k == l)));
      e3 = fmax(e3, fabs(si - (k == l)));
    }
  CHECK(e1 < 1e-12 && e2 < 1e-12 && e3 < 1e-12, "p=%d: FDM identities %g %g %g", p, e1, e2, e3);
  CHECK(el.lam[0] > 0, "p=%d: smallest interior eigenvalue %g", p, el.lam[0]);
  hpmg_sem_element_free(&el);
  return 0;
}

/* boundary map + interior map = permutation; faces lie on their face */
static int test_layout(int dim, int p) {
  hpmg_sem_element el;
  CHECK_OK(hpmg_sem_element_create(dim, p, &el));
  int *seen = calloc((size_t)el.nloc, sizeof(int));
  for (int k = 0; k < el.nb; k++) seen[el.bmap[k]]++;
  for (int k = 0; k < el.ni; k++) seen[el.imap[k]]++;
  int bad = 0;
  for (int i = 0; i < el.nloc; i++) bad += seen[i] != 1;
  CHECK(bad == 0, "dim=%d p=%d: boundary + interior maps not a permutation (%d)", dim, p, bad);
  const int mf = dim == 2 ? el.m : el.m * el.m;
  for (int f = 0; f < 2 * dim; f++)
    for (int q = 0; q < mf; q++) {
      int r = el.bmap[el.face_offset + f * mf + q], ends = 0, on = 0;
      for (int k = 0; k < dim; k++, r /= el.n) {
        int i = r % el.n, end = i == 0 || i == p;
        ends += end;
        if (k == f / 2) on = i == (f % 2 ? p : 0);
      }
      CHECK(ends == 1 && on, "dim=%d p=%d face %d node %d misplaced", dim, p, f, q);
    }
  free(seen);
  hpmg_sem_element_free(&el);
  return 0;
}

/* matrix-free H_e vs Kronecker entries; condensed apply vs LAPACKE Schur
 * complement; condensation + recovery vs the element system */
static int test_element(int dim, int p, const double *h, double lambda) {
  hpmg_sem_element el;
  CHECK_OK(hpmg_sem_element_create(dim, p, &el));
  double d[4];
  CHECK_OK(hpmg_sem_coefficients(dim, h, lambda, d));
  const int N = el.nloc, nb = el.nb, ni = el.ni;
  const double t0 = hpmg_wtime();
  double *work = malloc(sizeof(double) * hpmg_sem_work_size(&el));
  double *u = malloc(sizeof(double) * N), *y = malloc(sizeof(double) * N), *yr = malloc(sizeof(double) * N);
  for (int i = 0; i < N; i++) u[i] = check_rand();

  /* full operator */
  hpmg_sem_apply_full(&el, d, u, y, work);
  for (int i = 0; i < N; i++) {
    double s = 0.0;
    for (int j = 0; j < N; j++) s += H_entry(&el, d, i, j) * u[j];
    yr[i] = s;
  }
  double ef = rel_diff(N, y, yr);
  CHECK(ef <= 1e-13, "dim=%d p=%d h=(%g,%g,%g) lambda=%g: full apply rel diff %.3g", dim, p, h[0], h[1],
        dim == 3 ? h[2] : 0.0, lambda, ef);

  /* dense blocks and Cholesky of H_II */
  double *HII = malloc(sizeof(double) * (size_t)ni * ni);
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < ni; j++) HII[(size_t)i * ni + j] = H_entry(&el, d, el.imap[i], el.imap[j]);
  lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', ni, HII, ni);
  CHECK(info == 0, "dpotrf info %d", (int)info);
  double *vB = malloc(sizeof(double) * nb), *yB = malloc(sizeof(double) * nb), *yD = malloc(sizeof(double) * nb);
  double *t = malloc(sizeof(double) * ni), *fI = malloc(sizeof(double) * ni);
  const int explicit_schur = (size_t)nb * ni <= 200000; /* 3D: p <= 8 */
  double *Sc = NULL;
  if (explicit_schur) { /* Hhat = H_BB - H_BI H_II^{-1} H_IB, column by column */
    double *X = malloc(sizeof(double) * (size_t)ni * nb);
    for (int i = 0; i < ni; i++)
      for (int j = 0; j < nb; j++) X[(size_t)i * nb + j] = H_entry(&el, d, el.imap[i], el.bmap[j]);
    Sc = malloc(sizeof(double) * (size_t)nb * nb);
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < nb; j++) Sc[(size_t)i * nb + j] = H_entry(&el, d, el.bmap[i], el.bmap[j]);
    double *HIB = malloc(sizeof(double) * (size_t)ni * nb);
    memcpy(HIB, X, sizeof(double) * (size_t)ni * nb);
    info = LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', ni, nb, HII, ni, X, nb);
    CHECK(info == 0, "dpotrs info %d", (int)info);
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < nb; j++) {
        double s = 0.0;
        for (int k = 0; k < ni; k++) s += HIB[(size_t)k * nb + i] * X[(size_t)k * nb + j];
        Sc[(size_t)i * nb + j] -= s;
      }
    free(HIB);
    free(X);
  }
  double ec_max = 0.0;
  for (int rep = 0; rep < 2; rep++) {
    for (int i = 0; i < nb; i++) vB[i] = check_rand();
    hpmg_sem_condensed_apply(&el, d, vB, yB, work);
    if (Sc) {
      for (int i = 0; i < nb; i++) {
        double s = 0.0;
        for (int j = 0; j < nb; j++) s += Sc[(size_t)i * nb + j] * vB[j];
        yD[i] = s;
      }
    } else { /* same Schur complement, applied through the dense blocks */
      for (int i = 0; i < ni; i++) {
        double s = 0.0;
        for (int j = 0; j < nb; j++) s += H_entry(&el, d, el.imap[i], el.bmap[j]) * vB[j];
        t[i] = s;
      }
      LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', ni, 1, HII, ni, t, 1);
      for (int i = 0; i < nb; i++) {
        double s = 0.0;
        for (int j = 0; j < nb; j++) s += H_entry(&el, d, el.bmap[i], el.bmap[j]) * vB[j];
        for (int j = 0; j < ni; j++) s -= H_entry(&el, d, el.bmap[i], el.imap[j]) * t[j];
        yD[i] = s;
      }
    }
    double ec = rel_diff(nb, yB, yD);
    ec_max = fmax(ec_max, ec);
    CHECK(ec <= 1e-11, "dim=%d p=%d h=(%g,%g,%g) lambda=%g: condensed apply vs %s Schur complement: %.3g",
          dim, p, h[0], h[1], dim == 3 ? h[2] : 0.0, lambda, Sc ? "explicit" : "dense-block", ec);
  }

  /* Dirichlet data u_B and interior load F_I: the element system's interior
   * solution (dense Cholesky) against the recovery */
  double *F = malloc(sizeof(double) * N), *uR = malloc(sizeof(double) * N);
  for (int i = 0; i < nb; i++) vB[i] = check_rand();
  for (int i = 0; i < N; i++) F[i] = check_rand();
  for (int i = 0; i < ni; i++) {
    double s = F[el.imap[i]];
    for (int j = 0; j < nb; j++) s -= H_entry(&el, d, el.imap[i], el.bmap[j]) * vB[j];
    fI[i] = s;
  }
  LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', ni, 1, HII, ni, fI, 1);
  hpmg_sem_recover(&el, d, F, vB, uR, work);
  double *uI = malloc(sizeof(double) * ni);
  for (int i = 0; i < ni; i++) uI[i] = uR[el.imap[i]];
  double er = rel_diff(ni, uI, fI);
  CHECK(er <= 1e-11, "dim=%d p=%d: recovery vs dense element solve: %.3g", dim, p, er);
  int bok = 1;
  for (int i = 0; i < nb; i++) bok &= uR[el.bmap[i]] == vB[i];
  CHECK(bok, "dim=%d p=%d: recovery changed the boundary values", dim, p);

  /* a known element field u: F = H_e u; then Hhat u_B = Fhat and the recovery returns u */
  hpmg_sem_apply_full(&el, d, u, F, work);
  for (int i = 0; i < nb; i++) vB[i] = u[el.bmap[i]];
  hpmg_sem_condense_rhs(&el, d, F, yD, work);
  hpmg_sem_condensed_apply(&el, d, vB, yB, work);
  double eh = rel_diff(nb, yB, yD);
  CHECK(eh <= 1e-11, "dim=%d p=%d: Hhat u_B vs condensed load: %.3g", dim, p, eh);
  hpmg_sem_recover(&el, d, F, vB, uR, work);
  double eu = rel_diff(N, uR, u);
  CHECK(eu <= 1e-11, "dim=%d p=%d: condensation + recovery vs u: %.3g", dim, p, eu);

  printf("dim=%d p=%2d lambda=%g (%.2f s): full %.1e, condensed %.1e (%s), recovery %.1e, Fhat %.1e, u %.1e\n", dim, p,
         lambda, hpmg_wtime() - t0, ef, ec_max, Sc ? "explicit Schur" : "dense blocks", er, eh, eu);
  free(uI);
  free(F);
  free(uR);
  free(Sc);
  free(t);
  free(fI);
  free(vB);
  free(yB);
  free(yD);
  free(HII);
  free(u);
  free(y);
  free(yr);
  free(work);
  hpmg_sem_element_free(&el);
  return 0;
}

/* Difference form of the condensed operator (docs/sem.md, "Error floor"):
 * with lambda = 0, Hhat_e maps a constant to exactly 0, and a field offset
 * by a constant large against its variation (x = 100 + v, |v| <= 1e-6, the
 * variation over a small element of a smooth field) gives Hhat_e v to
 * rounding relative to |Hhat_e v|, single-element and batched. Without it
 * the stiffness parts of H_BB x and H_BI H_II^{-1} H_IB x (O(d1 |x|) each)
 * cancel only to ~eps d1 |x|: ~1e-8 relative here. */
static int test_shift(int dim, int p) {
  hpmg_sem_element el;
  CHECK_OK(hpmg_sem_element_create(dim, p, &el));
  const int nb = el.nb, ne = 3;
  const double h[3] = {1.0 / 16, 1.0 / 12, 1.0 / 20};
  double d[3 * 4];
  for (int e = 0; e < ne; e++) CHECK_OK(hpmg_sem_coefficients(dim, h, 0.0, d + e * (dim + 1)));
  double *x = malloc(sizeof(double) * ne * nb), *w = malloc(sizeof(double) * ne * nb);
  double *yx = malloc(sizeof(double) * ne * nb), *yw = malloc(sizeof(double) * ne * nb);
  double *work = malloc(sizeof(double) * hpmg_sem_work_size(&el));
  for (int i = 0; i < nb; i++) x[i] = 0.7315;
  hpmg_sem_condensed_apply(&el, d, x, yx, work);
  int zero = 1;
  for (int i = 0; i < nb; i++) zero &= yx[i] == 0.0;
  CHECK(zero, "dim=%d p=%d: Hhat_e of a constant not exactly 0", dim, p);
  for (int i = 0; i < ne * nb; i++) {
    x[i] = 100.0 + 1e-6 * check_rand();
    w[i] = x[i] - 100.0; /* exact (Sterbenz) */
  }
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 0) {
      hpmg_sem_condensed_apply(&el, d, x, yx, work);
      hpmg_sem_condensed_apply(&el, d, w, yw, work);
    } else {
      CHECK_OK(hpmg_sem_condensed_apply_batch(&el, ne, d, x, yx));
      CHECK_OK(hpmg_sem_condensed_apply_batch(&el, ne, d, w, yw));
    }
    const int len = pass ? ne * nb : nb;
    const double r = rel_diff(len, yx, yw);
    CHECK(r <= 1e-12, "dim=%d p=%d %s: Hhat_e (100 + v) vs Hhat_e v: rel diff %.3g", dim, p,
          pass ? "batch" : "single", r);
  }
  free(x);
  free(w);
  free(yx);
  free(yw);
  free(work);
  hpmg_sem_element_free(&el);
  return 0;
}

/* the batch drivers agree with the single-element calls */
static int test_batch(int dim, int p) {
  hpmg_sem_element el;
  CHECK_OK(hpmg_sem_element_create(dim, p, &el));
  const int ne = 5, nb = el.nb;
  double d[5 * 4], *u = malloc(sizeof(double) * ne * nb), *y = malloc(sizeof(double) * ne * nb);
  double *y1 = malloc(sizeof(double) * nb), *work = malloc(sizeof(double) * hpmg_sem_work_size(&el));
  for (int e = 0; e < ne; e++) {
    double h[3] = {0.5 + e, 1.0 / (1 + e), 2.0};
    CHECK_OK(hpmg_sem_coefficients(dim, h, 0.1 * e, d + e * (dim + 1)));
  }
  for (int i = 0; i < ne * nb; i++) u[i] = check_rand();
  CHECK_OK(hpmg_sem_condensed_apply_batch(&el, ne, d, u, y));
  int same = 1;
  for (int e = 0; e < ne; e++) {
    hpmg_sem_condensed_apply(&el, d + e * (dim + 1), u + e * nb, y1, work);
    for (int i = 0; i < nb; i++) same &= y1[i] == y[e * nb + i];
  }
  CHECK(same, "dim=%d p=%d: batch differs from single-element apply", dim, p);
  free(u);
  free(y);
  free(y1);
  free(work);
  hpmg_sem_element_free(&el);
  return 0;
}

/* The SIMD kernel (sem_kernels.c, one batch of `lanes` elements
 * interleaved) of every instruction-set variant this processor runs against
 * the single-element operator, lane by lane (sem_condensed.inc is the source
 * of both, the same operations in the same order): within 1e-14 of max |y|,
 * not bit for bit, since -ffp-contract=fast fuses a different choice of
 * products into multiply-adds in the scalar and the vector code (measured
 * up to 2.3e-15 relative with -march=native on AVX-512, p = 2..10). Lanes
 * with different widths and lambda, all lambda = 0 (the mass term skipped)
 * and some > 0. */
static int test_simd(int p) {
  hpmg_sem_element el;
  CHECK_OK(hpmg_sem_element_create(3, p, &el));
  const int nb = el.nb;
  for (int i = 0; i < HPMG_ISA_COUNT; i++) {
    if (!hpmg_isa_runs(i)) continue;
    const hpmg_sem_kernels *K = hpmg_sem_kernels_of(i);
    const int W = K->lanes;
    double *d = malloc(sizeof(double) * 4 * W), *u = malloc(sizeof(double) * (size_t)nb * W);
    double *y = malloc(sizeof(double) * (size_t)nb * W), *work = malloc(sizeof(double) * hpmg_sem_batch_work_size(&el, W));
    double *d1 = malloc(sizeof(double) * 4), *u1 = malloc(sizeof(double) * nb), *y1 = malloc(sizeof(double) * nb);
    double *w1 = malloc(sizeof(double) * hpmg_sem_work_size(&el));
    for (int mass = 0; mass < 2; mass++) {
      for (int l = 0; l < W; l++) {
        const double h[3] = {0.5 + l, 1.0 / (1 + l), 2.0 - 0.1 * l};
        CHECK_OK(hpmg_sem_coefficients(3, h, mass ? 0.3 * l : 0.0, d1));
        for (int j = 0; j < 4; j++) d[j * W + l] = d1[j];
      }
      for (int k = 0; k < nb * W; k++) u[k] = check_rand();
      K->condensed_apply(&el, d, u, y, work);
      double err = 0, scale = 0;
      for (int l = 0; l < W; l++) {
        for (int j = 0; j < 4; j++) d1[j] = d[j * W + l];
        for (int k = 0; k < nb; k++) u1[k] = u[(size_t)k * W + l];
        hpmg_sem_condensed_apply(&el, d1, u1, y1, w1);
        for (int k = 0; k < nb; k++) {
          err = fmax(err, fabs(y1[k] - y[(size_t)k * W + l]));
          scale = fmax(scale, fabs(y1[k]));
        }
      }
      CHECK(err <= 1e-14 * scale, "p=%d %s (%d lanes, lambda %s): batch differs from single by %.3g (max %.3g)",
            p, hpmg_isa_get(i)->name, W, mass ? "> 0" : "0", err, scale);
    }
    free(d), free(u), free(y), free(work), free(d1), free(u1), free(y1), free(w1);
  }
  hpmg_sem_element_free(&el);
  return 0;
}

int main(int argc, char **argv) {
  /* degrees of the element checks: 2..10 in the suite, 2..16 with "full" (label slow);
   * HPMG_TEST_MAX_DEGREE caps both (qemu runs of the Arm build) */
  const int pmax = test_max_degree(argc > 1 && !strcmp(argv[1], "full") ? 16 : 10);
  /* bad input */
  hpmg_sem_element el;
  CHECK(hpmg_sem_element_create(3, 1, &el) == HPMG_ERR_ARG, "degree 1 accepted");
  CHECK(hpmg_sem_element_create(3, HPMG_SEM_MAX_DEGREE + 1, &el) == HPMG_ERR_ARG, "degree too high accepted");
  CHECK(hpmg_sem_element_create(4, 4, &el) == HPMG_ERR_ARG, "dimension 4 accepted");
  CHECK(strstr(hpmg_last_error(), "dimension") != NULL, "message: %s", hpmg_last_error());
  double d[4], h0[3] = {1.0, 0.0, 1.0};
  CHECK(hpmg_sem_coefficients(3, h0, 0.0, d) == HPMG_ERR_ARG, "zero width accepted");
  double h1[3] = {1.0, 1.0, 1.0};
  CHECK(hpmg_sem_coefficients(3, h1, -1.0, d) == HPMG_ERR_ARG, "negative lambda accepted");
  CHECK_OK(hpmg_sem_coefficients(3, h1, 2.0, d));
  CHECK(d[0] == 0.25 && d[1] == 0.5 && d[3] == 0.5, "coefficients of the unit cube %g %g", d[0], d[1]);

  for (int p = 2; p <= 32; p++) test_1d(p);
  for (int p = 2; p <= 6; p++) {
    test_layout(2, p);
    test_layout(3, p);
  }
  const double haniso[3] = {1.0, 0.3, 2.5};
  for (int p = 2; p <= pmax; p++) {
    test_element(2, p, haniso, 0.0);
    test_element(2, p, haniso, 7.5);
    test_element(3, p, haniso, 0.0);
    test_element(3, p, haniso, 7.5);
  }
  for (int p = 2; p <= pmax; p += 2) {
    test_shift(2, p);
    test_shift(3, p);
  }
  test_batch(2, pmax < 5 ? pmax : 5);
  test_batch(3, pmax < 7 ? pmax : 7);
  for (int p = 2; p <= pmax; p++) test_simd(p);
  return check_report();
}
