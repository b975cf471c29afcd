/* Vertex-patch Schwarz smoother: setup, memory accounting and the smoother
 * interface; the sweeps are in patch_kernels.c. The method and the coloring
 * are described in patch.h and docs/patch.md. */
#include <omp.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "la/vec.h"
#include "core/simd.h"
#include "disc/qk/patch_impl.h"


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
  HPMG_CHECK_ARG(o->order >= HPMG_PATCH_ORDER_ZORDER && o->order <= HPMG_PATCH_ORDER_HIERARCHICAL,
                 "unknown --patch-order %d", (int)o->order);
  HPMG_CHECK_ARG(o->batch >= -1, "--patch-batch must be a positive count, 0 (auto) or all (got %lld)",
                 (long long)o->batch);
  HPMG_CHECK_ARG(o->mode == HPMG_PATCH_MULTIPLICATIVE || (o->order == HPMG_PATCH_ORDER_ZORDER && o->batch == 0),
                 "--patch-order and --patch-batch apply to --patch-mode multiplicative only (the additive step "
                 "sums all patches from one residual, in any order)");
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
  if (o->mode == HPMG_PATCH_MULTIPLICATIVE && o->local == HPMG_LOCAL_FDM) /* SIMD-over-patches buffers */
    bytes += (double)thread_layout(dim, k, off) * nthreads * HPMG_VBYTES_MAX;
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
  free(P->vbuf);
  free(P->list);
  free(P->bofs);
}

int64_t hpmg_patch_batch_auto(int dim, int k, hpmg_real r, int ncores) {
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 <= 0) {
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index2/size", "r");
    char unit = 0;
    if (f && fscanf(f, "%ld%c", &l2, &unit) >= 1) l2 *= unit == 'K' ? 1024 : unit == 'M' ? 1048576 : 1;
    else l2 = 0;
    if (f) fclose(f);
  }
  if (l2 <= 0) l2 = 1 << 20;
  const double per_patch = 2.0 * 2.0 * ipow(k, dim) * (double)hpmg_real_size(r);
  int64_t b = (int64_t)(0.5 * (double)l2 * (ncores > 0 ? ncores : 1) / per_patch);
  return b < (1 << dim) ? (1 << dim) : b;
}

static uint64_t morton(int dim, int64_t c0, int64_t c1, int64_t c2) {
  uint64_t m = 0;
  for (int bit = 0; bit < 21; bit++) {
    m |= (uint64_t)((c0 >> bit) & 1) << (bit * dim);
    m |= (uint64_t)((c1 >> bit) & 1) << (bit * dim + 1);
    if (dim == 3) m |= (uint64_t)((c2 >> bit) & 1) << (bit * dim + 2);
  }
  return m;
}

typedef struct {
  uint64_t key;
  int32_t v;
} patch_key;

static int cmp_key(const void *a, const void *b) {
  const patch_key *x = a, *y = b;
  return x->key < y->key ? -1 : x->key > y->key ? 1 : (x->v > y->v) - (x->v < y->v);
}

/* The sweep order: sort the patches (zorder / lexicographic / 4^dim tiles),
 * cut into batches, and split every batch by color keeping the order. */
