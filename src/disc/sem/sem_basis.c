/* Reference spectral element: 1D standard matrices, fast diagonalization of
 * the interior block, boundary/interior numbering (layout: sem_element.h). */
#include <float.h>
#include <math.h>
#include <string.h>
#include "disc/sem/sem_element.h"
#include "fem/fem.h"

void hpmg_sem_element_free(hpmg_sem_element *el) {
  if (!el) return;
  hpmg_free(&el->x);
  hpmg_free(&el->w);
  hpmg_free(&el->M);
  hpmg_free(&el->L);
  hpmg_free(&el->S);
  hpmg_free(&el->Sinv);
  hpmg_free(&el->SinvT);
  hpmg_free(&el->ST);
  hpmg_free(&el->lam);
  hpmg_free(&el->a[0]);
  hpmg_free(&el->a[1]);
  hpmg_free(&el->lI[0]);
  hpmg_free(&el->lI[1]);
  hpmg_free(&el->phi);
  hpmg_free(&el->dphi);
  hpmg_free(&el->sv[0]);
  hpmg_free(&el->sv[1]);
  hpmg_free(&el->bmap);
  hpmg_free(&el->imap);
  hpmg_free(&el->mb);
  memset(el, 0, sizeof *el);
}

hpmg_error hpmg_sem_coefficients(int dim, const double *h, double lambda, double *d) {
  HPMG_CHECK_ARG(h != NULL && d != NULL, "sem: NULL argument");
  HPMG_CHECK_ARG(dim == 2 || dim == 3, "sem: dimension %d not supported (2 or 3)", dim);
  HPMG_CHECK_ARG(isfinite(lambda) && lambda >= 0, "sem: lambda = %g must be finite and >= 0", lambda);
  double J = 1.0;
  for (int k = 0; k < dim; k++) {
    HPMG_CHECK_ARG(isfinite(h[k]) && h[k] > 0, "sem: element width h[%d] = %g must be positive", k, h[k]);
    J *= 0.5 * h[k];
  }
  d[0] = J * lambda;
  for (int k = 0; k < dim; k++) d[k + 1] = J * 4.0 / (h[k] * h[k]);
  return HPMG_SUCCESS;
}

/* GLL nodes/weights on [-1,1]; M_S = diag(w) (GLL quadrature), L_S = D^T W D
 * with D the nodal differentiation matrix. GLL quadrature with n points is
 * exact to degree 2n-3 = 2p-1 >= 2p-2, the degree of l_i' l_j', so L_S is
 * the exact stiffness matrix; M_S is the (inexact, diagonal) lumped one. */
static hpmg_error standard_matrices(hpmg_sem_element *el) {
  const int n = el->n;
  double *D = NULL, *v = NULL;
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(n * n + n), &D));
  v = D + n * n;
  hpmg_gauss_lobatto(n, el->x, el->w);
  for (int i = 0; i < n; i++) {
    el->x[i] = 2.0 * el->x[i] - 1.0;
    el->w[i] *= 2.0;
    el->M[i] = el->w[i];
  }
  /* hpmg_lagrange_eval takes nodes on any interval; derivatives are then in x */
  for (int q = 0; q < n; q++) hpmg_lagrange_eval(n, el->x, el->x[q], v, D + q * n);
  for (int i = 0; i < n; i++)
    for (int j = i; j < n; j++) { /* upper triangle mirrored: exactly symmetric */
      double s = 0.0;
      for (int q = 0; q < n; q++) s += el->w[q] * D[q * n + i] * D[q * n + j];
      el->L[i * n + j] = el->L[j * n + i] = s;
    }
  /* rows of the stiffness matrix annihilate constants exactly in exact
   * arithmetic; put the diagonal as minus the off-diagonal row sum so that
   * round-off does not leave a spurious mass term in L_S * 1 */
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    for (int j = 0; j < n; j++)
      if (j != i) s += el->L[i * n + j];
    el->L[i * n + i] = -s;
  }
  hpmg_free(&D);
  return HPMG_SUCCESS;
}

