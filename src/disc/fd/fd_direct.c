/* Direct solver of the box FD operator: real transforms along the uniform
 * directions, tridiagonal solves along at most one non-uniform direction.
 *
 * The eigen-decompositions M = W^{-1} K = B diag(mu) F on a uniform
 * direction of n unknowns and spacing h (s(t) = 4/h^2 sin^2(t)); the
 * columns of B are the eigenvectors, F = B^{-1} = (the other kind) / norm:
 *   layout  faces  eigenvector j-th entry        B      F      norm   mu_k
 *   vertex  D D    sin(pi (j+1)(k+1)/(n+1))      DST1   DST1   2(n+1) s(pi (k+1)/(2(n+1)))
 *   vertex  N N    cos(pi j k/(n-1))             DCT1   DCT1   2(n-1) s(pi k/(2(n-1)))
 *   vertex  D N    sin(pi (j+1)(2k+1)/(2n))      DST2   DST3   2n     s(pi (2k+1)/(4n))
 *   vertex  N D    cos(pi j (2k+1)/(2n))         DCT2   DCT3   2n     s(pi (2k+1)/(4n))
 *   cell    D D    sin(pi (2j+1)(k+1)/(2n))      DST3   DST2   2n     s(pi (k+1)/(2n))
 *   cell    N N    cos(pi (2j+1) k/(2n))         DCT3   DCT2   2n     s(pi k/(2n))
 *   cell    D N    sin(pi (2j+1)(2k+1)/(4n))     DST4   DST4   2n     s(pi (2k+1)/(4n))
 *   cell    N D    cos(pi (2j+1)(2k+1)/(4n))     DCT4   DCT4   2n     s(pi (2k+1)/(4n))
 *   both    P P    cos/sin(2 pi j k/n)           HC2R   R2HC   n      s(pi k/n), k the
 *                                                                     halfcomplex position
 * (vertex N ends have half widths, which the DCT1's half end weights match;
 * a cell D face couples with 2/h, which makes the DST2/DST4 vectors exact.)
 * D N means Dirichlet at the min face, Neumann at the max face. */
#include "disc/fd/fd_direct.h"
#include <math.h>
#include <omp.h>
#include <string.h>
#ifdef HPMG_HAVE_FFTW
#include <fftw3.h>
#endif

#define FDD_PI 3.14159265358979323846
#define FDD_BLOCK 64 /* lines per tridiagonal block (inner contiguous index) */
#define FDD_SERIAL_MAX 32768 /* unknowns below which the solve runs on one thread */

void fd_direct_dir_free(fd_direct_dir *d) {
  hpmg_free(&d->mu);
  hpmg_free(&d->w);
  hpmg_free(&d->lo);
  hpmg_free(&d->di);
  hpmg_free(&d->up);
}

