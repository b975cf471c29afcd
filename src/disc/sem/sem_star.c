/* The star smoother's local solver (paper 001, Algorithm 1) and its
 * element-centred extension; layout and conventions in sem_star.h, the
 * method in docs/sem.md ("The star smoother"). */
#include <lapacke.h>
#include <math.h>
#include <string.h>
#include "core/par.h"
#include "disc/sem/sem_star.h"

void hpmg_sem_block1d_free(hpmg_sem_block1d *b) {
  if (!b) return;
  hpmg_free(&b->M);
  hpmg_free(&b->L);
  hpmg_free(&b->S);
  hpmg_free(&b->ST);
  hpmg_free(&b->lam);
  hpmg_free(&b->mask);
  hpmg_free(&b->onpl);
  hpmg_free(&b->w);
  memset(b, 0, sizeof *b);
}

size_t hpmg_sem_block1d_bytes(const hpmg_sem_block1d *b) {
  const size_t n = (size_t)b->n;
  const size_t ld = (size_t)b->ld;
  return sizeof(double) * (2 * n * ld + n * n + ld + 3 * n + (b->w ? n : 0));
}

double hpmg_sem_weight7(double t) {
  const double t2 = t * t;
  return 1.0 - t2 * t2 * (35.0 + t * (-84.0 + t * (70.0 - 20.0 * t)));
}

/* L S = M S Lambda on the coupled points [lo, hi), identity padding outside */
static hpmg_error block_eigen(hpmg_sem_block1d *b) {
  const int n = b->n, ld = b->ld, lo = b->lo, na = b->hi - b->lo;
  double *A = NULL, *B = NULL, *ev = NULL;
  hpmg_error e = hpmg_calloc(sizeof(double) * (size_t)(2 * na * na + na), &A);
  if (e) return e;
  B = A + na * na;
  ev = B + na * na;
  for (int i = 0; i < na; i++) {
    for (int j = 0; j < na; j++) A[i * na + j] = b->L[(lo + i) * n + lo + j];
    B[i * na + i] = b->M[lo + i];
  }
  const int bt = hpmg_blas_serial_begin();
  lapack_int info = LAPACKE_dsygv(LAPACK_ROW_MAJOR, 1, 'V', 'U', na, A, na, B, na, ev);
  hpmg_blas_serial_end(bt);
  if (info != 0) {
    hpmg_free(&A);
    return hpmg_error_set(HPMG_ERR_NUMERIC,
                          "sem star: generalized eigenproblem of the 1D block failed (p=%d, %d elements, "
                          "LAPACKE_dsygv info=%d)", b->p, b->ne, (int)info);
  }
  for (int i = 0; i < n; i++) b->S[i * ld + i] = 1.0; /* columns n..ld-1 stay 0 */
  for (int a = 0; a < ld; a++) b->lam[a] = 1.0;
  for (int i = 0; i < na; i++) {
    for (int a = 0; a < na; a++) b->S[(lo + i) * ld + lo + a] = A[i * na + a];
    b->lam[lo + i] = ev[i];
  }
  /* both ends Neumann: the constant is in the kernel of L; its eigenvalue is 0 */
  if (b->floating) b->lam[lo] = 0.0;
  for (int i = 0; i < n; i++)
    for (int a = 0; a < n; a++) b->ST[a * ld + i] = b->S[i * ld + a];
  hpmg_free(&A);
  return HPMG_SUCCESS;
}

