/* The vertex-patch smoother's state, shared by its setup (patch.c) and its
 * CPU kernels (patch_kernels.c, one compilation per instruction set). */
#ifndef HPMG_SMOOTHERS_PATCH_IMPL_H
#define HPMG_SMOOTHERS_PATCH_IMPL_H

#include "core/isa.h"
#include "disc/qk/patch.h"

typedef struct {
  hpmg_smoother base; /* first: the interface frees the struct through it */
  hpmg_patch_options o;
  double omega;       /* additive damping actually used */
  hpmg_fdm fdm;       /* one set of factors serves every patch of the level */
  double *inv_d;      /* dense local inverse (--local-solver dense) */
  float *inv_f;
  int64_t nv[3];      /* interior vertices per direction (1 in z for 2D) */
  int nthreads;
  size_t off[4];      /* offsets of bi, dx, rr, work in a thread buffer */
  size_t tstride;     /* entries per thread buffer */
  size_t vstride;     /* vectors per thread buffer of the SIMD-over-patches path */
  void *vbuf;         /* nthreads such buffers, 64-byte aligned */
  int simd_off;       /* testing: one patch at a time */
  int64_t npatch, nbatch, batch; /* patches, batches, patches per batch */
  int32_t *list;      /* linear vertex indices, batch by batch, color by color */
  int64_t *bofs;      /* start of (batch b, color c) in list: bofs[b * 2^dim + c] */
  void *tbuf;         /* nthreads thread-private buffers, level precision */
} patch_smoother;

/* The sweeps, one table per instruction set, indexed by hpmg_real:
 *   sweep           one colored sweep (patch_kernels.inc)
 *   local_residual  the localized residual of one patch (tests)
 * The SIMD-over-patches buffers (vbuf) hold HPMG_VBYTES_MAX bytes per entry,
 * enough for every variant's vector width. */
typedef struct {
  void (*sweep[2])(const patch_smoother *P, const void *b, void *x, const void *r, int reverse, int x_zero);
  void (*local_residual[2])(const patch_smoother *P, const int64_t v[3], const void *b, const void *x, void *r,
                            void *buf);
} hpmg_patch_kernels;
HPMG_ISA_TABLE(hpmg_patch_kernels, hpmg_patch_kernels)

#endif
