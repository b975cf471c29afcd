/* The star smoother over a mesh (paper 001, Algorithm 2); see sem_smoother.h. */
#include "sem_smoother.h"
#include "core/simd.h"
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* side kind of vertex position J in direction d, side s (0: left, 1: right) */
static int side_kind(const hpmg_sem_mesh *m, int d, int64_t J, int s) {
  if (m->periodic[d]) return HPMG_SEM_SIDE_ELEMENT;
  const int at_end = s == 0 ? J == 0 : J == m->nv[d] - 1;
  if (!at_end) return HPMG_SEM_SIDE_ELEMENT;
  return m->bc[2 * d + s] == HPMG_BC_NEUMANN ? HPMG_SEM_SIDE_NEUMANN : HPMG_SEM_SIDE_DIRICHLET;
}

void hpmg_sem_smoother_destroy(hpmg_sem_smoother *s) {
  for (int d = 0; d < 3; d++) {
    if (s->blk[d])
      for (int64_t J = 0; J < s->m->nv[d]; J++) hpmg_sem_block1d_free(&s->blk[d][J]);
    free(s->blk[d]);
  }
  free(s->color_ptr);
  free(s->color_verts);
  for (int d = 0; d < 3; d++) free(s->cls[d]);
  hpmg_free(&s->Z);
  hpmg_free(&s->work);
  hpmg_free(&s->idx);
  memset(s, 0, sizeof *s);
}

/* colour of a vertex index J in direction d: J mod 2, the last vertex of a
 * periodic direction with an odd count 2 */
static int vcolor(const hpmg_sem_mesh *m, int d, int64_t J) {
  if (m->periodic[d] && (m->nv[d] & 1) && J == m->nv[d] - 1) return 2;
  return (int)(J & 1);
}

static int vertex_color(const hpmg_sem_mesh *m, int64_t v) {
  const int64_t nv0 = m->nv[0], nv1 = m->nv[1];
  const int64_t J[3] = {v % nv0, (v / nv0) % nv1, v / (nv0 * nv1)};
  int c = 0, f = 1;
  for (int d = 0; d < m->dim; d++, f *= 3) c += f * vcolor(m, d, J[d]);
  return c;
}

static int dense_max = HPMG_SEM_STAR_DENSE_MAX_DEFAULT;
#define HPMG_SEM_STAR_DENSE_CLASSES 64 /* at most this many distinct blocks per direction */

int hpmg_sem_star_set_dense_max(int size) {
  const int old = dense_max;
  dense_max = size;
  return old;
}

static int lanes_pmax = HPMG_SEM_STAR_LANES_PMAX_DEFAULT;

int hpmg_sem_star_set_lanes_pmax(int p) {
  const int old = lanes_pmax;
  lanes_pmax = p;
  return old;
}

/* the most lanes a kernel variant has (HPMG_VBYTES_MAX: the scratch fits any of them) */
#define LANES_MAX (HPMG_VBYTES_MAX / 8)

/* doubles of one thread's scratch for stars in lanes of degree p: the
 * interleaved blocks (S, lam, mask of 3 directions), f, u and the solve's */
static size_t lanes_scratch(int p) {
  const size_t n = 2 * (size_t)p - 1, L = LANES_MAX;
  return 3 * (n * n + 2 * n) * L + 6 * n * n * L + hpmg_sem_star_lanes_work_size((int)n, (int)L);
}

/* the widths and side kinds that define the block of position J in direction d */
static void block_inputs(const hpmg_sem_mesh *m, int d, int64_t J, double h[2], int side[2]) {
  const int64_t nc = m->cells[d];
  side[0] = side_kind(m, d, J, 0);
  side[1] = side_kind(m, d, J, 1);
  const int64_t cl = J - 1 >= 0 ? J - 1 : nc - 1, cr = J < nc ? J : 0;
  h[0] = side[0] == HPMG_SEM_SIDE_ELEMENT ? m->x[d][cl + 1] - m->x[d][cl] : 1.0;
  h[1] = side[1] == HPMG_SEM_SIDE_ELEMENT ? m->x[d][cr + 1] - m->x[d][cr] : 1.0;
}