hpmg_error hpmg_sem_block1d_create(const hpmg_sem_element *el, int ne, const double *h, const int *side,
                                   hpmg_sem_block1d *b) {
  HPMG_CHECK_ARG(b != NULL, "sem star: NULL block");
  memset(b, 0, sizeof *b);
  HPMG_CHECK_ARG(el != NULL && h != NULL && side != NULL, "sem star: NULL argument");
  HPMG_CHECK_ARG(ne == HPMG_SEM_STAR_VERTEX || ne == HPMG_SEM_STAR_ELEMENT,
                 "sem star: %d elements per direction (2: vertex star, 3: element-centred block)", ne);
  for (int s = 0; s < 2; s++)
    HPMG_CHECK_ARG(side[s] == HPMG_SEM_SIDE_ELEMENT || side[s] == HPMG_SEM_SIDE_NEUMANN ||
                       side[s] == HPMG_SEM_SIDE_DIRICHLET,
                   "sem star: side[%d] = %d is none of element (0), Neumann (1), Dirichlet (2)", s, side[s]);
  HPMG_CHECK_ARG(ne == HPMG_SEM_STAR_ELEMENT || side[0] == HPMG_SEM_SIDE_ELEMENT || side[1] == HPMG_SEM_SIDE_ELEMENT,
                 "sem star: a vertex star needs an element on at least one side (sides %d, %d)", side[0], side[1]);
  for (int e = 0; e < ne; e++) {
    const int present = !(e == 0 && side[0]) && !(e == ne - 1 && side[1]);
    HPMG_CHECK_ARG(!present || (isfinite(h[e]) && h[e] > 0), "sem star: element width h[%d] = %g must be positive",
                   e, h[e]);
  }
  const int p = el->p, n = ne * p - 1, np = ne - 1;
  b->p = p;
  b->ne = ne;
  b->n = n;
  b->ld = (n + 3) / 4 * 4;
  b->np = np;
  for (int j = 0; j < np; j++) b->c[j] = (j + 1) * p - 1;
  b->lo = side[0] == HPMG_SEM_SIDE_ELEMENT ? 0 : side[0] == HPMG_SEM_SIDE_NEUMANN ? b->c[0] : b->c[0] + 1;
  b->hi = side[1] == HPMG_SEM_SIDE_ELEMENT ? n : side[1] == HPMG_SEM_SIDE_NEUMANN ? b->c[np - 1] + 1 : b->c[np - 1];
  b->floating = side[0] == HPMG_SEM_SIDE_NEUMANN && side[1] == HPMG_SEM_SIDE_NEUMANN;
  hpmg_error e = HPMG_SUCCESS;
#define ALLOC(ptr, count)                                                     \
  if (e == HPMG_SUCCESS) e = hpmg_calloc(sizeof(double) * (size_t)(count), &(ptr))
  ALLOC(b->M, n);
  ALLOC(b->L, n * n);
  ALLOC(b->S, n * b->ld);
  ALLOC(b->ST, n * b->ld);
  ALLOC(b->lam, b->ld);
  ALLOC(b->mask, n);
  ALLOC(b->onpl, n);
  if (ne == HPMG_SEM_STAR_VERTEX) ALLOC(b->w, n);
#undef ALLOC
  if (e) {
    hpmg_sem_block1d_free(b);
    return e;
  }
  /* assemble the present elements on the coupled points: node q of element e
   * is point e*p + q - 1; mass h/2 M_S, stiffness 2/h L_S */
  const int nn = p + 1;
  for (int el_i = 0; el_i < ne; el_i++) {
    if ((el_i == 0 && side[0]) || (el_i == ne - 1 && side[1])) continue;
    const double hm = 0.5 * h[el_i], hl = 2.0 / h[el_i];
    for (int q = 0; q <= p; q++) {
      const int i = el_i * p + q - 1;
      if (i < b->lo || i >= b->hi) continue;
      b->M[i] += hm * el->M[q];
      for (int r = 0; r <= p; r++) {
        const int j = el_i * p + r - 1;
        if (j >= b->lo && j < b->hi) b->L[i * n + j] += hl * el->L[q * nn + r];
      }
    }
  }
  for (int i = 0; i < n; i++) b->mask[i] = i >= b->lo && i < b->hi;
  for (int j = 0; j < np; j++) b->onpl[b->c[j]] = 1.0;
  if (b->w) { /* t: distance from the vertex in element widths */
    for (int q = 1; q < p; q++) {
      b->w[q - 1] = hpmg_sem_weight7(0.5 * (1.0 - el->x[q]));
      b->w[p + q - 1] = hpmg_sem_weight7(0.5 * (1.0 + el->x[q]));
    }
    b->w[p - 1] = 1.0;
  }
  e = block_eigen(b);
  if (e) hpmg_sem_block1d_free(b);
  return e;
}

