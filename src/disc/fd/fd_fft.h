/* Direct solver of the 5/7-point FD Poisson system by sine transforms.
 *
 * The DST-I diagonalizes the Dirichlet stencil: with eigenvalues
 * lambda_k = sum_i 4 sin^2(pi k_i / 2n), k_i = 1..n-1, the solution of
 * A u = f (f h^2-scaled) is u = S (S f / lambda) / (2n)^d, S the unnormalized
 * DST-I (FFTW's RODFT00) along each direction. CPU: the box direct solver
 * (src/disc/fd/fd_direct.h) embedded in the (n+1)^d array, in place on its
 * interior (FFTW guru strides skip the boundary). GPU: cuFFT, which has no
 * sine transform: see src/disc/fd/cuda/fd_cufft.cu. */
#ifndef HPMG_FD_FFT_H
#define HPMG_FD_FFT_H

#include "disc/fd/fd_stencil.h"

typedef struct fd_fft_s *fd_fft;

/* device: 0 = CPU (FFTW), 1 = CUDA (cuFFT). measure: FFTW_MEASURE instead of
 * FFTW_ESTIMATE (slower planning, faster transforms). The plan owns one
 * (n+1)^d work array in its precision (CPU: always double, since only the
 * double FFTW library is linked; GPU: prec). */
hpmg_error fd_fft_create(int dim, int64_t n, fd_prec prec, int device, int measure, fd_fft *fft);
void fd_fft_destroy(fd_fft *fft);
fd_prec fd_fft_prec(fd_fft fft);
/* the work array (host pointer for the CPU, device pointer for CUDA) */
void *fd_fft_buffer(fd_fft fft);
/* In place on the work array: right-hand side in, solution out. */
hpmg_error fd_fft_execute(fd_fft fft);
/* seconds spent planning */
double fd_fft_plan_seconds(fd_fft fft);

/* CUDA half, implemented in src/disc/fd/cuda/fd_cufft.cu (stubs without CUDA). */
hpmg_error fd_cuda_fft_create(int dim, int64_t n, fd_prec prec, void **handle, void **dbuf);
hpmg_error fd_cuda_fft_execute(void *handle);
void fd_cuda_fft_destroy(void *handle);
/* bytes of device memory the CUDA FFT solver allocates (work array included) */
double fd_cuda_fft_bytes(int dim, int64_t n, fd_prec prec);

#endif
