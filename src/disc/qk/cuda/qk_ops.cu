/* Q_k kernels on the GPU: the Kronecker-sum operator with fused epilogues,
 * the inverse diagonal, Kronecker-product transfers. Each kernel is
 * written once, templated on the precision R (and on the degree where the
 * loops are unrolled), and checked against the CPU reference by
 * tests/test_cuda_ops.c.
 *
 * Operator kernel (docs/cuda.md has the byte and flop counts). The factors of
 * A = Kz(x)My(x)Mx + Mz(x)Ky(x)Mx + Mz(x)My(x)Kx + lambda Mz(x)My(x)Mx act on
 * different indices and commute, so the in-plane part is applied first and
 * the z part last, as a push into a register ring:
 *   for every input plane j (one z-chunk per block, marching up):
 *     X  = x_j on the tile + halo k in x and y          (shared memory)
 *     u1 = My X, u2 = Ky X                              (y band, shared memory)
 *     pm = Mx u1, pa = Kx u1 + Mx u2 + lambda pm        (x band, per thread)
 *     acc[s] += Mz[i][j] pa + Kz[i][j] pm, i = j-k+s    (2k+1 registers)
 *     plane j-k is complete: epilogue on acc[0], shift the ring.
 * Every thread owns one (x,y) column of the output tile, so x and y are read
 * from DRAM once (the x/y halos and the 2k halo planes of a z-chunk come from
 * L2) and y once written, with the residual / Jacobi / Chebyshev update fused
 * in the epilogue and D^{-1} computed from the 1D diagonals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "qk_cuda.h"
extern "C" {
#include "la/krylov.h"
}

/* ---------------------------------------------------------------- helpers */

hpmg_error qk_sm_count(int *nsm) {
  static int cached = 0;
  if (!cached) {
    int dev = 0;
    HPMG_CU(cudaGetDevice(&dev));
    HPMG_CU(cudaDeviceGetAttribute(&cached, cudaDevAttrMultiProcessorCount, dev));
  }
  *nsm = cached;
  return HPMG_SUCCESS;
}

/* -------------------------------------------------------- level operator */

/* The periodic wrap pass (laplace.h): the CPU's terms, one per nonempty set
 * of periodic directions, each an operator of this file on its k+1 gathered
 * layers per direction of the set (hpmg_laplace_wrap_term). */
static hpmg_error wrap_create(const hpmg_laplace *op, hpmg_cuda_op o) {
  if (!op->wrap || op->nwt == 0) return HPMG_SUCCESS;
  o->wt = (qk_wrap_term *)calloc((size_t)op->nwt, sizeof(qk_wrap_term));
  if (!o->wt) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the wrap terms");
  o->nwt = op->nwt;
  for (int t = 0; t < op->nwt; t++) {
    qk_wrap_term *w = &o->wt[t];
    const int64_t *off[3];
    const double *dm[3], *dk[3];
    const hpmg_laplace *s = hpmg_laplace_wrap_term(op, t, off, dm, dk);
    HPMG_CALL(hpmg_cuda_op_create(s, &w->op));
    int64_t len = 0;
    for (int e = 0; e < 3; e++) w->m[e] = s->g.n[e], w->base[e] = len, len += s->g.n[e];
    w->N = s->g.N;
    HPMG_CALL(hpmg_cuda_malloc(sizeof(int64_t) * (size_t)len, (void **)&w->off));
    HPMG_CALL(hpmg_cuda_malloc(sizeof(double) * (size_t)len, (void **)&w->dm));
    HPMG_CALL(hpmg_cuda_malloc(sizeof(double) * (size_t)len, (void **)&w->dk));
    for (int e = 0; e < 3; e++) {
      HPMG_CALL(hpmg_cuda_upload(w->off + w->base[e], off[e], sizeof(int64_t) * (size_t)w->m[e]));
      HPMG_CALL(hpmg_cuda_upload(w->dm + w->base[e], dm[e], sizeof(double) * (size_t)w->m[e]));
      HPMG_CALL(hpmg_cuda_upload(w->dk + w->base[e], dk[e], sizeof(double) * (size_t)w->m[e]));
    }
    HPMG_CALL(hpmg_cuda_malloc(sizeof(double) * (size_t)w->N, &w->xs));
    HPMG_CALL(hpmg_cuda_malloc(sizeof(double) * (size_t)w->N, &w->ys));
  }
  return HPMG_SUCCESS;
}

