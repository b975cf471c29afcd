/* Session 5, second version: k_mcgs_block with the edge rows done in the same
 * launch after a flag wait (blocks ordered by a global ticket); removed after
 * measurement (README.md here). */
/* The multicolor GS sweep of one plane parity (3D; the whole grid in 2D) in
 * one launch, in place, bitwise the strict color order (paper 002's colors).
 * In a plane the colors come as first rows (even j forward, odd j backward;
 * in a row first one i-color, then the other) and then second rows, and a
 * row reads only rows of the other parity; planes of one parity read only
 * planes of the other, untouched in this launch. A block owns 2R full rows
 * jlo..jhi-1 (jlo odd) of one plane and updates them chunk by chunk along
 * the rows (so that a chunk's four color updates find its lines in L1).
 * The one second row at the block's edge that reads a first row of the
 * neighbouring block (forward: jlo, reading jlo-1; backward: jhi-1, reading
 * jhi) waits for that block: blocks take their rows in the order of a
 * global ticket (so the block waited for has started, and runs on), a
 * block publishes a flag once all its rows but that one are done, and then
 * waits for the flag of the block before it in that order. Until then the
 * edge row keeps its old value, which is what the neighbour's first row
 * reads. 2 launches per sweep in 3D and 1 in 2D, against the 4 and 2 of
 * k_mcgs_rows, which read the whole vector from DRAM in each launch. */
template <typename T> __global__ void __launch_bounds__(256, 4)
k_mcgs_block(int dim, int64_t n, int ck, int backward, int64_t nb, unsigned *ticket, unsigned *flags, unsigned epoch,
             T *__restrict__ u, const T *__restrict__ f) {
  __shared__ int64_t s_d;
  if (threadIdx.x == 0 && threadIdx.y == 0) s_d = atomicAdd(ticket, 1u);
  __syncthreads();
  const int64_t d = s_d, bb = d % nb, b = backward ? nb - 1 - bb : bb;
  const int64_t k = dim == 3 ? (ck ? 1 : 2) + 2 * (d / nb) : 0;
  const int R = blockDim.y;
  const int64_t s1 = n + 1, s2 = s1 * s1;
  const int64_t jlo = 1 + 2 * (int64_t)R * b, jhi = jlo + 2 * R < n ? jlo + 2 * R : n;
  const int64_t jdef = bb == 0 ? -1 : backward ? jhi - 1 : jlo; /* the edge row, if it has a neighbour */
  const T w = dim == 2 ? (T)0.25 : (T)(1.0 / 6.0);
  const int64_t ia = backward ? 1 : 2, ib = backward ? 2 : 1; /* i = 2p + ia: first i-color */
  const int64_t jF = jlo + (backward ? 0 : 1) + 2 * threadIdx.y, jS = jlo + (backward ? 1 : 0) + 2 * threadIdx.y;
  const bool okF = jF < jhi, okS = jS < jhi && jS != jdef;
  const int64_t BX = blockDim.x, C = (n / 2 + BX - 1) / BX;
#define FD_UPD(ok, j, io, ch)                                                                     \
  do {                                                                                            \
    const int64_t i_ = 2 * ((ch) * BX + threadIdx.x) + (io);                                      \
    if ((ok) && i_ <= n - 1) { const int64_t c_ = k * s2 + (j) * s1 + i_; u[c_] = w * nbsum(u, f, c_, s1, s2, dim); } \
  } while (0)
  /* A = first rows first i-color, B = their second, Cc and D likewise on
   * the second rows. Forward, B and D read the first i-color of their own
   * and the previous chunk; backward, of their own and the next, so A and
   * Cc run a chunk ahead. */
  if (!backward) {
    for (int64_t c = 0; c < C; c++) {
      FD_UPD(okF, jF, ia, c);
      __syncthreads();
      FD_UPD(okF, jF, ib, c);
      FD_UPD(okS, jS, ia, c);
      __syncthreads();
      FD_UPD(okS, jS, ib, c);
      __syncthreads();
    }
  } else {
    FD_UPD(okF, jF, ia, 0);
    __syncthreads();
    FD_UPD(okS, jS, ia, 0);
    __syncthreads();
    for (int64_t c = 0; c < C; c++) {
      if (c + 1 < C) FD_UPD(okF, jF, ia, c + 1);
      __syncthreads();
      FD_UPD(okF, jF, ib, c);
      if (c + 1 < C) FD_UPD(okS, jS, ia, c + 1);
      __syncthreads();
      FD_UPD(okS, jS, ib, c);
      __syncthreads();
    }
  }
#undef FD_UPD
  /* publish (the loop ended with a barrier), then the edge row */
  const int tid = threadIdx.x + blockDim.x * threadIdx.y, nt = blockDim.x * blockDim.y;
  if (tid == 0) {
    __threadfence();
    atomicExch(&flags[d], epoch);
  }
  if (jdef < 0) return;
  if (tid == 0) {
    while (atomicAdd(&flags[d - 1], 0u) != epoch) __nanosleep(64);
    __threadfence();
  }
  __syncthreads();
  /* the neighbour's row through L2 (__ldcg): it was written on another SM */
  const int64_t jn = backward ? jdef + 1 : jdef - 1, jo = backward ? jdef - 1 : jdef + 1;
  for (int ph = 0; ph < 2; ph++) {
    const int64_t io = ph == 0 ? ia : ib;
    for (int64_t p = tid; p < n / 2; p += nt) {
      const int64_t i = 2 * p + io;
      if (i <= n - 1) {
        const int64_t c = k * s2 + jdef * s1 + i;
        T sum = f[c] + u[c - 1] + u[c + 1] + __ldcg(&u[k * s2 + jn * s1 + i]) + u[k * s2 + jo * s1 + i];
        if (dim == 3) { sum += u[c - s2]; sum += u[c + s2]; }
        u[c] = w * sum;
      }
    }
    if (ph == 0) __syncthreads();
  }
}


