/* Kernels of the general-box finite-difference operator (fd_box.h): the
 * variable-coefficient 5/7-point operator A = sum_d K_d (x) W_others + lambda W
 * from per-direction 1D coefficients, multicolour point and line Gauss-Seidel,
 * and the tensor-product transfers one direction at a time. Compiled once per
 * instruction set (core/isa.h); the x loops are written to vectorize. */
#include <math.h>
#include <stdlib.h>
#include <omp.h>
#include "core/par.h"
#include "disc/fd/fd_box.h"

static inline int64_t wrapm(int64_t i, int64_t n) { return i == 0 ? n - 1 : i - 1; }
static inline int64_t wrapp(int64_t i, int64_t n) { return i == n - 1 ? 0 : i + 1; }

/* (A x) at (i,j,k) */
static inline double point_ax(const fdb_geom *g, const double *x, int64_t i, int64_t j, int64_t k) {
  const int64_t nx = g->n[0], ny = g->n[1], nz = g->n[2];
  const int64_t c = (k * ny + j) * nx + i;
  const double xc = x[c];
  const double wx = g->w[0][i], wy = g->w[1][j], wz = g->w[2][k];
  const double Kx = g->kd[0][i] * xc - g->klo[0][i] * x[c - i + wrapm(i, nx)] - g->khi[0][i] * x[c - i + wrapp(i, nx)];
  const double Ky = g->kd[1][j] * xc - g->klo[1][j] * x[(k * ny + wrapm(j, ny)) * nx + i] -
                    g->khi[1][j] * x[(k * ny + wrapp(j, ny)) * nx + i];
  const double Kz = g->kd[2][k] * xc - g->klo[2][k] * x[(wrapm(k, nz) * ny + j) * nx + i] -
                    g->khi[2][k] * x[(wrapp(k, nz) * ny + j) * nx + i];
  return wy * wz * Kx + wx * (wz * Ky + wy * Kz + g->lambda * wy * wz * xc);
}

/* row (j,k), entries i0 <= i < i1: out[i - i0] = (A x)_i, or b_i - (A x)_i */
static inline void row_apply_range(const fdb_geom *g, const double *x, const double *b, double *out, int64_t j,
                                   int64_t k, int64_t i0, int64_t i1) {
  const int64_t nx = g->n[0], ny = g->n[1], nz = g->n[2];
  const int64_t r = (k * ny + j) * nx;
  const double *xc = x + r, *xs = x + (k * ny + wrapm(j, ny)) * nx, *xn = x + (k * ny + wrapp(j, ny)) * nx;
  const double *xb = x + (wrapm(k, nz) * ny + j) * nx, *xt = x + (wrapp(k, nz) * ny + j) * nx;
  const double wy = g->w[1][j], wz = g->w[2][k], wyz = wy * wz;
  const double dy = g->kd[1][j], ly = g->klo[1][j], hy = g->khi[1][j];
  const double dz = g->kd[2][k], lz = g->klo[2][k], hz = g->khi[2][k];
  const double *wx = g->w[0], *dx = g->kd[0], *lx = g->klo[0], *hx = g->khi[0];
  const double lam = g->lambda * wyz;
  const double *br = b ? b + r : NULL;
  /* the ends of the row (periodic wrap) separately; the inner part vectorizes */
  const int64_t a0 = i0 > 1 ? i0 : 1, a1 = i1 < nx - 1 ? i1 : nx - 1;
  for (int64_t i = i0; i < i1; i++) {
    if (i >= a0 && i < a1) {
      i = a1 - 1;
      continue;
    }
    const double v = point_ax(g, x, i, j, k);
    out[i - i0] = br ? br[i] - v : v;
  }
  double *o = out - i0 + a0; /* o[i - a0] = out[i - i0] */
  if (br) {
#pragma omp simd
    for (int64_t i = a0; i < a1; i++) {
      const double Kx = dx[i] * xc[i] - lx[i] * xc[i - 1] - hx[i] * xc[i + 1];
      const double Kyz = wz * (dy * xc[i] - ly * xs[i] - hy * xn[i]) + wy * (dz * xc[i] - lz * xb[i] - hz * xt[i]);
      o[i - a0] = br[i] - (wyz * Kx + wx[i] * (Kyz + lam * xc[i]));
    }
  } else {
#pragma omp simd
    for (int64_t i = a0; i < a1; i++) {
      const double Kx = dx[i] * xc[i] - lx[i] * xc[i - 1] - hx[i] * xc[i + 1];
      const double Kyz = wz * (dy * xc[i] - ly * xs[i] - hy * xn[i]) + wy * (dz * xc[i] - lz * xb[i] - hz * xt[i]);
      o[i - a0] = wyz * Kx + wx[i] * (Kyz + lam * xc[i]);
    }
  }
}