extern "C" hpmg_error hpmg_cuda_op_create(const hpmg_laplace *op, hpmg_cuda_op *out) {
  *out = NULL;
  HPMG_CALL(hpmg_cuda_check());
  const hpmg_grid *g = &op->g;
  HPMG_CHECK_ARG(g->k >= 1 && g->k <= QK_MAX_K, "cuda operator: degree %d outside 1..%d", g->k, QK_MAX_K);
  for (int d = 0; d < 3; d++)
    HPMG_CHECK_ARG(g->n[d] < (1ll << 31) - 64, "cuda operator: %lld nodes in direction %d", (long long)g->n[d], d);
  hpmg_cuda_op o = (hpmg_cuda_op)calloc(1, sizeof *o);
  if (!o) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate cuda operator");
  o->dim = g->dim;
  o->k = g->k;
  o->N = g->N;
  o->lambda = op->lambda;
  HPMG_CALL(qk_sm_count(&o->nsm));
  /* padded diagonal storage of M, K and the two diagonals per direction */
  size_t off[3][6], total = 0;
  for (int d = 0; d < 3; d++) {
    o->n[d] = g->n[d];
    o->kb[d] = d < g->dim ? g->k : 0;
    const size_t len = (size_t)(2 * o->kb[d] + 1) * (size_t)g->n[d];
    off[d][0] = total; total += len;
    off[d][1] = total; total += len;
    off[d][2] = total; total += (size_t)g->n[d];
    off[d][3] = total; total += (size_t)g->n[d];
    off[d][4] = total; total += (size_t)g->n[d];
    off[d][5] = total; total += len;
  }
  double *hd = (double *)calloc(total, sizeof(double));
  float *hf = (float *)calloc(total, sizeof(float));
  if (!hd || !hf) {
    free(hd); free(hf); free(o);
    return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate cuda operator staging");
  }
  for (int d = 0; d < 3; d++) {
    const int kb = o->kb[d];
    const int64_t n = g->n[d];
    const hpmg_sp1d *A[2] = {&op->M[d], &op->K[d]};
    for (int m = 0; m < 2; m++) {
      const int bw = A[m]->bw;
      if (bw > kb) {
        free(hd); free(hf); free(o);
        return hpmg_error_set(HPMG_ERR_NUMERIC, "cuda operator: 1D band %d exceeds the degree %d", bw, kb);
      }
      for (int oo = -bw; oo <= bw; oo++)
        for (int64_t i = 0; i < n; i++)
          hd[off[d][m] + (size_t)(oo + kb) * n + i] = A[m]->dia[(int64_t)(oo + bw) * n + i];
    }
    for (int64_t i = 0; i < n; i++) {
      hd[off[d][2] + i] = op->dM[d][i];
      hd[off[d][3] + i] = op->dK[d][i];
    }
  }
  for (size_t i = 0; i < total; i++) hf[i] = (float)hd[i];
  /* Difference form of K (as the CPU kernel, laplace.h): the applied K has
   * the exact row sums s_i = op->sK (sKf in float) instead of the row sums
   * of the rounded entries, so their rounding cannot act as a smooth
   * spurious term (an ~eps/h^2 relative floor of the solution).
   * x and y stages (pull form, as the CPU): (K a)_i = sum_o K_{i,i+o}
   * (a_{i+o} - a_i) + s_i a_i; off[d][4] holds s_i.
   * z stage: a push into the register ring, where the center plane is not
   * known while the lower planes are pushed. Summation by parts over the
   * plane differences D_l = p_l - p_{l-1} (p_{-1} = p_n = 0) with the
   * weights (off[d][5], same layout as K, entry (i, l)):
   *   l <= i: -sum_{a<=j<l} K_ij (+ s_i),   l > i: sum_{l<=j<=b} K_ij (- s_i)
   * a = max(0,i-k), b = min(n-1,i+k), l = a..b (the "+ s_i" variant) for rows
   * not touching the top boundary node, l = a+1..n (the "- s_i" variant) for
   * rows that do (i >= n-k, a > 0). Then sum_l W_il D_l = sum_j K_ij p_j +
   * (s_i - sum_j K_ij) p_i exactly (the dropped s_i p_{a-1} is 0: p_{-1} = 0
   * or s_i = 0 in the interior), i.e. the CPU's operator; every weight is a
   * short partial sum not crossing the center, so for a smooth p each term
   * is O(|p'|) and the rounded weights perturb the result by O(eps |p'| h)
   * (1D model, bench/zpush_model.py: solution floor within a few x of the
   * CPU difference form, 100x and more below the former row-sum correction
   * form). The weight at l = a is s_i,
   * exactly 0 in the interior: a z-chunk's first plane difference (whose
   * p_{a-1} the block does not have) is multiplied by 0. */
  for (int d = 0; d < 3; d++) {
    const int kb = o->kb[d];
    const int64_t n = g->n[d];
    for (int pr = 0; pr < 2; pr++) {
      for (int64_t i = 0; i < n; i++) {
        if (pr == 0) hd[off[d][4] + i] = op->sK[d][i];
        else hf[off[d][4] + i] = op->sKf[d][i];
        if (kb == 0) continue; /* 2D z: K = [0] */
        const long double S = pr ? (long double)op->sKf[d][i] : (long double)op->sK[d][i];
        const int64_t a = i - kb > 0 ? i - kb : 0, b = i + kb < n - 1 ? i + kb : n - 1;
        const int rev = a > 0 && i >= n - kb;
        auto Kij = [&](int64_t j) -> long double {
          const size_t q = off[d][1] + (size_t)(j - i + kb) * (size_t)n + (size_t)i;
          return pr ? (long double)hf[q] : (long double)hd[q];
        };
        for (int64_t l = rev ? a + 1 : a; l <= (rev ? n : b); l++) {
          long double w = 0.0L;
          if (l <= i) {
            for (int64_t j = a; j < l; j++) w -= Kij(j);
            if (!rev) w += S;
          } else {
            for (int64_t j = l; j <= b; j++) w += Kij(j);
            if (rev) w -= S;
          }
          const size_t q = off[d][5] + (size_t)(l - i + kb) * (size_t)n + (size_t)i;
          if (pr) hf[q] = (float)w;
          else hd[q] = (double)w;
        }
      }
    }
  }
  /* the float diagonals are the CPU's float diagonals (rounded the same way) */
  hpmg_error e = hpmg_cuda_malloc(total * sizeof(double), &o->mem_d);
  if (!e) e = hpmg_cuda_malloc(total * sizeof(float), &o->mem_f);
  if (!e) e = hpmg_cuda_upload(o->mem_d, hd, total * sizeof(double));
  if (!e) e = hpmg_cuda_upload(o->mem_f, hf, total * sizeof(float));
  free(hd);
  free(hf);
  if (e) {
    hpmg_cuda_op_destroy(&o);
    return e;
  }
  const double *bd = (const double *)o->mem_d;
  const float *bf = (const float *)o->mem_f;
  for (int d = 0; d < 3; d++) {
    o->d.M[d] = bd + off[d][0]; o->d.K[d] = bd + off[d][1]; o->d.dM[d] = bd + off[d][2]; o->d.dK[d] = bd + off[d][3];
    o->f.M[d] = bf + off[d][0]; o->f.K[d] = bf + off[d][1]; o->f.dM[d] = bf + off[d][2]; o->f.dK[d] = bf + off[d][3];
    o->d.sK[d] = bd + off[d][4]; o->f.sK[d] = bf + off[d][4];
    o->d.W[d] = bd + off[d][5]; o->f.W[d] = bf + off[d][5];
  }
  e = wrap_create(op, o);
  if (e) {
    hpmg_cuda_op_destroy(&o);
    return e;
  }
  *out = o;
  return HPMG_SUCCESS;
}