hpmg_error fd_direct_dir_init(const hpmg_box *box, int d, fd_direct_dir *dir) {
  memset(dir, 0, sizeof *dir);
  HPMG_CHECK_ARG(d >= 0 && d < box->dim, "fd_direct: direction %d out of range", d);
  const int64_t cells = box->cells[d], n = hpmg_box_n(box, d);
  const double *x = box->x[d];
  HPMG_CHECK_ARG(x, "fd_direct: direction %d has no node coordinates", d);
  const hpmg_bc_kind b0 = box->bc[2 * d], b1 = box->bc[2 * d + 1];
  HPMG_CHECK_ARG((b0 == HPMG_BC_PERIODIC) == (b1 == HPMG_BC_PERIODIC),
                 "fd_direct: direction %d is periodic on one face only", d);
  const int per = b0 == HPMG_BC_PERIODIC, cell = box->layout == HPMG_FD_CELL;
  HPMG_CHECK_ARG(n >= 1 && cells >= 1, "fd_direct: direction %d has no unknowns (%lld cells)", d, (long long)cells);
  HPMG_CHECK_ARG(!per || cells >= 3, "fd_direct: periodic direction %d needs at least 3 cells, got %lld", d,
                 (long long)cells);
  for (int64_t i = 0; i < cells; i++)
    HPMG_CHECK_ARG(x[i + 1] > x[i], "fd_direct: direction %d: node coordinates not increasing at %lld", d,
                   (long long)i);
  dir->n = n;
  dir->uniform = box->uniform[d];
  dir->periodic = per;
  dir->singular = b0 != HPMG_BC_DIRICHLET && b1 != HPMG_BC_DIRICHLET;
  const size_t bytes = sizeof(double) * (size_t)n;
  hpmg_error e = hpmg_calloc(bytes, &dir->mu);
  if (!e) e = hpmg_calloc(bytes, &dir->w);
  if (!e) e = hpmg_calloc(bytes, &dir->lo);
  if (!e) e = hpmg_calloc(bytes, &dir->di);
  if (!e) e = hpmg_calloc(bytes, &dir->up);
  if (e) { fd_direct_dir_free(dir); return e; }
#define H(i) (x[(i) + 1] - x[(i)])
  if (!cell) {
    /* unknown i sits at node m = first + i; periodic: nodes 0..cells-1 */
    const int64_t first = hpmg_box_first(box, d);
    for (int64_t i = 0; i < n; i++) {
      const int64_t m = first + i;
      double hl, hr; /* widths of the cells left and right of node m; 0: none */
      if (per) {
        hl = H(m == 0 ? cells - 1 : m - 1);
        hr = H(m);
      } else {
        hl = m > 0 ? H(m - 1) : 0;
        hr = m < cells ? H(m) : 0;
      }
      dir->w[i] = 0.5 * (hl + hr);
      if (hl > 0) {
        dir->di[i] += 1 / hl;
        const int left_unknown = per || m - 1 >= first; /* else: Dirichlet node (known value) */
        if (left_unknown) dir->lo[i] = 1 / hl;
      }
      if (hr > 0) {
        dir->di[i] += 1 / hr;
        const int right_unknown = per || m + 1 < first + n;
        if (right_unknown) dir->up[i] = 1 / hr;
      }
    }
  } else {
    for (int64_t i = 0; i < n; i++) {
      const double hi = H(i);
      dir->w[i] = hi;
      if (i > 0 || per) {
        const double dist = 0.5 * (H(i > 0 ? i - 1 : cells - 1) + hi);
        dir->lo[i] = 1 / dist;
        dir->di[i] += 1 / dist;
      } else if (b0 == HPMG_BC_DIRICHLET) {
        dir->di[i] += 2 / hi;
      }
      if (i < n - 1 || per) {
        const double dist = 0.5 * (hi + H(i < n - 1 ? i + 1 : 0));
        dir->up[i] = 1 / dist;
        dir->di[i] += 1 / dist;
      } else if (b1 == HPMG_BC_DIRICHLET) {
        dir->di[i] += 2 / hi;
      }
    }
  }
#undef H
  /* transforms and eigenvalues (uniform spacing h = len / cells) */
  const double h = (x[cells] - x[0]) / (double)cells, s = 4 / (h * h);
  dir->h = h;
  dir->wconst = dir->uniform && (cell || per || (b0 == HPMG_BC_DIRICHLET && b1 == HPMG_BC_DIRICHLET));
  const int D0 = b0 == HPMG_BC_DIRICHLET, D1 = b1 == HPMG_BC_DIRICHLET;
  double (*mu) = dir->mu;
  const double nn = (double)n;
  if (per) {
    dir->kf = FDX_R2HC; dir->kb = FDX_HC2R; dir->norm = nn;
    for (int64_t k = 0; k < n; k++) { const double t = sin(FDD_PI * k / nn); mu[k] = s * t * t; }
  } else if (D0 && D1) {
    if (!cell) { dir->kf = dir->kb = FDX_DST1; dir->norm = 2 * (nn + 1); }
    else { dir->kb = FDX_DST3; dir->kf = FDX_DST2; dir->norm = 2 * nn; }
    const double den = cell ? 2 * nn : 2 * (nn + 1);
    for (int64_t k = 0; k < n; k++) { const double t = sin(FDD_PI * (k + 1) / den); mu[k] = s * t * t; }
  } else if (!D0 && !D1) {
    if (!cell) {
      HPMG_CHECK_ARG(n >= 2, "fd_direct: direction %d: Neumann-Neumann vertex needs n >= 2", d);
      dir->kf = dir->kb = FDX_DCT1; dir->norm = 2 * (nn - 1);
    } else { dir->kb = FDX_DCT3; dir->kf = FDX_DCT2; dir->norm = 2 * nn; }
    const double den = cell ? 2 * nn : 2 * (nn - 1);
    for (int64_t k = 0; k < n; k++) { const double t = sin(FDD_PI * k / den); mu[k] = s * t * t; }
  } else {
    if (cell) dir->kf = dir->kb = D0 ? FDX_DST4 : FDX_DCT4;
    else if (D0) { dir->kb = FDX_DST2; dir->kf = FDX_DST3; }
    else { dir->kb = FDX_DCT2; dir->kf = FDX_DCT3; }
    dir->norm = 2 * nn;
    for (int64_t k = 0; k < n; k++) { const double t = sin(FDD_PI * (2 * k + 1) / (4 * nn)); mu[k] = s * t * t; }
  }
  if (dir->singular) mu[0] = 0; /* exactly: the constants */
  return HPMG_SUCCESS;
}