/* L_II S = M_II S Lambda with S^T M_II S = I, eigenvalues ascending, for the diagonal GLL
 * mass M_II: the symmetric C = M^{-1/2} L M^{-1/2} = Y Lambda Y^T by cyclic Jacobi rotations
 * in long double, S = M^{-1/2} Y rounded once. */
static hpmg_error interior_eigen_jacobi(const hpmg_sem_element *el, double *S, double *lam) {
  const int m = el->m, n = el->n;
  long double *C = NULL, *Y = NULL, *r = NULL;
  hpmg_error e = hpmg_calloc(sizeof(long double) * (size_t)(m * m), &C);
  if (!e) e = hpmg_calloc(sizeof(long double) * (size_t)(m * m), &Y);
  if (!e) e = hpmg_calloc(sizeof(long double) * (size_t)m, &r);
  if (e) goto done;
  for (int i = 0; i < m; i++) r[i] = 1.0L / sqrtl((long double)el->M[i + 1]);
  for (int i = 0; i < m; i++) {
    Y[i * m + i] = 1.0L;
    for (int j = 0; j < m; j++) C[i * m + j] = r[i] * (long double)el->L[(i + 1) * n + j + 1] * r[j];
  }
  /* sweeps until none rotates: an entry below LDBL_EPSILON sqrt|c_pp c_qq| is set to 0 */
  for (int sweep = 0, rotated = 1; sweep < 64 && rotated; sweep++) {
    rotated = 0;
    for (int p = 0; p < m - 1; p++)
      for (int q = p + 1; q < m; q++) {
        if (fabsl(C[p * m + q]) <= LDBL_EPSILON * sqrtl(fabsl(C[p * m + p] * C[q * m + q]))) {
          C[p * m + q] = C[q * m + p] = 0.0L;
          continue;
        }
        rotated = 1;
        const long double th = (C[q * m + q] - C[p * m + p]) / (2.0L * C[p * m + q]);
        const long double t = (th >= 0 ? 1.0L : -1.0L) / (fabsl(th) + sqrtl(th * th + 1.0L));
        const long double c = 1.0L / sqrtl(t * t + 1.0L), sn = t * c;
        for (int k = 0; k < m; k++) { /* C <- C J (columns p, q) */
          const long double a = C[k * m + p], b = C[k * m + q];
          C[k * m + p] = c * a - sn * b, C[k * m + q] = sn * a + c * b;
        }
        for (int k = 0; k < m; k++) { /* C <- J^T C (rows p, q) */
          const long double a = C[p * m + k], b = C[q * m + k];
          C[p * m + k] = c * a - sn * b, C[q * m + k] = sn * a + c * b;
        }
        for (int k = 0; k < m; k++) { /* Y <- Y J */
          const long double a = Y[k * m + p], b = Y[k * m + q];
          Y[k * m + p] = c * a - sn * b, Y[k * m + q] = sn * a + c * b;
        }
      }
  }
  for (int k = 0; k < m; k++) { /* ascending: selection by the diagonal */
    int b = k;
    for (int j = k + 1; j < m; j++)
      if (C[j * m + j] < C[b * m + b]) b = j;
    const long double d = C[b * m + b];
    C[b * m + b] = C[k * m + k], C[k * m + k] = d;
    for (int i = 0; i < m; i++) {
      const long double y = Y[i * m + b];
      Y[i * m + b] = Y[i * m + k], Y[i * m + k] = y;
    }
    lam[k] = (double)d;
  }
  for (int k = 0; k < m; k++)
    for (int i = 0; i < m; i++) S[i * m + k] = (double)(r[i] * Y[i * m + k]);
done:
  hpmg_free(&C), hpmg_free(&Y), hpmg_free(&r);
  return e;
}

