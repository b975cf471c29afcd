/* The star smoother over a mesh (paper 001, Algorithm 2; docs/sem.md, "The
 * star smoother over a mesh"): for every vertex of the mesh, the residual
 * gathered from the skeleton into the star-local layout (sem_star.h), the
 * exact inverse of the star's condensed operator (hpmg_sem_star_solve,
 * Algorithm 1), the degree-7 weights (hpmg_sem_star_weigh), and the
 * scatter-add of the weighted correction into the skeleton:
 *
 *   z = sum_v R_v^T W_v Hhat_v^{-1} R_v r.
 *
 * Additive: every star reads the same r. The 1D blocks are built once per
 * vertex position and direction (widths of the two neighbouring elements,
 * side kinds from the mesh's boundary conditions: an element, Neumann,
 * Dirichlet, or the periodic wrap) and shared by all stars at that position.
 * Every vertex has a star, boundary vertices by the identity padding of their
 * blocks; Dirichlet nodes receive exactly 0.
 *
 * The weighting makes the smoother non-symmetric (the paper's remark; a test
 * measures it), hence flexible CG around the V-cycle (kMG, kvMG).
 *
 * Threads: the vertices run in colours (per direction the vertex index mod 2,
 * the last vertex of a periodic direction with an odd count a third colour):
 * two stars of one colour share no skeleton node, so the scatter needs no
 * atomics and the result does not depend on the thread count. */
#ifndef HPMG_SEM_SMOOTHER_H
#define HPMG_SEM_SMOOTHER_H

#include "disc/sem/sem_mesh.h"
#include "disc/sem/sem_star.h"

typedef struct {
  const hpmg_sem_mesh *m;  /* not owned */
  hpmg_sem_block1d *blk[3]; /* blk[d][J]: direction d, vertex position J (m->nv[d] each) */
  int ncolors;
  int64_t *color_ptr;       /* ncolors+1 offsets into color_verts: the non-empty colours (hpmg_sem_colour_buckets) */
  int64_t *color_verts;     /* vertex indices J0 + nv0 (J1 + nv1 J2), colour by colour */
  int nthreads;             /* threads the scratch is sized for */
  size_t tsize;             /* doubles of scratch per thread */
  double *work;             /* nthreads * tsize: f, u, star scratch */
  size_t ssize;             /* star-local vector length (hpmg_sem_star.size) */
  /* dense star inverses (small stars, few distinct ones; see hpmg_sem_star_dense_max): */
  double *Z;                /* per class c = cls[0][J0] + ncls[0] (cls[1][J1] + ncls[1] cls[2][J2]):
                             * the star's inverse transposed, row j = Hhat^{-1} e_j, zld doubles a
                             * row, ssize rows; NULL: Algorithm 1 for every star */
  size_t zld;               /* ssize rounded up to a multiple of 32 (whole register blocks) */
  int32_t *cls[3];          /* class of vertex position J in direction d (blocks built from the
                             * same widths, to 1e-12, and sides are the same to rounding) */
  int ncls[3];
  int lanes;                /* 3D stars of p in [4, lanes p max] without dense inverses (Z NULL): solved
                             * lanes at a time (hpmg_sem_star_lanes, the star kernels' `lanes`
                             * when applied); 0: one by one */
  int32_t *idx;             /* 2D: ssize per vertex: the star's skeleton indices, coded for the
                             * scatter (hpmg_sem_star_indices; -1 absent, a copy on a lower
                             * face that the scatter skips as -2 - index); 32 bits, so the
                             * smoother takes skeletons of at most INT32_MAX - 2 nodes.
                             * 3D: 9 n per vertex (n = 2p - 1): per face k and row r of the
                             * star layout, the skeleton index where its m = p - 1 points of
                             * the lower cell start (contiguous: a row of an element face or
                             * an edge), the index of its point on the plane (an edge point
                             * or the vertex) and where its m points of the upper cell start;
                             * -1 where absent (beyond a non-periodic boundary) */
} hpmg_sem_smoother;

/* Stars of at most this many star-local values (hpmg_sem_star.size: 3D
 * p <= 3, 2D p <= 20 by default) are applied as dense matrices, one per
 * distinct star (one per class combination of the three directions), when
 * these take at most HPMG_SEM_STAR_DENSE_BYTES: a matrix-vector product of
 * ssize^2 multiply-adds costs less than Algorithm 1's setup of a small star
 * (docs/sem.md, "The star smoother over a mesh"). The same result to
 * rounding. hpmg_sem_star_set_dense_max(0) turns it off (tests); it returns
 * the previous value. */
#define HPMG_SEM_STAR_DENSE_MAX_DEFAULT 80
#define HPMG_SEM_STAR_DENSE_BYTES (8.0 * 1024 * 1024)
int hpmg_sem_star_set_dense_max(int size);

/* 3D stars of degree 4 <= p <= this (Algorithm 1, no dense inverses) are
 * solved several at once, one per lane of the kernels' vectors
 * (hpmg_sem_star_lanes; docs/sem.md, "The star smoother over a mesh"): the
 * same result to rounding. hpmg_sem_star_set_lanes_pmax(0) solves them one by
 * one (tests); it returns the previous value and applies to smoothers
 * created after it. */
#define HPMG_SEM_STAR_LANES_PMAX_DEFAULT 6
int hpmg_sem_star_set_lanes_pmax(int p);

/* Blocks, colours, star index lists and scratch for mesh m (which must
 * outlive the smoother). HPMG_ERR_NUMERIC if a 1D eigenproblem fails,
 * HPMG_ERR_ARG for a skeleton beyond the 32-bit index lists; nothing is kept
 * on failure. */
hpmg_error hpmg_sem_smoother_create(const hpmg_sem_mesh *m, hpmg_sem_smoother *s);
void hpmg_sem_smoother_destroy(hpmg_sem_smoother *s);
/* Bytes the smoother holds (blocks, colours, scratch). */
double hpmg_sem_smoother_bytes(const hpmg_sem_smoother *s);

/* z = sum_v R_v^T W_v Hhat_v^{-1} R_v r (skeleton vectors, ns values; r and z
 * must not overlap); z is 0 at Dirichlet nodes. */
void hpmg_sem_smoother_apply(const hpmg_sem_smoother *s, const double *r, double *z);
/* The same, and x += z, in one parallel region (a smoothing step of the
 * p-multigrid); x must not overlap r or z. */
void hpmg_sem_smoother_update(const hpmg_sem_smoother *s, const double *r, double *z, double *x);

/* The skeleton indices of vertex v's star in the star-local layout
 * (hpmg_sem_star.size entries): -1 where the point lies beyond a
 * non-periodic boundary. */
void hpmg_sem_star_indices(const hpmg_sem_mesh *m, int64_t v, int64_t *idx);

#endif
