/* GPU kernels of the general-box finite-difference multigrid (fd_box.h,
 * docs/bc.md): the operator A = sum_d K_d (x) W_others + lambda W from the
 * per-direction 1D coefficients in device memory, its residual norm, the
 * multicolour point Gauss-Seidel sweep, the multicolour line Gauss-Seidel
 * sweep, the 1D transfers and the mean removal of singular problems. The
 * same arithmetic as the CPU kernels of fd_box_kernels.c (equal to round-off).
 *
 * Colours: per direction the index parity, plus a third colour for the last
 * index of a periodic direction with an odd count (its wrap neighbour 0 has
 * its parity); a point's neighbours differ from it in one direction by one,
 * so no two points (lines) of one colour are coupled and the points (lines)
 * of a colour are updated by independent threads, one launch per colour.
 * Lines take two colours, a checkerboard of the directions across, where
 * asked and fd_box_line_checker allows it (the solver's default on the GPU):
 * a sweep then reads x twice where the product of parities (four colours in
 * 3D) reads it four times, and the long lines of the coarse levels wait
 * through two launches instead of four.
 *
 * Point GS: one thread per point of the colour, consecutive threads at
 * consecutive points of the colour along x (stride 2).
 * Line GS along dl: one thread per line, which runs the Thomas recursion
 * (forward elimination, then back substitution; along a periodic direction
 * with a second right-hand side for Sherman-Morrison) along the line; its
 * eliminated upper diagonal goes to cp and its eliminated right-hand side to
 * dp in the colour's compact layout (entry t of the colour's line l at
 * t * lines + l), so consecutive threads write and read consecutive
 * addresses there at every step (laid out like the grid, a colour's entries
 * sit at stride 2 and each write fills half a memory sector). Where every
 * line has the same coefficients (fd_box_line_table: the other directions'
 * w and kd the same at every index, a non-periodic line) the upper diagonal,
 * lower diagonal and inverse pivots come from that table of 3 m entries
 * (cached) and only dp is streamed. x and b are
 * read at the colour's points: stride 2 along x for lines along y or z
 * (a checkerboard colour's first index in a row is the row's parity);
 * lines along x run the same kernel with consecutive threads on every other
 * y line (the smoother of a grid stretched in x, which the channel does not
 * use).
 * Reductions (residual norm, mean): fixed blocks and a fixed tree, so the
 * result does not depend on the scheduling (deterministic). */
#include <cuda_runtime.h>
#include "backends/cuda_check.h"
extern "C" {
#include "disc/fd/fd_box.h"
#include "disc/fd/fd_box_cuda.h"
}

