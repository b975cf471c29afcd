/* Exact condensed solve by fast diagonalization of the full system; see sem_fdm.h. */
#include "disc/sem/sem_fdm.h"
#include <lapacke.h>
#include <string.h>
#include "core/par.h"
#include "disc/sem/sem_system.h"

/* first 1D unknown and count of direction d: the lattice less its Dirichlet ends */
static void dir_range(const hpmg_sem_mesh *m, int d, int64_t *g0, int64_t *n) {
  if (d >= m->dim) {
    *g0 = 0, *n = 1;
    return;
  }
  const int lo = !m->periodic[d] && m->bc[2 * d] == HPMG_BC_DIRICHLET;
  const int hi = !m->periodic[d] && m->bc[2 * d + 1] == HPMG_BC_DIRICHLET;
  *g0 = lo;
  *n = m->nlat[d] - lo - hi;
}

/* the 1D unknowns of the dim directions (n[d] for d < dim) and their product */
static double sizes(const hpmg_sem_mesh *m, double n[3]) {
  double N = 1;
  for (int d = 0; d < m->dim; d++) {
    int64_t g0, nd;
    dir_range(m, d, &g0, &nd);
    n[d] = (double)nd;
    N *= n[d];
  }
  return N;
}

double hpmg_sem_fdm_flops(const hpmg_sem_mesh *m) {
  double n[3], s = 0;
  const double N = sizes(m, n);
  for (int d = 0; d < m->dim; d++) s += n[d];
  return 4.0 * N * s;
}

double hpmg_sem_fdm_setup_flops(const hpmg_sem_mesh *m) {
  double n[3], f = 0;
  sizes(m, n);
  for (int d = 0; d < m->dim; d++) f += 10.0 * n[d] * n[d] * n[d];
  return f;
}

double hpmg_sem_fdm_bytes(const hpmg_sem_mesh *m) {
  double n[3], s2 = 0;
  const double N = sizes(m, n);
  for (int d = 0; d < m->dim; d++) s2 += 2.0 * n[d] * n[d] + n[d];
  return 8.0 * (4.0 * N + s2); /* dinv, skel, u, t; S, ST, lam */
}

void hpmg_sem_fdm_destroy(hpmg_sem_fdm *f) {
  for (int d = 0; d < 3; d++) {
    hpmg_free(&f->S[d]);
    hpmg_free(&f->ST[d]);
    hpmg_free(&f->lam[d]);
  }
  hpmg_free(&f->dinv);
  hpmg_free(&f->skel);
  hpmg_free(&f->u);
  hpmg_free(&f->t);
  memset(f, 0, sizeof *f);
}

/* K_d S = M_d S Lambda for direction d: the element matrices (2/h L_S, h/2
 * M_S) assembled over the lattice (wrapped where periodic), restricted to
 * the 1D unknowns */
static hpmg_error dir_eigen(const hpmg_sem_mesh *m, int d, hpmg_sem_fdm *f) {
  const int64_t n = f->n[d], g0 = f->g0[d], nlat = m->nlat[d];
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)(n * n), &f->S[d]));
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)(n * n), &f->ST[d]));
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)n, &f->lam[d]));
  if (d >= m->dim) { /* the absent direction of 2D: one unknown, S = 1, no eigenvalue */
    f->S[d][0] = f->ST[d][0] = 1.0;
    return HPMG_SUCCESS;
  }
  double *B = NULL;
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)(n * n), &B));
  const hpmg_sem_element *el = &m->el;
  const int p = el->p, ne = el->n;
  double *K = f->S[d];
  for (int64_t c = 0; c < m->cells[d]; c++) {
    const double h = m->x[d][c + 1] - m->x[d][c];
    for (int i = 0; i < ne; i++) {
      const int64_t gi = (c * p + i) % nlat - g0;
      if (gi < 0 || gi >= n) continue;
      B[gi * n + gi] += 0.5 * h * el->M[i];
      for (int j = 0; j < ne; j++) {
        const int64_t gj = (c * p + j) % nlat - g0;
        if (gj >= 0 && gj < n) K[gi * n + gj] += 2.0 / h * el->L[i * ne + j];
      }
    }
  }
  const int bt = hpmg_blas_serial_begin();
  const lapack_int info = LAPACKE_dsygv(LAPACK_ROW_MAJOR, 1, 'V', 'U', (lapack_int)n, K, (lapack_int)n, B,
                                        (lapack_int)n, f->lam[d]);
  hpmg_blas_serial_end(bt);
  hpmg_free(&B);
  if (info != 0)
    return hpmg_error_set(HPMG_ERR_NUMERIC,
                          "sem fast diagonalization: the 1D eigenproblem of direction %d (%lld unknowns) failed "
                          "(LAPACKE_dsygv info=%d)",
                          d, (long long)n, (int)info);
  /* without a Dirichlet end the constants are K's exact null space: its eigenvalue 0, not rounding */
  if (g0 == 0 && n == nlat) f->lam[d][0] = 0.0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) f->ST[d][j * n + i] = K[i * n + j];
  return HPMG_SUCCESS;
}

