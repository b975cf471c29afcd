/* The p-multigrid of paper 001 (Sec. 4.1; docs/sem.md, "p-multigrid") on
 * the condensed system, as levels of the solver core (src/mg/mg.h: the
 * V-cycle is hpmg_mg_vcycle, the solvers hpmg_mg_stationary and hpmg_pcg):
 *
 *  - degrees p_l = 2 * 2^l, and p_L = p: 2, then 4 below p, then 8, 16, ...
 *    up to p / 2, then p (p = 16: 2 4 8 16; p = 12: 2 4 12; p = 24: 2 4 8 24;
 *    p = 6: 2 4 6; p = 2: one level, the coarse solve alone), so that from
 *    p = 8 on the finest level at least halves the degree; each level a mesh
 *    of the same elements at degree p_l (sem_mesh.h);
 *  - prolongation J_l (level l-1 to l): the embedded GLL-to-GLL
 *    interpolation of each element's polynomial, restricted to the skeleton.
 *    A face's trace depends only on the face's own nodes, so the element
 *    interiors are not needed; per element (2D), the boundary values are
 *    embedded in the element's nodal array (interior 0), interpolated by the
 *    tensor product of the 1D matrix, and read back on the boundary; in 3D
 *    the same as a 2D transform of each face (each fine node from the lowest
 *    face holding it), in batches of elements (sem_kernels.h); the direct
 *    stiffness sum of the elements is divided by the multiplicity
 *    (J = D^{-1} sum_e Q_e^T I_e Q_e^c); Dirichlet nodes masked;
 *  - restriction: J_l^T exactly (multiplicity division first, then the
 *    transposed element interpolation and the coarse direct stiffness sum);
 *  - smoothing: the star smoother (sem_smoother.h), x += S (b - A x), nu
 *    sweeps before and after (paper: nu = 1); kvMG: nu_l = nu 2^{L-l};
 *  - coarse solve at p_0 = 2, one of the following (HPMG_SEM_COARSE_AUTO,
 *    the default, takes FDM while its operations per solve and its setup's
 *    are at most HPMG_SEM_FDM_MAX_FLOPS_PER_ELEMENT and
 *    HPMG_SEM_FDM_MAX_SETUP_FLOPS_PER_ELEMENT per element, else HMG):
 *  - HPMG_SEM_COARSE_FDM: exact, by fast diagonalization of the full p = 2
 *    system (sem_fdm.h): O(N^{4/3}) per solve for N lattice nodes, no
 *    iteration; coarse_rtol unused;
 *  - HPMG_SEM_COARSE_HMG: linear in the number of elements: flexible CG
 *    (hpmg_pcg) to a relative residual of coarse_rtol (1e-3)
 *    from zero, preconditioned by one two-level cycle hmg: a star smoothing
 *    sweep at p = 2 before and after (one for every kind), and between them
 *    the correction from the vertex values of the mesh (degree 1: the
 *    condensed system of degree 1 is the whole vertex system) with the Q_1
 *    operator of the Q_k module on the same box (src/disc/qk/qk_host.h: the
 *    elements as cells, the same widths, boundary conditions and lambda;
 *    its stiffness and exact mass are the p = 2 energy of a multilinear
 *    function, which 3-point GLL integrates exactly, where a degree-1
 *    spectral element would lump), solved by V-cycles of hpmg's multigrid on it
 *    (hpmg_qk_host_create_box: semi-coarsening, Chebyshev smoothing, dense
 *    coarsest solve) to a relative residual of q1_rtol. Prolongation from
 *    the vertices: the multilinear interpolation on every element, read at
 *    the p = 2 skeleton nodes (the GLL midpoints: an edge takes the mean of
 *    its two vertices, a face the mean of its four), Dirichlet nodes
 *    masked; restriction its transpose. Every piece is linear in the number
 *    of elements and the iterations do not grow with it. Where the vertex
 *    grid has no unknown (one element between Dirichlet ends) the coarse
 *    solve is the Jacobi-CG below;
 *  - HPMG_SEM_COARSE_CG (paper 001): Jacobi-preconditioned CG (hpmg_pcg,
 *    dCG's operator and diagonal) to coarse_rtol = 1e-12; its cost grows as
 *    n_e^{4/3} (iterations ~ n_e^{1/3}).
 *
 * The operator of every level is the condensed operator of that degree
 * (rediscretized, as in the paper), masked at Dirichlet nodes. */