extern "C" void hpmg_cuda_op_destroy(hpmg_cuda_op *op) {
  if (!*op) return;
  for (int t = 0; t < (*op)->nwt; t++) {
    qk_wrap_term *w = &(*op)->wt[t];
    hpmg_cuda_op_destroy(&w->op);
    hpmg_cuda_free(w->off);
    hpmg_cuda_free(w->dm);
    hpmg_cuda_free(w->dk);
    hpmg_cuda_free(w->xs);
    hpmg_cuda_free(w->ys);
  }
  free((*op)->wt);
  hpmg_cuda_free((*op)->mem_d);
  hpmg_cuda_free((*op)->mem_f);
  free(*op);
  *op = NULL;
}

template <typename R> static const qk_op_data<R> &op_data(const hpmg_cuda_op o);
template <> const qk_op_data<double> &op_data<double>(const hpmg_cuda_op o) { return o->d; }
template <> const qk_op_data<float> &op_data<float>(const hpmg_cuda_op o) { return o->f; }

template <typename R> struct op_args {
  int nx, ny, nz, zc;
  const R *__restrict__ Mx, *__restrict__ Kx, *__restrict__ My, *__restrict__ Ky, *__restrict__ Mz,
      *__restrict__ Kz;
  const R *__restrict__ dMx, *__restrict__ dKx, *__restrict__ dMy, *__restrict__ dKy, *__restrict__ dMz,
      *__restrict__ dKz;
  const R *__restrict__ sKx, *__restrict__ sKy; /* exact row sums of K (difference form) */
  const R *__restrict__ Wz; /* z: summation-by-parts weights of Kz (qk_op_create) */
  R lambda, c1, c2;
  int mode; /* 0 apply, 1 residual, 2 smooth with d, 3 smooth without d */
  const R *__restrict__ x;
  const R *__restrict__ b;
  R *__restrict__ y;
  R *__restrict__ d;
};

/* Tile: BX x-columns (one warp wide) by BY y-rows, one thread per column.
 * CREG: the thread's 2(2K+1) x-band coefficients live in registers (else in
 * shared memory, one extra load per multiply-add of the x stage). */