hpmg_error hpmg_sem_fdm_create(const hpmg_sem_mesh *m, hpmg_sem_fdm *f) {
  memset(f, 0, sizeof *f);
  f->m = m;
  f->dim = m->dim;
  f->N = 1;
  for (int d = 0; d < 3; d++) {
    dir_range(m, d, &f->g0[d], &f->n[d]);
    f->N *= f->n[d];
  }
  const int64_t N = f->N, n0 = f->n[0], n1 = f->n[1];
  hpmg_error e = HPMG_SUCCESS;
  for (int d = 0; d < 3 && !e; d++) e = dir_eigen(m, d, f);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)N, &f->dinv);
  if (!e) e = hpmg_malloc(sizeof(int64_t) * (size_t)N, &f->skel);
  if (!e) e = hpmg_calloc(sizeof(double) * (size_t)N, &f->u);
  if (!e) e = hpmg_calloc(sizeof(double) * (size_t)N, &f->t);
  if (e) {
    hpmg_sem_fdm_destroy(f);
    return e;
  }
  const double lambda = m->lambda;
  const int singular = hpmg_sem_singular(m);
#pragma omp parallel for schedule(static) if (hpmg_par((double)N))
  for (int64_t q = 0; q < N; q++) {
    const int64_t i[3] = {q % n0, (q / n0) % n1, q / (n0 * n1)};
    const int64_t g[3] = {f->g0[0] + i[0], f->g0[1] + i[1], f->g0[2] + i[2]};
    f->skel[q] = hpmg_sem_skeleton_index(m, g);
    const double D = lambda + f->lam[0][i[0]] + f->lam[1][i[1]] + f->lam[2][i[2]];
    f->dinv[q] = singular && q == 0 ? 0.0 : 1.0 / D; /* q = 0: every direction's constant mode */
  }
  return HPMG_SUCCESS;
}

/* out = (B along direction d) in, B = S_d (back) or S_d^T (forward): BT is
 * B's transpose (row i: the coefficients of input i), so each contraction
 * is a sum of scaled rows (vectorized over the fastest index) */
static void contract(const hpmg_sem_fdm *f, int d, const double *restrict BT, const double *restrict in,
                     double *restrict out) {
  const int64_t n0 = f->n[0], nd = f->n[d];
  const double work = 2.0 * (double)f->N * (double)nd;
  if (d == 0) {
#pragma omp parallel for schedule(static) if (hpmg_par(work))
    for (int64_t r = 0; r < f->N / n0; r++) {
      const double *x = in + r * n0;
      double *y = out + r * n0;
      for (int64_t a = 0; a < n0; a++) y[a] = 0.0;
      for (int64_t i = 0; i < n0; i++) {
        const double c = x[i];
        const double *b = BT + i * n0;
        for (int64_t a = 0; a < n0; a++) y[a] += c * b[a];
      }
    }
    return;
  }
  /* d = 1, 2: lines of n0 values at (h, j, l), j the index along d, l over
   * the directions between 0 and d (nlo lines), h over those beyond d (nhi) */
  int64_t nlo = 1, nhi = 1;
  for (int e = 1; e < d; e++) nlo *= f->n[e];
  for (int e = d + 1; e < 3; e++) nhi *= f->n[e];
#pragma omp parallel for collapse(2) schedule(static) if (hpmg_par(work))
  for (int64_t hb = 0; hb < nhi * nd; hb++)
    for (int64_t l = 0; l < nlo; l++) {
      const int64_t h = hb / nd, bo = hb % nd;
      double *y = out + (hb * nlo + l) * n0;
      for (int64_t a = 0; a < n0; a++) y[a] = 0.0;
      for (int64_t i = 0; i < nd; i++) {
        const double c = BT[i * nd + bo];
        const double *x = in + ((h * nd + i) * nlo + l) * n0;
        for (int64_t a = 0; a < n0; a++) y[a] += c * x[a];
      }
    }
}

void hpmg_sem_fdm_solve(hpmg_sem_fdm *f, const double *b, double *x) {
  const hpmg_sem_mesh *m = f->m;
  const int64_t N = f->N, ns = m->ns;
  const int dim = f->dim;
  double *u = f->u, *t = f->t;
  const int64_t *skel = f->skel;
#pragma omp parallel for schedule(static) if (hpmg_par((double)N))
  for (int64_t q = 0; q < N; q++) u[q] = skel[q] >= 0 ? b[skel[q]] : 0.0;
  /* forward (S^T per direction), D^{-1}, back (S per direction): ping-pong u <-> t */
  double *src = u, *dst = t;
  for (int d = 0; d < dim; d++) {
    contract(f, d, f->S[d], src, dst);
    double *s = src;
    src = dst, dst = s;
  }
  const double *dinv = f->dinv;
#pragma omp parallel for schedule(static) if (hpmg_par((double)N))
  for (int64_t q = 0; q < N; q++) src[q] *= dinv[q];
  for (int d = 0; d < dim; d++) {
    contract(f, d, f->ST[d], src, dst);
    double *s = src;
    src = dst, dst = s;
  }
  if (m->dirichlet) { /* identity rows */
#pragma omp parallel for schedule(static) if (hpmg_par((double)ns))
    for (int64_t i = 0; i < ns; i++)
      if (m->dirichlet[i]) x[i] = b[i];
  }
#pragma omp parallel for schedule(static) if (hpmg_par((double)N))
  for (int64_t q = 0; q < N; q++)
    if (skel[q] >= 0) x[skel[q]] = src[q];
}