/* widths equal to rounding (a uniform direction's widths x_{i+1} - x_i differ
 * in the last bits): one class, its stars' inverses equal to rounding */
static int same_width(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(a, b); }

/* no dense inverses: Algorithm 1 for every star */
static hpmg_error dense_none(hpmg_sem_smoother *s) {
  for (int d = 0; d < 3; d++) {
    free(s->cls[d]);
    s->cls[d] = NULL;
  }
  return HPMG_SUCCESS;
}

/* classes of the vertex positions (same block inputs, same class), and the
 * dense inverse of one star per class combination where they are small and
 * few (hpmg_sem_star_dense_max); Z stays NULL otherwise */
static hpmg_error dense_create(hpmg_sem_smoother *s) {
  const hpmg_sem_mesh *m = s->m;
  const int dim = m->dim;
  if ((int)s->ssize > dense_max) return HPMG_SUCCESS;
  int64_t combos = 1;
  int64_t first[3][HPMG_SEM_STAR_DENSE_CLASSES]; /* a position of each class */
  for (int d = 0; d < dim; d++) {
    s->cls[d] = malloc(sizeof(int32_t) * (size_t)m->nv[d]);
    if (!s->cls[d]) return hpmg_error_set(HPMG_ERR_MEMORY, "sem smoother: cannot allocate the star classes");
    double hc[HPMG_SEM_STAR_DENSE_CLASSES][2]; /* each class's block inputs */
    int sc[HPMG_SEM_STAR_DENSE_CLASSES][2], nc = 0;
    for (int64_t J = 0; J < m->nv[d]; J++) {
      double h[2];
      int side[2];
      block_inputs(m, d, J, h, side);
      int c = 0;
      while (c < nc && !(same_width(h[0], hc[c][0]) && same_width(h[1], hc[c][1]) && side[0] == sc[c][0] &&
                         side[1] == sc[c][1]))
        c++;
      if (c == nc) {
        if (nc == HPMG_SEM_STAR_DENSE_CLASSES) return dense_none(s); /* too many distinct stars: Algorithm 1 */
        first[d][nc] = J;
        hc[nc][0] = h[0], hc[nc][1] = h[1], sc[nc][0] = side[0], sc[nc][1] = side[1];
        nc++;
      }
      s->cls[d][J] = c;
    }
    s->ncls[d] = nc;
    combos *= nc;
  }
  s->zld = (s->ssize + 31) / 32 * 32;
  const size_t per = s->ssize * s->zld;
  if (8.0 * (double)per * (double)combos > HPMG_SEM_STAR_DENSE_BYTES) return dense_none(s);
  HPMG_CALL(hpmg_calloc(sizeof(double) * per * (size_t)combos, &s->Z));
  hpmg_error e = HPMG_SUCCESS;
#pragma omp parallel num_threads(s->nthreads)
  {
    double *f = s->work + (size_t)omp_get_thread_num() * s->tsize, *u = f + s->ssize, *wk = u + s->ssize;
#pragma omp for schedule(dynamic, 1)
    for (int64_t c = 0; c < combos; c++) {
      int64_t J[3] = {0, 0, 0}, q = c;
      for (int d = 0; d < dim; d++) {
        J[d] = first[d][q % s->ncls[d]];
        q /= s->ncls[d];
      }
      const hpmg_sem_block1d *bp[3] = {&s->blk[0][J[0]], &s->blk[1][J[1]], dim == 3 ? &s->blk[2][J[2]] : NULL};
      hpmg_sem_star st;
      if (hpmg_sem_star_init(&st, dim, bp, m->lambda)) {
#pragma omp atomic write
        e = HPMG_ERR_ARG;
        continue;
      }
      double *Zc = s->Z + (size_t)c * per;
      memset(f, 0, sizeof(double) * s->ssize);
      for (size_t j = 0; j < s->ssize; j++) {
        f[j] = 1.0;
        hpmg_sem_star_solve(&st, f, u, wk);
        f[j] = 0.0;
        memcpy(Zc + j * s->zld, u, sizeof(double) * s->ssize);
      }
    }
  }
  if (e) return hpmg_error_set(e, "sem smoother: a star of the dense inverses is singular (internal)");
  s->lanes = 0; /* the dense inverses instead */
  return HPMG_SUCCESS;
}

