/* Four colors of the 3D multicolor GS at once: those of one plane parity
 * (kpar 0: even planes, colors 0-3; 1: odd planes, colors 4-7), which read
 * the other parity's planes only. One block owns one plane and sweeps it as
 * a wavefront over rows. Forward, the leading rows L(t) = 2t are even and
 * the lagging rows G(t) = 2t-1 odd, and a row's first parity p1 is even i;
 * backward, L(t) = 2t+1, G(t) = 2t and p1 is odd i. The strict color order
 * is L.p1, L.p2, G.p1, G.p2 over all rows; a point needs only its own row's
 * other parity and the neighbour rows of the other row parity, so the
 * sequence  L(t0).p1 | L(t).p2 + G(t).p1 | G(t).p2 + L(t+1).p1 | ...  with a
 * barrier at each "|" gives every point exactly the values of the strict
 * order (paper 002's 8 colors, reversed backward): the result is bitwise
 * that of k_mcgs_rows, with 2 launches per sweep instead of 4 (docs/fd.md). */
template <typename T> __global__ void k_mcgs_plane(int64_t n, int kpar, int backward, T *__restrict__ u,
                                                   const T *__restrict__ f) {
  const int64_t k = (kpar ? 1 : 2) + 2 * (int64_t)blockIdx.x;
  if (k >= n) return; /* uniform across the block */
  const int64_t s1 = n + 1, s2 = s1 * s1;
  const T w = (T)(1.0 / 6.0);
  const int64_t P = n / 2, B = blockDim.x, t0 = threadIdx.x;
  const int64_t p1 = backward ? 1 : 2, p2 = backward ? 2 : 1; /* i = 2q + offset */
  const int64_t ta = backward ? 0 : 1, tb = backward ? P - 1 : P;
#define FD_PLANE_ROW(j, off)                                                                     \
  if ((j) >= 1 && (j) <= n - 1)                                                                  \
    for (int64_t q_ = t0; q_ < P; q_ += B) {                                                     \
      const int64_t i_ = 2 * q_ + (off);                                                         \
      if (i_ <= n - 1) { const int64_t c_ = k * s2 + (j) * s1 + i_; u[c_] = w * nbsum(u, f, c_, s1, s2, 3); } \
    }
#define FD_LEAD(t) (backward ? 2 * (t) + 1 : 2 * (t))
#define FD_LAG(t) (backward ? 2 * (t) : 2 * (t) - 1)
  FD_PLANE_ROW(FD_LEAD(ta), p1);
  __syncthreads();
  for (int64_t t = ta; t <= tb; t++) {
    FD_PLANE_ROW(FD_LEAD(t), p2);
    FD_PLANE_ROW(FD_LAG(t), p1);
    __syncthreads();
    FD_PLANE_ROW(FD_LAG(t), p2);
    FD_PLANE_ROW(FD_LEAD(t + 1), p1);
    __syncthreads();
  }
#undef FD_PLANE_ROW
#undef FD_LEAD
#undef FD_LAG
}
/* The same four colors (one plane parity) by tiles: a block owns a
 * FD_TX x FD_TY tile of one plane, loads it with a halo of 3 into shared
 * memory and runs the plane's four colors there: the first color on the tile
 * and 2 halo layers, the two middle ones (they are not neighbours of each
 * other) on 1 layer, the last on the tile; each halo layer recomputes what
 * the neighbouring tile computes, from the same values, so the tile ends
 * with exactly the strict color order's values. Tiles read their halo while
 * other tiles write, so the sweep is double-buffered: `own` (this parity's
 * planes before the sweep) and `nb` (the other parity's, old or already
 * updated) are read, `out` is written; the caller swaps u and its scratch
 * vector after the sweep. Same summation order as nbsum: bitwise equal to
 * k_mcgs_rows (tests/test_fd_gpu.c). */
