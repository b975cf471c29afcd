/* Vertex-patch Schwarz smoother: setup, memory accounting and the smoother
 * interface; the sweeps are in patch_kernels.c. The method and the coloring
 * are described in patch.h and docs/patch.md. */
#include <math.h>
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

/* Thread buffer: closed x, interior b, dx, dense residual, fdm scratch, the
 * per-patch D^{-1} of a general box. */
static size_t thread_layout(int dim, int k, size_t off[5]) {
  hpmg_fdm f = {.dim = dim, .k = k, .m = 2 * k - 1, .n = 2 * k + 1};
  f.nloc = ipow(f.m, dim);
  f.nclosed = ipow(f.n, dim);
  size_t o = round16((size_t)f.nclosed);
  off[0] = o; o += round16((size_t)f.nloc);
  off[1] = o; o += round16((size_t)f.nloc);
  off[2] = o; o += round16((size_t)f.nloc);
  off[3] = o; o += round16(hpmg_fdm_work_size(&f));
  off[4] = o; o += round16((size_t)f.nloc);
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
  size_t off[5];
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
  free(P->items);
  free(P->iofs);
  free(P->lbuf);
  for (int d = 0; d < 3; d++) {
    free(P->vtype[d]);
    hpmg_free(&P->fac_d[d]);
    hpmg_free(&P->fac_f[d]);
    free(P->gmap[d]);
  }
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

/* Color of a patch in one direction from its index p = v - vmin among nv
 * patches: parity, and 2 for the last patch of an odd periodic count (it
 * neighbours patch 0 across the wrap). */
static inline int patch_color_1d(int ncd, int64_t p, int64_t nv) { return ncd == 3 && p == nv - 1 ? 2 : (int)(p & 1); }

/* The sweep order: sort the patches (zorder / lexicographic / 4^dim tiles),
 * cut into batches, and split every batch by color keeping the order. */
static hpmg_error patch_order_build(patch_smoother *P, int dim) {
  const int64_t nv0 = P->nv[0], nv1 = P->nv[1], nv2 = P->nv[2], n = nv0 * nv1 * nv2;
  const int ncol = P->ncol;
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
        const int col = patch_color_1d(P->ncd[0], v % nv0, nv0) +
                        P->ncd[0] * (patch_color_1d(P->ncd[1], (v / nv0) % nv1, nv1) +
                                     P->ncd[1] * patch_color_1d(P->ncd[2], v / (nv0 * nv1), nv2));
        if (col == c) P->list[pos++] = keys[i].v;
      }
    }
  }
  P->bofs[P->nbatch * ncol] = pos;
  free(keys);
  return HPMG_SUCCESS;
}

/* General box: the triple of 1D patches (factor blocks) of linear vertex index i. */
static int64_t patch_triple(const patch_smoother *P, int64_t i) {
  const int64_t nv0 = P->nv[0], nv1 = P->nv[1];
  const int64_t v0 = P->vmin[0] + i % nv0, v1 = P->vmin[1] + (i / nv0) % nv1, v2 = P->vmin[2] + i / (nv0 * nv1);
  const int64_t t2 = P->base.op->g.dim == 3 ? P->vtype[2][v2] : 0;
  return P->vtype[0][v0] + (int64_t)P->ntype[0] * (P->vtype[1][v1] + (int64_t)P->ntype[1] * t2);
}

/* General box: the sweep items of SIMD over patches. Inside each (batch,
 * color) the patches are ordered by their triple of 1D patches (stable, so
 * the Z-order inside a triple stays); each triple's patches are cut into
 * groups of vl sharing the triple (kind 1: the kernels broadcast one factor
 * set), the remainders of all triples are moved behind them and cut into
 * groups with factors per lane (kind 2: interleaved per group; 3D only,
 * lanes = 1), and the rest run one at a time (kind 0). items[] = 4 p + kind for the
 * patches from list position p on; iofs[b * ncol + c] is the first item of
 * (batch b, color c). A channel grid (x, z uniform, y stretched) has one
 * triple per y vertex, so nearly all groups are of kind 1; a grid stretched
 * in every direction has only kind 2. vl = 1: every item is one patch. */
