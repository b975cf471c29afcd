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
  hpmg_fdm fdm;       /* plain grid: one set of factors serves every patch of
                         the level; general box: the sizes only (views' shape) */
  double *inv_d;      /* dense local inverse (--local-solver dense) */
  float *inv_f;
  int64_t nv[3];      /* patch vertices per direction (1 in z for 2D) */
  int nthreads;
  size_t off[5];      /* offsets of bi, dx, rr, work, dinv in a thread buffer */
  size_t tstride;     /* entries per thread buffer */
  size_t vstride;     /* vectors per thread buffer of the SIMD-over-patches path */
  void *vbuf;         /* nthreads such buffers, 64-byte aligned */
  int simd_off;       /* testing: one patch at a time */
  int64_t npatch, nbatch, batch; /* patches, batches, patches per batch */
  int32_t *list;      /* linear vertex indices, batch by batch, color by color */
  int64_t *bofs;      /* start of (batch b, color c) in list: bofs[b * 2^dim + c] */
  void *tbuf;         /* nthreads thread-private buffers, level precision */
  /* General box (grid not plain, or forced by hpmg_smoother_patch_general):
   * patches of vertices v_d = vmin[d] .. vmin[d]+nv[d]-1, the per-patch path. */
  int box;
  int64_t vmin[3];    /* 1 behind a Dirichlet end, else 0 (Neumann: half patch; periodic) */
  int ncd[3], ncol;   /* colors per direction (2; 3 for an odd periodic count; 1 in z
                         for 2D) and in all: color c0 + ncd0 (c1 + ncd1 c2) */
  int ntype[3];       /* distinct (left, right) cell-width pairs per direction */
  int32_t *vtype[3];  /* vertex index 0..cells -> its pair */
  double *fac_d[3];   /* ntype[d] blocks of hpmg_fdm_1d_len(k) 1D factors */
  float *fac_f[3];
  int64_t *gmap[3];   /* (cells+1) x (2k+1): free index of closed position j of
                         the patch of vertex v (periodic: wrapped), -1 if none */
  int64_t *items;     /* sweep items: 4 p + kind for list[p..]: kind 0 one patch,
                         1 a lane group sharing its factors, 2 a lane group
                         with factors per lane (patch.c box_items) */
  void *lbuf;         /* per thread: lane-interleaved factors and D^{-1} of a
                         kind-2 group, lstride vectors, 64-byte aligned */
  size_t lstride;
  int64_t *iofs;      /* first item of (batch b, color c): iofs[b * ncol + c] */
} patch_smoother;

/* The sweeps, one table per instruction set, indexed by hpmg_real:
 *   sweep           one colored sweep of a plain grid (patch_kernels.inc)
 *   box_sweep       the same on a general box: one patch at a time, each
 *                   with its own view of the 1D factors
 *   local_residual  the localized residual of one patch (tests)
 *   local_correction  y += R_j^T A_j^{-1} R_j r for one patch (tests)
 * The SIMD-over-patches buffers (vbuf) hold HPMG_VBYTES_MAX bytes per entry,
 * enough for every variant's vector width. */
typedef struct {
  void (*sweep[2])(const patch_smoother *P, const void *b, void *x, const void *r, int reverse, int x_zero);
  void (*box_sweep[2])(const patch_smoother *P, const void *b, void *x, const void *r, int reverse, int x_zero);
  void (*local_residual[2])(const patch_smoother *P, const int64_t v[3], const void *b, const void *x, void *r,
                            void *buf);
  void (*local_correction[2])(const patch_smoother *P, const int64_t v[3], const void *r, void *y, void *buf);
  int vl[2];          /* patches per SIMD-over-patches group */
} hpmg_patch_kernels;
HPMG_ISA_TABLE(hpmg_patch_kernels, hpmg_patch_kernels)

#endif