static hpmg_error interior_eigen(hpmg_sem_element *el) {
  const int m = el->m, n = el->n;
  HPMG_CALL(interior_eigen_jacobi(el, el->S, el->lam));
  for (int k = 0; k < m; k++)
    for (int i = 0; i < m; i++) {
      el->Sinv[k * m + i] = el->SinvT[i * m + k] = el->S[i * m + k] * el->M[i + 1];
      el->ST[k * m + i] = el->S[i * m + k];
    }
  for (int s = 0; s < 2; s++)
    for (int k = 0; k < m; k++) {
      double t = 0.0;
      for (int i = 0; i < m; i++) t += el->Sinv[k * m + i] * 0.5 * (s ? 1.0 + el->x[i + 1] : 1.0 - el->x[i + 1]);
      el->sv[s][k] = t;
    }
  for (int s = 0; s < 2; s++) {
    int e = s ? el->p : 0;
    for (int i = 0; i < m; i++) el->lI[s][i] = el->L[(i + 1) * n + e];
    for (int k = 0; k < m; k++) {
      double t = 0.0;
      for (int i = 0; i < m; i++) t += el->S[i * m + k] * el->lI[s][i];
      el->a[s][k] = t;
    }
  }
  return HPMG_SUCCESS;
}

static void numbering(hpmg_sem_element *el) {
  const int n = el->n, m = el->m, p = el->p;
  int b = 0, q = 0;
  if (el->dim == 2) {
    for (int c2 = 0; c2 < 2; c2++)
      for (int c1 = 0; c1 < 2; c1++) el->bmap[b++] = c2 * p * n + c1 * p;
    for (int s = 0; s < 2; s++) /* normal x1: i1 fixed, i2 runs */
      for (int i = 1; i <= m; i++) el->bmap[b++] = i * n + s * p;
    for (int s = 0; s < 2; s++) /* normal x2 */
      for (int i = 1; i <= m; i++) el->bmap[b++] = s * p * n + i;
    for (int i2 = 1; i2 <= m; i2++)
      for (int i1 = 1; i1 <= m; i1++) el->imap[q++] = i2 * n + i1;
  } else {
#define IDX(i3, i2, i1) (((i3) * n + (i2)) * n + (i1))
    for (int c3 = 0; c3 < 2; c3++)
      for (int c2 = 0; c2 < 2; c2++)
        for (int c1 = 0; c1 < 2; c1++) el->bmap[b++] = IDX(c3 * p, c2 * p, c1 * p);
    for (int c3 = 0; c3 < 2; c3++) /* edges along x1 */
      for (int c2 = 0; c2 < 2; c2++)
        for (int i = 1; i <= m; i++) el->bmap[b++] = IDX(c3 * p, c2 * p, i);
    for (int c3 = 0; c3 < 2; c3++) /* along x2 */
      for (int c1 = 0; c1 < 2; c1++)
        for (int i = 1; i <= m; i++) el->bmap[b++] = IDX(c3 * p, i, c1 * p);
    for (int c2 = 0; c2 < 2; c2++) /* along x3 */
      for (int c1 = 0; c1 < 2; c1++)
        for (int i = 1; i <= m; i++) el->bmap[b++] = IDX(i, c2 * p, c1 * p);
    for (int s = 0; s < 2; s++) /* faces normal to x1: rows i3, columns i2 */
      for (int i3 = 1; i3 <= m; i3++)
        for (int i2 = 1; i2 <= m; i2++) el->bmap[b++] = IDX(i3, i2, s * p);
    for (int s = 0; s < 2; s++) /* normal to x2: rows i3, columns i1 */
      for (int i3 = 1; i3 <= m; i3++)
        for (int i1 = 1; i1 <= m; i1++) el->bmap[b++] = IDX(i3, s * p, i1);
    for (int s = 0; s < 2; s++) /* normal to x3: rows i2, columns i1 */
      for (int i2 = 1; i2 <= m; i2++)
        for (int i1 = 1; i1 <= m; i1++) el->bmap[b++] = IDX(s * p, i2, i1);
    for (int i3 = 1; i3 <= m; i3++)
      for (int i2 = 1; i2 <= m; i2++)
        for (int i1 = 1; i1 <= m; i1++) el->imap[q++] = IDX(i3, i2, i1);
#undef IDX
  }
  for (int k = 0; k < el->nb; k++) {
    int r = el->bmap[k];
    double w = 1.0;
    for (int dd = 0; dd < el->dim; dd++) {
      w *= el->M[r % n];
      r /= n;
    }
    el->mb[k] = w;
  }
  /* multilinear vertex functions and their stiffness fluxes at the boundary nodes */
  const int dim = el->dim, nv = 1 << dim;
  for (int k = 0; k < el->nb; k++) {
    int ii[3], r = el->bmap[k];
    double a[3];
    for (int dd = 0; dd < dim; dd++, r /= n) {
      ii[dd] = r % n;
      a[dd] = 0.5 * (1.0 + el->x[ii[dd]]);
    }
    for (int v = 0; v < nv; v++) {
      double f = 1.0;
      for (int dd = 0; dd < dim; dd++) f *= (v >> dd) & 1 ? a[dd] : 1.0 - a[dd];
      el->phi[k * nv + v] = f;
      for (int dd = 0; dd < dim; dd++) {
        double q = 0.0;
        if (ii[dd] == 0 || ii[dd] == p) {
          q = (ii[dd] == p ? 1.0 : -1.0) * ((v >> dd) & 1 ? 0.5 : -0.5);
          for (int e = 0; e < dim; e++)
            if (e != dd) q *= el->M[ii[e]] * ((v >> e) & 1 ? a[e] : 1.0 - a[e]);
        }
        el->dphi[((size_t)dd * el->nb + k) * nv + v] = q;
      }
    }
  }
}