#ifndef HPMG_SEM_PMG_H
#define HPMG_SEM_PMG_H

#include "disc/sem/sem_fdm.h"
#include "disc/sem/sem_smoother.h"
#include "grid/grid.h"
#include "mg/mg.h"

typedef enum {
  HPMG_SEM_SOLVE_MG = 0, /* V-cycle iteration, nu = 1 (paper 001, Algorithm 4) */
  HPMG_SEM_SOLVE_KMG,    /* flexible CG, one V-cycle with nu = 1 per iteration (Algorithm 5) */
  HPMG_SEM_SOLVE_KVMG    /* the same with nu_l = 2^{L-l} */
} hpmg_sem_mg_kind;

typedef enum {
  HPMG_SEM_COARSE_HMG = 0, /* the degree-1 level solved by the Q_1 geometric multigrid */
  HPMG_SEM_COARSE_CG,      /* Jacobi-CG on the p = 2 level (paper 001) */
  HPMG_SEM_COARSE_FDM,     /* exact: fast diagonalization of the full p = 2 system */
  HPMG_SEM_COARSE_AUTO     /* FDM where it is the cheaper (see above), else HMG (the default) */
} hpmg_sem_coarse_kind;

/* AUTO takes FDM while its operations per solve (hpmg_sem_fdm_flops, 4 N
 * sum n_d: 192 E per element on E^3 elements, Dirichlet) are at most this
 * many per element, about E = 100. Measured per element and coarse solve
 * (bench/sem_coarse_bench 4 8,16,32 kvmg, one Zen 4 core): FDM 0.23, 0.29,
 * 0.53 us at E = 8, 16, 32 (growing as E), the h-multigrid 3.3-3.6 us at
 * every E: the two meet near E = 200 */
#define HPMG_SEM_FDM_MAX_FLOPS_PER_ELEMENT 19200.0
/* ... and while its setup (hpmg_sem_fdm_setup_flops, 10 n_d^3 per
 * direction: 240 per element on E^3 elements, but 80 nz^2 on a column of
 * 1 x 1 x nz) is at most this many per element, ten h-multigrid coarse
 * solves' worth: a 1 x 1 x 1100 column took 10 s in its 2199 x 2199
 * eigenproblem */
#define HPMG_SEM_FDM_MAX_SETUP_FLOPS_PER_ELEMENT 192000.0

/* default relative residuals of the coarse solve at p = 2 (coarse_rtol) and
 * of the degree-1 multigrid inside it (q1_rtol) */
#define HPMG_SEM_COARSE_RTOL_HMG 1e-3
#define HPMG_SEM_COARSE_RTOL_CG 1e-12
#define HPMG_SEM_COARSE_RTOL_CG_FLEX 1e-3 /* the Jacobi-CG under kMG, kvMG */
#define HPMG_SEM_Q1_RTOL 1e-1
/* at most this many iterations (h-MG-preconditioned CG) or V-cycles (degree 1) per coarse solve */
#define HPMG_SEM_COARSE_MAX_ITS 100

#define HPMG_SEM_PMG_MAX_LEVELS 8