struct fd_direct_s {
  int dim, device, tri; /* tri: the tridiagonal direction or -1 */
  int threads;          /* OpenMP / FFTW threads: 1 on small grids, where a parallel region costs more than it saves */
  int singular;
  int64_t n[3], size;
  int64_t str[3];       /* array strides: compact (1, n0, n0 n1), or the caller's (embedded) */
  double *embed;        /* embedded: the caller's array the plans were made on (solves are in place on it) */
  double lambda;
  fd_direct_dir dir[3];
  double *buf;          /* CPU work array */
  double *scratch;      /* CPU: per thread tridiagonal scratch */
  int64_t scratch_per_thread;
  double plan_s, defect_sum, defect_rel;
  void *cuda;
#ifdef HPMG_HAVE_FFTW
  fftw_plan fwd, bwd;
#endif
};

int64_t fd_direct_size(fd_direct s) { return s->size; }
double fd_direct_plan_seconds(fd_direct s) { return s->plan_s; }
int fd_direct_tri_dir(fd_direct s) { return s->tri; }
int fd_direct_gpu_fast(fd_direct s) { return s->device && s->cuda && fd_cuda_direct_fast(s->cuda); }
void fd_direct_defect(fd_direct s, double *sum, double *rel) {
  if (sum) *sum = s->defect_sum;
  if (rel) *rel = s->defect_rel;
}

void fd_direct_destroy(fd_direct *sp) {
  if (!sp || !*sp) return;
  fd_direct s = *sp;
#ifdef HPMG_HAVE_FFTW
  if (s->fwd) fftw_destroy_plan(s->fwd);
  if (s->bwd) fftw_destroy_plan(s->bwd);
#endif
  if (s->cuda) fd_cuda_direct_destroy(s->cuda);
  hpmg_free(&s->buf);
  hpmg_free(&s->scratch);
  for (int d = 0; d < 3; d++) fd_direct_dir_free(&s->dir[d]);
  hpmg_free(sp);
}

/* ---- tridiagonal solves along direction t (CPU) */

/* Lines q = 0..nb-1 of one block: g[j*st + q], j = 0..N-1, in place:
 * (K + sig[q] W) v = scale g. cp, z: N*FDD_BLOCK scratch each (z: periodic). */