static hpmg_error patch_order_build(patch_smoother *P, int dim) {
  const int64_t nv0 = P->nv[0], nv1 = P->nv[1], nv2 = P->nv[2], n = nv0 * nv1 * nv2;
  const int ncol = 1 << dim;
  P->npatch = n;
  if (n <= 0) return HPMG_SUCCESS;
  HPMG_CHECK_ARG(n < INT32_MAX, "too many patches on a level (%lld)", (long long)n);
  patch_key *keys = malloc(sizeof *keys * (size_t)n);
  P->list = malloc(sizeof *P->list * (size_t)n);
  if (!keys || !P->list) {
    free(keys);
    return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the patch order");
  }
  for (int64_t i = 0; i < n; i++) {
    const int64_t c[3] = {i % nv0, (i / nv0) % nv1, i / (nv0 * nv1)};
    uint64_t key = (uint64_t)i;
    if (P->o.order == HPMG_PATCH_ORDER_ZORDER) {
      key = morton(dim, c[0], c[1], c[2]);
    } else if (P->o.order == HPMG_PATCH_ORDER_HIERARCHICAL) {
      const int64_t t0 = (nv0 + 3) / 4, t1 = (nv1 + 3) / 4;
      const uint64_t tile = (uint64_t)(c[0] / 4 + t0 * (c[1] / 4 + t1 * (c[2] / 4)));
      const uint64_t in = (uint64_t)(c[0] % 4 + 4 * (c[1] % 4 + 4 * (c[2] % 4)));
      key = tile * 64 + in;
    }
    keys[i].key = key;
    keys[i].v = (int32_t)i;
  }
  if (P->o.order != HPMG_PATCH_ORDER_LEXICOGRAPHIC) qsort(keys, (size_t)n, sizeof *keys, cmp_key);
  int64_t B = P->o.batch == -1 ? n : P->o.batch > 0 ? P->o.batch : hpmg_patch_batch_auto(dim, P->base.op->g.k, P->base.real, omp_get_num_procs());
  if (B > n) B = n;
  P->batch = B;
  P->nbatch = (n + B - 1) / B;
  P->bofs = calloc((size_t)(P->nbatch * ncol + 1), sizeof *P->bofs);
  if (!P->bofs) {
    free(keys);
    return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the patch order");
  }
  int64_t pos = 0;
  for (int64_t b = 0; b < P->nbatch; b++) {
    const int64_t a = b * B, e = a + B < n ? a + B : n;
    for (int c = 0; c < ncol; c++) {
      P->bofs[b * ncol + c] = pos;
      for (int64_t i = a; i < e; i++) {
        const int64_t v = keys[i].v;
        const int col = (int)((v % nv0) & 1) | (int)(((v / nv0) % nv1) & 1) << 1 | (int)((v / (nv0 * nv1)) & 1) << 2;
        if (col == c) P->list[pos++] = keys[i].v;
      }
    }
  }
  P->bofs[P->nbatch * ncol] = pos;
  free(keys);
  return HPMG_SUCCESS;
}

static void sweep(const patch_smoother *P, const void *b, void *x, const void *r, int reverse, int x_zero) {
  hpmg_patch_kernels_select()->sweep[P->base.real](P, b, x, r, reverse, x_zero);
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
  if (o->mode == HPMG_PATCH_MULTIPLICATIVE) {
    HPMG_CALL(patch_order_build(P, g->dim));
    if (o->local == HPMG_LOCAL_FDM) { /* SIMD over patches: same layout, one vector per entry */
      P->vstride = P->tstride;
      P->vbuf = aligned_alloc(HPMG_VBYTES_MAX, P->vstride * HPMG_VBYTES_MAX * (size_t)P->nthreads);
      if (!P->vbuf) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the patch smoother's SIMD buffers");
    }
  }
  HPMG_CALL(hpmg_malloc(P->tstride * (size_t)P->nthreads * hpmg_real_size(r), &P->tbuf));
  if (o->mode == HPMG_PATCH_ADDITIVE) HPMG_CALL(hpmg_malloc((size_t)g->N * hpmg_real_size(r), &s->work[0]));
  return HPMG_SUCCESS;
}

hpmg_error hpmg_patch_set_simd(hpmg_smoother *s, int on) {
  HPMG_CHECK_ARG(s && s->apply == patch_apply, "not a patch smoother");
  patch_smoother *P = (patch_smoother *)s;
  P->simd_off = !on;
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
  hpmg_patch_kernels_select()->local_residual[s->real](P, v, b, x, r, buf);
  hpmg_free(&buf);
  return HPMG_SUCCESS;
}