/* one row (j,k): y = A x or b - A x */
static inline void row_apply(const fdb_geom *g, const double *x, const double *b, double *yr, int64_t j, int64_t k) {
  row_apply_range(g, x, b, yr, j, k, 0, g->n[0]);
}

/* the diagonal of A on row (j,k), entries i0..i1-1 */
static inline void row_diag(const fdb_geom *g, double *out, int64_t j, int64_t k, int64_t i0, int64_t i1) {
  const double wy = g->w[1][j], wz = g->w[2][k];
  const double c0 = wy * wz, c1 = wz * g->kd[1][j] + wy * g->kd[2][k] + g->lambda * wy * wz;
  const double *wx = g->w[0] + i0, *dx = g->kd[0] + i0;
#pragma omp simd
  for (int64_t i = 0; i < i1 - i0; i++) out[i] = c0 * dx[i] + wx[i] * c1;
}

/* OpenMP regions only where they hold hpmg_par_min units of work (core/par.h):
 * a point's row costs about FDB_UNITS_POINT (some 20 flops and 3 doubles
 * streamed); a coarse level's loops run on the calling thread */
#define FDB_UNITS_POINT 24.0

static void k_apply(const fdb_geom *g, const double *x, const double *b, double *y) {
  const int64_t ny = g->n[1], nz = g->n[2];
#pragma omp parallel for collapse(2) schedule(static) if (hpmg_par(FDB_UNITS_POINT * (double)g->N))
  for (int64_t k = 0; k < nz; k++)
    for (int64_t j = 0; j < ny; j++) row_apply(g, x, b, y + (k * ny + j) * g->n[0], j, k);
}

static double k_residual_norm(const fdb_geom *g, const double *x, const double *b) {
  const int64_t nx = g->n[0], ny = g->n[1], nz = g->n[2];
  double s = 0;
#pragma omp parallel reduction(+ : s) if (hpmg_par(FDB_UNITS_POINT * (double)g->N))
  {
    double *row = malloc(sizeof(double) * (size_t)nx);
    /* each row's residual into a private buffer: no residual vector */
#pragma omp for collapse(2) schedule(static)
    for (int64_t k = 0; k < nz; k++)
      for (int64_t j = 0; j < ny; j++) {
        row_apply(g, x, b, row, j, k);
        for (int64_t i = 0; i < nx; i++) s += row[i] * row[i];
      }
    free(row);
  }
  return sqrt(s);
}

/* colour of index i in a direction: parity, and 2 for the last index of a
 * periodic direction with an odd count (its wrap neighbour 0 is even) */
static inline int colour(int64_t i, int64_t n, int per) { return per && (n & 1) && i == n - 1 && n > 1 ? 2 : (int)(i & 1); }
static inline int ncolours(int64_t n, int per) { return n == 1 ? 1 : per && (n & 1) ? 3 : 2; }

/* Per colour, the residual and diagonal of a whole row first (vectorized;
 * the row's points of the other x colour are not neighbours of the updated
 * ones), then the update of the colour's points. */
static void k_gs_sweep(const fdb_geom *g, const int per[3], double omega, int backward, double *x, const double *b) {
  const int64_t nx = g->n[0], ny = g->n[1], nz = g->n[2];
  const int cx = ncolours(nx, per[0]), cy = ncolours(ny, per[1]), cz = ncolours(nz, per[2]);
  const int nc = cx * cy * cz;
  const double work = FDB_UNITS_POINT * (double)g->N / nc; /* a colour's */
  for (int s = 0; s < nc; s++) {
    const int c = backward ? nc - 1 - s : s;
    const int ax = c % cx, ay = (c / cx) % cy, az = c / (cx * cy);
#pragma omp parallel if (hpmg_par(work))
    {
      double *rr = malloc(sizeof(double) * 2 * (size_t)nx), *dd = rr + nx;
#pragma omp for collapse(2) schedule(static)
      for (int64_t k = 0; k < nz; k++)
        for (int64_t j = 0; j < ny; j++) {
          if (colour(k, nz, per[2]) != az || colour(j, ny, per[1]) != ay) continue;
          double *xr = x + (k * ny + j) * nx;
          if (ax == 2) {
            const int64_t i = nx - 1;
            xr[i] += omega * (b[(k * ny + j) * nx + i] - point_ax(g, x, i, j, k)) / fdb_point_diag(g, i, j, k);
            continue;
          }
          row_apply_range(g, x, b, rr, j, k, 0, nx);
          row_diag(g, dd, j, k, 0, nx);
          const int64_t iend = cx == 3 ? nx - 1 : nx;
          for (int64_t i = ax; i < iend; i += 2) xr[i] += omega * rr[i] / dd[i];
        }
      free(rr);
    }
  }
}