namespace {

struct Geom { /* fdb_geom by value, device arrays */
  int64_t n0, n1, n2;
  const double *w0, *w1, *w2, *kd0, *kd1, *kd2, *lo0, *lo1, *lo2, *hi0, *hi1, *hi2;
  double lambda;
};

Geom geom_of(const fdb_geom *g) {
  Geom q;
  q.n0 = g->n[0];
  q.n1 = g->n[1];
  q.n2 = g->n[2];
  q.w0 = g->w[0];
  q.w1 = g->w[1];
  q.w2 = g->w[2];
  q.kd0 = g->kd[0];
  q.kd1 = g->kd[1];
  q.kd2 = g->kd[2];
  q.lo0 = g->klo[0];
  q.lo1 = g->klo[1];
  q.lo2 = g->klo[2];
  q.hi0 = g->khi[0];
  q.hi1 = g->khi[1];
  q.hi2 = g->khi[2];
  q.lambda = g->lambda;
  return q;
}

__device__ __forceinline__ int64_t wm(int64_t i, int64_t n) { return i == 0 ? n - 1 : i - 1; }
__device__ __forceinline__ int64_t wp(int64_t i, int64_t n) { return i == n - 1 ? 0 : i + 1; }

/* a point's row of A x from its per-direction weights w and 1D terms K_d =
 * kd x_c - lo x_- - hi x_+, and its diagonal from the kd (the CPU row
 * formula: one place for ax_at, diag_at and the line kernel) */
__device__ __forceinline__ double row_sum(double w0, double w1, double w2, double K0, double K1, double K2, double lambda,
                                          double xc) {
  const double wyz = w1 * w2;
  return wyz * K0 + w0 * ((w2 * K1 + w1 * K2) + lambda * wyz * xc);
}
__device__ __forceinline__ double diag_sum(double w0, double w1, double w2, double kd0, double kd1, double kd2,
                                           double lambda) {
  return (w1 * w2) * kd0 + w0 * (w2 * kd1 + w1 * kd2 + lambda * w1 * w2);
}

/* (A x) at (i,j,k) */
__device__ __forceinline__ double ax_at(const Geom &g, const double *__restrict__ x, int64_t i, int64_t j, int64_t k) {
  const int64_t nx = g.n0, ny = g.n1, nz = g.n2;
  const int64_t r = (k * ny + j) * nx;
  const double xc = x[r + i];
  const double Kx = g.kd0[i] * xc - g.lo0[i] * x[r + wm(i, nx)] - g.hi0[i] * x[r + wp(i, nx)];
  const double Ky = g.kd1[j] * xc - g.lo1[j] * x[(k * ny + wm(j, ny)) * nx + i] - g.hi1[j] * x[(k * ny + wp(j, ny)) * nx + i];
  const double Kz = g.kd2[k] * xc - g.lo2[k] * x[(wm(k, nz) * ny + j) * nx + i] - g.hi2[k] * x[(wp(k, nz) * ny + j) * nx + i];
  return row_sum(g.w0[i], g.w1[j], g.w2[k], Kx, Ky, Kz, g.lambda, xc);
}

__device__ __forceinline__ double diag_at(const Geom &g, int64_t i, int64_t j, int64_t k) {
  return diag_sum(g.w0[i], g.w1[j], g.w2[k], g.kd0[i], g.kd1[j], g.kd2[k], g.lambda);
}

__global__ void k_apply(Geom g, const double *__restrict__ x, const double *__restrict__ b, double *__restrict__ y) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, j = (int64_t)blockIdx.y * blockDim.y + threadIdx.y,
                k = blockIdx.z;
  if (i >= g.n0 || j >= g.n1) return;
  const int64_t c = (k * g.n1 + j) * g.n0 + i;
  const double v = ax_at(g, x, i, j, k);
  y[c] = b ? b[c] - v : v;
}

#define FDB_RED_THREADS 256

__device__ double block_sum(double v) {
  __shared__ double sh[FDB_RED_THREADS];
  const int t = threadIdx.y * blockDim.x + threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (int s = FDB_RED_THREADS / 2; s > 0; s >>= 1) {
    if (t < s) sh[t] += sh[t + s];
    __syncthreads();
  }
  return sh[0];
}