hpmg_error hpmg_sem_smoother_create(const hpmg_sem_mesh *m, hpmg_sem_smoother *s) {
  memset(s, 0, sizeof *s);
  HPMG_CHECK_ARG(m->ns <= INT32_MAX - 2,
                 "sem smoother: %lld skeleton nodes exceed the star index lists' 32-bit range", (long long)m->ns);
  s->m = m;
  const int dim = m->dim, p = m->p;
  hpmg_error e = HPMG_SUCCESS;
  for (int d = 0; d < dim && !e; d++) {
    s->blk[d] = calloc((size_t)m->nv[d], sizeof(hpmg_sem_block1d));
    if (!s->blk[d]) e = hpmg_error_set(HPMG_ERR_MEMORY, "sem smoother: cannot allocate the 1D blocks");
    for (int64_t J = 0; J < m->nv[d] && !e; J++) {
      double h[2];
      int side[2];
      block_inputs(m, d, J, h, side);
      e = hpmg_sem_block1d_create(&m->el, HPMG_SEM_STAR_VERTEX, h, side, &s->blk[d][J]);
    }
  }
  /* vertices by colour */
  const int64_t nv0 = m->nv[0], nv1 = m->nv[1], nv2 = dim == 3 ? m->nv[2] : 1, nvt = nv0 * nv1 * nv2;
  if (!e) {
    s->color_ptr = malloc(sizeof(int64_t) * 28);
    s->color_verts = malloc(sizeof(int64_t) * (size_t)nvt);
    if (!s->color_ptr || !s->color_verts) e = hpmg_error_set(HPMG_ERR_MEMORY, "sem smoother: cannot allocate colours");
  }
  if (!e) hpmg_sem_colour_buckets(m, nvt, vertex_color, s->color_ptr, s->color_verts, &s->ncolors);
  if (!e) {
    const hpmg_sem_block1d *bp[3] = {&s->blk[0][0], &s->blk[1][0], dim == 3 ? &s->blk[2][0] : NULL};
    hpmg_sem_star st;
    e = hpmg_sem_star_init(&st, dim, bp, m->lambda);
    if (!e) {
      /* f, u, star scratch; whole cache lines, so that no two threads' scratch share one */
      s->tsize = 2 * st.size + hpmg_sem_star_work_size(&st) + 8;
      s->lanes = dim == 3 && p >= 4 && p <= lanes_pmax; /* unless dense_create makes dense inverses */
      if (s->lanes && lanes_scratch(p) + 8 > s->tsize) s->tsize = lanes_scratch(p) + 8;
      s->tsize = (s->tsize + 7) / 8 * 8;
      s->ssize = st.size;
      s->nthreads = omp_get_max_threads();
      e = hpmg_calloc(sizeof(double) * s->tsize * (size_t)s->nthreads, &s->work);
      const size_t per = dim == 3 ? 9 * (size_t)st.n : st.size;
      if (!e) e = hpmg_malloc(sizeof(int32_t) * per * (size_t)nvt, &s->idx);
    }
  }
  if (!e) {
    /* the stars' skeleton indices once, each point scattered from the
     * lowest face that holds it: the other copies coded -2 - index */
    const int n = 2 * p - 1;
    const size_t fsize = dim == 3 ? (size_t)n * n : (size_t)n, size = s->ssize;
    int64_t *tmp = NULL;
    int64_t broken = 0;
    e = hpmg_malloc(sizeof(int64_t) * size * (size_t)omp_get_max_threads(), &tmp);
#pragma omp parallel for schedule(static) reduction(+ : broken)
    for (int64_t v = 0; v < (e ? 0 : nvt); v++) {
      int64_t *idx = tmp + size * (size_t)omp_get_thread_num();
      hpmg_sem_star_indices(m, v, idx);
      if (dim == 3) { /* runs: per face and row, lower cell's m points, the plane point, upper cell's m points */
        const int mm = p - 1;
        int32_t *out = s->idx + (size_t)v * 9 * n;
        for (int k = 0; k < 3; k++)
          for (int rr = 0; rr < n; rr++) {
            const int64_t *row = idx + k * fsize + (size_t)rr * n;
            int32_t *o = out + (k * n + rr) * 3;
            for (int h = 0; h < 2; h++) {
              const int64_t *run = row + h * p;
              o[2 * h] = (int32_t)run[0];
              for (int i = 1; i < mm; i++) /* contiguous, or absent as a whole */
                broken += run[0] < 0 ? run[i] >= 0 : run[i] != run[0] + i;
            }
            o[1] = (int32_t)row[mm];
          }
        continue;
      }
      for (int k = 0; k < dim; k++) {
        int R = -1, C = 1 - k; /* 2D: R unused */
        if (dim == 3) hpmg_sem_face_dirs(k, &R, &C);
        const int nr = dim == 3 ? n : 1;
        for (int rr = 0; rr < nr; rr++)
          for (int c = 0; c < n; c++) {
            const size_t t = k * fsize + (size_t)rr * n + c;
            if (idx[t] >= 0 && ((R >= 0 && R < k && rr == p - 1) || (C < k && c == p - 1))) idx[t] = -2 - idx[t];
          }
      }
      int32_t *out = s->idx + (size_t)v * size;
      for (size_t t = 0; t < size; t++) out[t] = (int32_t)idx[t];
    }
    hpmg_free(&tmp);
    if (!e && broken)
      e = hpmg_error_set(HPMG_ERR_ARG, "sem smoother: %lld star rows are not contiguous in the skeleton (internal)",
                         (long long)broken);
  }
  if (!e) e = dense_create(s);
  if (e) hpmg_sem_smoother_destroy(s);
  return e;
}

