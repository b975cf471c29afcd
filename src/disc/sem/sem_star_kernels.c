/* The star solve of paper 001's Algorithm 1 (hpmg_sem_star_solve, sem_star.h;
 * docs/sem.md, "The star smoother"), compiled once per instruction set
 * (core/isa.h): the vertex and element-centred blocks in 3D, and 2D; and
 * the dense inverse of a small star (sem_smoother.c). */
#include <string.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#include "core/isa.h"
#include "core/simd.h"
#include "disc/sem/sem_star.h"

/* Explicit vectors of the target's width (core/simd.h): SW doubles, 8 with
 * AVX-512, 4 with AVX2, 2 with SSE2 and NEON; a wider type than the target's
 * registers is lowered into element moves through the stack (10x slower with
 * AVX2). Rows are padded to ld, a multiple of 4, so AVX-512 rows end in one
 * 4-wide piece (v4d); with SW <= 4 every row is whole vectors. */
#define SW (HPMG_VBYTES / 8)
typedef double vd __attribute__((vector_size(HPMG_VBYTES), aligned(8), may_alias));
#if SW > 4
typedef double v4d __attribute__((vector_size(32), aligned(8), may_alias));
#endif

/* y = X B with X n rows of stride ld (columns < n read), B n rows of ld,
 * y n rows of ld: register blocks of 4 rows by 2 vectors (8 accumulators:
 * the FMA's latency hidden; AVX-512 16 columns, AVX2 8), then by one vector,
 * accumulated over the whole sum, so each vector of a row of B is loaded once
 * per 4 rows of y. nr = 4 rows of y from row r (nr < 4: the last rows), the
 * sum over s in [s0, n); inlined with a constant nr */
static inline void mxm_rows(int s0, int n, int ld, int r, const int nr, const double *restrict X,
                            const double *restrict B, double *restrict y) {
  const double *restrict x0 = X + (size_t)r * ld, *restrict x1 = x0 + (nr > 1 ? ld : 0),
                         *restrict x2 = x0 + (nr > 2 ? 2 * ld : 0), *restrict x3 = x0 + (nr > 3 ? 3 * ld : 0);
  int a = 0;
  for (; a + 2 * SW <= ld; a += 2 * SW) {
    vd c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0}, e0 = {0}, e1 = {0}, e2 = {0}, e3 = {0};
    for (int s = s0; s < n; s++) {
      const vd bs = *(const vd *)(B + (size_t)s * ld + a), bt = *(const vd *)(B + (size_t)s * ld + a + SW);
      c0 += x0[s] * bs;
      e0 += x0[s] * bt;
      if (nr > 1) c1 += x1[s] * bs, e1 += x1[s] * bt;
      if (nr > 2) c2 += x2[s] * bs, e2 += x2[s] * bt;
      if (nr > 3) c3 += x3[s] * bs, e3 += x3[s] * bt;
    }
    double *yr = y + (size_t)r * ld + a;
    *(vd *)yr = c0;
    *(vd *)(yr + SW) = e0;
    if (nr > 1) *(vd *)(yr + ld) = c1, *(vd *)(yr + ld + SW) = e1;
    if (nr > 2) *(vd *)(yr + 2 * ld) = c2, *(vd *)(yr + 2 * ld + SW) = e2;
    if (nr > 3) *(vd *)(yr + 3 * ld) = c3, *(vd *)(yr + 3 * ld + SW) = e3;
  }
  /* then blocks of one vector of type T (W doubles): the target's width, and
   * with AVX-512 a 4-wide tail (ld is a multiple of 4) */
#define MXM_ONE_VECTOR(T, W)                                                                                         \
  for (; a + (W) <= ld; a += (W)) {                                                                                  \
    T c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0};                                                                        \
    for (int s = s0; s < n; s++) {                                                                                   \
      const T bs = *(const T *)(B + (size_t)s * ld + a);                                                             \
      c0 += x0[s] * bs;                                                                                              \
      if (nr > 1) c1 += x1[s] * bs;                                                                                  \
      if (nr > 2) c2 += x2[s] * bs;                                                                                  \
      if (nr > 3) c3 += x3[s] * bs;                                                                                  \
    }                                                                                                                \
    *(T *)(y + (size_t)r * ld + a) = c0;                                                                             \
    if (nr > 1) *(T *)(y + (size_t)(r + 1) * ld + a) = c1;                                                           \
    if (nr > 2) *(T *)(y + (size_t)(r + 2) * ld + a) = c2;                                                           \
    if (nr > 3) *(T *)(y + (size_t)(r + 3) * ld + a) = c3;                                                           \
  }
  MXM_ONE_VECTOR(vd, SW)