static hpmg_error box_items(patch_smoother *P, int vl, int lanes) {
  const int ncol = P->ncol;
  const int64_t nseg = P->nbatch * ncol, cap = P->batch > 0 ? P->batch : 1;
  P->iofs = calloc((size_t)nseg + 1, sizeof *P->iofs);
  P->items = malloc(sizeof *P->items * (size_t)(P->npatch > 0 ? P->npatch : 1));
  patch_key *keys = malloc(sizeof *keys * (size_t)cap);
  int32_t *ord = malloc(sizeof *ord * (size_t)cap);
  uint64_t *okey = malloc(sizeof *okey * (size_t)cap);
  if (!P->iofs || !P->items || !keys || !ord || !okey) {
    free(keys);
    free(ord);
    free(okey);
    return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the patch order");
  }
  int64_t ni = 0;
  for (int64_t sgm = 0; sgm < nseg; sgm++) {
    const int64_t a = P->bofs[sgm], e = P->bofs[sgm + 1], len = e - a;
    P->iofs[sgm] = ni;
    for (int64_t p = 0; p < len; p++) {
      keys[p].key = (uint64_t)patch_triple(P, P->list[a + p]);
      keys[p].v = (int32_t)p;
    }
    qsort(keys, (size_t)len, sizeof *keys, cmp_key);
    int64_t cnt = 0;
    for (int pass = 0; pass < 2; pass++) /* full groups of each triple, then the remainders */
      for (int64_t r0 = 0; r0 < len;) {
        int64_t r1 = r0;
        while (r1 < len && keys[r1].key == keys[r0].key) r1++;
        const int64_t full = r0 + (r1 - r0) / vl * vl;
        for (int64_t q = pass ? full : r0; q < (pass ? r1 : full); q++) {
          ord[cnt] = P->list[a + keys[q].v];
          okey[cnt++] = keys[q].key;
        }
        r0 = r1;
      }
    for (int64_t p = 0; p < len; p++) P->list[a + p] = ord[p];
    int64_t p = 0;
    for (; vl > 1 && p + vl <= len; p += vl) {
      if (okey[p] != okey[p + vl - 1] && !lanes) break;
      P->items[ni++] = 4 * (a + p) + (okey[p] == okey[p + vl - 1] ? 1 : 2);
    }
    for (; p < len; p++) P->items[ni++] = 4 * (a + p);
  }
  P->iofs[nseg] = ni;
  free(keys);
  free(ord);
  free(okey);
  return HPMG_SUCCESS;
}