/* part[block] = sum over the block's points of (b - A x)^2 (32 x 8 blocks) */
__global__ void k_res2(Geom g, const double *__restrict__ x, const double *__restrict__ b, double *__restrict__ part) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, j = (int64_t)blockIdx.y * blockDim.y + threadIdx.y,
                k = blockIdx.z;
  double v = 0;
  if (i < g.n0 && j < g.n1) {
    const double r = b[(k * g.n1 + j) * g.n0 + i] - ax_at(g, x, i, j, k);
    v = r * r;
  }
  v = block_sum(v);
  if (threadIdx.x == 0 && threadIdx.y == 0)
    part[((int64_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] = v;
}

/* out[block] = sum of v over the block's grid-stride share (FDB_RED_THREADS x 1 blocks) */
__global__ void k_sum(int64_t n, const double *__restrict__ v, double *__restrict__ out) {
  double s = 0;
  for (int64_t i = (int64_t)blockIdx.x * FDB_RED_THREADS + threadIdx.x; i < n; i += (int64_t)gridDim.x * FDB_RED_THREADS)
    s += v[i];
  s = block_sum(s);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

__global__ void k_shift(int64_t n, double *__restrict__ x, const double *__restrict__ sum) {
  const double m = sum[0] / (double)n;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) x[i] -= m;
}

/* indices of colour a in a direction of n (per: periodic): a + 2t, or n - 1 for colour 2 */
struct Col {
  int64_t first, step, count;
};
Col colour_range(int64_t n, int per, int a) {
  Col c;
  if (n == 1) return Col{0, 1, 1};
  if (a == 2) return Col{n - 1, 1, 1};
  const int64_t end = per && (n & 1) ? n - 1 : n;
  c.first = a;
  c.step = 2;
  c.count = (end - a + 1) / 2;
  return c;
}
int ncolours(int64_t n, int per) { return n == 1 ? 1 : per && (n & 1) ? 3 : 2; }

__global__ void k_gs(Geom g, Col cx, Col cy, Col cz, double omega, double *__restrict__ x, const double *__restrict__ b) {
  const int64_t ti = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, tj = (int64_t)blockIdx.y * blockDim.y + threadIdx.y,
                tk = blockIdx.z;
  if (ti >= cx.count || tj >= cy.count) return;
  const int64_t i = cx.first + cx.step * ti, j = cy.first + cy.step * tj, k = cz.first + cz.step * tk;
  const int64_t c = (k * g.n1 + j) * g.n0 + i;
  const double r = b[c] - ax_at(g, x, i, j, k);
  x[c] += omega * r / diag_at(g, i, j, k);
}

/* one thread per line along DL; (ia, ib) the line's indices in the other two
 * directions da, db (in increasing order); the recursion's cp and dp in the
 * colour's compact layout: entry t of the colour's line l = tb * ca.count +
 * ta at t * lines + l. Along a periodic direction (cyc) the line is cyclic:
 * Sherman-Morrison as in fd_box_kernels.c, the second right-hand side's
 * recursion in dz = cp + lines * m (the same layout). The line is walked in
 * chunks of FDB_LINE_CHUNK points: the chunk's loads (residual, coefficients;
 * dp, cp and x in the back substitution) are issued before its recursion
 * steps, which depend on each other but not on the loads, so that a thread
 * waits for memory once per chunk instead of once per point (the coarse
 * levels have few, long lines: there the wait is the kernel's time). */
#define FDB_LINE_CHUNK 8

/* a direction across the line: its coefficients at the line's index and the
 * offsets of its two neighbours (wrapped where periodic) */
struct Across {
  double w, kd, lo, hi;
  int64_t om, op;
};
__device__ __forceinline__ Across across(const double *w, const double *kd, const double *lo, const double *hi, int64_t i,
                                         int64_t n, int64_t stride) {
  return Across{w[i], kd[i], lo[i], hi[i], (wm(i, n) - i) * stride, (wp(i, n) - i) * stride};
}

template <int DL>
__global__ void k_line(Geom g, Col ca, Col cb, int cyc, double *__restrict__ x, const double *__restrict__ b,
                       const double *__restrict__ tab, double *__restrict__ cp, double *__restrict__ dp) {
  constexpr int CH = FDB_LINE_CHUNK;
  const int64_t ta = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, tb = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
  if (ta >= ca.count || tb >= cb.count) return;
  const int64_t ib = cb.first + cb.step * tb;
  /* ca.step 0: the checkerboard colour ca.first, the row's first index (ca.first + ib) mod 2 */
  const int64_t ia = ca.step ? ca.first + ca.step * ta : ((ca.first + ib) & 1) + 2 * ta;
  if (ia >= (DL == 0 ? g.n1 : g.n0)) return;
  const int64_t nl = ca.count * cb.count, l = tb * ca.count + ta;
  /* the line: its length m, the stride s of its points c = base + t s, the
   * directions across it (A: the lower-numbered one) and its own coefficients */
  const int64_t m = DL == 0 ? g.n0 : DL == 1 ? g.n1 : g.n2;
  const int64_t s = DL == 0 ? 1 : DL == 1 ? g.n0 : g.n0 * g.n1;
  const int64_t base = DL == 0 ? (ib * g.n1 + ia) * g.n0 : DL == 1 ? ib * g.n1 * g.n0 + ia : (ib * g.n0 + ia);
  const Across A = DL == 0 ? across(g.w1, g.kd1, g.lo1, g.hi1, ia, g.n1, g.n0) : across(g.w0, g.kd0, g.lo0, g.hi0, ia, g.n0, 1);
  const Across B = DL == 2 ? across(g.w1, g.kd1, g.lo1, g.hi1, ib, g.n1, g.n0)
                           : across(g.w2, g.kd2, g.lo2, g.hi2, ib, g.n2, g.n0 * g.n1);
  const double *wl = DL == 0 ? g.w0 : DL == 1 ? g.w1 : g.w2, *kdl = DL == 0 ? g.kd0 : DL == 1 ? g.kd1 : g.kd2;
  const double *klo = DL == 0 ? g.lo0 : DL == 1 ? g.lo1 : g.lo2, *khi = DL == 0 ? g.hi0 : DL == 1 ? g.hi1 : g.hi2;
  const double wo = A.w * B.w;
  const double kbeta = cyc ? klo[0] : 0.0, kalpha = cyc ? khi[m - 1] : 0.0;
  double *dz = cp + nl * m;
  double pc = 0, pd = 0, pz = 0, gam = 0;
  for (int64_t t0 = 0; t0 < m; t0 += CH) {
    /* per point: the residual, the diagonal and the couplings to t - 1, t + 1 (from the table: the inverse pivot and
     * the lower coupling) */
    double r[CH], dg[CH], lw[CH], h[CH];
#pragma unroll
    for (int q = 0; q < CH; q++) {
      const int64_t t = t0 + q < m ? t0 + q : m - 1; /* past the end: a repeat, unused */
      const int64_t c = base + t * s;
      const double xc = x[c];
      const double xm = x[t > 0 ? c - s : base + (m - 1) * s], xp = x[t < m - 1 ? c + s : base];
      const double KL = kdl[t] * xc - klo[t] * xm - khi[t] * xp;
      const double KA = A.kd * xc - A.lo * x[c + A.om] - A.hi * x[c + A.op];
      const double KB = B.kd * xc - B.lo * x[c + B.om] - B.hi * x[c + B.op];
      const double w0 = DL == 0 ? wl[t] : A.w, w1 = DL == 1 ? wl[t] : DL == 0 ? A.w : B.w, w2 = DL == 2 ? wl[t] : B.w;
      const double K0 = DL == 0 ? KL : KA, K1 = DL == 1 ? KL : DL == 0 ? KA : KB, K2 = DL == 2 ? KL : KB;
      const double kd0 = DL == 0 ? kdl[t] : A.kd, kd1 = DL == 1 ? kdl[t] : DL == 0 ? A.kd : B.kd,
                   kd2 = DL == 2 ? kdl[t] : B.kd;
      r[q] = b[c] - row_sum(w0, w1, w2, K0, K1, K2, g.lambda, xc);
      if (tab) {
        dg[q] = tab[2 * m + t];
        lw[q] = tab[m + t];
      } else {
        dg[q] = diag_sum(w0, w1, w2, kd0, kd1, kd2, g.lambda);
        lw[q] = t > 0 ? -klo[t] * wo : 0.0;
        h[q] = t < m - 1 ? -khi[t] * wo : 0.0;
      }
    }
#pragma unroll
    for (int q = 0; q < CH; q++) {
      const int64_t t = t0 + q;
      if (t >= m) break;
      if (tab) { /* the same coefficients on every line (never cyclic): cp not streamed */
        pd = (r[q] - lw[q] * pd) * dg[q];
        dp[t * nl + l] = pd;
        continue;
      }
      double d = dg[q], u = 0.0;
      if (cyc && t == 0) {
        gam = -d;
        u = -d;
        d *= 2.0;
      } else if (cyc && t == m - 1) {
        u = -kalpha * wo;
        d -= kalpha * kbeta * wo * wo / gam;
      }
      const double den = d - lw[q] * pc;
      pc = h[q] / den;
      pd = (r[q] - lw[q] * pd) / den;
      cp[t * nl + l] = pc;
      dp[t * nl + l] = pd;
      if (cyc) {
        pz = (u - lw[q] * pz) / den;
        dz[t * nl + l] = pz;
      }
    }
  }
  if (!cyc) { /* back substitution, x += d */
    double d = pd;
    x[base + (m - 1) * s] += d;
    for (int64_t t1 = m - 2; t1 >= 0; t1 -= CH) {
      double dv[CH], cv[CH], xv[CH];
#pragma unroll
      for (int q = 0; q < CH; q++) {
        const int64_t t = t1 - q >= 0 ? t1 - q : 0; /* past the start: a repeat, unused */
        dv[q] = dp[t * nl + l];
        cv[q] = tab ? tab[t] : cp[t * nl + l];
        xv[q] = x[base + t * s];
      }
#pragma unroll
      for (int q = 0; q < CH; q++) {
        if (t1 - q < 0) break;
        d = dv[q] - cv[q] * d;
        x[base + (t1 - q) * s] = xv[q] + d;
      }
    }
    return;
  }
  /* both back substitutions, then x += y - f z */
  double d = pd, z = pz;
  for (int64_t t = m - 2; t >= 0; t--) {
    d = dp[t * nl + l] - cp[t * nl + l] * d;
    z = dz[t * nl + l] - cp[t * nl + l] * z;
    dp[t * nl + l] = d;
    dz[t * nl + l] = z;
  }
  const double bg = -kbeta * wo / gam, f = (d + bg * pd) / (1.0 + z + bg * pz);
  for (int64_t t = 0; t < m; t++) x[base + t * s] += dp[t * nl + l] - f * dz[t * nl + l];
}

/* y (+)= M x along direction d: one thread per output entry */
__global__ void k_apply1d(int d, int64_t o0, int64_t o1, int64_t o2, int64_t n0, int64_t n1, const int64_t *__restrict__ ptr,
                          const int64_t *__restrict__ col, const double *__restrict__ val, const double *__restrict__ x,
                          double *__restrict__ y, int add) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, j = (int64_t)blockIdx.y * blockDim.y + threadIdx.y,
                k = blockIdx.z;
  if (i >= o0 || j >= o1) return;
  const int64_t o = d == 0 ? i : d == 1 ? j : k;
  /* x's index with the d-th index 0, and the stride of d in x */
  const int64_t sx = d == 0 ? 1 : d == 1 ? n0 : n0 * n1;
  const int64_t xb = d == 0 ? (k * n1 + j) * n0 : d == 1 ? k * n1 * n0 + i : j * n0 + i;
  double s = 0;
  for (int64_t e = ptr[o]; e < ptr[o + 1]; e++) s += val[e] * x[xb + col[e] * sx];
  const int64_t yo = (k * o1 + j) * o0 + i;
  y[yo] = add ? y[yo] + s : s;
}