#if SW > 4
  MXM_ONE_VECTOR(v4d, 4)
#endif
#undef MXM_ONE_VECTOR
}

/* rows [r0, r1) of y = X B, the sum over s in [s0, s1) (where the rows of B
 * and the columns of X are not known zeros) */
static void mxm(int r0, int r1, int s0, int s1, int ld, const double *restrict X, const double *restrict B,
                double *restrict y) {
  int r = r0;
  for (; r + 4 <= r1; r += 4) mxm_rows(s0, s1, ld, r, 4, X, B, y);
  if (r1 - r == 3) mxm_rows(s0, s1, ld, r, 3, X, B, y); /* n = 2p - 1 is odd: 1 or 3 rows remain */
  else if (r1 - r == 2) mxm_rows(s0, s1, ld, r, 2, X, B, y);
  else if (r1 - r == 1) mxm_rows(s0, s1, ld, r, 1, X, B, y);
}

/* out = A x for A of n rows with stride ld, as a sum of rows of A^T: out = sum_i x_i AT[i,:] (ld values) */
static void matvec_t(int n, int ld, const double *restrict AT, const double *restrict x, double *restrict out) {
  for (int a = 0; a < ld; a++) out[a] = 0.0;
  for (int i = 0; i < n; i++) {
    const double xi = x[i];
    const double *restrict r = AT + (size_t)i * ld;
    for (int a = 0; a < ld; a++) out[a] += xi * r[a];
  }
}

/* 1 / x for x > 0 (normal): the hardware's 14-bit estimate refined by two
 * Newton steps (y += y (1 - x y)) where AVX-512 has one, to within about an
 * ulp; a division's throughput (16 cycles per 8 doubles) limited the
 * eigenspace pass, which divides once per point of the block */
static inline vd recip(vd x) {
#if SW == 8 && defined(__AVX512F__)
  const vd one = {1, 1, 1, 1, 1, 1, 1, 1};
  vd y = (vd)_mm512_rcp14_pd((__m512d)x);
  y += y * (one - x * y);
  y += y * (one - x * y);
  return y;
#else
  return 1.0 / x;
#endif
}

/* The eigenspace pass in 3D with NP planes per direction: E = D^{-1} (sum of
 * the faces expanded by the rows s = S[c,:] of the normal direction), never
 * stored; each line of E along x1 is contracted at once into the output
 * faces: normal x1 by a dot product with s1, normal x2/x3 by rank-1 updates.
 * Faces are n rows of ld; the lines run over all ld entries (zero beyond n).
 * The element-centred block (NP = 2); the vertex star: eig_vertex3. */