template <typename R, int K, int KZ, int BX, int BY, bool CREG, int MINB>
__global__ void __launch_bounds__(BX * BY, MINB)
    qk_op_kernel(const op_args<R> a) {
  constexpr int NB = 2 * K + 1, NZ = 2 * KZ + 1, PX = BX + 2 * K, RY = BY + 2 * K, NT = BX * BY;
  __shared__ R Xs[RY][PX];
  __shared__ R U1[BY][PX], U2[BY][PX];
  __shared__ R CXM[CREG ? 1 : NB][BX], CXK[CREG ? 1 : NB][BX];
  __shared__ R CYM[BY][NB], CYK[BY][NB], CYS[BY];
  __shared__ R CZ[2][2][NZ]; /* by plane parity: written while the last plane's are read */
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
  const int nx = a.nx, ny = a.ny, nz = a.nz;
  const int x0 = blockIdx.x * BX, y0 = blockIdx.y * BY;
  const int z0 = blockIdx.z * a.zc, z1 = min(nz, z0 + a.zc);
  const int gx = x0 + tx, gy = y0 + ty;
  const bool own = gx < nx && gy < ny;
  const int64_t col = (int64_t)gy * nx + gx; /* the owned column in a plane */

  R cm[CREG ? NB : 1], ck[CREG ? NB : 1];
  if constexpr (CREG) {
#pragma unroll
    for (int o = 0; o < NB; o++) {
      cm[o] = gx < nx ? a.Mx[(int64_t)o * nx + gx] : R(0);
      ck[o] = gx < nx ? a.Kx[(int64_t)o * nx + gx] : R(0);
    }
  } else {
    for (int e = tid; e < NB * BX; e += NT) {
      const int o = e / BX, c = e % BX, xx = x0 + c;
      CXM[o][c] = xx < nx ? a.Mx[(int64_t)o * nx + xx] : R(0);
      CXK[o][c] = xx < nx ? a.Kx[(int64_t)o * nx + xx] : R(0);
    }
  }
  for (int e = tid; e < BY * NB; e += NT) {
    const int r = e / NB, o = e % NB, yy = y0 + r;
    CYM[r][o] = yy < ny ? a.My[(int64_t)o * ny + yy] : R(0);
    CYK[r][o] = yy < ny ? a.Ky[(int64_t)o * ny + yy] : R(0);
  }
  for (int r = tid; r < BY; r += NT) CYS[r] = y0 + r < ny ? a.sKy[y0 + r] : R(0);
  const R sKxv = gx < nx ? a.sKx[gx] : R(0);

  R acc[NZ];
#pragma unroll
  for (int s = 0; s < NZ; s++) acc[s] = R(0);
  R pmprev = 0; /* pm of the previous input plane (z differences) */

  /* software pipeline: the next input plane is loaded into registers while
   * the current one is computed (a block of 16 warps holds an SM alone) */
  constexpr int LP = (RY * PX + NT - 1) / NT;
  R pf[LP];
  const int ja = max(0, z0 - KZ), jb = min(nz, z1 + KZ);
  /* the thread's tile elements, the same on every plane: offsets from the
   * tile's first (halo) node, -1 outside the grid (the launch checks that
   * RY rows of x fit in an int) */
  int loff[LP];
#pragma unroll
  for (int l = 0; l < LP; l++) {
    const int e = tid + l * NT, r = e / PX, c = e % PX, yy = y0 - K + r, xx = x0 - K + c;
    loff[l] = (e < RY * PX && yy >= 0 && yy < ny && xx >= 0 && xx < nx) ? r * nx + c : -1;
  }
  const int64_t tile0 = (int64_t)(y0 - K) * nx + (x0 - K), plane = (int64_t)ny * nx;
  auto prefetch = [&](int j) {
    const int64_t p0 = (int64_t)j * plane + tile0;
#pragma unroll
    for (int l = 0; l < LP; l++) pf[l] = loff[l] >= 0 ? a.x[p0 + loff[l]] : R(0);
  };
  /* the thread's y-band elements (row r, column c of U1/U2), at most two:
   * BY x PX elements on BY x 32 threads */
  static_assert(BY * PX <= 2 * NT, "y band: two elements per thread");
  const int yr0 = tid / PX, yc0 = tid % PX, yr1 = (tid + NT) / PX, yc1 = (tid + NT) % PX;
  const bool y1 = tid + NT < BY * PX;
  if (ja < jb) prefetch(ja);

  for (int j = z0 - KZ; j < z1 + KZ; j++) {
    const int i = j - KZ; /* output plane completed in this step */
    const bool comp = j >= ja && j < jb; /* input plane j exists: in-plane stages */
    /* j == nz: push the last difference D_nz = 0 - p_{nz-1} (top rows) */
    const bool push = comp || (KZ > 0 && j == nz);
    const bool emit = i >= z0 && i < z1 && own;
    const int64_t idx = (int64_t)i * plane + col;
    R eb = 0, ex = 0, ed = 0; /* epilogue operands, loaded early */
    if (emit) {
      if (a.mode >= 1) eb = a.b[idx];
      if (a.mode >= 2) ex = a.x[idx];
      if (a.mode == 2) ed = a.d[idx];
    }
    if (push) { /* uniform over the block */
      if (comp) {
#pragma unroll
        for (int l = 0; l < LP; l++) {
          const int e = tid + l * NT;
          if (e < RY * PX) (&Xs[0][0])[e] = pf[l];
        }
      }
      if (tid < 2 * NZ) { /* Mz[i][j], Wz[i][j] for the ring slots i = j-KZ+s */
        const int w = tid / NZ, s = tid % NZ, ii = j - KZ + s;
        const R *Z = w ? a.Wz : a.Mz;
        CZ[j & 1][w][s] = (ii >= 0 && ii < nz) ? Z[(int64_t)(2 * KZ - s) * nz + ii] : R(0);
      }
      __syncthreads();
    }
    if (comp) {
      if (j + 1 < jb) prefetch(j + 1);
      /* y band on the tile's rows, x columns with halo */
#pragma unroll
      for (int n = 0; n < 2; n++) {
        if (n == 1 && !y1) break;
        const int r = n ? yr1 : yr0, c = n ? yc1 : yc0;
        const R xc = Xs[r + K][c];
        R u1 = 0, u2 = 0;
#pragma unroll
        for (int o = 0; o < NB; o++) {
          const R v = Xs[r + o][c];
          u1 += CYM[r][o] * v;
          u2 += CYK[r][o] * (v - xc); /* Ky in difference form */
        }
        U1[r][c] = u1;
        U2[r][c] = u2 + CYS[r] * xc; /* + exact row sum */
      }
      __syncthreads();
      /* x band of the owned column */
      R pm = 0, pa = 0;
      const R u1c = U1[ty][tx + K];
#pragma unroll
      for (int o = 0; o < NB; o++) {
        const R u1 = U1[ty][tx + o], u2 = U2[ty][tx + o];
        R m, kk;
        if constexpr (CREG) {
          m = cm[o];
          kk = ck[o];
        } else {
          m = CXM[o][tx];
          kk = CXK[o][tx];
        }
        pm += m * u1;
        pa += kk * (u1 - u1c) + m * u2; /* Kx in difference form */
      }
      pa += a.lambda * pm + sKxv * u1c; /* + exact row sum */
      if constexpr (KZ == 0) { /* 2D: Mz = [1], Kz = [0] */
        acc[0] += CZ[j & 1][0][0] * pa;
      } else {
        const R dz = pm - pmprev; /* D_j = p_j - p_{j-1} */
        pmprev = pm;
#pragma unroll
        for (int s = 0; s < NZ; s++) acc[s] += CZ[j & 1][0][s] * pa + CZ[j & 1][1][s] * dz;
      }
    } else if (KZ > 0 && push) { /* j == nz: p_nz = 0 */
      const R dz = -pmprev;
      pmprev = 0;
#pragma unroll
      for (int s = 0; s < NZ; s++) acc[s] += CZ[j & 1][1][s] * dz;
    }
    if (emit) {
      const R v = acc[0];
      if (a.mode == 0) a.y[idx] = v;
      else if (a.mode == 1) a.y[idx] = eb - v;
      else {
        const R dmz = a.dMz[i], dkz = a.dKz[i];
        /* the owned column's 1D diagonals, read here (L1 hits after the first plane) rather
         * than held in registers through the plane loop; emit implies gx < nx, gy < ny */
        const R dMxv = a.dMx[gx], dKxv = a.dKx[gx], dMyv = a.dMy[gy], dKyv = a.dKy[gy];
        const R dAy = dMyv * dmz, dBy = dKyv * dmz + dMyv * dkz + a.lambda * dAy;
        R upd = a.c2 * (eb - v) / (dKxv * dAy + dMxv * dBy);
        if (a.mode == 2) {
          upd += a.c1 * ed;
          a.d[idx] = upd;
        }
        a.y[idx] = ex + upd;
      }
    }
#pragma unroll
    for (int s = 0; s < NZ - 1; s++) acc[s] = acc[s + 1];
    acc[NZ - 1] = R(0);
  }
}

/* Launch configuration: BY tile rows (32 x BY threads) and MINB blocks per SM
 * in the launch bounds, i.e. a register cap of 65536 / (32 BY MINB), by
 * dimension, precision and degree: the fastest of BY in {4, 8, 16} x MINB in
 * {2, 3, 4} measured on an H200 (bench/results/gpu-op-launch-config/
 * op_sweep.md: apply and Chebyshev step 1.1-1.5x the former BY = 16, MINB = 1
 * for k >= 3 and BY = 8, MINB = 2 for k <= 2). CREG: registers for the x
 * coefficients where they fit next to the ring. -DQK_OP_BY_ALL=n /
 * -DQK_OP_MINB_ALL=n override BY and MINB, for such sweeps. */