double hpmg_sem_smoother_bytes(const hpmg_sem_smoother *s) {
  double b = 0;
  for (int d = 0; d < s->m->dim; d++)
    for (int64_t J = 0; J < s->m->nv[d]; J++) b += (double)hpmg_sem_block1d_bytes(&s->blk[d][J]);
  const double nvt = (double)(s->color_ptr ? s->color_ptr[s->ncolors] : 0);
  b += 8.0 * (s->ncolors + 1) + 8.0 * nvt + 4.0 * nvt * (s->m->dim == 3 ? 9.0 * (2 * s->m->p - 1) : (double)s->ssize);
  if (s->Z) b += 8.0 * (double)s->ssize * (double)s->zld * s->ncls[0] * s->ncls[1] * (s->m->dim == 3 ? s->ncls[2] : 1);
  for (int d = 0; d < s->m->dim; d++)
    if (s->cls[d]) b += 4.0 * (double)s->m->nv[d];
  return b + 8.0 * (double)s->tsize * s->nthreads;
}

void hpmg_sem_star_indices(const hpmg_sem_mesh *m, int64_t v, int64_t *idx) {
  const int dim = m->dim, p = m->p, n = 2 * p - 1;
  const int64_t nv0 = m->nv[0], nv1 = m->nv[1];
  const int64_t J[3] = {v % nv0, (v / nv0) % nv1, v / (nv0 * nv1)};
  const size_t fsize = dim == 3 ? (size_t)n * n : (size_t)n;
  for (int k = 0; k < dim; k++) {
    int R = -1, C = 1 - k; /* 3D: rows over the higher, columns over the lower tangential direction; 2D: R unused */
    if (dim == 3) hpmg_sem_face_dirs(k, &R, &C);
    const int nr = dim == 3 ? n : 1;
    for (int r = 0; r < nr; r++)
      for (int c = 0; c < n; c++) {
        int64_t g[3] = {0, 0, 0};
        int out = 0;
        g[k] = J[k] * p;
        if (R >= 0) g[R] = (J[R] - 1) * p + 1 + r;
        g[C] = (J[C] - 1) * p + 1 + c;
        for (int d = 0; d < dim; d++) {
          if (g[d] < 0) {
            if (m->periodic[d]) g[d] += m->nlat[d];
            else out = 1;
          } else if (g[d] >= m->nlat[d]) {
            if (m->periodic[d]) g[d] -= m->nlat[d];
            else out = 1;
          }
        }
        idx[k * fsize + (size_t)r * n + c] = out ? -1 : hpmg_sem_skeleton_index(m, g);
      }
  }
}