static void eig_element3(const hpmg_sem_star *st, const double *restrict G, double *restrict O) {
  const int NP = 2, n = st->n, ld = st->ld;
  const size_t F = (size_t)n * ld;
  const hpmg_sem_block1d *b1 = st->b[0], *b2 = st->b[1], *b3 = st->b[2];
  const double *restrict l1 = b1->lam;
  const double *restrict s1[2], *restrict s2[2], *restrict s3[2];
  for (int j = 0; j < NP; j++) {
    s1[j] = b1->S + (size_t)b1->c[j] * ld;
    s2[j] = b2->S + (size_t)b2->c[j] * ld;
    s3[j] = b3->S + (size_t)b3->c[j] * ld;
  }
  /* faces normal to x2, x3 accumulate; the eigen-indices a3, a2 beyond the
   * coupled ranges carry no data (zero faces) and are skipped, the same sums
   * without their zero terms */
  for (size_t q = 0; q < 3 * NP * F; q++) O[q] = 0.0;
  for (int a3 = b3->lo; a3 < b3->hi; a3++)
    for (int a2 = b2->lo; a2 < b2->hi; a2++) {
      const double base = st->lambda + b3->lam[a3] + b2->lam[a2];
      double g1[2], c2[2], c3[2];
      const double *restrict r2[2], *restrict r3[2];
      double *restrict o2[2], *restrict o3[2];
      for (int j = 0; j < NP; j++) {
        g1[j] = G[j * F + (size_t)a3 * ld + a2];
        c2[j] = s2[j][a2];
        c3[j] = s3[j][a3];
        r2[j] = G + (NP + j) * F + (size_t)a3 * ld;
        r3[j] = G + (2 * NP + j) * F + (size_t)a2 * ld;
        o2[j] = O + (NP + j) * F + (size_t)a3 * ld;
        o3[j] = O + (2 * NP + j) * F + (size_t)a2 * ld;
      }
      double d0 = 0.0, d1 = 0.0;
#pragma omp simd reduction(+ : d0, d1)
      for (int a1 = 0; a1 < ld; a1++) {
        const double v = (g1[0] * s1[0][a1] + g1[1] * s1[1][a1] + c2[0] * r2[0][a1] + c2[1] * r2[1][a1] +
                          c3[0] * r3[0][a1] + c3[1] * r3[1][a1]) /
                         (base + l1[a1]);
        d0 += s1[0][a1] * v;
        d1 += s1[1][a1] * v;
        o2[0][a1] += c2[0] * v;
        o2[1][a1] += c2[1] * v;
        o3[0][a1] += c3[0] * v;
        o3[1][a1] += c3[1] * v;
      }
      O[(size_t)a3 * ld + a2] = d0;
      O[F + (size_t)a3 * ld + a2] = d1;
    }
}

#if SW > 4
#if defined(__AVX512VL__)
static inline v4d recip4(v4d x) {
  const v4d one = {1, 1, 1, 1};
  v4d y = (v4d)_mm256_rcp14_pd((__m256d)x);
  y += y * (one - x * y);
  y += y * (one - x * y);
  return y;
}
#else
static inline v4d recip4(v4d x) { return 1.0 / x; }
#endif
#endif

/* the largest row stride of a vertex star's faces (n = 2p - 1 rounded up to 4) */
#define HPMG_SEM_STAR_LD_MAX ((2 * HPMG_SEM_MAX_DEGREE - 1 + 3) / 4 * 4)

/* the sum of the entries of v, as a tree */
static inline double lane_sum(vd v) {
#if SW == 8
  return ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
#elif SW == 4
  return (v[0] + v[2]) + (v[1] + v[3]);
#else
  return v[0] + v[1];
#endif
}

/* the sums of the entries of v[0..SW-1], as one vector (a transposing tree:
 * with SW = 8, 14 shuffles and 7 additions for 8 sums) */
static inline vd lane_sums(const vd *v) {
  typedef long long vi __attribute__((vector_size(HPMG_VBYTES)));
#if SW == 8
  const vi lo1 = {0, 8, 2, 10, 4, 12, 6, 14}, hi1 = {1, 9, 3, 11, 5, 13, 7, 15};
  const vi lo2 = {0, 1, 8, 9, 4, 5, 12, 13}, hi2 = {2, 3, 10, 11, 6, 7, 14, 15};
  const vi lo3 = {0, 1, 2, 3, 8, 9, 10, 11}, hi3 = {4, 5, 6, 7, 12, 13, 14, 15};
  vd a[4], b[2];
  for (int i = 0; i < 4; i++)
    a[i] = __builtin_shuffle(v[2 * i], v[2 * i + 1], lo1) + __builtin_shuffle(v[2 * i], v[2 * i + 1], hi1);
  for (int i = 0; i < 2; i++)
    b[i] = __builtin_shuffle(a[2 * i], a[2 * i + 1], lo2) + __builtin_shuffle(a[2 * i], a[2 * i + 1], hi2);
  return __builtin_shuffle(b[0], b[1], lo3) + __builtin_shuffle(b[0], b[1], hi3);
#elif SW == 4
  const vi lo1 = {0, 4, 2, 6}, hi1 = {1, 5, 3, 7}, lo2 = {0, 1, 4, 5}, hi2 = {2, 3, 6, 7};
  vd a[2];
  for (int i = 0; i < 2; i++)
    a[i] = __builtin_shuffle(v[2 * i], v[2 * i + 1], lo1) + __builtin_shuffle(v[2 * i], v[2 * i + 1], hi1);
  return __builtin_shuffle(a[0], a[1], lo2) + __builtin_shuffle(a[0], a[1], hi2);
#else
  const vi lo = {0, 2}, hi = {1, 3};
  return __builtin_shuffle(v[0], v[1], lo) + __builtin_shuffle(v[0], v[1], hi);
#endif
}