__host__ __device__ constexpr int qk_op_cfg(bool minb, bool dim3, bool dbl, int k) {
  constexpr int by[2][2][10] = {{{8, 8, 16, 8, 8, 8, 8, 16, 16, 16}, {8, 8, 8, 16, 8, 16, 16, 16, 16, 16}},  /* 2D f, d */
                                {{8, 8, 16, 16, 8, 8, 16, 16, 16, 8}, {8, 8, 8, 16, 8, 8, 8, 8, 8, 8}}};    /* 3D f, d */
  constexpr int mb[2][2][10] = {{{4, 4, 2, 4, 4, 4, 4, 2, 2, 2}, {4, 4, 4, 2, 4, 2, 2, 2, 2, 2}},
                                {{4, 4, 2, 2, 2, 3, 2, 2, 2, 2}, {4, 4, 3, 2, 2, 2, 2, 2, 2, 2}}};
  return minb ? mb[dim3][dbl][k - 1] : by[dim3][dbl][k - 1];
}
template <typename R, int K, int KZ> struct qk_tile {
  static constexpr bool D = sizeof(R) == 8;
  static constexpr int BX = 32;
#ifdef QK_OP_BY_ALL
  static constexpr int BY = QK_OP_BY_ALL;
#else
  static constexpr int BY = qk_op_cfg(false, KZ > 0, D, K);
#endif
#ifdef QK_OP_MINB_ALL
  static constexpr int MINB = QK_OP_MINB_ALL;
#else
  static constexpr int MINB = qk_op_cfg(true, KZ > 0, D, K);
#endif
  static constexpr bool CREG = sizeof(R) == 4 ? K <= 5 : K <= 3;
};

template <typename R, int K, int KZ>
static hpmg_error launch_op_kz(const hpmg_cuda_op o, const op_args<R> &a0) {
  typedef qk_tile<R, K, KZ> T;
  op_args<R> a = a0;
  const int64_t gxn = (a.nx + T::BX - 1) / T::BX, gyn = (a.ny + T::BY - 1) / T::BY;
  int nch = 1, zc = a.nz;
  if (o->dim == 3) { /* enough blocks for several waves, z-chunks long against the 2k halo */
    const int64_t want = 8ll * o->nsm, b2 = gxn * gyn;
    nch = (int)((want + b2 - 1) / b2);
    if (nch < 1) nch = 1;
    zc = (a.nz + nch - 1) / nch;
    if (zc < 2 * K + 2) zc = a.nz < 2 * K + 2 ? a.nz : 2 * K + 2;
    nch = (a.nz + zc - 1) / zc;
  }
  a.zc = zc;
  HPMG_CHECK_ARG(gyn <= 65535 && nch <= 65535, "cuda operator: grid too large");
  HPMG_CHECK_ARG((int64_t)(T::BY + 2 * K) * a.nx < INT32_MAX, "cuda operator: %d nodes in x exceed the 32-bit tile offsets", a.nx);
  dim3 grid((unsigned)gxn, (unsigned)gyn, (unsigned)nch), block(T::BX, T::BY, 1);
  qk_op_kernel<R, K, KZ, T::BX, T::BY, T::CREG, T::MINB><<<grid, block>>>(a);
  HPMG_CU_LAUNCH();
  return HPMG_SUCCESS;
}

template <typename R, int K> static hpmg_error launch_op_k(const hpmg_cuda_op o, const op_args<R> &a0) {
  return o->dim == 3 ? launch_op_kz<R, K, K>(o, a0) : launch_op_kz<R, K, 0>(o, a0);
}

template <typename R> static hpmg_error op_kernel_r(const hpmg_cuda_op o, const hpmg_kernel_args *ka) {
  const qk_op_data<R> &D = op_data<R>(o);
  op_args<R> a;
  memset(&a, 0, sizeof a);
  a.nx = (int)o->n[0]; a.ny = (int)o->n[1]; a.nz = (int)o->n[2];
  a.Mx = D.M[0]; a.Kx = D.K[0]; a.My = D.M[1]; a.Ky = D.K[1]; a.Mz = D.M[2]; a.Kz = D.K[2];
  a.dMx = D.dM[0]; a.dKx = D.dK[0]; a.dMy = D.dM[1]; a.dKy = D.dK[1]; a.dMz = D.dM[2]; a.dKz = D.dK[2];
  a.sKx = D.sK[0]; a.sKy = D.sK[1]; a.Wz = D.W[2];
  a.lambda = (R)o->lambda;
  a.c1 = (R)ka->c1;
  a.c2 = (R)ka->c2;
  a.mode = ka->mode == HPMG_KERNEL_APPLY ? 0 : ka->mode == HPMG_KERNEL_RESIDUAL ? 1 : ka->d ? 2 : 3;
  a.x = (const R *)ka->x;
  a.b = (const R *)ka->b;
  a.y = (R *)ka->y;
  a.d = (R *)ka->d;
  switch (o->k) {
  case 1: return launch_op_k<R, 1>(o, a);
  case 2: return launch_op_k<R, 2>(o, a);
  case 3: return launch_op_k<R, 3>(o, a);
  case 4: return launch_op_k<R, 4>(o, a);
  case 5: return launch_op_k<R, 5>(o, a);
  case 6: return launch_op_k<R, 6>(o, a);
  case 7: return launch_op_k<R, 7>(o, a);
  case 8: return launch_op_k<R, 8>(o, a);
  case 9: return launch_op_k<R, 9>(o, a);
  case 10: return launch_op_k<R, 10>(o, a);
  }
  return hpmg_error_set(HPMG_ERR_ARG, "cuda operator: degree %d not instantiated", o->k);
}

/* the wrap pass's gather: xs = x on the term's layers (one thread per layer value) */
template <typename R>
__global__ void qk_wrap_gather_kernel(int64_t N, int64_t m0, int64_t m1, const int64_t *__restrict__ o0,
                                      const int64_t *__restrict__ o1, const int64_t *__restrict__ o2,
                                      const R *__restrict__ x, R *__restrict__ xs) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const int64_t i0 = i % m0, i1 = (i / m0) % m1, i2 = i / (m0 * m1);
  xs[i] = x[o0[i0] + o1[i1] + o2[i2]];
}