static void tri_block(const fd_direct_dir *T, const double *sig, int nb, double *g, int64_t st, double scale,
                      double *cp, double *z) {
  const int64_t N = T->n;
  const double *lo = T->lo, *di = T->di, *up = T->up, *w = T->w;
  if (!T->periodic) {
    for (int q = 0; q < nb; q++) {
      const double den = di[0] + sig[q] * w[0];
      cp[q] = -up[0] / den;
      g[q] = scale * g[q] / den;
    }
    for (int64_t j = 1; j < N; j++) {
      double *gj = g + j * st;
      const double *gm = gj - st, *cm = cp + (j - 1) * FDD_BLOCK;
      double *cj = cp + j * FDD_BLOCK;
      for (int q = 0; q < nb; q++) {
        const double den = di[j] + sig[q] * w[j] + lo[j] * cm[q];
        cj[q] = -up[j] / den;
        gj[q] = (scale * gj[q] + lo[j] * gm[q]) / den;
      }
    }
    for (int64_t j = N - 2; j >= 0; j--) {
      double *gj = g + j * st;
      const double *gp = gj + st, *cj = cp + j * FDD_BLOCK;
      for (int q = 0; q < nb; q++) gj[q] -= cj[q] * gp[q];
    }
    return;
  }
  /* cyclic: Sherman-Morrison with gamma = -b_0; a0 = -lo[0] (row 0 to N-1),
   * cN = -up[N-1] (row N-1 to 0); T' = T with b0 - gamma, b_{N-1} - a0 cN / gamma;
   * T' y = g, T' z = (gamma, 0.., cN); v = y - z (y0 + a0 y_{N-1}/gamma) / (1 + z0 + a0 z_{N-1}/gamma) */
  const double a0 = -lo[0], cN = -up[N - 1];
  double gam[FDD_BLOCK];
  for (int q = 0; q < nb; q++) {
    const double b0 = di[0] + sig[q] * w[0];
    gam[q] = -b0;
    const double den = b0 - gam[q];
    cp[q] = -up[0] / den;
    g[q] = scale * g[q] / den;
    z[q] = gam[q] / den;
  }
  for (int64_t j = 1; j < N; j++) {
    double *gj = g + j * st, *zj = z + j * FDD_BLOCK;
    const double *gm = gj - st, *cm = cp + (j - 1) * FDD_BLOCK, *zm = zj - FDD_BLOCK;
    double *cj = cp + j * FDD_BLOCK;
    const double aj = -lo[j];
    for (int q = 0; q < nb; q++) {
      double bj = di[j] + sig[q] * w[j];
      if (j == N - 1) bj -= a0 * cN / gam[q];
      const double den = bj - aj * cm[q];
      cj[q] = j == N - 1 ? 0 : -up[j] / den;
      gj[q] = (scale * gj[q] - aj * gm[q]) / den;
      zj[q] = ((j == N - 1 ? cN : 0) - aj * zm[q]) / den;
    }
  }
  for (int64_t j = N - 2; j >= 0; j--) {
    double *gj = g + j * st, *zj = z + j * FDD_BLOCK;
    const double *gp = gj + st, *zp = zj + FDD_BLOCK, *cj = cp + j * FDD_BLOCK;
    for (int q = 0; q < nb; q++) {
      gj[q] -= cj[q] * gp[q];
      zj[q] -= cj[q] * zp[q];
    }
  }
  const double *gl = g + (N - 1) * st, *zl = z + (N - 1) * FDD_BLOCK;
  double f[FDD_BLOCK];
  for (int q = 0; q < nb; q++)
    f[q] = (g[q] + a0 * gl[q] / gam[q]) / (1 + z[q] + a0 * zl[q] / gam[q]);
  for (int64_t j = 0; j < N; j++) {
    double *gj = g + j * st;
    const double *zj = z + j * FDD_BLOCK;
    for (int q = 0; q < nb; q++) gj[q] -= f[q] * zj[q];
  }
}

/* The constant mode's line of a singular problem: K v = d - w (sum d / sum w),
 * v_0 pinned to 0, then v -= (w . v) / sum w. d: N values with stride st. */
static void tri_singular_line(const fd_direct_dir *T, double *g, int64_t st, double scale, double *v) {
  const int64_t N = T->n;
  double sd = 0, sw = 0;
  for (int64_t j = 0; j < N; j++) { v[j] = scale * g[j * st]; sd += v[j]; sw += T->w[j]; }
  for (int64_t j = 0; j < N; j++) v[j] -= T->w[j] * sd / sw;
  /* rows 1..N-1, unknowns 1..N-1 (couplings to v_0, including a periodic wrap, vanish) */
  v[0] = 0;
  if (N > 1) {
    double *cp = g; /* the line's own storage holds the modified upper diagonal */
    /* plain Thomas written out (clarity over reuse: one line per solve) */
    double cprev = 0, dprev = 0;
    for (int64_t j = 1; j < N; j++) {
      const double a = j > 1 ? -T->lo[j] : 0, c = j < N - 1 ? -T->up[j] : 0;
      const double den = T->di[j] - a * cprev;
      cprev = c / den;
      dprev = (v[j] - a * dprev) / den;
      cp[j * st] = cprev;
      v[j] = dprev;
    }
    for (int64_t j = N - 2; j >= 1; j--) v[j] -= cp[j * st] * v[j + 1];
  }
  double m = 0;
  for (int64_t j = 0; j < N; j++) m += T->w[j] * v[j];
  for (int64_t j = 0; j < N; j++) g[j * st] = v[j] - m / sw;
}