hpmg_error hpmg_sem_star_init(hpmg_sem_star *st, int dim, const hpmg_sem_block1d *const *b, double lambda) {
  HPMG_CHECK_ARG(st != NULL && b != NULL, "sem star: NULL argument");
  memset(st, 0, sizeof *st);
  HPMG_CHECK_ARG(dim == 2 || dim == 3, "sem star: dimension %d not supported (2 or 3)", dim);
  HPMG_CHECK_ARG(isfinite(lambda) && lambda >= 0, "sem star: lambda = %g must be finite and >= 0", lambda);
  int floating = 1;
  for (int k = 0; k < dim; k++) {
    HPMG_CHECK_ARG(b[k] != NULL && b[k]->S != NULL, "sem star: block of direction %d not created", k + 1);
    HPMG_CHECK_ARG(b[k]->p == b[0]->p && b[k]->ne == b[0]->ne,
                   "sem star: block of direction %d has p=%d, %d elements; direction 1 has p=%d, %d elements", k + 1,
                   b[k]->p, b[k]->ne, b[0]->p, b[0]->ne);
    floating &= b[k]->floating;
  }
  HPMG_CHECK_ARG(!(floating && lambda == 0),
                 "sem star: Neumann on both sides in every direction with lambda = 0 leaves the block singular");
  st->dim = dim;
  st->p = b[0]->p;
  st->ne = b[0]->ne;
  st->n = b[0]->n;
  st->ld = b[0]->ld;
  st->np = b[0]->np;
  st->nf = dim * st->np;
  st->fsize = dim == 2 ? (size_t)st->n : (size_t)st->n * st->n;
  st->size = st->nf * st->fsize;
  st->lambda = lambda;
  for (int k = 0; k < dim; k++) st->b[k] = b[k];
  return HPMG_SUCCESS;
}

size_t hpmg_sem_star_work_size(const hpmg_sem_star *st) {
  const size_t row = st->dim == 2 ? 1 : (size_t)st->n; /* faces held as rows of ld */
  return 2 * (st->nf + 1) * row * st->ld;
}

size_t hpmg_sem_star_tpf_work_size(const hpmg_sem_star *st) {
  size_t v = 1;
  for (int k = 0; k < st->dim; k++) v *= (size_t)st->n;
  return 2 * v;
}

double hpmg_sem_star_flops(const hpmg_sem_star *st) {
  const double n = st->n, nd = st->dim == 2 ? n * n : n * n * n, nf = st->nf;
  const double transforms = st->dim == 2 ? 2.0 * nf * 2.0 * n * n : 2.0 * nf * 4.0 * n * n * n;
  return transforms + (4.0 * nf + 1.0) * nd;
}

double hpmg_sem_star_tpf_flops(const hpmg_sem_star *st) {
  double nd = 1.0;
  for (int k = 0; k < st->dim; k++) nd *= st->n;
  return 4.0 * st->dim * nd * st->n + 2.0 * nd;
}

void hpmg_sem_star_solve(const hpmg_sem_star *st, const double *f, double *u, double *work) {
  hpmg_sem_star_kernels_select()->solve(st, f, u, work);
}

/* out = A applied along direction k of an n^dim array (x1 fastest):
 * out[.., a, ..] = sum_i A[a*ld + i] in[.., i, ..] */
