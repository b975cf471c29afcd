/* Session 5: the 2-launch (plus deferred rows) multicolor GS sweep, removed
 * from src/cuda/fd_kernels.cu after measurement (README.md here). */
/* The multicolor GS sweep of one plane parity (3D; the whole grid in 2D) in
 * one launch, in place, bitwise the strict color order. In a plane, the
 * colors come as first rows (even j forward, odd j backward: first i-color,
 * then the other) and then second rows, and a row reads only rows of the
 * other parity. A block owns the full rows jlo..jhi-1 (2R of them, jlo odd)
 * of one plane and runs four phases with a barrier between: first rows
 * first i-color, first rows second i-color, second rows likewise. The one
 * second row at the block's edge that reads a first row of the neighbour
 * block (forward: jlo, backward: jhi-1) is deferred to k_mcgs_deferred,
 * launched next: until then it keeps its old value, which is what every
 * first row that reads it needs. Planes of the same parity read only planes
 * of the other, untouched in this launch. Each sweep: 2 launches + 2 small
 * deferred ones in 3D (1 + 1 in 2D), against 4 (2) of k_mcgs_rows, and each
 * row's neighbours are read by the block that just loaded them. */
__device__ __forceinline__ int64_t mcgs_deferred_row(int64_t n, int R, int64_t b, int backward) {
  const int64_t jlo = 1 + 2 * (int64_t)R * b, jhi = jlo + 2 * R < n ? jlo + 2 * R : n;
  return backward ? (jhi < n ? jhi - 1 : -1) : (b > 0 ? jlo : -1);
}
template <typename T> __global__ void __launch_bounds__(256, 4) k_mcgs_block(int dim, int64_t n, int ck, int backward,
                                                   T *__restrict__ u, const T *__restrict__ f) {
  const int64_t k = dim == 3 ? (ck ? 1 : 2) + 2 * (int64_t)blockIdx.y : 0;
  if (dim == 3 && k >= n) return;
  const int R = blockDim.y;
  const int64_t s1 = n + 1, s2 = s1 * s1, b = blockIdx.x;
  const int64_t jlo = 1 + 2 * (int64_t)R * b, jhi = jlo + 2 * R < n ? jlo + 2 * R : n;
  const int64_t jdef = mcgs_deferred_row(n, R, b, backward);
  const T w = dim == 2 ? (T)0.25 : (T)(1.0 / 6.0);
  const int64_t ia = backward ? 1 : 2, ib = backward ? 2 : 1; /* i = 2p + ia: first i-color */
  const int64_t jF = jlo + (backward ? 0 : 1) + 2 * threadIdx.y, jS = jlo + (backward ? 1 : 0) + 2 * threadIdx.y;
  const bool okF = jF < jhi, okS = jS < jhi && jS != jdef;
  const int64_t BX = blockDim.x, C = (n / 2 + BX - 1) / BX;
  /* one i-color (io) of this thread's first (F) or second row in chunk ch */
#define FD_UPD(ok, j, io, ch)                                                                     \
  do {                                                                                            \
    const int64_t i_ = 2 * ((ch) * BX + threadIdx.x) + (io);                                      \
    if ((ok) && i_ <= n - 1) { const int64_t c_ = k * s2 + (j) * s1 + i_; u[c_] = w * nbsum(u, f, c_, s1, s2, dim); } \
  } while (0)
  /* chunk by chunk along the rows, so that a chunk's 4 updates reuse its
   * lines in L1: A = F first color, B = F second, Cc = S first, D = S second.
   * Forward, B and D read the first color of their own and the previous
   * chunk; backward, of their own and the next, so A and Cc run a chunk ahead. */
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
}
/* the deferred second rows of k_mcgs_block: one per block edge, both i-colors */
template <typename T> __global__ void k_mcgs_deferred(int dim, int64_t n, int ck, int backward, int R,
                                                      T *__restrict__ u, const T *__restrict__ f) {
  const int64_t k = dim == 3 ? (ck ? 1 : 2) + 2 * (int64_t)blockIdx.y : 0;
  if (dim == 3 && k >= n) return;
  const int64_t j = mcgs_deferred_row(n, R, (int64_t)blockIdx.x + (backward ? 0 : 1), backward);
  if (j < 0) return;
  const int64_t s1 = n + 1, s2 = s1 * s1, P = n / 2;
  const T w = dim == 2 ? (T)0.25 : (T)(1.0 / 6.0);
  for (int ph = 0; ph < 2; ph++) {
    const int64_t io = (ph == 0) == (backward != 0) ? 1 : 2;
    for (int64_t p = threadIdx.x; p < P; p += blockDim.x) {
      const int64_t i = 2 * p + io;
      if (i <= n - 1) {
        const int64_t c = k * s2 + j * s1 + i;
        u[c] = w * nbsum(u, f, c, s1, s2, dim);
      }
    }
    if (ph == 0) __syncthreads();
  }
}


/* host side */
/* 3D/2D multicolor GS kernel: 1 = k_mcgs_block (default), 0 = k_mcgs_rows
 * (HPMG_FD_MCGS=rows, kept to compare; both are the strict color order) */
int mcgs_kernel(void) {
  static int k = -1;
  if (k < 0) {
    const char *e = getenv("HPMG_FD_MCGS");
    k = e && !strcmp(e, "rows") ? 0 : 1;
  }
  return k;
}
/* k_mcgs_block's shape: BX = 64 points of a row per chunk, R = 256 / BX row
 * pairs per block, fewer while the launch would have under 1024 blocks */
void mcgs_block_shape(int dim, int64_t n, int *R, unsigned *bx) {
  const int64_t P = n / 2, planes = dim == 3 ? n / 2 : 1;
  const int64_t x = P >= 64 ? 64 : (P + 31) / 32 * 32;
  int64_t r = 256 / x;
  while (r > 1 && planes * ((n - 1 + 2 * r - 1) / (2 * r)) < 1024) r /= 2;
  *R = (int)r;
  *bx = (unsigned)x;
}


/* launch (in Ops<T>::smooth) */
#if 0
      } else if (mcgs_kernel() == 1) {
        /* plane parities in color order (3D: even planes first forward, odd first backward) */
        int R;
        unsigned bx;
        mcgs_block_shape(dim, n, &R, &bx);
        const int64_t nb = (n - 1 + 2 * R - 1) / (2 * R);
        const unsigned planes = dim == 3 ? (unsigned)(n / 2) : 1u;
        for (int p = 0; p < (dim == 3 ? 2 : 1); p++) {
          const int ck = dim == 3 ? (backward ? 1 - p : p) : 0;
          k_mcgs_block<T><<<dim3((unsigned)nb, planes), dim3(bx, (unsigned)R)>>>(dim, n, ck, backward, (T *)*u, (const T *)f);
          FD_CU_LAUNCH();
          if (nb > 1) {
            k_mcgs_deferred<T><<<dim3((unsigned)(nb - 1), planes), 128>>>(dim, n, ck, backward, R, (T *)*u, (const T *)f);
            FD_CU_LAUNCH();
          }
        }
#endif