#ifdef HPMG_HAVE_FFTW
static fftw_r2r_kind fftw_kind(fd_direct_kind k) {
  switch (k) {
  case FDX_R2HC: return FFTW_R2HC;
  case FDX_HC2R: return FFTW_HC2R;
  case FDX_DST1: return FFTW_RODFT00;
  case FDX_DCT1: return FFTW_REDFT00;
  case FDX_DCT2: return FFTW_REDFT10;
  case FDX_DCT3: return FFTW_REDFT01;
  case FDX_DST2: return FFTW_RODFT10;
  case FDX_DST3: return FFTW_RODFT01;
  case FDX_DCT4: return FFTW_REDFT11;
  case FDX_DST4: return FFTW_RODFT11;
  }
  return FFTW_R2HC;
}
#endif

static hpmg_error create(const hpmg_box *box, double lambda, int device, int measure, double *embed,
                         const int64_t estr[3], fd_direct *sp) {
  HPMG_CHECK_ARG(sp, "fd_direct: NULL output");
  *sp = NULL;
  HPMG_CHECK_ARG(box && (box->dim == 2 || box->dim == 3), "fd_direct: the box must be 2D or 3D");
  HPMG_CHECK_ARG(lambda >= 0 && isfinite(lambda), "fd_direct: lambda must be finite and >= 0, got %g", lambda);
  int nonuni = 0, tri = -1;
  for (int d = 0; d < box->dim; d++)
    if (!box->uniform[d]) { nonuni++; tri = d; }
  HPMG_CHECK_ARG(nonuni <= 1,
                 "fd_direct: the direct solver takes at most one non-uniform direction (this box has %d); "
                 "use the multigrid solver",
                 nonuni);
#ifndef HPMG_HAVE_FFTW
  if (!device)
    return hpmg_error_set(HPMG_ERR_BACKEND,
                          "fd: the direct (FFT) solver on the CPU needs FFTW (install libfftw3-dev and reconfigure)");
#endif
  HPMG_CHECK_ARG(!embed || (!device && tri < 0 && estr[0] == 1),
                 "fd_direct: an embedded array needs the CPU, uniform directions and unit stride in x");
  fd_direct s;
  HPMG_CALL(hpmg_calloc(sizeof *s, &s));
  s->dim = box->dim;
  s->device = device;
  s->tri = tri;
  s->lambda = lambda;
  s->singular = hpmg_box_neumann_like(box) && lambda == 0;
  s->size = 1;
  hpmg_error e = HPMG_SUCCESS;
  for (int d = 0; d < 3; d++) {
    s->n[d] = hpmg_box_n(box, d);
    s->size *= s->n[d];
    if (d < box->dim && !e) e = fd_direct_dir_init(box, d, &s->dir[d]);
  }
  if (e) { fd_direct_destroy(&s); return e; }
  s->embed = embed;
  for (int d = 0; d < 3; d++) s->str[d] = embed ? estr[d] : (d == 0 ? 1 : s->str[d - 1] * s->n[d - 1]);
  s->threads = s->size >= FDD_SERIAL_MAX ? omp_get_max_threads() : 1;
  const double t0 = hpmg_wtime();
  if (device) {
    e = fd_cuda_direct_create(s->dim, s->dir, lambda, &s->cuda);
    if (e) { fd_direct_destroy(&s); return e; }
    s->plan_s = hpmg_wtime() - t0;
    *sp = s;
    return HPMG_SUCCESS;
  }
#ifdef HPMG_HAVE_FFTW
  (void)measure;
  if (!embed) e = hpmg_calloc(sizeof(double) * (size_t)s->size, &s->buf);
  if (!e && tri >= 0) {
    s->scratch_per_thread = 2 * s->n[tri] * FDD_BLOCK;
    e = hpmg_malloc(sizeof(double) * (size_t)(s->scratch_per_thread * s->threads), &s->scratch);
  }
  if (e) { fd_direct_destroy(&s); return e; }
#ifdef HPMG_HAVE_FFTW_OMP
  static int threads_ready = 0;
  if (!threads_ready) { fftw_init_threads(); threads_ready = 1; }
  fftw_plan_with_nthreads(s->threads);
#endif
  fftw_iodim64 dims[3], loop[1];
  fftw_r2r_kind kf[3], kb[3];
  int rank = 0, howmany = 0;
  const int64_t *strides = s->str;
  double *pa = embed ? embed : s->buf;
  for (int d = s->dim - 1; d >= 0; d--) {
    if (d == tri) {
      loop[0].n = s->n[d]; loop[0].is = loop[0].os = strides[d];
      howmany = 1;
      continue;
    }
    dims[rank].n = s->n[d];
    dims[rank].is = dims[rank].os = strides[d];
    kf[rank] = fftw_kind(s->dir[d].kf);
    kb[rank] = fftw_kind(s->dir[d].kb);
    rank++;
  }
  const unsigned flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
  s->fwd = fftw_plan_guru64_r2r(rank, dims, howmany, loop, pa, pa, kf, flags);
  s->bwd = fftw_plan_guru64_r2r(rank, dims, howmany, loop, pa, pa, kb, flags);
  if (!s->fwd || !s->bwd) {
    fd_direct_destroy(&s);
    return hpmg_error_set(HPMG_ERR_BACKEND, "fd_direct: FFTW planning failed");
  }
  s->plan_s = hpmg_wtime() - t0;
  *sp = s;
  return HPMG_SUCCESS;
#else
  (void)measure;
  fd_direct_destroy(&s);
  return hpmg_error_set(HPMG_ERR_BACKEND, "fd_direct: FFTW not available");
#endif
}