/* eig_vertex3 on the columns [a0, a0 + SW NV + 4 T) of the lines of one a3,
 * all a2 in [lo2, hi2) (T: the 4-wide end of an AVX-512 row): the face normal
 * to x2 accumulates over a2 in the same row, here in registers (through
 * memory, each line waited for the previous line's store); with a vector a
 * line or more, each line's partial dot product is kept as a vector in dl and
 * summed SW lines at a time into o1 (one line's own sum cost more than its
 * arithmetic: with one vector a line, the star at p = 4 to 6 took 4-5% longer;
 * with a 4-wide piece alone, p = 2 on AVX-512, the sums in dl cost 15%) */
static inline void eig_vertex3_cols(const int NV, const int T, int lo2, int hi2, int ld, double base3, double c3,
                                    const double *restrict lam2, const double *restrict s2, const double *restrict s1,
                                    const double *restrict l1, const double *restrict g1, const double *restrict r2,
                                    const double *restrict G3, double *restrict o1, double *restrict o2,
                                    double *restrict O3) {
  vd acc[5] = {{0}, {0}, {0}, {0}, {0}}, dl[HPMG_SEM_STAR_LD_MAX + SW];
#if SW > 4
  v4d acct = {0};
#endif
  const int b2 = lo2 & ~(SW - 1); /* dl[a2 - b2]: groups of SW lines aligned to o1's vectors */
  if (NV >= 1)
    for (int a2 = b2; a2 < lo2; a2++) dl[a2 - b2] = (vd){0};
  for (int a2 = lo2; a2 < hi2; a2++) {
    const double base = base3 + lam2[a2], g = g1[a2], c2 = s2[a2];
    const double *restrict r3 = G3 + (size_t)a2 * ld;
    double *restrict o3 = O3 + (size_t)a2 * ld;
    vd dv = {0};
    for (int i = 0; i < NV; i++) {
      const vd sv = *(const vd *)(s1 + SW * i);
      const vd v = (g * sv + c2 * *(const vd *)(r2 + SW * i) + c3 * *(const vd *)(r3 + SW * i)) *
                   recip(base + *(const vd *)(l1 + SW * i));
      dv += sv * v;
      acc[i] += c2 * v;
      *(vd *)(o3 + SW * i) += c3 * v;
    }
#if SW > 4
    if (T) {
      const int a = SW * NV;
      const v4d sv = *(const v4d *)(s1 + a);
      const v4d v =
          (g * sv + c2 * *(const v4d *)(r2 + a) + c3 * *(const v4d *)(r3 + a)) * recip4(base + *(const v4d *)(l1 + a));
      const v4d d4 = sv * v;
      dv += (vd){d4[0], d4[1], d4[2], d4[3], 0, 0, 0, 0};
      acct += c2 * v;
      *(v4d *)(o3 + a) += c3 * v;
    }
#endif
    if (NV >= 1) dl[a2 - b2] = dv;
    else o1[a2] += lane_sum(dv);
  }
  if (NV >= 1) {
    for (int a2 = hi2; a2 < ((hi2 + SW - 1) & ~(SW - 1)); a2++) dl[a2 - b2] = (vd){0};
    for (int a2 = b2; a2 < hi2; a2 += SW) {
      const vd h = lane_sums(dl + (a2 - b2));
      if (a2 + SW <= ld) *(vd *)(o1 + a2) += h;
      else
        for (int i = 0; a2 + i < hi2; i++) o1[a2 + i] += h[i];
    }
  }
  for (int i = 0; i < NV; i++) *(vd *)(o2 + SW * i) = acc[i];
#if SW > 4
  if (T) *(v4d *)(o2 + SW * NV) = acct;
#endif
}