static void sweep(const patch_smoother *P, const void *b, void *x, const void *r, int reverse, int x_zero) {
  const hpmg_patch_kernels *K = hpmg_patch_kernels_select();
  (P->box ? K->box_sweep : K->sweep)[P->base.real](P, b, x, r, reverse, x_zero);
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

/* Largest total of the dense local inverses of a general box (one per
 * distinct triple of 1D patches, double + float), bytes. */
#define PATCH_BOX_DENSE_MAX_BYTES (1024.0 * 1024 * 1024)

/* The grid conditions of the general-box path, checked before allocation. */
static hpmg_error box_check(const hpmg_grid *g) {
  for (int d = 0; d < g->dim; d++) {
    const hpmg_bc_kind lo = g->bc[2 * d], hi = g->bc[2 * d + 1];
    HPMG_CHECK_ARG((lo == HPMG_BC_PERIODIC) == (hi == HPMG_BC_PERIODIC),
                   "patch smoother: direction %d is periodic on one end only", d);
    HPMG_CHECK_ARG(lo != HPMG_BC_PERIODIC || g->cells[d] >= 2,
                   "patch smoother: a periodic direction needs at least 2 cells (direction %d has %lld: the "
                   "patch of its only vertex would overlap itself)", d, (long long)g->cells[d]);
    for (int64_t c = 0; c < g->cells[d]; c++) {
      const double w = hpmg_grid_cell_width(g, d, c);
      HPMG_CHECK_ARG(isfinite(w) && w > 0, "patch smoother: cell %lld of direction %d has width %g", (long long)c,
                     d, w);
    }
  }
  return HPMG_SUCCESS;
}

/* Patch vertices and colors per direction (on a plain grid: the interior
 * vertices 1..cells-1, 2 colors each, 2^dim in all, as the plain sweep has). */
static void patch_vertices(patch_smoother *P, const hpmg_grid *g) {
  P->ncol = 1;
  for (int d = 0; d < 3; d++) {
    if (d >= g->dim) {
      P->nv[d] = 1;
      P->vmin[d] = 0;
      P->ncd[d] = 1;
      continue;
    }
    const hpmg_bc_kind lo = g->bc[2 * d], hi = g->bc[2 * d + 1];
    if (lo == HPMG_BC_PERIODIC) {
      P->vmin[d] = 0;
      P->nv[d] = g->cells[d];
      P->ncd[d] = g->cells[d] % 2 ? 3 : 2;
    } else {
      P->vmin[d] = lo == HPMG_BC_NEUMANN ? 0 : 1;
      P->nv[d] = g->cells[d] - 1 + (lo == HPMG_BC_NEUMANN) + (hi == HPMG_BC_NEUMANN);
      P->ncd[d] = 2;
    }
    P->ncol *= P->ncd[d];
  }
}

/* Per direction: the distinct (left, right) cell widths of the patch
 * vertices, their 1D factors, and the closed-patch index maps. */
static hpmg_error box_setup(patch_smoother *P, const hpmg_grid *g) {
  const int k = g->k, n = 2 * k + 1;
  const size_t l1 = hpmg_fdm_1d_len(k);
  for (int d = 0; d < g->dim; d++) {
    const int64_t cells = g->cells[d], K = k * cells;
    const int periodic = g->bc[2 * d] == HPMG_BC_PERIODIC;
    double *hl = malloc(sizeof(double) * (size_t)(cells + 1)), *hr = malloc(sizeof(double) * (size_t)(cells + 1));
    P->vtype[d] = malloc(sizeof(int32_t) * (size_t)(cells + 1));
    P->gmap[d] = malloc(sizeof(int64_t) * (size_t)(cells + 1) * n);
    if (!hl || !hr || !P->vtype[d] || !P->gmap[d]) {
      free(hl);
      free(hr);
      return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the patch smoother's 1D factors");
    }
    int nt = 0;
    for (int64_t v = 0; v <= cells; v++) {
      double l, r;
      if (periodic) {
        l = hpmg_grid_cell_width(g, d, (v - 1 + cells) % cells);
        r = hpmg_grid_cell_width(g, d, v % cells);
      } else {
        l = v > 0 ? hpmg_grid_cell_width(g, d, v - 1) : 0;
        r = v < cells ? hpmg_grid_cell_width(g, d, v) : 0;
      }
      int t = 0;
      while (t < nt && !(hl[t] == l && hr[t] == r)) t++;
      if (t == nt) hl[nt] = l, hr[nt] = r, nt++;
      P->vtype[d][v] = t;
      for (int j = 0; j < n; j++) {
        const int64_t gn = (v - 1) * k + j;
        int64_t fi = periodic ? ((gn % K) + K) % K : gn - g->off[d];
        P->gmap[d][v * n + j] = fi >= 0 && fi < g->n[d] ? fi : -1;
      }
    }
    P->ntype[d] = nt;
    hpmg_error e = hpmg_malloc(sizeof(double) * l1 * nt, &P->fac_d[d]);
    if (!e) e = hpmg_malloc(sizeof(float) * l1 * nt, &P->fac_f[d]);
    for (int t = 0; t < nt && !e; t++) e = hpmg_fdm_1d_setup(k, hl[t], hr[t], P->fac_d[d] + t * l1, P->fac_f[d] + t * l1);
    free(hl);
    free(hr);
    if (e) return e;
  }
  if (P->o.local == HPMG_LOCAL_DENSE) { /* one inverse per triple of 1D patches */
    const int nt0 = P->ntype[0], nt1 = P->ntype[1], nt2 = g->dim == 3 ? P->ntype[2] : 1;
    const size_t nloc = (size_t)P->fdm.nloc, combos = (size_t)nt0 * nt1 * nt2;
    const double bytes = (double)combos * nloc * nloc * (8.0 + (P->base.real == HPMG_REAL_FLOAT ? 4.0 : 0.0));
    HPMG_CHECK_ARG(bytes <= PATCH_BOX_DENSE_MAX_BYTES,
                   "--local-solver dense on this grid stores %zu distinct %zux%zu patch inverses (%.0f MB, limit "
                   "%.0f MB): use --local-solver fdm", combos, nloc, nloc, bytes / 1e6, PATCH_BOX_DENSE_MAX_BYTES / 1e6);
    HPMG_CALL(hpmg_malloc(combos * nloc * nloc * sizeof(double), &P->inv_d));
    if (P->base.real == HPMG_REAL_FLOAT) HPMG_CALL(hpmg_malloc(combos * nloc * nloc * sizeof(float), &P->inv_f));
    for (int t2 = 0; t2 < nt2; t2++)
      for (int t1 = 0; t1 < nt1; t1++)
        for (int t0 = 0; t0 < nt0; t0++) {
          const size_t c = (size_t)t0 + nt0 * ((size_t)t1 + nt1 * t2);
          const double *blk[3] = {P->fac_d[0] + t0 * l1, P->fac_d[1] + t1 * l1,
                                  g->dim == 3 ? P->fac_d[2] + t2 * l1 : NULL};
          hpmg_fdm v;
          hpmg_fdm_view(&P->fdm, blk, NULL, &v);
          double *Ainv = P->inv_d + c * nloc * nloc;
          HPMG_CALL(hpmg_fdm_dense_inverse(&v, Ainv));
          if (P->inv_f)
            for (size_t i = 0; i < nloc * nloc; i++) P->inv_f[c * nloc * nloc + i] = (float)Ainv[i];
        }
  }
  return HPMG_SUCCESS;
}

static hpmg_error patch_create(const hpmg_laplace *op, hpmg_real r, const hpmg_patch_options *o, int box,
                               hpmg_smoother **out) {
  *out = NULL;
  const hpmg_grid *g = &op->g;
  HPMG_CALL(hpmg_patch_check(g->dim, g->k, o));
  if (box) HPMG_CALL(box_check(g));
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
  P->box = box;
  P->omega = o->damping > 0 ? o->damping : 1.0 / (1 << g->dim);
  patch_vertices(P, g);
  if (box) {
    /* the views' shape: sizes and lambda, no factors */
    P->fdm = (hpmg_fdm){.dim = g->dim, .k = g->k, .m = 2 * g->k - 1, .n = 2 * g->k + 1, .lambda = op->lambda};
    P->fdm.nloc = ipow(P->fdm.m, g->dim);
    P->fdm.nclosed = ipow(P->fdm.n, g->dim);
    HPMG_CALL(box_setup(P, g));
  } else {
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
  }
  /* buffers for as many threads as a parallel region may get */
  P->nthreads = omp_get_max_threads();
  P->tstride = thread_layout(g->dim, g->k, P->off);
  if (o->mode == HPMG_PATCH_MULTIPLICATIVE || box) HPMG_CALL(patch_order_build(P, g->dim));
  /* factors per lane cost O(d m^2) interleaving per patch against the solve's
   * O(m^(d+1)): a gain in 3D (1.2-1.5x over one patch at a time), a loss in
   * 2D (0.5x for Q6), where those patches run one at a time */
  if (box)
    HPMG_CALL(box_items(P, o->local == HPMG_LOCAL_FDM ? hpmg_patch_kernels_select()->vl[r] : 1, g->dim == 3));
  if ((o->mode == HPMG_PATCH_MULTIPLICATIVE || box) && o->local == HPMG_LOCAL_FDM) {
    /* SIMD over patches: same layout, one vector per entry */
    P->vstride = P->tstride;
    P->vbuf = aligned_alloc(HPMG_VBYTES_MAX, P->vstride * HPMG_VBYTES_MAX * (size_t)P->nthreads);
    if (!P->vbuf) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the patch smoother's SIMD buffers");
  }
  if (box && o->local == HPMG_LOCAL_FDM) { /* lane-interleaved factors of a kind-2 group */
    const size_t m = (size_t)P->fdm.m, n = (size_t)P->fdm.n;
    P->lstride = round16(g->dim * (2 * m * m + 2 * m * n) + (size_t)P->fdm.nloc);
    P->lbuf = aligned_alloc(HPMG_VBYTES_MAX, P->lstride * HPMG_VBYTES_MAX * (size_t)P->nthreads);
    if (!P->lbuf) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the patch smoother's SIMD buffers");
  }
  HPMG_CALL(hpmg_malloc(P->tstride * (size_t)P->nthreads * hpmg_real_size(r), &P->tbuf));
  if (o->mode == HPMG_PATCH_ADDITIVE) HPMG_CALL(hpmg_malloc((size_t)g->N * hpmg_real_size(r), &s->work[0]));
  return HPMG_SUCCESS;
}

hpmg_error hpmg_smoother_patch(const hpmg_laplace *op, hpmg_real r, const hpmg_patch_options *o, hpmg_smoother **out) {
  return patch_create(op, r, o, !hpmg_grid_is_plain(&op->g), out);
}

hpmg_error hpmg_smoother_patch_general(const hpmg_laplace *op, hpmg_real r, const hpmg_patch_options *o,
                                       hpmg_smoother **out) {
  return patch_create(op, r, o, 1, out);
}

hpmg_error hpmg_patch_set_simd(hpmg_smoother *s, int on) {
  HPMG_CHECK_ARG(s && s->apply == patch_apply, "not a patch smoother");
  patch_smoother *P = (patch_smoother *)s;
  P->simd_off = !on;
  return HPMG_SUCCESS;
}

/* The vertex v as a patch of s (message if not). */
static hpmg_error patch_vertex_check(const patch_smoother *P, const int64_t v[3]) {
  for (int d = 0; d < P->base.op->g.dim; d++)
    HPMG_CHECK_ARG(v[d] >= P->vmin[d] && v[d] < P->vmin[d] + P->nv[d], "vertex index %lld of direction %d out of "
                   "%lld..%lld", (long long)v[d], d, (long long)P->vmin[d], (long long)(P->vmin[d] + P->nv[d] - 1));
  return HPMG_SUCCESS;
}

hpmg_error hpmg_patch_local_residual(const hpmg_smoother *s, const int64_t v[3], const void *b, const void *x,
                                     void *r) {
  HPMG_CHECK_ARG(s && s->apply == patch_apply, "not a patch smoother");
  const patch_smoother *P = (const patch_smoother *)s;
  HPMG_CALL(patch_vertex_check(P, v));
  void *buf;
  HPMG_CALL(hpmg_malloc(P->tstride * hpmg_real_size(s->real), &buf));
  hpmg_patch_kernels_select()->local_residual[s->real](P, v, b, x, r, buf);
  hpmg_free(&buf);
  return HPMG_SUCCESS;
}

hpmg_error hpmg_patch_local_correction(const hpmg_smoother *s, const int64_t v[3], const void *r, void *y) {
  HPMG_CHECK_ARG(s && s->apply == patch_apply, "not a patch smoother");
  const patch_smoother *P = (const patch_smoother *)s;
  HPMG_CALL(patch_vertex_check(P, v));
  void *buf;
  HPMG_CALL(hpmg_malloc(P->tstride * hpmg_real_size(s->real), &buf));
  hpmg_vec_zero(s->real, s->op->g.N, y);
  hpmg_patch_kernels_select()->local_correction[s->real](P, v, r, y, buf);
  hpmg_free(&buf);
  return HPMG_SUCCESS;
}

hpmg_error hpmg_patch_box_create(const hpmg_grid *g, hpmg_patch_box *b) {
  HPMG_CHECK_ARG(g && b, "patch smoother: NULL argument");
  memset(b, 0, sizeof *b);
  HPMG_CHECK_ARG(g->k >= 1 && g->k <= HPMG_FDM_MAX_DEGREE, "the patch smoother supports degree 1..%d (got %d)",
                 HPMG_FDM_MAX_DEGREE, g->k);
  HPMG_CALL(box_check(g));
  /* the CPU smoother's own setup (patch_vertices, box_setup) on a bare
   * smoother: one source of the local problems */
  patch_smoother P;
  memset(&P, 0, sizeof P);
  P.o.local = HPMG_LOCAL_FDM;
  patch_vertices(&P, g);
  hpmg_error e = box_setup(&P, g);
  b->dim = g->dim;
  b->k = g->k;
  b->ncol = P.ncol;
  for (int d = 0; d < 3; d++) {
    b->vmin[d] = P.vmin[d];
    b->nv[d] = P.nv[d];
    b->ncd[d] = P.ncd[d];
    b->ntype[d] = P.ntype[d];
    b->vtype[d] = P.vtype[d];
    b->fac_d[d] = P.fac_d[d];
    b->fac_f[d] = P.fac_f[d];
    b->gmap[d] = P.gmap[d];
  }
  if (e) hpmg_patch_box_destroy(b);
  return e;
}

void hpmg_patch_box_destroy(hpmg_patch_box *b) {
  if (!b) return;
  for (int d = 0; d < 3; d++) {
    free(b->vtype[d]);
    hpmg_free(&b->fac_d[d]);
    hpmg_free(&b->fac_f[d]);
    free(b->gmap[d]);
  }
  memset(b, 0, sizeof *b);
}