typedef struct {
  hpmg_sem_mg_kind kind;
  int nlevels;
  int deg[HPMG_SEM_PMG_MAX_LEVELS];
  hpmg_sem_mesh mesh[HPMG_SEM_PMG_MAX_LEVELS]; /* coarser levels' meshes (owned); the finest is fine */
  const hpmg_sem_mesh *m[HPMG_SEM_PMG_MAX_LEVELS];
  hpmg_mg mg;         /* levels p_0, ..., p_L */
  hpmg_sem_coarse_kind coarse; /* as resolved (never AUTO) */
  hpmg_sem_fdm fdm;   /* coarse == FDM */
  int hlev;           /* 1: the coarse solve is preconditioned by hmg (HMG with a vertex unknown) */
  hpmg_mg hmg;        /* hlev: lv[0] the degree-1 level, lv[1] p = 2 (the context of mg.lv[0]) */
  hpmg_grid q1;       /* the degree-1 level's grid (xn: the fine mesh's coordinates) */
  hpmg_mg qmg;        /* its geometric multigrid (the Q_1 box levels) */
  hpmg_vec qw[2];     /* its stationary iteration's work vectors */
  hpmg_vec w[4], vb;  /* the outer iteration's work vectors and right-hand side (finest level; kept
                         between solves, so that a solve faults in no new pages) */
  int q1_singular;
  double coarse_rtol; /* relative residual of every coarse solve at p = 2 (may be changed after create) */
  double q1_rtol;     /* relative residual of every degree-1 solve (may be changed after create) */
  int coarse_its;     /* CG iterations of all coarse solves since the last solve began */
  int coarse_solves;  /* coarse solves since the last solve began */
  int q1_cycles;      /* V-cycles of all degree-1 solves since the last solve began */
} hpmg_sem_pmg;

/* Degrees of the levels for finest degree p (p_0 = 2 first); returns the count. */
int hpmg_sem_pmg_degrees(int p, int *deg);

/* The hierarchy below the finest mesh `fine` (degree >= 2; not owned, must
 * outlive it); box: the geometry fine was made from; pre, post: sweeps per
 * level (multiplied by 2^{L-l} on level l for kvMG), 0..64, not both 0;
 * coarse: the coarse problem's solver (AUTO resolved here; coarse_rtol set
 * to its default). */
hpmg_error hpmg_sem_pmg_create(const hpmg_box *box, const hpmg_sem_mesh *fine, hpmg_sem_mg_kind kind, int pre,
                               int post, hpmg_sem_coarse_kind coarse, hpmg_sem_pmg *pm);
void hpmg_sem_pmg_destroy(hpmg_sem_pmg *pm);
double hpmg_sem_pmg_bytes(const hpmg_sem_pmg *pm);

/* Solve the masked condensed system of the finest mesh, A x = rhs, from x
 * (x0_zero honoured) to ||r|| <= prm->rtol ||r0||: MG by hpmg_mg_stationary,
 * kMG and kvMG by flexible hpmg_pcg with one V-cycle as preconditioner;
 * singular systems (no Dirichlet face, lambda = 0) projected as in dCG.
 * prm->project is set here. */
hpmg_error hpmg_sem_pmg_solve(hpmg_sem_pmg *pm, const double *rhs, double *x, hpmg_krylov_params *prm,
                              hpmg_krylov_info *info);

/* y = J x: the prolongation from level l-1 to level l (skeleton vectors);
 * l = 0 (hlev only): from the degree-1 level (pm->q1's unknowns) to p_0. */
void hpmg_sem_pmg_prolong(const hpmg_sem_pmg *pm, int l, const double *xc, double *y);
/* yc = J^T x: the restriction from level l to level l-1 (l = 0: to the degree-1 level). */
void hpmg_sem_pmg_restrict(const hpmg_sem_pmg *pm, int l, const double *x, double *yc);

/* The degree-1 level's solve on its own vectors (hmg.lv[0].b -> .x):
 * V-cycles of the Q_1 multigrid from zero until the residual is at most
 * q1_rtol times ||b|| (b projected to mean zero first when singular).
 * info: the cycles and the residuals. hlev only. */
hpmg_error hpmg_sem_pmg_coarse_hmg(hpmg_sem_pmg *pm, hpmg_krylov_info *info);

#endif