/* The eigenspace pass of eig_element3 for the vertex star (one plane per
 * direction), with explicit vectors (the compilers' auto-vectorization keeps
 * to 256 bits on AVX-512) and the lines' columns in one chunk up to 5 vectors
 * (and AVX-512's 4-wide end), else in chunks of 4 vectors and a last one up
 * to that (a last chunk of 4 columns paid a line's overhead for one short
 * vector) */
static void eig_vertex3(const hpmg_sem_star *st, const double *restrict G, double *restrict O) {
  const int n = st->n, ld = st->ld, wmax = 5 * SW + (SW > 4 ? 4 : 0);
  const size_t F = (size_t)n * ld;
  const hpmg_sem_block1d *b1 = st->b[0], *b2 = st->b[1], *b3 = st->b[2];
  const double *restrict s1 = b1->S + (size_t)b1->c[0] * ld, *restrict s2 = b2->S + (size_t)b2->c[0] * ld,
                         *restrict s3 = b3->S + (size_t)b3->c[0] * ld;
  for (size_t q = 0; q < 3 * F; q++) O[q] = 0.0;
  for (int a3 = b3->lo; a3 < b3->hi; a3++) {
    const double base3 = st->lambda + b3->lam[a3], c3 = s3[a3];
    const size_t row = (size_t)a3 * ld;
    for (int a0 = 0, w; a0 < ld; a0 += w) {
      w = ld - a0 <= wmax ? ld - a0 : 4 * SW;
#define EIG_COLS(NV, T)                                                                                             \
  eig_vertex3_cols(NV, T, b2->lo, b2->hi, ld, base3, c3, b2->lam, s2, s1 + a0, b1->lam + a0, G + row, G + F + row + a0, \
                   G + 2 * F + a0, O + row, O + F + row + a0, O + 2 * F + a0)
      switch (2 * (w / SW) + (w % SW != 0)) { /* T only with SW = 8 (ld a multiple of 4) */
      case 1: EIG_COLS(0, 1); break;
      case 2: EIG_COLS(1, 0); break;
      case 3: EIG_COLS(1, 1); break;
      case 4: EIG_COLS(2, 0); break;
      case 5: EIG_COLS(2, 1); break;
      case 6: EIG_COLS(3, 0); break;
      case 7: EIG_COLS(3, 1); break;
      case 8: EIG_COLS(4, 0); break;
      case 9: EIG_COLS(4, 1); break;
      case 10: EIG_COLS(5, 0); break;
      default: EIG_COLS(5, 1); break;
      }
#undef EIG_COLS
    }
  }
}

/* Points beyond a block's coupled range [lo, hi) (the boundary sides'
 * decoupled ghost elements and Dirichlet planes) carry no data: input zero,
 * eigenvectors the identity there and zero across, so the transforms are
 * restricted to the coupled rows and sums, and a face on a decoupled plane
 * is zero; what is skipped are exact zeros (the results are those of the
 * full loops). A boundary star of a Dirichlet face costs about half. */