hpmg_error hpmg_sem_element_create(int dim, int p, hpmg_sem_element *el) {
  HPMG_CHECK_ARG(el != NULL, "sem: NULL element");
  memset(el, 0, sizeof *el);
  HPMG_CHECK_ARG(dim == 2 || dim == 3, "sem: dimension %d not supported (2 or 3)", dim);
  HPMG_CHECK_ARG(p >= HPMG_SEM_MIN_DEGREE && p <= HPMG_SEM_MAX_DEGREE, "sem: degree %d not supported (%d..%d)",
                 p, HPMG_SEM_MIN_DEGREE, HPMG_SEM_MAX_DEGREE);
  const int n = p + 1, m = p - 1;
  el->dim = dim;
  el->p = p;
  el->n = n;
  el->m = m;
  el->nloc = dim == 2 ? n * n : n * n * n;
  el->ni = dim == 2 ? m * m : m * m * m;
  el->nb = el->nloc - el->ni;
  el->face_offset = dim == 2 ? 4 : 8 + 12 * m;
  hpmg_error e = HPMG_SUCCESS;
#define ALLOC(ptr, count)                                                     \
  if (e == HPMG_SUCCESS) e = hpmg_calloc(sizeof(*(ptr)) * (size_t)(count), &(ptr))
  ALLOC(el->x, n);
  ALLOC(el->w, n);
  ALLOC(el->M, n);
  ALLOC(el->L, n * n);
  ALLOC(el->S, m * m);
  ALLOC(el->Sinv, m * m);
  ALLOC(el->SinvT, m * m);
  ALLOC(el->ST, m * m);
  ALLOC(el->lam, m);
  ALLOC(el->a[0], m);
  ALLOC(el->a[1], m);
  ALLOC(el->lI[0], m);
  ALLOC(el->lI[1], m);
  ALLOC(el->sv[0], m);
  ALLOC(el->sv[1], m);
  ALLOC(el->phi, el->nb << dim);
  ALLOC(el->dphi, (el->nb << dim) * dim);
  ALLOC(el->bmap, el->nb);
  ALLOC(el->imap, el->ni);
  ALLOC(el->mb, el->nb);
#undef ALLOC
  if (e == HPMG_SUCCESS) e = standard_matrices(el);
  if (e == HPMG_SUCCESS) e = interior_eigen(el);
  if (e != HPMG_SUCCESS) {
    hpmg_sem_element_free(el);
    return e;
  }
  numbering(el);
  return HPMG_SUCCESS;
}
