/* Vertex-patch Schwarz smoother: setup, memory accounting, the smoother
 * interface, and the kernels of patch_kernels.inc in double and float.
 * The method and the coloring are described in patch.h and docs/patch.md. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "la/vec.h"
#include "smoothers/patch.h"

typedef struct {
  hpmg_smoother base; /* first: the interface frees the struct through it */
  hpmg_patch_options o;
  double omega;       /* additive damping actually used */
  hpmg_fdm fdm;       /* one set of factors serves every patch of the level */
  double *inv_d;      /* dense local inverse (--local-solver dense) */
  float *inv_f;
  int64_t nv[3];      /* interior vertices per direction (1 in z for 2D) */
  int nthreads;
  size_t off[4];      /* offsets of bi, dx, rr, work in a thread buffer */
  size_t tstride;     /* entries per thread buffer */
  void *tbuf;         /* nthreads thread-private buffers, level precision */
} patch_smoother;

#define PATCH_CAT(a, b) PATCH_CAT_(a, b)
#define PATCH_CAT_(a, b) a##_##b

#define REAL double
#define PATCH_SFX d
#define PATCH_INV inv_d
#include "patch_kernels.inc"
#undef REAL
#undef PATCH_SFX
#undef PATCH_INV

#define REAL float
#define PATCH_SFX f
#define PATCH_INV inv_f
#include "patch_kernels.inc"
#undef REAL
#undef PATCH_SFX
#undef PATCH_INV

static size_t round16(size_t n) { return (n + 15) / 16 * 16; } /* 64-byte aligned float/double slices */

static int ipow(int b, int e) {
  int r = 1;
  while (e-- > 0) r *= b;
  return r;
}

/* Thread buffer: closed x, interior b, dx, dense residual, fdm scratch. */
static size_t thread_layout(int dim, int k, size_t off[4]) {
  hpmg_fdm f = {.dim = dim, .k = k, .m = 2 * k - 1, .n = 2 * k + 1};
  f.nloc = ipow(f.m, dim);
  f.nclosed = ipow(f.n, dim);
  size_t o = round16((size_t)f.nclosed);
  off[0] = o; o += round16((size_t)f.nloc);
  off[1] = o; o += round16((size_t)f.nloc);
  off[2] = o; o += round16((size_t)f.nloc);
  off[3] = o; o += round16(hpmg_fdm_work_size(&f));
  return o;
}

hpmg_error hpmg_patch_check(int dim, int k, const hpmg_patch_options *o) {
  HPMG_CHECK_ARG(o, "patch options are NULL");
  HPMG_CHECK_ARG(o->mode == HPMG_PATCH_MULTIPLICATIVE || o->mode == HPMG_PATCH_ADDITIVE, "unknown --patch-mode %d",
                 (int)o->mode);
  HPMG_CHECK_ARG(o->local == HPMG_LOCAL_FDM || o->local == HPMG_LOCAL_DENSE, "unknown --local-solver %d",
                 (int)o->local);
  HPMG_CHECK_ARG(k >= 1 && k <= HPMG_FDM_MAX_DEGREE, "the patch smoother supports degree 1..%d (got %d)",
                 HPMG_FDM_MAX_DEGREE, k);
  HPMG_CHECK_ARG(o->damping >= 0 && o->damping <= 1, "--patch-damping must be in (0,1] (0: default 1/2^dim; got %g)",
                 o->damping);
  HPMG_CHECK_ARG(o->damping == 0 || o->mode == HPMG_PATCH_ADDITIVE,
                 "--patch-damping applies to --patch-mode additive only (multiplicative updates are undamped)");
  const int nloc = ipow(2 * k - 1, dim);
  HPMG_CHECK_ARG(o->local != HPMG_LOCAL_DENSE || nloc <= HPMG_PATCH_DENSE_MAX,
                 "--local-solver dense stores a %dx%d inverse per level for Q%d in %dD (%.0f MB each); it is limited "
                 "to %d local unknowns (3D k <= 8): use --local-solver fdm",
                 nloc, nloc, k, dim, (double)nloc * nloc * 8 / 1e6, HPMG_PATCH_DENSE_MAX);
  return HPMG_SUCCESS;
}

double hpmg_patch_memory(int dim, int k, hpmg_real r, const hpmg_patch_options *o, double N, int nthreads) {
  const double rs = (double)hpmg_real_size(r);
  const double m = 2 * k - 1, n = 2 * k + 1, nloc = ipow(2 * k - 1, dim);
  size_t off[4];
  double bytes = (double)thread_layout(dim, k, off) * nthreads * rs;
  bytes += (dim * (4 * m * m + 4 * m * n + m) + nloc) * 12.0; /* fdm factors, double + float */
  if (o->local == HPMG_LOCAL_DENSE) bytes += nloc * nloc * (8.0 + (r == HPMG_REAL_FLOAT ? 4.0 : 0.0));
  if (o->mode == HPMG_PATCH_ADDITIVE) bytes += N * rs; /* global residual */
  return bytes;
}