/* Line Gauss-Seidel along dl: T d = r per line (T: the line's part of A,
 * diagonal D, couplings -klo/khi W_others), x += d. Lines along y or z are
 * solved FDB_LINE_BATCH at a time side by side in x, so that every step of
 * the Thomas recursion reads and writes contiguous x rows. Along a periodic
 * direction T is cyclic (corners beta = T[0][m-1], alpha = T[m-1][0]; m >= 2,
 * a periodic direction keeps 2 cells or more on every level): Sherman-Morrison
 * with T = T' + u v^T, u = (gamma, 0, .., 0, alpha), v = (1, 0, .., 0,
 * beta / gamma), gamma = -D_0, so T' is tridiagonal with D_0 - gamma and
 * D_{m-1} - alpha beta / gamma; T' y = r and T' z = u share one elimination,
 * d = y - z (y_0 + beta y_{m-1} / gamma) / (1 + z_0 + beta z_{m-1} / gamma).
 * The lines' colours (fd_box_line_checker): a checkerboard of the two
 * directions across (the colour's first index in a row of lines is the
 * row's parity) or the product of per-direction colours. */
#define FDB_LINE_BATCH 64
static void k_line_sweep(const fdb_geom *g, const int per[3], int dl, int checker, int backward, double *x,
                         const double *b, const hpmg_scratch *scratch) {
  const int64_t n[3] = {g->n[0], g->n[1], g->n[2]};
  const int da = dl == 0 ? 1 : 0, db = dl == 2 ? 1 : 2; /* the other two directions (da = x unless dl = x) */
  const int ca = ncolours(n[da], per[da]), cb = ncolours(n[db], per[db]);
  const int chk = checker && fd_box_line_checker(n, per, dl), nc = chk ? 2 : ca * cb;
  const int64_t m = n[dl];
  const int cyc = per[dl] && m >= 2;
  const int64_t stride[3] = {1, n[0], n[0] * n[1]};
  const int64_t B = dl == 0 ? 1 : FDB_LINE_BATCH, nchunk = (n[da] + B - 1) / B;
  /* the corners' 1D couplings (times the line's weight wo) */
  const double kbeta = cyc ? g->klo[dl][0] : 0.0, kalpha = cyc ? g->khi[dl][m - 1] : 0.0;
  const double work = FDB_UNITS_POINT * (double)g->N / nc; /* a colour's */
  for (int s = 0; s < nc; s++) {
    const int c = backward ? nc - 1 - s : s;
    const int wa0 = c % ca, wb = c / ca;
#pragma omp parallel if (hpmg_par(work))
    {
      void *own;
      double *cp = hpmg_scratch_thread(scratch, sizeof(double) * (size_t)fd_box_line_scratch(dl, m), &own), *dp = cp + m * B;
      double *dz = dp + m * B, *rr = dz + m * B, *dd = rr + B, *gm = dd + B; /* z; one row: residual, diagonal; gamma */
#pragma omp for collapse(2) schedule(static)
      for (int64_t ib = 0; ib < n[db]; ib++)
        for (int64_t ch = 0; ch < nchunk; ch++) {
          if (!chk && colour(ib, n[db], per[db]) != wb) continue;
          const int wa = chk ? (int)((c + ib) & 1) : wa0; /* the colour's index parity across in this row */
          const int64_t ia0 = ch * B, ia1 = ia0 + B < n[da] ? ia0 + B : n[da];
          const double wb_ = g->w[db][ib];
          int64_t idx[3];
          idx[db] = ib;
          for (int64_t t = 0; t < m; t++) {
            idx[dl] = t;
            const double klo = t > 0 ? g->klo[dl][t] : 0.0, khi = t < m - 1 ? g->khi[dl][t] : 0.0;
            double *cpt = cp + t * B, *dpt = dp + t * B, *dzt = dz + t * B;
            const double *cpm = cp + (t - 1) * B, *dpm = dp + (t - 1) * B, *dzm = dz + (t - 1) * B;
            if (dl != 0) { /* the chunk's row: residual and diagonal vectorized */
              const int64_t j = dl == 1 ? t : ib, k = dl == 1 ? ib : t;
              row_apply_range(g, x, b, rr, j, k, ia0, ia1);
              row_diag(g, dd, j, k, ia0, ia1);
            }
            for (int64_t ia = ia0 + (dl != 0 && (ia0 & 1) != (wa & 1)); ia < ia1; ia += dl != 0 ? 2 : 1) {
              if (colour(ia, n[da], per[da]) != wa) continue;
              const int64_t l = ia - ia0;
              const double wo = g->w[da][ia] * wb_, lo = -klo * wo, hi = -khi * wo;
              double r, dg;
              if (dl != 0) {
                r = rr[l];
                dg = dd[l];
              } else {
                idx[da] = ia;
                r = b[ia * stride[da] + ib * stride[db] + t * stride[dl]] - point_ax(g, x, idx[0], idx[1], idx[2]);
                dg = fdb_point_diag(g, idx[0], idx[1], idx[2]);
              }
              double u = 0.0;
              if (cyc && t == 0) {
                gm[l] = -dg;
                u = -dg;
                dg *= 2.0;
              } else if (cyc && t == m - 1) {
                u = -kalpha * wo;
                dg -= kalpha * kbeta * wo * wo / gm[l];
              }
              const double pc = t > 0 ? cpm[l] : 0.0, pd = t > 0 ? dpm[l] : 0.0;
              const double den = dg - lo * pc;
              cpt[l] = hi / den;
              dpt[l] = (r - lo * pd) / den;
              if (cyc) dzt[l] = (u - lo * (t > 0 ? dzm[l] : 0.0)) / den;
            }
          }
          for (int64_t t = m - 2; t >= 0; t--)
            for (int64_t ia = ia0; ia < ia1; ia++) {
              if (colour(ia, n[da], per[da]) != wa) continue;
              const int64_t l = ia - ia0;
              dp[t * B + l] -= cp[t * B + l] * dp[(t + 1) * B + l];
              if (cyc) dz[t * B + l] -= cp[t * B + l] * dz[(t + 1) * B + l];
            }
          if (cyc) /* the Sherman-Morrison factor of each line (into rr) */
            for (int64_t ia = ia0; ia < ia1; ia++) {
              if (colour(ia, n[da], per[da]) != wa) continue;
              const int64_t l = ia - ia0;
              const double bg = -kbeta * g->w[da][ia] * wb_ / gm[l]; /* beta / gamma */
              rr[l] = (dp[l] + bg * dp[(m - 1) * B + l]) / (1.0 + dz[l] + bg * dz[(m - 1) * B + l]);
            }
          for (int64_t t = 0; t < m; t++)
            for (int64_t ia = ia0; ia < ia1; ia++) {
              if (colour(ia, n[da], per[da]) != wa) continue;
              const int64_t l = ia - ia0;
              x[ia * stride[da] + ib * stride[db] + t * stride[dl]] +=
                  cyc ? dp[t * B + l] - rr[l] * dz[t * B + l] : dp[t * B + l];
            }
        }
      free(own);
    }
  }
}