/* the term c added to the kernel's output as its mode says (laplace.c's
 * wrap_scatter): APPLY y += c, RESIDUAL y -= c, SMOOTH y -= c2 D^-1 c and
 * d -= c2 D^-1 c (D from the grid's 1D diagonals, in double) */
template <typename R>
__global__ void qk_wrap_scatter_kernel(int64_t N, int64_t m0, int64_t m1, const int64_t *__restrict__ o0,
                                       const int64_t *__restrict__ o1, const int64_t *__restrict__ o2,
                                       const double *__restrict__ m_0, const double *__restrict__ m_1,
                                       const double *__restrict__ m_2, const double *__restrict__ k_0,
                                       const double *__restrict__ k_1, const double *__restrict__ k_2, int mode,
                                       double c2, double lambda, const R *__restrict__ c, R *__restrict__ y,
                                       R *__restrict__ d) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const int64_t i0 = i % m0, i1 = (i / m0) % m1, i2 = i / (m0 * m1), at = o0[i0] + o1[i1] + o2[i2];
  if (mode == 0) y[at] += c[i];
  else if (mode == 1) y[at] -= c[i];
  else {
    const double pm = m_2[i2] * m_1[i1];
    const double pk = k_2[i2] * m_1[i1] + m_2[i2] * k_1[i1] + lambda * pm;
    const R dc = (R)(c2 * (double)c[i] / (k_0[i0] * pm + m_0[i0] * pk));
    y[at] -= dc;
    if (d) d[at] -= dc;
  }
}

template <typename R> static hpmg_error wrap_apply_r(const hpmg_cuda_op o, const hpmg_kernel_args *a) {
  const int mode = a->mode == HPMG_KERNEL_APPLY ? 0 : a->mode == HPMG_KERNEL_RESIDUAL ? 1 : 2;
  for (int t = 0; t < o->nwt; t++) { /* in stream order: terms updating the same rows do not race */
    const qk_wrap_term *w = &o->wt[t];
    if (w->N == 0) continue;
    const int64_t *o0 = w->off + w->base[0], *o1 = w->off + w->base[1], *o2 = w->off + w->base[2];
    const unsigned nb = (unsigned)((w->N + 255) / 256);
    qk_wrap_gather_kernel<R><<<nb, 256>>>(w->N, w->m[0], w->m[1], o0, o1, o2, (const R *)a->x, (R *)w->xs);
    HPMG_CU_LAUNCH();
    const hpmg_kernel_args s = qk_kargs(HPMG_KERNEL_APPLY, w->xs, w->ys, NULL);
    HPMG_CALL(op_kernel_r<R>(w->op, &s));
    qk_wrap_scatter_kernel<R><<<nb, 256>>>(w->N, w->m[0], w->m[1], o0, o1, o2, w->dm + w->base[0],
                                           w->dm + w->base[1], w->dm + w->base[2], w->dk + w->base[0],
                                           w->dk + w->base[1], w->dk + w->base[2], mode, a->c2, o->lambda,
                                           (const R *)w->ys, (R *)a->y, (R *)a->d);
    HPMG_CU_LAUNCH();
  }
  return HPMG_SUCCESS;
}

extern "C" hpmg_error hpmg_cuda_op_kernel(hpmg_cuda_op o, hpmg_real r, const hpmg_kernel_args *a) {
  if (o->N == 0) return HPMG_SUCCESS;
  if (r == HPMG_REAL_DOUBLE) {
    HPMG_CALL(op_kernel_r<double>(o, a));
    return o->nwt ? wrap_apply_r<double>(o, a) : HPMG_SUCCESS;
  }
  HPMG_CALL(op_kernel_r<float>(o, a));
  return o->nwt ? wrap_apply_r<float>(o, a) : HPMG_SUCCESS;
}

/* out = c in / D, D = Kx(x)My(x)Mz + ... diagonal from the 1D diagonals */
template <typename R>
__global__ void qk_dinv_kernel(int nx, int ny, int nz, const R *__restrict__ dMx, const R *__restrict__ dKx,
                               const R *__restrict__ dMy, const R *__restrict__ dKy, const R *__restrict__ dMz,
                               const R *__restrict__ dKz, R lambda, R c, const R *__restrict__ in,
                               R *__restrict__ out, R *__restrict__ out2) {
  const int i0 = blockIdx.x * blockDim.x + threadIdx.x, i1 = blockIdx.y, i2 = blockIdx.z;
  if (i0 >= nx) return;
  const R dAy = dMy[i1] * dMz[i2];
  const R dBy = dKy[i1] * dMz[i2] + dMy[i1] * dKz[i2] + lambda * dAy;
  const int64_t idx = ((int64_t)i2 * ny + i1) * nx + i0;
  const R v = c * in[idx] / (dKx[i0] * dAy + dMx[i0] * dBy);
  out[idx] = v;
  if (out2) out2[idx] = v;
}

template <typename R>
static hpmg_error dinv_r(const hpmg_cuda_op o, double c, const void *in, void *out, void *out2) {
  const qk_op_data<R> &D = op_data<R>(o);
  const int nx = (int)o->n[0], ny = (int)o->n[1], nz = (int)o->n[2];
  HPMG_CHECK_ARG(ny <= 65535 && nz <= 65535, "cuda inverse diagonal: grid too large");
  dim3 grid((unsigned)((nx + 127) / 128), (unsigned)ny, (unsigned)nz);
  qk_dinv_kernel<R><<<grid, 128>>>(nx, ny, nz, D.dM[0], D.dK[0], D.dM[1], D.dK[1], D.dM[2], D.dK[2],
                                   (R)o->lambda, (R)c, (const R *)in, (R *)out, (R *)out2);
  HPMG_CU_LAUNCH();
  return HPMG_SUCCESS;
}

extern "C" hpmg_error hpmg_cuda_op_inverse_diagonal(hpmg_cuda_op o, hpmg_real r, double c, const void *in,
                                                    void *out, void *out2) {
  if (o->N == 0) return HPMG_SUCCESS;
  return r == HPMG_REAL_DOUBLE ? dinv_r<double>(o, c, in, out, out2) : dinv_r<float>(o, c, in, out, out2);
}

/* -------------------------------------------------------------- transfers */