/* u = Hhat^{-1} f of one star: its dense inverse where there is one (ZT,
 * Z^T's rows of zld doubles), else Algorithm 1 */
static inline void star_inverse(const hpmg_sem_smoother *s, const hpmg_sem_star *st, const double *restrict ZT,
                                const double *restrict f, double *restrict u, double *restrict wk) {
  if (ZT) hpmg_sem_star_kernels_select()->dense(ZT, s->ssize, s->zld, f, u);
  else hpmg_sem_star_solve(st, f, u, wk);
}

/* 3D star of run table q (9 n entries), its star-local vector with entry t
 * at f[t ld] (ld 1: one star; the lanes' count: stars in lanes): r gathered
 * by runs (0 beyond a boundary, and everywhere if zero) */
static inline void star3_gather(int p, const int32_t *restrict q, const double *restrict r, int zero,
                                double *restrict f, size_t ld) {
  const int n = 2 * p - 1, mm = p - 1;
  for (int k = 0; k < 3; k++)
    for (int rr = 0; rr < n; rr++) {
      const int32_t *o = q + (k * n + rr) * 3;
      double *fr = f + ((size_t)k * n * n + (size_t)rr * n) * ld;
      for (int h = 0; h < 2; h++) {
        double *dst = fr + (size_t)h * p * ld;
        const double *src = r + o[2 * h];
        for (int i = 0; i < mm; i++) dst[(size_t)i * ld] = zero || o[2 * h] < 0 ? 0.0 : src[i];
      }
      fr[(size_t)mm * ld] = !zero && o[1] >= 0 ? r[o[1]] : 0.0;
    }
}

/* z += W u for the star of run table q and blocks b[3], u's entry t at
 * u[t ld]: each point once, from the lowest face that holds it (on face 1
 * not the points on the x1 plane, on face 2 not those on the x1 or x2 plane);
 * the weight of a point as hpmg_sem_star_weigh forms it */
static inline void star3_scatter(int p, const int32_t *restrict q, const hpmg_sem_block1d *const *b,
                                 const double *restrict u, size_t ld, double *restrict z) {
  const int n = 2 * p - 1, mm = p - 1;
  for (int k = 0; k < 3; k++) {
    int R, C;
    hpmg_sem_face_dirs(k, &R, &C);
    const double wk0 = b[k]->w[b[k]->c[0]];
    const double *wR = b[R]->w, *wC = b[C]->w;
    for (int rr = 0; rr < n; rr++) {
      if (k == 2 && rr == mm) continue; /* on the x2 plane: face 1 holds these points */
      const int32_t *o = q + (k * n + rr) * 3;
      const double a = wk0 * wR[rr];
      const double *ur = u + ((size_t)k * n * n + (size_t)rr * n) * ld;
      for (int h = 0; h < 2; h++) {
        if (o[2 * h] < 0) continue;
        double *restrict dst = z + o[2 * h];
        const double *restrict src = ur + (size_t)h * p * ld, *restrict wc = wC + h * p;
        for (int i = 0; i < mm; i++) dst[i] += src[(size_t)i * ld] * (a * wc[i]);
      }
      if (k == 0 && o[1] >= 0) z[o[1]] += ur[(size_t)mm * ld] * (a * wC[mm]); /* faces 1, 2: on the x1 plane */
    }
  }
}