constexpr int FD_TX = 32, FD_TY = 16, FD_H = 3;
template <typename T> __global__ void __launch_bounds__(256) k_mcgs_tile(int64_t n, int kpar, int backward,
    const T *__restrict__ own, const T *__restrict__ nb, const T *__restrict__ f, T *__restrict__ out) {
  const int64_t k = (kpar ? 1 : 2) + 2 * (int64_t)blockIdx.z;
  if (k >= n) return; /* uniform across the block */
  const int64_t s1 = n + 1, s2 = s1 * s1, base = k * s2;
  const int64_t i0 = 1 + (int64_t)blockIdx.x * FD_TX, j0 = 1 + (int64_t)blockIdx.y * FD_TY;
  constexpr int SX = FD_TX + 2 * FD_H, SY = FD_TY + 2 * FD_H;
  __shared__ T S[SY][SX];
  const int tid = threadIdx.x, nt = blockDim.x;
  for (int q = tid; q < SX * SY; q += nt) {
    const int x = q % SX, y = q / SX;
    const int64_t gi = i0 - FD_H + x, gj = j0 - FD_H + y;
    S[y][x] = gi >= 0 && gi <= n && gj >= 0 && gj <= n ? own[base + gj * s1 + gi] : (T)0;
  }
  __syncthreads();
  const T w = (T)(1.0 / 6.0);
  /* color (pi, pj): parities of i and j; forward order (0,0) (1,0) (0,1) (1,1) */
  auto color = [&](int pi, int pj, int r) {
    const int64_t ia = i0 - r + (((i0 - r) & 1) != pi), ja = j0 - r + (((j0 - r) & 1) != pj);
    const int64_t ib = i0 + FD_TX - 1 + r, jb = j0 + FD_TY - 1 + r;
    const int cx = ib >= ia ? (int)((ib - ia) / 2 + 1) : 0, cy = jb >= ja ? (int)((jb - ja) / 2 + 1) : 0;
    for (int q = tid; q < cx * cy; q += nt) {
      const int64_t gi = ia + 2 * (q % cx), gj = ja + 2 * (q / cx);
      if (gi < 1 || gi > n - 1 || gj < 1 || gj > n - 1) continue;
      const int x = (int)(gi - i0) + FD_H, y = (int)(gj - j0) + FD_H;
      const int64_t c = base + gj * s1 + gi;
      T sum = f[c] + S[y][x - 1];
      sum += S[y][x + 1];
      sum += S[y - 1][x];
      sum += S[y + 1][x];
      sum += nb[c - s2];
      sum += nb[c + s2];
      S[y][x] = w * sum;
    }
  };
  const int c0 = backward ? 3 : 0, c1 = backward ? 2 : 1, c2 = backward ? 1 : 2, c3 = backward ? 0 : 3;
  color(c0 & 1, c0 >> 1, 2);
  __syncthreads();
  color(c1 & 1, c1 >> 1, 1);
  color(c2 & 1, c2 >> 1, 1);
  __syncthreads();
  color(c3 & 1, c3 >> 1, 0);
  __syncthreads();
  for (int q = tid; q < FD_TX * FD_TY; q += nt) {
    const int x = q % FD_TX, y = q / FD_TX;
    const int64_t gi = i0 + x, gj = j0 + y;
    if (gi <= n - 1 && gj <= n - 1) out[base + gj * s1 + gi] = S[y + FD_H][x + FD_H];
  }
}

/* The 3D multicolor GS kernel: tile (k_mcgs_tile, default), plane
 * (k_mcgs_plane) or rows (k_mcgs_rows). Levels below FD_MCGS_MIN intervals
 * use rows (too few planes for the others to fill the GPU). The environment
 * variable HPMG_FD_MCGS3 = tile|plane|rows overrides the choice on every
 * level for benchmarks (scripts/gpu-fd-perf runs all three). */
constexpr int64_t FD_MCGS_MIN = 128;
int mcgs3_kernel(int64_t n) { /* 0 rows, 1 plane, 2 tile */
  static int forced = -2;
  if (forced == -2) {
    const char *e = getenv("HPMG_FD_MCGS3");
    forced = !e ? -1 : !strcmp(e, "rows") ? 0 : !strcmp(e, "plane") ? 1 : !strcmp(e, "tile") ? 2 : -1;
  }
  if (forced >= 0) return forced;
  return n >= FD_MCGS_MIN ? 2 : 0;
}