hpmg_error fd_direct_create(const hpmg_box *box, double lambda, int device, int measure, fd_direct *sp) {
  return create(box, lambda, device, measure, NULL, NULL, sp);
}

hpmg_error fd_direct_create_embedded(const hpmg_box *box, double lambda, int measure, double *array,
                                     const int64_t stride[3], fd_direct *sp) {
  HPMG_CHECK_ARG(array && stride, "fd_direct: NULL embedded array");
  return create(box, lambda, 0, measure, array, stride, sp);
}

hpmg_error fd_direct_solve(fd_direct s, const double *b, double *u) {
  HPMG_CHECK_ARG(s && b && u, "fd_direct_solve: NULL argument");
  if (s->device) {
    double sum = 0, abs = 0;
    HPMG_CALL(fd_cuda_direct_solve(s->cuda, b, u, s->singular ? &sum : NULL, s->singular ? &abs : NULL));
    s->defect_sum = sum;
    s->defect_rel = abs > 0 ? fabs(sum) / abs : 0;
    return HPMG_SUCCESS;
  }
#ifdef HPMG_HAVE_FFTW
  const int64_t n0 = s->n[0], n1 = s->n[1], n2 = s->n[2];
  const int tri = s->tri;
  const int64_t str1 = s->str[1], str2 = s->str[2];
  /* work in u itself where FFTW's plans allow it: same alignment as the array they were made on */
  double *g = s->buf;
  if (s->embed) {
    HPMG_CHECK_ARG(b == u && fftw_alignment_of(u) == fftw_alignment_of(s->embed),
                   "fd_direct: an embedded solver solves in place on an array aligned like its own");
    g = u;
  } else if (fftw_alignment_of(u) == fftw_alignment_of(s->buf)) {
    g = u;
  }
  /* g = b / prod_{uniform d} w_d. Directions whose widths are all h (wconst)
   * divide through the final scale instead, so an in-place solve of a
   * non-singular problem with such directions only needs no pass here. */
  const double one = 1.0;
  double hprod = 1;
  int wpass = s->singular || g != b;
  const double *wd[3] = {&one, &one, &one};
  int wstep[3] = {0, 0, 0};
  for (int d = 0; d < s->dim; d++) {
    if (d == tri) continue;
    if (s->dir[d].wconst) hprod *= s->dir[d].h;
    else { wd[d] = s->dir[d].w; wstep[d] = 1; wpass = 1; }
  }
  double sum = 0, abs = 0;
  if (wpass) {
    const double *w0 = wd[0], *w1 = wd[1], *w2 = wd[2];
    const int st0 = wstep[0], st1 = wstep[1], st2 = wstep[2];
#pragma omp parallel for collapse(2) schedule(static) reduction(+ : sum, abs) num_threads(s->threads)
    for (int64_t k = 0; k < n2; k++)
      for (int64_t j = 0; j < n1; j++) {
        const double wjk = w1[j * st1] * w2[k * st2];
        const int64_t base = j * str1 + k * str2;
        for (int64_t i = 0; i < n0; i++) {
          const double v = b[base + i];
          sum += v;
          abs += fabs(v);
          g[base + i] = v / (wjk * w0[i * st0]);
        }
      }
  }
  s->defect_sum = s->singular ? sum : 0;
  s->defect_rel = s->singular && abs > 0 ? fabs(sum) / abs : 0;
  fftw_execute_r2r(s->fwd, g, g);
  double norm = 1;
  for (int d = 0; d < s->dim; d++)
    if (d != tri) norm *= s->dir[d].norm;
  const double scale = 1 / (norm * hprod), lam = s->lambda;
  const double zero = 0.0;
  const double *m0 = s->dir[0].mu, *m1 = s->dir[1].mu, *m2 = s->dim == 3 ? s->dir[2].mu : &zero;
  if (tri < 0) {
#pragma omp parallel for collapse(2) schedule(static) num_threads(s->threads)
    for (int64_t k = 0; k < n2; k++)
      for (int64_t j = 0; j < n1; j++) {
        const double sjk = lam + m1[j] + m2[k];
        double *gl = g + j * str1 + k * str2;
        for (int64_t i = 0; i < n0; i++) {
          const double sg = sjk + m0[i];
          gl[i] = sg > 0 ? gl[i] * scale / sg : 0; /* sg == 0: the singular constant mode */
        }
      }
  } else {
    const fd_direct_dir *T = &s->dir[tri];
    const int64_t nt = s->n[tri], st = tri == 0 ? 1 : (tri == 1 ? n0 : n0 * n1);
    const int64_t s_in = st, s_out = s->size / (st * nt);
    const int64_t nblk = (s_in + FDD_BLOCK - 1) / FDD_BLOCK;
    double *saved = NULL;
    if (s->singular) HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)nt, &saved));
    if (saved)
      for (int64_t j = 0; j < nt; j++) saved[j] = g[j * st];