/* one 3D star: gather, Algorithm 1 (or its dense inverse), z += W u */
static void star3(const hpmg_sem_smoother *s, const hpmg_sem_star *st, const double *ZT, const int32_t *restrict q,
                  const double *restrict r, double *restrict z, double *restrict f, double *restrict u,
                  double *restrict wk) {
  star3_gather(s->m->p, q, r, 0, f, 1);
  star_inverse(s, st, ZT, f, u, wk);
  star3_scatter(s->m->p, q, st->b, u, 1, z);
}

/* the 3D stars verts[0..cnt) (cnt <= K->lanes) in lanes: their blocks
 * interleaved, r gathered as star3 does, the lanes' solve, and z += W u per
 * star (a lane beyond cnt repeats the last star's blocks with input 0 and is
 * not scattered); buf: lanes_scratch doubles */
static void star3_lanes(const hpmg_sem_smoother *s, const hpmg_sem_star_kernels *K, const int64_t *verts, int cnt,
                        const double *restrict r, double *restrict z, double *restrict buf) {
  const hpmg_sem_mesh *m = s->m;
  const int p = m->p, n = 2 * p - 1, NL = K->lanes;
  const int64_t nv0 = m->nv[0], nv1 = m->nv[1];
  const size_t nn = (size_t)n * n;
  hpmg_sem_star_lanes L = {.n = n, .c = p - 1, .lanes = NL, .lambda = m->lambda};
  double *q = buf;
  const hpmg_sem_block1d *bl[LANES_MAX][3];
  int64_t vl[LANES_MAX]; /* the lanes' stars: past cnt the last one again */
  for (int l = 0; l < NL; l++) {
    const int64_t v = vl[l] = verts[l < cnt ? l : cnt - 1];
    const int64_t J[3] = {v % nv0, (v / nv0) % nv1, v / (nv0 * nv1)};
    for (int d = 0; d < 3; d++) bl[l][d] = &s->blk[d][J[d]];
  }
  for (int d = 0; d < 3; d++) {
    double *S = q, *lam = S + nn * NL, *mask = lam + (size_t)n * NL;
    q = mask + (size_t)n * NL;
    for (int l = 0; l < NL; l++) {
      const hpmg_sem_block1d *b = bl[l][d];
      for (int i = 0; i < n; i++) {
        for (int a = 0; a < n; a++) S[((size_t)i * n + a) * NL + l] = b->S[(size_t)i * b->ld + a];
        lam[(size_t)i * NL + l] = b->lam[i];
        mask[(size_t)i * NL + l] = b->mask[i];
      }
    }
    L.S[d] = S, L.lam[d] = lam, L.mask[d] = mask, L.onpl[d] = bl[0][d]->onpl;
  }
  double *f = q, *u = f + 3 * nn * NL, *wk = u + 3 * nn * NL;
  for (int l = 0; l < NL; l++)
    star3_gather(p, s->idx + (size_t)vl[l] * 9 * n, r, l >= cnt, f + l, (size_t)NL);
  K->solve_lanes(&L, f, u, wk);
  for (int l = 0; l < cnt; l++) star3_scatter(p, s->idx + (size_t)vl[l] * 9 * n, bl[l], u + l, (size_t)NL, z);
}