static hpmg_error csr_upload(const hpmg_sp1d *A, qk_csr *C) {
  memset(C, 0, sizeof *C);
  C->nrows = A->nrows;
  C->ncols = A->ncols;
  C->nnz = A->rowptr[A->nrows];
  HPMG_CALL(hpmg_cuda_malloc(sizeof(int) * (size_t)(C->nrows + 1), (void **)&C->rowptr));
  HPMG_CALL(hpmg_cuda_malloc(sizeof(int) * (size_t)C->nnz, (void **)&C->col));
  HPMG_CALL(hpmg_cuda_malloc(sizeof(double) * (size_t)C->nnz, (void **)&C->val));
  HPMG_CALL(hpmg_cuda_malloc(sizeof(float) * (size_t)C->nnz, (void **)&C->valf));
  HPMG_CALL(hpmg_cuda_upload(C->rowptr, A->rowptr, sizeof(int) * (size_t)(C->nrows + 1)));
  HPMG_CALL(hpmg_cuda_upload(C->col, A->col, sizeof(int) * (size_t)C->nnz));
  HPMG_CALL(hpmg_cuda_upload(C->val, A->val, sizeof(double) * (size_t)C->nnz));
  HPMG_CALL(hpmg_cuda_upload(C->valf, A->valf, sizeof(float) * (size_t)C->nnz));
  return HPMG_SUCCESS;
}

extern "C" hpmg_error hpmg_cuda_kron3_create(const hpmg_kron3 *T, hpmg_cuda_kron3 *out) {
  *out = NULL;
  HPMG_CALL(hpmg_cuda_check());
  hpmg_cuda_kron3 t = (hpmg_cuda_kron3)calloc(1, sizeof *t);
  if (!t) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate cuda transfer");
  *out = t;
  for (int d = 0; d < 3; d++) {
    hpmg_error e = csr_upload(&T->A[d], &t->A[d]);
    if (e) {
      hpmg_cuda_kron3_destroy(out);
      return e;
    }
  }
  for (int d = 0; d < 3; d++) { /* identity factors (z of 2D, a direction a box level keeps) are skipped */
    const hpmg_sp1d *A = &T->A[d];
    int id = A->nrows == A->ncols;
    for (int i = 0; i < A->nrows && id; i++)
      id = A->rowptr[i] == i && A->rowptr[i + 1] == i + 1 && A->col[i] == i && A->val[i] == 1.0;
    t->identity[d] = id;
  }
  return HPMG_SUCCESS;
}

extern "C" void hpmg_cuda_kron3_destroy(hpmg_cuda_kron3 *T) {
  if (!*T) return;
  for (int d = 0; d < 3; d++) {
    hpmg_cuda_free((*T)->A[d].rowptr);
    hpmg_cuda_free((*T)->A[d].col);
    hpmg_cuda_free((*T)->A[d].val);
    hpmg_cuda_free((*T)->A[d].valf);
  }
  free(*T);
  *T = NULL;
}

/* The passes of the apply: the non-identity factors in the order x, y, z
 * (ax[0..np-1]); the intermediate after pass p < np-1 goes to scratch buffer
 * p (sizes s[p]). */
static int kron3_passes(const hpmg_cuda_kron3 T, int ax[3], size_t s[2]) {
  size_t n[3] = {(size_t)T->A[0].ncols, (size_t)T->A[1].ncols, (size_t)T->A[2].ncols};
  int np = 0;
  s[0] = s[1] = 0;
  for (int d = 0; d < 3; d++) {
    if (T->identity[d]) continue;
    n[d] = (size_t)T->A[d].nrows;
    if (np < 2) s[np] = n[0] * n[1] * n[2];
    ax[np++] = d;
  }
  return np;
}

extern "C" size_t hpmg_cuda_kron3_scratch_bytes(hpmg_cuda_kron3 T, hpmg_real r) {
  int ax[3];
  size_t s[2];
  const int np = kron3_passes(T, ax, s);
  const size_t rs = r == HPMG_REAL_DOUBLE ? 8 : 4;
  return ((np > 1 ? s[0] : 0) + (np > 2 ? s[1] : 0)) * rs + 256;
}

/* out = (add ? out : 0) + A along `axis` of in (dims n[3] -> same with n[axis] = nrows).
 * Each thread computes V outputs of one x-line, blockDim.x apart (coalesced), so
 * V independent loads are in flight per matrix entry; along y and z the row,
 * hence the loop over its entries, is uniform over the block. */
#ifndef QK_XFER_V
#define QK_XFER_V 2
#endif
template <typename R, int AXIS, int V>
__global__ void qk_csr_axis_kernel(int n0, int n1, int m0, const int *__restrict__ rowptr, const int *__restrict__ col,
                                   const R *__restrict__ val, const R *__restrict__ in, R *__restrict__ out, int add) {
  const int i1 = blockIdx.y, i2 = blockIdx.z, b0 = blockIdx.x * blockDim.x * V + threadIdx.x;
  R s[V];
#pragma unroll
  for (int v = 0; v < V; v++) s[v] = R(0);
  if constexpr (AXIS == 0) {
    const R *line = in + ((int64_t)i2 * n1 + i1) * n0;
#pragma unroll
    for (int v = 0; v < V; v++) {
      const int i0 = b0 + v * (int)blockDim.x;
      if (i0 < m0)
        for (int p = rowptr[i0]; p < rowptr[i0 + 1]; p++) s[v] += val[p] * line[col[p]];
    }
  } else {
    const int row = AXIS == 1 ? i1 : i2;
    for (int p = rowptr[row]; p < rowptr[row + 1]; p++) {
      const int c = col[p];
      const R w = val[p];
      const R *line = in + (AXIS == 1 ? ((int64_t)i2 * n1 + c) * n0 : ((int64_t)c * n1 + i1) * n0);
#pragma unroll
      for (int v = 0; v < V; v++) {
        const int i0 = b0 + v * (int)blockDim.x;
        if (i0 < m0) s[v] += w * line[i0];
      }
    }
  }
  R *o = out + ((int64_t)i2 * gridDim.y + i1) * m0;
#pragma unroll
  for (int v = 0; v < V; v++) {
    const int i0 = b0 + v * (int)blockDim.x;
    if (i0 < m0) o[i0] = add ? o[i0] + s[v] : s[v];
  }
}

