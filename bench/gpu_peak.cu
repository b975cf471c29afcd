/* Measured roofs of the GPU (issue 4, docs/cuda.md): the ceilings that the
 * kernel efficiencies in docs/cuda.md are percentages of.
 *   gpu_peak            prints one JSON object
 * - FP64 / FP32 FMA throughput: every thread runs 8 independent FMA chains
 *   (x = x * a + b), enough blocks to fill every SM; flops = 2 per FMA.
 * - shared-memory load bandwidth, 32-bit and 64-bit words: each warp reads
 *   32 consecutive words (no bank conflicts) at an offset that moves with the
 *   loop counter, so the loads cannot be hoisted; bytes = words x size.
 * - DRAM: copy y = x (bytes read + written) and a read-only sum, 2 GiB
 *   arrays, 16-byte accesses.
 * - the SM clock the FP64 rate implies: TFLOP/s / (SMs x 64 FP64 FMA lanes x 2)
 *   (sm_90: 64 FP64 and 128 FP32 FMA per SM and clock).
 * Every figure is the best of 5 launches timed with CUDA events. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "gpu_peak: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__);  \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

template <typename T>
__global__ void fma_kernel(T *out, T a, T b, int iters) {
  T x[8];
#pragma unroll
  for (int j = 0; j < 8; j++) x[j] = (T)(threadIdx.x + j) * (T)1e-3;
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int u = 0; u < 16; u++)
#pragma unroll
      for (int j = 0; j < 8; j++) x[j] = x[j] * a + b;
  }
  T s = 0;
#pragma unroll
  for (int j = 0; j < 8; j++) s += x[j];
  if (s == (T)-1.2345) out[blockIdx.x] = s; /* never true: keeps the chains alive */
}

template <typename T, int WORDS>
__global__ void smem_kernel(T *out, int iters) {
  __shared__ T buf[WORDS];
  for (int i = threadIdx.x; i < WORDS; i += blockDim.x) buf[i] = (T)i;
  __syncthreads();
  constexpr int U = WORDS / 256 - 4; /* loads per iteration, stride 256 words */
  T acc0 = 0, acc1 = 0;
  for (int i = 0; i < iters; i++) {
    const T *p = buf + ((i * 32) & 1023) + threadIdx.x;
#pragma unroll
    for (int u = 0; u < U; u += 2) {
      acc0 += p[u * 256];
      acc1 += p[(u + 1) * 256];
    }
  }
  if (acc0 + acc1 == (T)-1.2345) out[blockIdx.x] = acc0;
}

__global__ void copy_kernel(const double2 *__restrict__ x, double2 *__restrict__ y, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) y[i] = x[i];
}

__global__ void read_kernel(const double2 *__restrict__ x, size_t n, double *out) {
  double s = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    s += x[i].x + x[i].y;
  if (s == -1.2345) *out = s;
}

template <class F> static float best_ms(F launch) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  launch(); /* warm-up */
  CK(cudaDeviceSynchronize());
  float best = 1e30f;
  for (int r = 0; r < 5; r++) {
    CK(cudaEventRecord(a));
    launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (ms < best) best = ms;
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return best;
}

int main(void) {
  int dev = 0, sms = 0, clk_khz = 0;
  CK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  if (cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, dev) != cudaSuccess) clk_khz = 0;
  cudaGetLastError();
  double *dout;
  CK(cudaMalloc(&dout, 1 << 20));

  /* FMA: 256 threads x 8 blocks per SM x 8 waves */
  const int threads = 256, blocks = sms * 8 * 8, iters = 4096;
  const double fmas = (double)blocks * threads * iters * 16 * 8;
  const float ms64 = best_ms([&] { fma_kernel<double><<<blocks, threads>>>(dout, 0.999999, 1e-7, iters); });
  const double clock_mhz = fmas / (ms64 * 1e-3) / (sms * 64.0) * 1e-6;
  const float ms32 = best_ms([&] { fma_kernel<float><<<blocks, threads>>>((float *)dout, 0.999999f, 1e-7f, iters); });

  /* shared memory: 32 KiB per block, 256 threads, 6 blocks per SM x 8 waves */
  const int sblocks = sms * 6 * 8, siters = 4096;
  const float msf = best_ms([&] { smem_kernel<float, 8192><<<sblocks, 256>>>((float *)dout, siters); });
  const float msd = best_ms([&] { smem_kernel<double, 4096><<<sblocks, 256>>>(dout, siters); });
  const double bytes_f = (double)sblocks * 256 * siters * (8192 / 256 - 4) * 4.0;
  const double bytes_d = (double)sblocks * 256 * siters * (4096 / 256 - 4) * 8.0;

  /* DRAM: 2 GiB arrays */
  const size_t n2 = ((size_t)1 << 31) / sizeof(double2);
  double2 *x, *y;
  CK(cudaMalloc(&x, n2 * sizeof(double2)));
  CK(cudaMalloc(&y, n2 * sizeof(double2)));
  CK(cudaMemset(x, 0, n2 * sizeof(double2)));
  const int dblocks = sms * 8;
  const float msc = best_ms([&] { copy_kernel<<<dblocks, 512>>>(x, y, n2); });
  const float msr = best_ms([&] { read_kernel<<<dblocks, 512>>>(x, n2, dout); });
  const double gib2 = 2.0 * n2 * sizeof(double2);

  printf("{\"device\": \"%s\", \"sms\": %d, \"clock_attr_mhz\": %.0f, \"clock_implied_mhz\": %.0f, "
         "\"fp64_tflops\": %.2f, \"fp32_tflops\": %.2f, \"smem_f32_TBps\": %.2f, \"smem_f64_TBps\": %.2f, "
         "\"dram_copy_TBps\": %.3f, \"dram_read_TBps\": %.3f}\n",
         prop.name, sms, clk_khz * 1e-3, clock_mhz, 2 * fmas / (ms64 * 1e-3) * 1e-12, 2 * fmas / (ms32 * 1e-3) * 1e-12,
         bytes_f / (msf * 1e-3) * 1e-12, bytes_d / (msd * 1e-3) * 1e-12, gib2 / (msc * 1e-3) * 1e-12,
         0.5 * gib2 / (msr * 1e-3) * 1e-12);
  CK(cudaFree(x));
  CK(cudaFree(y));
  CK(cudaFree(dout));
  return 0;
}