static void solve3(const hpmg_sem_star *st, const double *restrict f, double *restrict u, double *restrict work) {
  const int n = st->n, ld = st->ld, np = st->np, nf = st->nf;
  const size_t F = (size_t)n * ld, FN = st->fsize;
  double *G = work, *O = G + nf * F, *t1 = O + nf * F, *t2 = t1 + F;
  /* inverse multiplicity (and zero on decoupled points), then S_R^T g S_C */
  for (int fc = 0; fc < nf; fc++) {
    const int k = fc / np, j = fc % np;
    int R, C;
    hpmg_sem_face_dirs(k, &R, &C);
    const hpmg_sem_block1d *bk = st->b[k], *bR = st->b[R], *bC = st->b[C];
    const double sk = bk->mask[bk->c[j]];
    if (sk == 0.0) { /* a decoupled plane */
      memset(G + fc * F, 0, sizeof(double) * F);
      continue;
    }
    const double *ff = f + fc * FN;
    for (int r = bR->lo; r < bR->hi; r++) {
      const double sr = sk * bR->mask[r], pr = 1.0 + bR->onpl[r];
      double *restrict tr = t1 + (size_t)r * ld;
      const double *restrict fr = ff + (size_t)r * n;
      for (int s = 0; s < n; s++) tr[s] = fr[s] * sr * bC->mask[s];
      /* divide by the multiplicity pr + onpl[s] where it is not 1 */
      if (bR->onpl[r] != 0.0)
        for (int s = 0; s < n; s++) tr[s] /= pr + bC->onpl[s];
      else
        for (int q = 0; q < np; q++) tr[bC->c[q]] /= pr + bC->onpl[bC->c[q]];
    }
    mxm(bR->lo, bR->hi, bC->lo, bC->hi, ld, t1, bC->S, t2);
    mxm(bR->lo, bR->hi, bR->lo, bR->hi, ld, bR->ST, t2, G + fc * F);
  }
  if (np == 1)
    eig_vertex3(st, G, O);
  else
    eig_element3(st, G, O);
  for (int fc = 0; fc < nf; fc++) {
    const int k = fc / np, j = fc % np;
    int R, C;
    hpmg_sem_face_dirs(k, &R, &C);
    const hpmg_sem_block1d *bk = st->b[k], *bR = st->b[R], *bC = st->b[C];
    double *uf = u + fc * FN;
    if (bk->mask[bk->c[j]] == 0.0) {
      memset(uf, 0, sizeof(double) * FN);
      continue;
    }
    mxm(bR->lo, bR->hi, bC->lo, bC->hi, ld, O + fc * F, bC->ST, t1);
    mxm(bR->lo, bR->hi, bR->lo, bR->hi, ld, bR->S, t1, t2);
    for (int r = 0; r < n; r++) {
      if (r < bR->lo || r >= bR->hi) memset(uf + (size_t)r * n, 0, sizeof(double) * (size_t)n);
      else memcpy(uf + (size_t)r * n, t2 + (size_t)r * ld, sizeof(double) * (size_t)n);
    }
  }
  /* copies of a point on crossing faces take the lowest face's value:
   * (x1,x2) lines, (x1,x3) lines, then (x2,x3) lines (whose vertex points
   * already hold the x1 face's value) */
  const int *c1 = st->b[0]->c, *c2 = st->b[1]->c, *c3 = st->b[2]->c;
  for (int j = 0; j < np; j++)
    for (int jj = 0; jj < np; jj++) {
      double *u0 = u + j * FN, *u1 = u + (np + jj) * FN;
      for (int i = 0; i < n; i++) u1[(size_t)i * n + c1[j]] = u0[(size_t)i * n + c2[jj]];
    }
  for (int j = 0; j < np; j++)
    for (int jj = 0; jj < np; jj++) {
      double *u0 = u + j * FN, *u2 = u + (2 * np + jj) * FN;
      for (int i = 0; i < n; i++) u2[(size_t)i * n + c1[j]] = u0[(size_t)c3[jj] * n + i];
    }
  for (int j = 0; j < np; j++)
    for (int jj = 0; jj < np; jj++) {
      double *u1 = u + (np + j) * FN, *u2 = u + (2 * np + jj) * FN;
      memcpy(u2 + (size_t)c2[j] * n, u1 + (size_t)c3[jj] * n, sizeof(double) * (size_t)n);
    }
}

