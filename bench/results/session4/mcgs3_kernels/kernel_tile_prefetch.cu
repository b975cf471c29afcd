/* Four colors of the 3D multicolor GS at once: those of one plane parity
 * (kpar 0: even planes, colors 0-3; 1: odd planes, colors 4-7), which read
 * the other parity's planes only. A block owns a FD_TX x FD_TY tile of one
 * plane. It loads, in one phase, u of its plane with a halo of 3 and f and
 * the two neighbour planes with a halo of 2 into shared memory, then runs
 * the plane's four colors there: the first color on the tile and 2 halo
 * layers, the two middle ones (not neighbours of each other) on 1 layer,
 * the last on the tile. A halo layer recomputes what the neighbouring tile
 * computes, from the same values, so the tile ends with exactly the values
 * of the strict color order (paper 002's 8 colors, reversed backward); the
 * summation order is nbsum's. Tiles read their halo while other tiles
 * write, so the sweep is double-buffered: `own` (this parity's planes
 * before the sweep) and `nb` (the other parity's: old in the first launch,
 * already updated in the second) are read, `out` is written, and the caller
 * swaps u with the level's scratch vector after the sweep. 2 launches and
 * about 4 vector passes per sweep, against 4 launches and about 5 passes for
 * k_mcgs_rows (docs/fd.md, "Streaming bound"). */
constexpr int FD_TX = 32, FD_TY = 16;
template <typename T> __global__ void __launch_bounds__(256) k_mcgs_tile(int64_t n, int kpar, int backward,
    const T *__restrict__ own, const T *__restrict__ nb, const T *__restrict__ f, T *__restrict__ out) {
  const int64_t k = (kpar ? 1 : 2) + 2 * (int64_t)blockIdx.z;
  if (k >= n) return; /* uniform across the block */
  const int64_t s1 = n + 1, s2 = s1 * s1, base = k * s2;
  const int64_t i0 = 1 + (int64_t)blockIdx.x * FD_TX, j0 = 1 + (int64_t)blockIdx.y * FD_TY;
  constexpr int UX = FD_TX + 6, UY = FD_TY + 6, GX = FD_TX + 4, GY = FD_TY + 4;
  __shared__ T Su[UY][UX], Sf[GY][GX], Sm[GY][GX], Sp[GY][GX];
  const int tx = threadIdx.x, ty = threadIdx.y; /* blockDim (32, 8) */
  for (int y = ty; y < UY; y += 8)
    for (int x = tx; x < UX; x += 32) {
      const int64_t gi = i0 - 3 + x, gj = j0 - 3 + y;
      Su[y][x] = gi >= 0 && gi <= n && gj >= 0 && gj <= n ? own[base + gj * s1 + gi] : (T)0;
    }
  for (int y = ty; y < GY; y += 8)
    for (int x = tx; x < GX; x += 32) {
      const int64_t gi = i0 - 2 + x, gj = j0 - 2 + y;
      const bool in = gi >= 1 && gi <= n - 1 && gj >= 1 && gj <= n - 1;
      const int64_t c = base + gj * s1 + gi;
      Sf[y][x] = in ? f[c] : (T)0;
      Sm[y][x] = in ? nb[c - s2] : (T)0;
      Sp[y][x] = in ? nb[c + s2] : (T)0;
    }
  __syncthreads();
  const T w = (T)(1.0 / 6.0);
  /* color (pi, pj), parities of i and j, on the tile and r halo layers */
  auto color = [&](int pi, int pj, int r) {
    const int64_t ia = i0 - r + ((i0 - r - pi) & 1), ja = j0 - r + ((j0 - r - pj) & 1);
    const int64_t ib = i0 + FD_TX - 1 + r, jb = j0 + FD_TY - 1 + r;
    const int64_t gi = ia + 2 * tx;
    if (gi > ib || gi < 1 || gi > n - 1) return;
    for (int64_t gj = ja + 2 * ty; gj <= jb; gj += 16) {
      if (gj < 1 || gj > n - 1) continue;
      const int x = (int)(gi - i0) + 3, y = (int)(gj - j0) + 3;
      T sum = Sf[y - 1][x - 1] + Su[y][x - 1];
      sum += Su[y][x + 1];
      sum += Su[y - 1][x];
      sum += Su[y + 1][x];
      sum += Sm[y - 1][x - 1];
      sum += Sp[y - 1][x - 1];
      Su[y][x] = w * sum;
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
  for (int y = ty; y < FD_TY; y += 8) {
    const int64_t gi = i0 + tx, gj = j0 + y;
    if (gi <= n - 1 && gj <= n - 1) out[base + gj * s1 + gi] = Su[y + 3][tx + 3];
  }
}
/* The 3D multicolor GS uses k_mcgs_tile from FD_MCGS_TILE_MIN intervals on
 * (fewer planes do not fill the GPU) and k_mcgs_rows below. The environment
 * variable HPMG_FD_MCGS3 = rows|tile forces one kernel on every level
 * (scripts/gpu-fd-perf compares them). */
constexpr int64_t FD_MCGS_TILE_MIN = 128;
bool mcgs3_tile(int64_t n) {
  static int forced = -2;
  if (forced == -2) {
    const char *e = getenv("HPMG_FD_MCGS3");
    forced = !e ? -1 : !strcmp(e, "rows") ? 0 : !strcmp(e, "tile") ? 1 : -1;
  }
  return forced >= 0 ? forced == 1 : n >= FD_MCGS_TILE_MIN;
}

