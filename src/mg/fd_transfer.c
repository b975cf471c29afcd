/* Restriction and prolongation for the FD multigrid hierarchy. */
#include "ops/fd_stencil.h"

#define REAL double
#define FD_NAME(x) x##_d
#include "fd_transfer.inc"
#undef REAL
#undef FD_NAME
#undef FD_PAR_MIN
#undef FD_PAR_MIN_2D

#define REAL float
#define FD_NAME(x) x##_f
#include "fd_transfer.inc"
#undef REAL
#undef FD_NAME
#undef FD_PAR_MIN
#undef FD_PAR_MIN_2D