static void solve2(const hpmg_sem_star *st, const double *restrict f, double *restrict u, double *restrict work) {
  const int n = st->n, ld = st->ld, np = st->np;
  const hpmg_sem_block1d *b1 = st->b[0], *b2 = st->b[1];
  double *G = work, *O = work + 2 * np * ld, *t1 = O + 2 * np * ld, *t2 = t1 + ld;
  /* face k: normal x_{k+1}, values along the other direction T */
  for (int fc = 0; fc < 2 * np; fc++) {
    const int k = fc / np, j = fc % np;
    const hpmg_sem_block1d *bk = st->b[k], *bT = st->b[1 - k];
    const double sk = bk->mask[bk->c[j]];
    for (int i = 0; i < n; i++) t1[i] = f[fc * n + i] * sk * bT->mask[i] / (1.0 + bT->onpl[i]);
    matvec_t(n, ld, bT->S, t1, G + fc * ld); /* S^T g = sum_i g_i S[i,:] */
  }
  for (int q = np * ld; q < 2 * np * ld; q++) O[q] = 0.0;
  for (int a2 = 0; a2 < n; a2++) {
    const double base = st->lambda + b2->lam[a2];
    double d[2] = {0.0, 0.0};
    for (int a1 = 0; a1 < n; a1++) {
      double v = 0.0;
      for (int j = 0; j < np; j++)
        v += G[j * ld + a2] * b1->S[(size_t)b1->c[j] * ld + a1] +
             b2->S[(size_t)b2->c[j] * ld + a2] * G[(np + j) * ld + a1];
      v /= base + b1->lam[a1];
      for (int j = 0; j < np; j++) {
        d[j] += b1->S[(size_t)b1->c[j] * ld + a1] * v;
        O[(np + j) * ld + a1] += b2->S[(size_t)b2->c[j] * ld + a2] * v;
      }
    }
    for (int j = 0; j < np; j++) O[j * ld + a2] = d[j];
  }
  for (int fc = 0; fc < 2 * np; fc++) {
    matvec_t(n, ld, st->b[1 - fc / np]->ST, O + fc * ld, t2);
    memcpy(u + fc * n, t2, sizeof(double) * (size_t)n);
  }
  for (int j = 0; j < np; j++) /* crossing points: face (x1, j) wins */
    for (int jj = 0; jj < np; jj++) u[(np + jj) * n + b1->c[j]] = u[j * n + b2->c[jj]];
}

static void star_solve(const hpmg_sem_star *st, const double *f, double *u, double *work) {
  if (st->dim == 3)
    solve3(st, f, u, work);
  else
    solve2(st, f, u, work);
}

/* u = Z f (n values) from Z^T's rows of ld doubles (a multiple of 4 SW): the
 * rows summed with the weights f_j, 4 vectors at a time in registers */
static void dense_apply(const double *restrict ZT, size_t n, size_t ld, const double *restrict f, double *restrict u) {
  for (size_t a = 0; a < ld; a += 4 * SW) {
    vd c[4] = {{0}, {0}, {0}, {0}};
    for (size_t j = 0; j < n; j++) {
      const double fj = f[j];
      const double *restrict row = ZT + j * ld + a;
      for (int i = 0; i < 4; i++) c[i] += fj * *(const vd *)(row + SW * i);
    }
    if (a + 4 * SW <= n) memcpy(u + a, c, sizeof c);
    else if (a < n) memcpy(u + a, c, sizeof(double) * (n - a));
  }
}

#define LV(a, i) (*(const vd *)((a) + (size_t)(i) * SW))
#define LW(a, i) (*(vd *)((a) + (size_t)(i) * SW))
/* Z = X Y for n x n matrices of lane vectors, X(i, k) = X[k][i] if xt else
 * X[i][k], Y(k, j) = Y[j][k] if yt else Y[k][j]: a row of Z in registers */
static inline void lanes_mm(const int n, const double *restrict X, const int xt, const double *restrict Y, const int yt,
                            double *restrict Z) {
  for (int i = 0; i < n; i++) {
    vd acc[n];
    for (int j = 0; j < n; j++) acc[j] = (vd){0};
    for (int k = 0; k < n; k++) {
      const vd x = LV(X, xt ? k * n + i : i * n + k);
      for (int j = 0; j < n; j++) acc[j] += x * LV(Y, yt ? j * n + k : k * n + j);
    }
    for (int j = 0; j < n; j++) LW(Z, i * n + j) = acc[j];
  }
}

/* SW vertex stars in lanes (hpmg_sem_star_lanes): Algorithm 1 as solve3, every
 * operation on lane vectors, the loops over all n points (no lo/hi ranges:
 * the padding's exact zeros as solve3 shows them), n a constant where
 * inlined from lanes_solve. Faces of n x n lane vectors: G (the input in
 * eigenspace), O (the contraction), T (one face's half transform). */