static void sweep(int dim, int n, int ld, int k, const double *A, const double *in, double *out) {
  size_t lo = 1, hi = 1;
  for (int l = 0; l < k; l++) lo *= (size_t)n;
  for (int l = k + 1; l < dim; l++) hi *= (size_t)n;
  for (size_t o = 0; o < hi; o++)
    for (int a = 0; a < n; a++) {
      double *dst = out + (o * n + a) * lo;
      for (size_t q = 0; q < lo; q++) dst[q] = 0.0;
      for (int i = 0; i < n; i++) {
        const double x = A[(size_t)a * ld + i];
        const double *src = in + (o * n + i) * lo;
        for (size_t q = 0; q < lo; q++) dst[q] += x * src[q];
      }
    }
}

/* position of entry q of face fc in the n^dim block array */
static size_t face_point(const hpmg_sem_star *st, int fc, size_t q) {
  const int n = st->n, k = fc / st->np, j = fc % st->np;
  int idx[3] = {0, 0, 0};
  idx[k] = st->b[k]->c[j];
  if (st->dim == 2)
    idx[1 - k] = (int)q;
  else {
    int R, C;
    hpmg_sem_face_dirs(k, &R, &C);
    idx[R] = (int)(q / n);
    idx[C] = (int)(q % n);
  }
  return ((size_t)idx[2] * n + idx[1]) * n + idx[0];
}

void hpmg_sem_star_solve_tpf(const hpmg_sem_star *st, const double *f, double *u, double *work) {
  const int n = st->n, dim = st->dim;
  const size_t V = hpmg_sem_star_tpf_work_size(st) / 2;
  double *X = work, *Y = work + V;
  memset(X, 0, sizeof(double) * V);
  for (int fc = st->nf - 1; fc >= 0; fc--) /* each point once; the copies agree on input */
    for (size_t q = 0; q < st->fsize; q++) X[face_point(st, fc, q)] = f[fc * st->fsize + q];
  for (size_t v = 0; v < V; v++) { /* decoupled points carry no data */
    size_t r = v;
    for (int k = 0; k < dim; k++, r /= n) X[v] *= st->b[k]->mask[r % n];
  }
  for (int k = 0; k < dim; k++) { /* X <- (S^T)^{(x)dim} X */
    sweep(dim, n, st->ld, k, st->b[k]->ST, X, Y);
    memcpy(X, Y, sizeof(double) * V);
  }
  for (size_t v = 0; v < V; v++) {
    size_t r = v;
    double dd = st->lambda;
    for (int k = 0; k < dim; k++, r /= n) dd += st->b[k]->lam[r % n];
    X[v] /= dd;
  }
  for (int k = 0; k < dim; k++) {
    sweep(dim, n, st->ld, k, st->b[k]->S, X, Y);
    memcpy(X, Y, sizeof(double) * V);
  }
  for (int fc = 0; fc < st->nf; fc++)
    for (size_t q = 0; q < st->fsize; q++) u[fc * st->fsize + q] = X[face_point(st, fc, q)];
}

hpmg_error hpmg_sem_star_weigh(const hpmg_sem_star *st, double *u) {
  HPMG_CHECK_ARG(st != NULL && u != NULL, "sem star: NULL argument");
  HPMG_CHECK_ARG(st->ne == HPMG_SEM_STAR_VERTEX, "sem star: weights are defined for the vertex star only");
  const int n = st->n;
  for (int k = 0; k < st->dim; k++) {
    double *uf = u + k * st->fsize;
    const double wk = st->b[k]->w[st->b[k]->c[0]];
    if (st->dim == 2) {
      const double *w = st->b[1 - k]->w;
      for (int i = 0; i < n; i++) uf[i] *= wk * w[i];
    } else {
      int R, C;
      hpmg_sem_face_dirs(k, &R, &C);
      const double *wR = st->b[R]->w, *wC = st->b[C]->w;
      for (int r = 0; r < n; r++)
        for (int s = 0; s < n; s++) uf[(size_t)r * n + s] *= wk * wR[r] * wC[s];
    }
  }
  return HPMG_SUCCESS;
}