/* z = S r, and x += z if x (in the same region) */
static void smooth(const hpmg_sem_smoother *s, const double *r, double *z, double *x) {
  const hpmg_sem_mesh *m = s->m;
  const int dim = m->dim;
  const int64_t ns = m->ns, nv0 = m->nv[0], nv1 = m->nv[1];
  const size_t size = s->ssize;
  /* a colour's work: its stars (the mean over the colours), each Algorithm 1
   * on 3 (2D: 2) faces of n^2 (n) points, O(n) flops a point */
  const double star_flops = 8.0 * (2 * m->p - 1) * (double)size;
  const double par_work = (double)s->color_ptr[s->ncolors] / (s->ncolors > 0 ? s->ncolors : 1) * star_flops;
  const hpmg_sem_star_kernels *K = s->lanes ? hpmg_sem_star_kernels_select() : NULL;
#pragma omp parallel num_threads(s->nthreads) if (hpmg_par(par_work))
  {
    double *f = s->work + (size_t)omp_get_thread_num() * s->tsize, *u = f + size;
    double *wk = u + size;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < ns; i++) z[i] = 0.0;
    for (int col = 0; col < s->ncolors; col++) { /* the non-empty colours (hpmg_sem_colour_buckets) */
      if (K) { /* stars in lanes: batches of K->lanes consecutive stars of the colour */
        const int64_t c0 = s->color_ptr[col], cnt = s->color_ptr[col + 1] - c0, nb = (cnt + K->lanes - 1) / K->lanes;
#pragma omp for schedule(static)
        for (int64_t bt = 0; bt < nb; bt++) {
          const int64_t q0 = bt * K->lanes;
          star3_lanes(s, K, s->color_verts + c0 + q0, (int)(cnt - q0 < K->lanes ? cnt - q0 : K->lanes), r, z, f);
        }
        continue;
      }
      /* contiguous halves (thirds, ...) of the colour: neighbouring stars write into
       * the same cache lines of z, which interleaved chunks made the threads share
       * (at p = 2 a sweep took 0.86x the one-thread time on two threads with
       * dynamic chunks of 4, 0.63x with these; docs/sem.md, "Time and memory") */
#pragma omp for schedule(static)
      for (int64_t q = s->color_ptr[col]; q < s->color_ptr[col + 1]; q++) {
        const int64_t v = s->color_verts[q];
        const int64_t J[3] = {v % nv0, (v / nv0) % nv1, v / (nv0 * nv1)};
        const hpmg_sem_block1d *bp[3] = {&s->blk[0][J[0]], &s->blk[1][J[1]], dim == 3 ? &s->blk[2][J[2]] : NULL};
        hpmg_sem_star st;
        hpmg_sem_star_init(&st, dim, bp, m->lambda);
        const double *ZT =
            s->Z ? s->Z + (size_t)(s->cls[0][J[0]] +
                                   s->ncls[0] * (s->cls[1][J[1]] + (dim == 3 ? s->ncls[1] * s->cls[2][J[2]] : 0))) *
                              s->ssize * s->zld
                 : NULL;
        if (dim == 3) {
          star3(s, &st, ZT, s->idx + (size_t)v * 9 * st.n, r, z, f, u, wk);
          continue;
        }
        const int32_t *restrict idx = s->idx + (size_t)v * size;
        for (size_t t = 0; t < size; t++) {
          const int32_t i = idx[t];
          f[t] = i >= 0 ? r[i] : i <= -2 ? r[-2 - i] : 0.0;
        }
        star_inverse(s, &st, ZT, f, u, wk);
        hpmg_sem_star_weigh(&st, u);
        /* scatter each point once: from the lowest face that holds it */
        for (size_t t = 0; t < size; t++)
          if (idx[t] >= 0) z[idx[t]] += u[t];
      }
    }
    /* the last loop of the region: its end joins the threads, so no barrier of its own */
    if (x) {
#pragma omp for schedule(static) nowait
      for (int64_t i = 0; i < ns; i++) {
        if (m->dirichlet && m->dirichlet[i]) z[i] = 0.0;
        x[i] += z[i];
      }
    } else if (m->dirichlet) {
#pragma omp for schedule(static) nowait
      for (int64_t i = 0; i < ns; i++)
        if (m->dirichlet[i]) z[i] = 0.0;
    }
  }
}

void hpmg_sem_smoother_apply(const hpmg_sem_smoother *s, const double *r, double *z) { smooth(s, r, z, NULL); }

void hpmg_sem_smoother_update(const hpmg_sem_smoother *s, const double *r, double *z, double *x) {
  smooth(s, r, z, x);
}