static void patch_destroy(hpmg_smoother *s) {
  patch_smoother *P = (patch_smoother *)s;
  hpmg_fdm_free(&P->fdm);
  hpmg_free(&P->inv_d);
  hpmg_free(&P->inv_f);
  hpmg_free(&P->tbuf);
}

static void sweep(const patch_smoother *P, const void *b, void *x, const void *r, int reverse, int x_zero) {
  if (P->base.real == HPMG_REAL_DOUBLE) patch_sweep_d(P, b, x, r, reverse, x_zero);
  else patch_sweep_f(P, b, x, r, reverse, x_zero);
}

static hpmg_error patch_apply(hpmg_smoother *s, const void *b, void *x, int x_is_zero, int post, int sweeps) {
  patch_smoother *P = (patch_smoother *)s;
  const int64_t N = s->op->g.N;
  if (x_is_zero) hpmg_vec_zero(s->real, N, x);
  for (int sw = 0; sw < sweeps; sw++) {
    const int zero = x_is_zero && sw == 0;
    if (P->o.mode == HPMG_PATCH_MULTIPLICATIVE) {
      sweep(P, b, x, NULL, post, zero);
    } else {
      const void *r = b;
      if (!zero) {
        hpmg_laplace_residual(s->op, s->real, b, x, s->work[0]);
        s->matvecs++;
        r = s->work[0];
      }
      sweep(P, NULL, x, r, post, 0);
    }
  }
  return HPMG_SUCCESS;
}

hpmg_error hpmg_smoother_patch(const hpmg_laplace *op, hpmg_real r, const hpmg_patch_options *o, hpmg_smoother **out) {
  *out = NULL;
  const hpmg_grid *g = &op->g;
  HPMG_CALL(hpmg_patch_check(g->dim, g->k, o));
  patch_smoother *P = calloc(1, sizeof *P);
  if (!P) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate smoother");
  hpmg_smoother *s = &P->base;
  *out = s;
  s->name = "patch";
  s->apply = patch_apply;
  s->destroy = patch_destroy;
  s->op = op;
  s->real = r;
  P->o = *o;
  P->omega = o->damping > 0 ? o->damping : 1.0 / (1 << g->dim);
  for (int d = 0; d < 3; d++) P->nv[d] = d < g->dim ? g->cells[d] - 1 : 1;
  HPMG_CALL(hpmg_fdm_setup(g->dim, g->k, g->h, op->lambda, &P->fdm));
  if (o->local == HPMG_LOCAL_DENSE) {
    const size_t nn = (size_t)P->fdm.nloc * (size_t)P->fdm.nloc;
    HPMG_CALL(hpmg_malloc(nn * sizeof(double), &P->inv_d));
    HPMG_CALL(hpmg_fdm_dense_inverse(&P->fdm, P->inv_d));
    if (r == HPMG_REAL_FLOAT) {
      HPMG_CALL(hpmg_malloc(nn * sizeof(float), &P->inv_f));
      for (size_t i = 0; i < nn; i++) P->inv_f[i] = (float)P->inv_d[i];
    }
  }
  /* buffers for as many threads as a parallel region may get */
  P->nthreads = omp_get_max_threads();
  P->tstride = thread_layout(g->dim, g->k, P->off);
  HPMG_CALL(hpmg_malloc(P->tstride * (size_t)P->nthreads * hpmg_real_size(r), &P->tbuf));
  if (o->mode == HPMG_PATCH_ADDITIVE) HPMG_CALL(hpmg_malloc((size_t)g->N * hpmg_real_size(r), &s->work[0]));
  return HPMG_SUCCESS;
}

hpmg_error hpmg_patch_local_residual(const hpmg_smoother *s, const int64_t v[3], const void *b, const void *x,
                                     void *r) {
  HPMG_CHECK_ARG(s && s->apply == patch_apply, "not a patch smoother");
  const patch_smoother *P = (const patch_smoother *)s;
  const hpmg_grid *g = &s->op->g;
  for (int d = 0; d < g->dim; d++)
    HPMG_CHECK_ARG(v[d] >= 1 && v[d] <= P->nv[d], "vertex index %lld out of 1..%lld", (long long)v[d],
                   (long long)P->nv[d]);
  void *buf;
  HPMG_CALL(hpmg_malloc(P->tstride * hpmg_real_size(s->real), &buf));
  if (s->real == HPMG_REAL_DOUBLE) patch_local_residual_d(P, v, b, x, r, buf);
  else patch_local_residual_f(P, v, b, x, r, buf);
  hpmg_free(&buf);
  return HPMG_SUCCESS;
}
