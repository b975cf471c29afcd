/* Jacobi, red-black and multicolor Gauss-Seidel for the FD stencils. */
#include <omp.h>
#include "ops/fd_stencil.h"

#define REAL double
#define FD_NAME(x) x##_d
#include "fd_smoother.inc"
#undef REAL
#undef FD_NAME
#undef FD_PAR_MIN
#undef FD_PAR_MIN_2D

#define REAL float
#define FD_NAME(x) x##_f
#include "fd_smoother.inc"
#undef REAL
#undef FD_NAME
#undef FD_PAR_MIN
#undef FD_PAR_MIN_2D