/* host side */
unsigned *g_mcgs = nullptr; /* k_mcgs_block: ticket, then one flag per block */
int64_t g_mcgs_len = 0;
unsigned g_epoch = 0;

/* k_mcgs_block's shape: BX = 64 points of a row per chunk (fewer on small
 * grids), R = 256 / BX row pairs per block, fewer while the launch would
 * have under 1024 blocks */
void mcgs_block_shape(int dim, int64_t n, int *R, unsigned *bx) {
  const int64_t P = n / 2, planes = dim == 3 ? n / 2 : 1;
  const int64_t x = P >= 64 ? 64 : (P + 31) / 32 * 32;
  int64_t r = 256 / x;
  while (r > 1 && planes * ((n - 1 + 2 * r - 1) / (2 * r)) < 1024) r /= 2;
  *R = (int)r;
  *bx = (unsigned)x;
}
hpmg_error mcgs_block_sweep_buffers(int64_t blocks) {
  if (blocks + 1 > g_mcgs_len) {
    if (g_mcgs) cudaFree(g_mcgs);
    g_mcgs = nullptr;
    g_mcgs_len = 0;
    FD_CU(cudaMalloc(&g_mcgs, sizeof(unsigned) * (size_t)(blocks + 1)));
    FD_CU(cudaMemset(g_mcgs, 0, sizeof(unsigned) * (size_t)(blocks + 1)));
    g_mcgs_len = blocks + 1;
  }
  return HPMG_SUCCESS;
}
/* launch (in Ops<T>::smooth) */
#if 0
      } else if (!getenv("HPMG_FD_MCGS_ROWS")) {
        /* plane parities in color order (3D: even planes first forward, odd first backward) */
        int R;
        unsigned bx;
        mcgs_block_shape(dim, n, &R, &bx);
        const int64_t nb = (n - 1 + 2 * R - 1) / (2 * R);
        for (int p = 0; p < (dim == 3 ? 2 : 1); p++) {
          const int ck = dim == 3 ? (backward ? 1 - p : p) : 0;
          const int64_t planes = dim == 3 ? (ck ? n / 2 : n / 2 - 1) : 1;
          if (planes < 1) continue;
          HPMG_CALL(mcgs_block_sweep_buffers(nb * planes));
          if (++g_epoch == 0) ++g_epoch; /* flags start at 0 */
          FD_CU(cudaMemsetAsync(g_mcgs, 0, sizeof(unsigned)));
          k_mcgs_block<T><<<(unsigned)(nb * planes), dim3(bx, (unsigned)R)>>>(dim, n, ck, backward, nb, g_mcgs, g_mcgs + 1,
                                                                               g_epoch, (T *)*u, (const T *)f);
          FD_CU_LAUNCH();
        }
#endif