#pragma omp parallel num_threads(s->threads)
    {
      double *cp = s->scratch + s->scratch_per_thread * omp_get_thread_num();
      double *z = cp + nt * FDD_BLOCK;
      double sig[FDD_BLOCK];
#pragma omp for schedule(static)
      for (int64_t task = 0; task < s_out * nblk; task++) {
        const int64_t o = task / nblk, q0 = (task % nblk) * FDD_BLOCK;
        const int nb = (int)(s_in - q0 < FDD_BLOCK ? s_in - q0 : FDD_BLOCK);
        const int64_t base = o * st * nt + q0;
        for (int q = 0; q < nb; q++) {
          const int64_t idx = base + q, i = idx % n0, j = (idx / n0) % n1, k = idx / (n0 * n1);
          double sg = lam + (tri == 0 ? 0 : m0[i]) + (tri == 1 ? 0 : m1[j]) + (tri == 2 ? 0 : m2[k]);
          if (sg <= 0 && s->singular) sg = 1; /* the constant mode's line, solved below */
          sig[q] = sg;
        }
        tri_block(T, sig, nb, g + base, st, scale, cp, z);
      }
    }
    if (saved) {
      for (int64_t j = 0; j < nt; j++) g[j * st] = saved[j];
      tri_singular_line(T, g, st, scale, saved);
      hpmg_free(&saved);
    }
  }
  fftw_execute_r2r(s->bwd, g, g);
  if (g != u) memcpy(u, g, sizeof(double) * (size_t)s->size);
  return HPMG_SUCCESS;
#else
  return hpmg_error_set(HPMG_ERR_BACKEND, "fd_direct: FFTW not available");
#endif
}