void grid3(int64_t nx, int64_t ny, int64_t nz, dim3 *gr, dim3 *bl) {
  *bl = dim3(32, 8, 1);
  *gr = dim3((unsigned)((nx + 31) / 32), (unsigned)((ny + 7) / 8), (unsigned)(nz > 0 ? nz : 1));
}

hpmg_error check_dims(int64_t nx, int64_t ny, int64_t nz) {
  if ((nx + 31) / 32 > 2147483647 || (ny + 7) / 8 > 65535 || nz > 65535)
    return hpmg_error_set(HPMG_ERR_BACKEND, "fd box (GPU): a level of %lld x %lld x %lld unknowns exceeds the launch grid",
                          (long long)nx, (long long)ny, (long long)nz);
  return HPMG_SUCCESS;
}

/* the deterministic sum of v[0..n) into out[0] (part: fdb_cuda_red_len doubles) */
hpmg_error sum_into(int64_t n, const double *v, double *part, double *out) {
  k_sum<<<FDB_RED_BLOCKS, FDB_RED_THREADS>>>(n, v, part);
  HPMG_CU_LAUNCH();
  k_sum<<<1, FDB_RED_THREADS>>>(FDB_RED_BLOCKS, part, out);
  HPMG_CU_LAUNCH();
  return HPMG_SUCCESS;
}

} // namespace