static void k_apply1d(int d, const int64_t nin[3], const fdb_csr *M, const double *x, double *y, int add) {
  const int64_t n0 = nin[0], n1 = nin[1], n2 = nin[2], mo = M->rows;
  const int64_t *ptr = M->ptr, *col = M->col;
  const double *val = M->val;
  /* per output entry a multiply-add per matrix entry and about 2 doubles streamed */
  const double work = (double)n0 * n1 * n2 / (double)nin[d] * (double)(mo + M->ptr[mo]) * 2.0;
  if (d == 0) {
#pragma omp parallel for schedule(static) if (hpmg_par(work))
    for (int64_t r = 0; r < n1 * n2; r++) {
      const double *xr = x + r * n0;
      double *yr = y + r * mo;
      for (int64_t o = 0; o < mo; o++) {
        double s = 0;
        for (int64_t e = ptr[o]; e < ptr[o + 1]; e++) s += val[e] * xr[col[e]];
        yr[o] = add ? yr[o] + s : s;
      }
    }
  } else if (d == 1) {
#pragma omp parallel for collapse(2) schedule(static) if (hpmg_par(work))
    for (int64_t k = 0; k < n2; k++)
      for (int64_t o = 0; o < mo; o++) {
        double *yr = y + (k * mo + o) * n0;
        if (!add)
          for (int64_t i = 0; i < n0; i++) yr[i] = 0;
        for (int64_t e = ptr[o]; e < ptr[o + 1]; e++) {
          const double v = val[e], *xr = x + (k * n1 + col[e]) * n0;
#pragma omp simd
          for (int64_t i = 0; i < n0; i++) yr[i] += v * xr[i];
        }
      }
  } else {
    const int64_t plane = n0 * n1;
#pragma omp parallel for collapse(2) schedule(static) if (hpmg_par(work))
    for (int64_t o = 0; o < mo; o++)
      for (int64_t j = 0; j < n1; j++) {
        double *yr = y + o * plane + j * n0;
        if (!add)
          for (int64_t i = 0; i < n0; i++) yr[i] = 0;
        for (int64_t e = ptr[o]; e < ptr[o + 1]; e++) {
          const double v = val[e], *xr = x + col[e] * plane + j * n0;
#pragma omp simd
          for (int64_t i = 0; i < n0; i++) yr[i] += v * xr[i];
        }
      }
  }
}

const fdb_kernels HPMG_ISA_DEFINE(hpmg_fdb_kernels) = {k_apply, k_residual_norm, k_gs_sweep, k_line_sweep, k_apply1d};