template <typename R>
static hpmg_error csr_axis(const qk_csr *A, int axis, const int n[3], const R *in, R *out, int add) {
  int m[3] = {n[0], n[1], n[2]};
  m[axis] = A->nrows;
  HPMG_CHECK_ARG(m[1] <= 65535 && m[2] <= 65535, "cuda transfer: grid too large");
  const R *val = sizeof(R) == 8 ? (const R *)(const void *)A->val : (const R *)(const void *)A->valf;
  constexpr int V = QK_XFER_V, NT = 128;
  dim3 grid((unsigned)((m[0] + NT * V - 1) / (NT * V)), (unsigned)m[1], (unsigned)m[2]);
  if (axis == 0) qk_csr_axis_kernel<R, 0, V><<<grid, NT>>>(n[0], n[1], m[0], A->rowptr, A->col, val, in, out, add);
  else if (axis == 1) qk_csr_axis_kernel<R, 1, V><<<grid, NT>>>(n[0], n[1], m[0], A->rowptr, A->col, val, in, out, add);
  else qk_csr_axis_kernel<R, 2, V><<<grid, NT>>>(n[0], n[1], m[0], A->rowptr, A->col, val, in, out, add);
  HPMG_CU_LAUNCH();
  return HPMG_SUCCESS;
}

template <typename R>
static hpmg_error kron3_r(const hpmg_cuda_kron3 T, const R *in, R *out, int add, R *scratch) {
  int ax[3];
  size_t s[2];
  const int np = kron3_passes(T, ax, s);
  R *buf[2] = {scratch, scratch + (np > 1 ? s[0] : 0)};
  int n[3] = {T->A[0].ncols, T->A[1].ncols, T->A[2].ncols};
  if (np == 0) { /* every factor the identity */
    const size_t len = (size_t)n[0] * n[1] * n[2];
    if (add) {
      const hpmg_real r = sizeof(R) == 8 ? HPMG_REAL_DOUBLE : HPMG_REAL_FLOAT;
      return hpmg_cuda_axpy(r, (int64_t)len, 1.0, in, out);
    }
    HPMG_CU(cudaMemcpyAsync(out, in, len * sizeof(R), cudaMemcpyDeviceToDevice));
    return HPMG_SUCCESS;
  }
  const R *src = in;
  for (int p = 0; p < np; p++) {
    const int last = p == np - 1;
    R *dst = last ? out : buf[p];
    HPMG_CALL(csr_axis<R>(&T->A[ax[p]], ax[p], n, src, dst, last ? add : 0));
    n[ax[p]] = T->A[ax[p]].nrows;
    src = dst;
  }
  return HPMG_SUCCESS;
}

extern "C" hpmg_error hpmg_cuda_kron3_apply(hpmg_cuda_kron3 T, hpmg_real r, const void *in, void *out, int add,
                                            void *scratch) {
  const size_t rs = r == HPMG_REAL_DOUBLE ? 8 : 4;
  const size_t nout = (size_t)T->A[0].nrows * T->A[1].nrows * T->A[2].nrows;
  if (nout == 0) return HPMG_SUCCESS;
  if ((size_t)T->A[0].ncols * T->A[1].ncols * T->A[2].ncols == 0) { /* empty input space */
    if (!add) HPMG_CU(cudaMemsetAsync(out, 0, nout * rs));
    return HPMG_SUCCESS;
  }
  void *own = NULL;
  if (!scratch) {
    HPMG_CALL(hpmg_cuda_malloc(hpmg_cuda_kron3_scratch_bytes(T, r), &own));
    scratch = own;
  }
  hpmg_error e = r == HPMG_REAL_DOUBLE ? kron3_r<double>(T, (const double *)in, (double *)out, add, (double *)scratch)
                                       : kron3_r<float>(T, (const float *)in, (float *)out, add, (float *)scratch);
  if (own) {
    cudaDeviceSynchronize();
    hpmg_cuda_free(own);
  }
  return e;
}

/* ---------------------------------------------------- lambda_max (Lanczos) */


static hpmg_error lm_apply(void *ctx, const hpmg_vec *x, hpmg_vec *y) {
  hpmg_kernel_args ka;
  memset(&ka, 0, sizeof ka);
  ka.mode = HPMG_KERNEL_APPLY;
  ka.x = x->data;
  ka.y = y->data;
  return hpmg_cuda_op_kernel((hpmg_cuda_op)ctx, x->real, &ka);
}
static hpmg_error lm_jacobi(void *ctx, const hpmg_vec *r, hpmg_vec *z) {
  return hpmg_cuda_op_inverse_diagonal((hpmg_cuda_op)ctx, r->real, 1.0, r->data, z->data, NULL);
}

extern "C" hpmg_error hpmg_cuda_estimate_lambda_max(hpmg_cuda_op op, int iters, void *work[6], double *lmax) {
  const int64_t n = op->N;
  *lmax = 1.0;
  if (n == 0) return HPMG_SUCCESS;
  const hpmg_backend *be;
  HPMG_CALL(hpmg_backend_cuda(&be));
  /* in float, as the host (hpmg_estimate_lambda_max from chebyshev.c) */
  hpmg_vec b = hpmg_vec_wrap(be, HPMG_REAL_FLOAT, n, work[0]), w[5];
  for (int i = 0; i < 5; i++) w[i] = hpmg_vec_wrap(be, HPMG_REAL_FLOAT, n, work[1 + i]);
  HPMG_CALL(hpmg_cuda_fill_random(HPMG_REAL_FLOAT, n, b.data)); /* the host estimate's start vector */
  hpmg_linop A, M;
  memset(&A, 0, sizeof A);
  memset(&M, 0, sizeof M);
  A.ctx = M.ctx = op;
  A.apply = lm_apply;
  M.apply = lm_jacobi;
  return hpmg_lambda_max_cg(&A, &M, &b, w, iters, lmax);
}