extern "C" int64_t fdb_cuda_red_len(const fdb_geom *g) {
  const int64_t blocks = ((g->n[0] + 31) / 32) * ((g->n[1] + 7) / 8) * g->n[2];
  return blocks + FDB_RED_BLOCKS + 8;
}

extern "C" hpmg_error fdb_cuda_apply(const fdb_geom *g, const double *x, const double *b, double *y) {
  HPMG_CALL(check_dims(g->n[0], g->n[1], g->n[2]));
  dim3 gr, bl;
  grid3(g->n[0], g->n[1], g->n[2], &gr, &bl);
  k_apply<<<gr, bl>>>(geom_of(g), x, b, y);
  HPMG_CU_LAUNCH();
  return HPMG_SUCCESS;
}

extern "C" hpmg_error fdb_cuda_residual_norm(const fdb_geom *g, const double *x, const double *b, double *red, double *nrm) {
  HPMG_CALL(check_dims(g->n[0], g->n[1], g->n[2]));
  dim3 gr, bl;
  grid3(g->n[0], g->n[1], g->n[2], &gr, &bl);
  const int64_t nb = (int64_t)gr.x * gr.y * gr.z;
  k_res2<<<gr, bl>>>(geom_of(g), x, b, red);
  HPMG_CU_LAUNCH();
  HPMG_CALL(sum_into(nb, red, red + nb, red + nb + FDB_RED_BLOCKS));
  double s;
  HPMG_CU(cudaMemcpy(&s, red + nb + FDB_RED_BLOCKS, sizeof s, cudaMemcpyDeviceToHost));
  *nrm = sqrt(s);
  return HPMG_SUCCESS;
}