static inline void lanes3(const int n, const hpmg_sem_star_lanes *restrict L, const double *restrict f,
                          double *restrict u, double *restrict work) {
  const int c = L->c;
  const size_t F = (size_t)n * n * SW;
  double *restrict G = work, *restrict O = G + 3 * F, *restrict T = O + 3 * F;
  for (int k = 0; k < 3; k++) {
    int R, C;
    hpmg_sem_face_dirs(k, &R, &C);
    const double *mR = L->mask[R], *mC = L->mask[C], *oR = L->onpl[R], *oC = L->onpl[C];
    const vd sk = LV(L->mask[k], c);
    const double *fk = f + k * F;
    double *t = O; /* O is free until the eigenspace pass */
    /* t = f masked and divided by the point's multiplicity; G_k = S_R^T t S_C */
    for (int r = 0; r < n; r++) {
      const vd sr = sk * LV(mR, r);
      for (int q = 0; q < n; q++)
        LW(t, r * n + q) = LV(fk, r * n + q) * sr * LV(mC, q) * (1.0 / (1.0 + oR[r] + oC[q]));
    }
    lanes_mm(n, t, 0, L->S[C], 0, T);
    lanes_mm(n, L->S[R], 1, T, 0, G + k * F);
  }
  /* eigenspace: faces 0 (rows a3, columns a2), 1 (a3, a1), 2 (a2, a1) */
  const double *restrict S1 = L->S[0], *restrict S2 = L->S[1], *restrict S3 = L->S[2];
  const double *restrict G1 = G + F, *restrict G2 = G + 2 * F;
  double *restrict O1 = O + F, *restrict O2 = O + 2 * F;
  for (size_t q = 0; q < F; q++) O2[q] = 0.0;
  for (int a3 = 0; a3 < n; a3++) {
    const vd c3 = LV(S3, c * n + a3), l3 = L->lambda + LV(L->lam[2], a3);
    vd acc1[n];
    for (int a1 = 0; a1 < n; a1++) acc1[a1] = (vd){0};
    for (int a2 = 0; a2 < n; a2++) {
      const vd c2 = LV(S2, c * n + a2), base = l3 + LV(L->lam[1], a2), g = LV(G, a3 * n + a2);
      vd d = {0};
      for (int a1 = 0; a1 < n; a1++) {
        const vd s1 = LV(S1, c * n + a1);
        const vd v = (g * s1 + c2 * LV(G1, a3 * n + a1) + c3 * LV(G2, a2 * n + a1)) * recip(base + LV(L->lam[0], a1));
        d += s1 * v;
        acc1[a1] += c2 * v;
        LW(O2, a2 * n + a1) += c3 * v;
      }
      LW(O, a3 * n + a2) = d;
    }
    for (int a1 = 0; a1 < n; a1++) LW(O1, a3 * n + a1) = acc1[a1];
  }
  /* back: u_k = S_R O_k S_C^T */
  for (int k = 0; k < 3; k++) {
    int R, C;
    hpmg_sem_face_dirs(k, &R, &C);
    lanes_mm(n, O + k * F, 0, L->S[C], 1, T);
    lanes_mm(n, L->S[R], 0, T, 0, u + k * F);
  }
  /* copies of a point on crossing faces take the lowest face's value (solve3) */
  double *u0 = u, *u1 = u + F, *u2 = u + 2 * F;
  for (int i = 0; i < n; i++) LW(u1, i * n + c) = LV(u0, i * n + c);
  for (int i = 0; i < n; i++) LW(u2, i * n + c) = LV(u0, c * n + i);
  for (int i = 0; i < n; i++) LW(u2, c * n + i) = LV(u1, c * n + i);
}
#undef LV
#undef LW

static void lanes_solve(const hpmg_sem_star_lanes *L, const double *f, double *u, double *work) {
  switch (L->n) { /* p = 4, 5, 6 with constant loop bounds */
  case 7: lanes3(7, L, f, u, work); break;
  case 9: lanes3(9, L, f, u, work); break;
  case 11: lanes3(11, L, f, u, work); break;
  default: lanes3(L->n, L, f, u, work); break;
  }
}

const hpmg_sem_star_kernels HPMG_ISA_DEFINE(hpmg_sem_star_kernels) = {
    .lanes = SW, .solve_lanes = lanes_solve, .solve = star_solve, .dense = dense_apply};