extern "C" hpmg_error fdb_cuda_gs_sweep(const fdb_geom *g, const int per[3], double omega, int backward, double *x,
                                        const double *b) {
  HPMG_CALL(check_dims(g->n[0], g->n[1], g->n[2]));
  const int cx = ncolours(g->n[0], per[0]), cy = ncolours(g->n[1], per[1]), cz = ncolours(g->n[2], per[2]);
  const int nc = cx * cy * cz;
  const Geom q = geom_of(g);
  for (int s = 0; s < nc; s++) {
    const int c = backward ? nc - 1 - s : s;
    const int ax = c % cx, ay = (c / cx) % cy, az = c / (cx * cy);
    const Col rx = colour_range(g->n[0], per[0], ax), ry = colour_range(g->n[1], per[1], ay),
              rz = colour_range(g->n[2], per[2], az);
    if (rx.count <= 0 || ry.count <= 0 || rz.count <= 0) continue;
    dim3 gr, bl;
    grid3(rx.count, ry.count, rz.count, &gr, &bl);
    k_gs<<<gr, bl>>>(q, rx, ry, rz, omega, x, b);
    HPMG_CU_LAUNCH();
  }
  return HPMG_SUCCESS;
}

extern "C" hpmg_error fdb_cuda_line_sweep(const fdb_geom *g, const int per[3], int dl, int checker, int backward, double *x,
                                          const double *b, const double *tab, double *cp, double *dp) {
  HPMG_CALL(check_dims(g->n[0], g->n[1], g->n[2]));
  const int da = dl == 0 ? 1 : 0, db = dl == 2 ? 1 : 2;
  const int ca = ncolours(g->n[da], per[da]), cb = ncolours(g->n[db], per[db]);
  const int chk = checker && fd_box_line_checker(g->n, per, dl), nc = chk ? 2 : ca * cb;
  const Geom q = geom_of(g);
  for (int s = 0; s < nc; s++) {
    const int c = backward ? nc - 1 - s : s;
    const Col ra = chk ? Col{c, 0, (g->n[da] + 1) / 2} : colour_range(g->n[da], per[da], c % ca),
              rb = chk ? Col{0, 1, g->n[db]} : colour_range(g->n[db], per[db], c / ca);
    if (ra.count <= 0 || rb.count <= 0) continue;
    const dim3 bl(64, 4, 1), gr((unsigned)((ra.count + 63) / 64), (unsigned)((rb.count + 3) / 4), 1);
    if (gr.y > 65535) return hpmg_error_set(HPMG_ERR_BACKEND, "fd box (GPU): too many lines for the launch grid");
    const int cyc = per[dl] && g->n[dl] >= 2;
    const double *tb = cyc ? nullptr : tab;
    if (dl == 0) k_line<0><<<gr, bl>>>(q, ra, rb, cyc, x, b, tb, cp, dp);
    else if (dl == 1) k_line<1><<<gr, bl>>>(q, ra, rb, cyc, x, b, tb, cp, dp);
    else k_line<2><<<gr, bl>>>(q, ra, rb, cyc, x, b, tb, cp, dp);
    HPMG_CU_LAUNCH();
  }
  return HPMG_SUCCESS;
}

extern "C" hpmg_error fdb_cuda_apply1d(int d, const int64_t nin[3], const fdb_csr *M, const double *x, double *y, int add) {
  int64_t o[3] = {nin[0], nin[1], nin[2]};
  o[d] = M->rows;
  HPMG_CALL(check_dims(o[0], o[1], o[2]));
  dim3 gr, bl;
  grid3(o[0], o[1], o[2], &gr, &bl);
  k_apply1d<<<gr, bl>>>(d, o[0], o[1], o[2], nin[0], nin[1], M->ptr, M->col, M->val, x, y, add);
  HPMG_CU_LAUNCH();
  return HPMG_SUCCESS;
}

extern "C" hpmg_error fdb_cuda_mean_remove(int64_t n, double *x, double *red) {
  HPMG_CALL(sum_into(n, x, red, red + FDB_RED_BLOCKS));
  k_shift<<<1024, 256>>>(n, x, red + FDB_RED_BLOCKS);
  HPMG_CU_LAUNCH();
  return HPMG_SUCCESS;
}
