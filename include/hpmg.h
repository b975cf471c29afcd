/* hpmg: high-performance multigrid for elliptic PDEs on Cartesian meshes.
 *
 * Public C API. Usage in five calls:
 *
 *   hpmg_problem_options po; hpmg_problem_options_default(&po); po.dim = 3; po.degree = 4;
 *   hpmg_problem prob;  hpmg_problem_create(&po, &prob);
 *   hpmg_solver_options so; hpmg_solver_options_default(&so);
 *   hpmg_solver solver; hpmg_solver_create(prob, &so, &solver);
 *   hpmg_solver_solve(solver, NULL, x);            // NULL: the built-in right-hand side
 *   hpmg_solver_destroy(&solver); hpmg_problem_destroy(&prob);
 *
 * Every function that can fail returns an hpmg_error; hpmg_last_error() then
 * holds a message saying what was wrong (per thread).
 *
 * Unknowns: the solution vector holds the values at the free (interior) nodes
 * of the continuous Q_k space, numbered lexicographically with x fastest:
 * index = i0 + n0*(i1 + n1*i2), n_d = degree*cells_d - 1 (boundary nodes carry
 * the homogeneous Dirichlet value 0 and are eliminated). Counts are 64-bit.
 * A Q_k problem on a general box (cells, bc or spacing set; docs/bc.md) has
 * the nodes not on a Dirichlet face as unknowns (a periodic direction keeps
 * k*cells of its k*cells+1 nodes), counts per direction from hpmg_problem_grid.
 * A finite-difference problem (disc = HPMG_DISC_FD) numbers its interior grid
 * points the same way, n_d = 2^refine - 1: the nodes of Q1 on 2^refine cells;
 * on a general box (below) its unknowns, n_d = hpmg_problem_grid's counts.
 */
#ifndef HPMG_H
#define HPMG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HPMG_VERSION_STRING "0.1.0"

typedef enum {
  HPMG_SUCCESS = 0,
  HPMG_ERR_ARG = 1,           /* invalid argument or option combination */
  HPMG_ERR_MEMORY = 2,        /* allocation failed or the problem does not fit */
  HPMG_ERR_NOT_CONVERGED = 3, /* iteration limit reached or divergence */
  HPMG_ERR_BACKEND = 4,       /* requested backend (e.g. CUDA) not available */
  HPMG_ERR_IO = 5,            /* file could not be written or read */
  HPMG_ERR_NUMERIC = 6        /* NaN/Inf in data, or a factorization failed */
} hpmg_error;

const char *hpmg_last_error(void);
const char *hpmg_error_name(hpmg_error code);

/* ------------------------------------------------------------ CPU kernels */

/* The library holds every CPU kernel once per instruction set of its build
 * (x86-64: avx512, avx2, sse2, and native in a -march=native build; aarch64:
 * neon), each with its own SIMD width and register blocking, and runs the
 * best one this processor supports. The environment variable HPMG_ISA, or
 * hpmg_set_cpu_isa(), names another one ("auto": the best). */
const char *hpmg_cpu_isa(void);           /* the variant in use, e.g. "avx2" */
const char *hpmg_cpu_isa_level(void);     /* its instruction set ("native" builds: the one found) */
int hpmg_cpu_simd_bytes(void);            /* its SIMD vector width in bytes */
const char *hpmg_cpu_isa_available(void); /* variants this build has and this processor runs, best first */
/* Select a variant by name; HPMG_ERR_ARG for an unknown one or one this
 * processor cannot run. Call it before creating solvers, not during a solve. */
hpmg_error hpmg_set_cpu_isa(const char *name);

/* ---------------------------------------------------------------- problem */

/* SINE: f from the manufactured solution prod sin(pi x_d / box_d), b = load vector of f.
 * ONE: f = 1, b = load vector of f (b_i = integral of phi_i).
 * VECTOR_ONE: b_i = 1 for every unknown, the algebraic right-hand side of paper 000's
 * Tables 1-3 (the authors' code sets the vector to 1; docs/patch.md). */
/* WAVES (Q_k on a general box and spectral elements; not FD): the manufactured
 * solution of paper 001, eq. 27, a product of five waves with k = 5, meant for the
 * box (0, 2 pi)^d (docs/bc.md); boundary data from it. A Q_k problem with WAVES is
 * a general box (cells from coarse/refine unless cells are set). */
typedef enum { HPMG_RHS_SINE = 0, HPMG_RHS_ONE = 1, HPMG_RHS_VECTOR_ONE = 2, HPMG_RHS_WAVES = 3 } hpmg_rhs_kind;

/* Discretization. FE: continuous Q_k finite elements (the default).
 * FD: -Laplace u = f on the unit box with the second-order 5-point (2D) or
 * 7-point (3D) stencil on 2^refine intervals per direction (paper 002,
 * docs/fd.md): A = h^-2 times the stencil, b_i = f(x_i) at the interior grid
 * points. FD problems read dim and refine (1..15 in 2D, 1..10 in 3D) and
 * ignore degree and coarse. With any of cells, box, lambda, bc, spacing or
 * fd_layout beyond the defaults an FD problem is a general box (docs/bc.md):
 * -Laplace u + lambda u = f with the operator of src/grid/box.h, unknowns
 * at the vertices not on Dirichlet faces or at the cell centres, b = f at the
 * unknowns (the boundary data come from bc[]), rhs SINE (a manufactured
 * solution matching the BCs, which also gives the boundary data) or ONE;
 * solved on the CPU by CG, the V-cycle or FMG, or by the transform +
 * tridiagonal direct solver (HPMG_SOLVER_FFT, at most one non-uniform
 * direction, CPU or CUDA); double precision. */
/* P1: continuous piecewise-linear finite elements on a tetrahedral (triangular
 * in 2D) mesh, -div(sigma grad u) + lambda u = f with boundary conditions per
 * physical group (paper 003, docs/p1.md). P1 problems read mesh, lambda, rhs,
 * sigma/sigma_cells, p1_bc and project_rhs (and dim for the built-in meshes);
 * the unknowns are all mesh nodes in the solver's numbering (renumbered for
 * locality at creation), Dirichlet nodes holding their boundary value. A b
 * given to hpmg_solver_solve is the load vector (phi_i, f)
 * (hpmg_problem_load_vector); the solver adds the boundary terms and sets the
 * Dirichlet rows. hpmg_problem_error compares with the manufactured solution
 * of HPMG_RHS_SINE (docs/p1.md); solver: Jacobi-preconditioned CG (AUTO, CG). */
/* SEM: continuous spectral elements of degree 2..32 (GLL nodal basis and
 * quadrature, diagonal mass) on the box's Cartesian mesh of cells[d] cuboid
 * elements per direction (spacing: stretched widths), every bc kind (a
 * periodic direction needs 3 elements or more), -Laplace u + lambda u = f,
 * solved by static condensation: dCG, Jacobi-preconditioned CG on the
 * condensed (element-skeleton) system, then interior recovery (paper 001,
 * docs/sem.md). The unknowns are the values at all GLL nodes of the mesh
 * (hpmg_problem_grid: cells[d] degree + 1 per direction, cells[d] degree in a
 * periodic one), x fastest; Dirichlet nodes hold their boundary value. A b
 * given to hpmg_solver_solve holds f at these nodes (hpmg_problem_load_vector
 * evaluates f there); boundary data come from bc[] (value or fn). Built-in
 * (b = NULL): rhs SINE, the manufactured solution of the finite-difference
 * box (docs/bc.md), WAVES, paper 001's eq. 27, both with their boundary data
 * (bc value/fn unset); ONE, f = 1 with the data of bc[]. The solve starts
 * from zero (x is not read). hpmg_problem_write_vtu writes one Lagrange
 * cell of degree p per element. Solvers (paper 001's names): AUTO or CG
 * with smoother AUTO/JACOBI (dCG); VCYCLE (MG: the p-multigrid's V-cycle
 * iteration with the star smoother); CG with smoother PATCH (kMG: flexible
 * CG, one V-cycle per iteration), plus sweeps_doubling (kvMG). */
typedef enum { HPMG_DISC_FE = 0, HPMG_DISC_FD = 1, HPMG_DISC_P1 = 2, HPMG_DISC_SEM = 3 } hpmg_disc;
#define HPMG_SEM_MAX_API_DEGREE 32
#define HPMG_FD_MAX_REFINE_2D 15
#define HPMG_FD_MAX_REFINE_3D 10

/* Boundary condition of one face of the box. Faces are numbered
 * 0 = xmin, 1 = xmax, 2 = ymin, 3 = ymax, 4 = zmin, 5 = zmax.
 * DIRICHLET: u = g on the face; NEUMANN: du/dn = g, n the outward normal;
 * PERIODIC: both faces of a direction (one periodic face alone is refused).
 * g is `fn` if set, else `values` if set (Dirichlet only: one value per
 * boundary node of the face, the face's nodes numbered lexicographically in
 * the two remaining directions, lower index fastest, including the face's
 * edges and corners; read at every solve, so it must outlive the problem),
 * else the constant `value`. With the built-in right-hand side
 * HPMG_RHS_SINE (b = NULL), g comes from the manufactured solution
 * (docs/bc.md) and value/fn/values must be left unset. Finite differences
 * and Q_k (disc FE, CPU; docs/bc.md) take every kind, with cells and
 * spacing; a Q_k values array has one value per face node (k*cells + 1 per
 * direction). For Q_k, b given to hpmg_solver_solve is the load vector of f
 * (hpmg_problem_load_vector); the solver adds the boundary data. */
typedef enum { HPMG_BC_DIRICHLET = 0, HPMG_BC_NEUMANN = 1, HPMG_BC_PERIODIC = 2 } hpmg_bc_kind;
typedef double (*hpmg_function)(const double x[3], void *user);

/* P1 boundary conditions by physical group of boundary facets (the group's
 * name, or its tag as a decimal string): DIRICHLET u = g (eliminated
 * symmetrically), NEUMANN sigma du/dn = g (natural; facets without a
 * condition get g = 0), ROBIN alpha u + sigma du/dn = g. g is fn(x) if set,
 * else value; with the built-in right-hand side HPMG_RHS_SINE, g comes from
 * the manufactured solution (docs/p1.md) and value/fn must be left unset. */
typedef enum { HPMG_P1_BC_DIRICHLET = 0, HPMG_P1_BC_NEUMANN = 1, HPMG_P1_BC_ROBIN = 2 } hpmg_p1_bc_kind;
typedef struct {
  const char *group;
  hpmg_p1_bc_kind kind;
  double value;       /* g */
  double robin_alpha; /* alpha >= 0 (ROBIN) */
  hpmg_function fn;   /* g(x), or NULL */
  void *user;
} hpmg_p1_bc;
/* sigma of the cells of one region (a physical group of cells: name or
 * decimal tag): a scalar value > 0, or a symmetric positive definite tensor
 * (3D: xx yy zz xy xz yz; 2D: xx yy xy). */
typedef struct {
  const char *region;
  double value;
  const double *tensor; /* NULL: the scalar value */
} hpmg_p1_sigma;
typedef struct {
  hpmg_bc_kind kind;      /* default DIRICHLET */
  double value;           /* constant Dirichlet value or Neumann flux (default 0) */
  hpmg_function fn;       /* g(x) at boundary points, or NULL */
  void *user;             /* passed to fn */
  const double *values;   /* Dirichlet: values at the face's nodes, or NULL */
} hpmg_bc;

/* Node spacing of one direction of the box [0, box[d]]:
 * UNIFORM; GEOMETRIC: cell widths grow by the factor `param` > 0 from the
 * min face to the max face (param < 1: clustering at the max face);
 * TANH: x_i = L/2 (1 + tanh(param (2i/n - 1)) / tanh(param)), clustering
 * towards both faces, param > 0; NODES: the caller's cells+1 increasing
 * coordinates in `nodes`, nodes[0] = 0 and nodes[cells] = box[d]. */
typedef enum { HPMG_SPACING_UNIFORM = 0, HPMG_SPACING_GEOMETRIC, HPMG_SPACING_TANH,
               HPMG_SPACING_NODES } hpmg_spacing_kind;
typedef struct {
  hpmg_spacing_kind kind; /* default UNIFORM */
  double param;           /* alpha (geometric) or beta (tanh) */
  const double *nodes;    /* NODES: cells+1 coordinates (copied at problem creation) */
} hpmg_spacing;

/* Where finite-difference unknowns live: at the grid's vertices, or at cell
 * centres (the pressure of a staggered-grid flow code). */
typedef enum { HPMG_FD_VERTEX = 0, HPMG_FD_CELL = 1 } hpmg_fd_layout;

typedef struct {
  int dim;          /* 2 or 3 (default 3) */
  int degree;       /* polynomial degree k: 1..10 in 2D, 1..8 in 3D (default 4) */
  int coarse;       /* cells per direction of the coarse mesh (default 1) */
  int refine;       /* uniform refinements of the coarse mesh (default 5 in 3D, 8 in 2D) */
  double box[3];    /* domain [0,box[0]] x [0,box[1]] (x [0,box[2]]), default unit */
  double lambda;    /* -Laplace u + lambda u = f, lambda >= 0 (default 0) */
  hpmg_rhs_kind rhs;/* built-in right-hand side (default: manufactured sine) */
  hpmg_disc disc;   /* discretization (default FE) */
  /* Cells per direction; 0 (default): coarse * 2^refine (FD: 2^refine). When
   * set, coarse and refine are not read. */
  int64_t cells[3];
  hpmg_bc bc[6];            /* per face (default homogeneous Dirichlet) */
  hpmg_spacing spacing[3];  /* per direction (default uniform) */
  hpmg_fd_layout fd_layout; /* FD problems (default vertex) */
  /* Singular problems (no Dirichlet face and lambda = 0): 1 (default) projects
   * the right-hand side onto the range (its compatibility defect is reported
   * in hpmg_stats.compat_defect); 0 refuses a right-hand side whose defect
   * exceeds round-off. */
  int project_rhs;
  /* P1 problems (disc = HPMG_DISC_P1): */
  const char *mesh;               /* mesh file (Gmsh .msh, TetGen), or "regular:L" / "irregular:L" (built-in) */
  const hpmg_p1_sigma *sigma;     /* per region (default: sigma = 1 everywhere) */
  int num_sigma;
  const double *sigma_cells;      /* or per cell, in the mesh's cell order: sigma_cell_comps values each */
  int sigma_cell_comps;           /* 1 (scalar), 6 (3D tensor) or 3 (2D tensor) */
  const hpmg_p1_bc *p1_bc;        /* boundary conditions by group (default: zero Neumann everywhere) */
  int num_p1_bc;
} hpmg_problem_options;

typedef struct hpmg_problem_s *hpmg_problem;

void hpmg_problem_options_default(hpmg_problem_options *opt);
/* Validates the options (range of every field, index overflow, memory) before
 * allocating anything. */
hpmg_error hpmg_problem_create(const hpmg_problem_options *opt, hpmg_problem *prob);
void hpmg_problem_destroy(hpmg_problem *prob);
int64_t hpmg_problem_num_dofs(hpmg_problem prob);
/* Free nodes per direction (n[2] = 1 in 2D). */
void hpmg_problem_grid(hpmg_problem prob, int64_t n[3]);
/* Load vector b_i = integral of f phi_i for a user function f, by (k+1)-point
 * Gauss quadrature on every cell (FD: b_i = f(x_i) at the grid points). b has
 * hpmg_problem_num_dofs entries. */
hpmg_error hpmg_problem_load_vector(hpmg_problem prob, hpmg_function f, void *user, double *b);
/* L2 error ((k+2)-point Gauss) and max nodal error of x against the exact
 * solution prod sin(pi x_i / L_i) (meaningful for the sine right-hand side).
 * FD: the discrete L2 error sqrt(h^d sum e_i^2) and the max error over the grid. */
hpmg_error hpmg_problem_error(hpmg_problem prob, const double *x, double *l2, double *maxerr);
/* Write x as a VTK XML unstructured grid with Lagrange cells (types 70/72;
 * FD: Q1 cells on the grid). A Q_k problem on a general box writes every
 * lattice node at the box's node coordinates (a periodic direction's last
 * plane repeated), the Dirichlet nodes with the boundary data of the
 * problem's last solve (without b: the built-in problem's; with b: bc[]'s).
 * A finite-difference box writes Q1 cells: vertex layout, its nodes (the
 * Dirichlet ones with their data); cell layout, the cell centres and points
 * on the non-periodic faces (Dirichlet data, or at a Neumann face the nearest
 * centre's value plus h/2 times the flux), docs/bc.md. */
hpmg_error hpmg_problem_write_vtu(hpmg_problem prob, const double *x, const char *path);

/* ----------------------------------------------------------------- solver */

/* HPMG_SMOOTHER_AUTO (the default) selects the fastest smoother measured for
 * the dimension, degree and device: see hpmg_default_smoother below and
 * docs/performance.md. On a Q_k box with a stretched direction (CPU) it is
 * the vertex patch (hpmg_solver_options_resolve; docs/bc.md). */
/* FD problems: JACOBI (damped by jacobi_omega), RBGS (red-black Gauss-Seidel)
 * or MCGS (multicolor Gauss-Seidel, 4 colors in 2D, 8 in 3D, post-smoothing in
 * reverse color order; what AUTO stands for there); RBGS and MCGS are for FD
 * problems only, CHEBYSHEV, GS, SGS and PATCH for Q_k problems only. */
typedef enum { HPMG_SMOOTHER_CHEBYSHEV = 0, HPMG_SMOOTHER_JACOBI, HPMG_SMOOTHER_GS,
               HPMG_SMOOTHER_SGS, HPMG_SMOOTHER_PATCH, HPMG_SMOOTHER_AUTO,
               HPMG_SMOOTHER_RBGS, HPMG_SMOOTHER_MCGS } hpmg_smoother_kind;
/* AUTO (the default): the fastest to solution measured, see hpmg_default_solver.
 * CG: conjugate gradients preconditioned by one V-cycle (symmetric cycles only).
 * VCYCLE: V-cycle iteration x += V(b - Ax) from the initial guess.
 * GMRES: restarted GMRES(restart), right-preconditioned by one V-cycle (any cycle).
 * FMG: full multigrid start (the initial guess is discarded), then V-cycles
 *      until ||b - Ax|| <= tol ||b||; iterations = V-cycles after the start,
 *      at least one (paper 000, Algorithm 2).
 * FFT: the sine-transform direct solver (FFTW on the CPU, cuFFT on the GPU);
 *      FD problems only.
 * FD problems: CG, VCYCLE (what AUTO stands for there), FMG or FFT, always from
 * a zero initial guess (x's entries on input are not read); their FMG is one
 * full-multigrid pass to the discretization error, with no stopping test
 * (tol does not apply; iterations = 1), except on a general box (docs/bc.md),
 * where FMG is followed by V-cycles to tol as for Q_k, and FFT is the
 * transform + tridiagonal direct solver. GMRES is for Q_k problems only. */
typedef enum { HPMG_SOLVER_CG = 0, HPMG_SOLVER_VCYCLE, HPMG_SOLVER_GMRES, HPMG_SOLVER_FMG,
               HPMG_SOLVER_AUTO, HPMG_SOLVER_FFT } hpmg_solver_kind;
/* Vertex-patch smoother: multiplicative (2^d colors, localized residuals) or
 * additive (one global residual per step, damped by patch_damping). */
typedef enum { HPMG_PATCH_MULTIPLICATIVE = 0, HPMG_PATCH_ADDITIVE } hpmg_patch_mode;
/* Local patch solver: fast diagonalization, or an explicit dense inverse
 * (reference; (2k-1)^d squared entries per level, refused above 3375 unknowns). */
typedef enum { HPMG_LOCAL_FDM = 0, HPMG_LOCAL_DENSE } hpmg_local_solver;
/* Order of the multiplicative patch sweep on the CPU (paper 004, Alg. 4.1):
 * patches sorted along a Z (Morton) curve, lexicographically, or by tiles of
 * 4^dim vertices (lexicographic inside a tile, tiles lexicographic), then cut
 * into batches of patch_batch patches; each batch runs its 2^dim colors in
 * sequence (a barrier between colors), the patches of one color in parallel.
 * With CG, post-smoothing runs batches and colors backwards (A-adjoint of the
 * pre-smoother, a symmetric cycle); with the other solvers forward again, as
 * paper 000's Algorithm 1. The result does not depend on the thread count. CPU only:
 * the GPU sweeps each color over the whole level (paper 000) and ignores
 * both options. */
typedef enum { HPMG_PATCH_ORDER_ZORDER = 0, HPMG_PATCH_ORDER_LEXICOGRAPHIC, HPMG_PATCH_ORDER_HIERARCHICAL } hpmg_patch_order;
/* GPU kernels of the multiplicative vertex-patch smoother (--patch-kernel;
 * ignored on the CPU): fused (localized residual + local solve in one kernel
 * per color), separate (residual kernel, then local-solve kernel, per color),
 * global (full residual r = b - A x, then local solves, per color). */
typedef enum { HPMG_PATCH_KERNEL_FUSED = 0, HPMG_PATCH_KERNEL_SEPARATE, HPMG_PATCH_KERNEL_GLOBAL } hpmg_patch_kernel;
/* Sweep order of point Gauss-Seidel (--smoother gs|sgs; CPU only):
 * LEXICOGRAPHIC over the unknowns (x fastest), or CELLWISE: deal.II's level
 * DoF numbering (cells in hierarchical order, coarse cells lexicographic and
 * children in z-order; each cell numbers its not yet numbered nodes vertices
 * first, then lines, faces, interior), the order behind paper 000's Table 3
 * (docs/patch.md). */
typedef enum { HPMG_GS_ORDER_LEXICOGRAPHIC = 0, HPMG_GS_ORDER_CELLWISE } hpmg_gs_order;
/* Coarse-grid correction of the V-cycle (--cycle):
 * STANDARD (the default): x += P e_c, paper 000's Algorithm 1.
 * ADD_RESIDUAL: x += P e_c + r, where r = b - A x is the level's residual after
 *   pre-smoothing: the cycle of paper 000's authors' code of the paper's time
 *   (its solver.cuh prolongates into the vector that still holds the residual
 *   and adds that vector to the solution), an extra undamped Richardson step on
 *   every level. It reproduces the paper's published 2D iteration counts
 *   (Table 1), which Algorithm 1 beats at k = 1, 2; in 3D the step is O(h) and
 *   changes nothing (docs/patch.md). For reproducing published figures, not
 *   for use; not with CG (the step can make the preconditioner indefinite). */
typedef enum { HPMG_CYCLE_STANDARD = 0, HPMG_CYCLE_ADD_RESIDUAL } hpmg_cycle_kind;
/* FD problems: DOUBLE or FLOAT (MIXED is for Q_k problems only). */
typedef enum { HPMG_PREC_DOUBLE = 0, HPMG_PREC_FLOAT, HPMG_PREC_MIXED } hpmg_precision;
/* FMG's interpolation of a level's solution to the next finer level, FD
 * problems: cubic (fourth order) or the cycle's linear prolongation (paper 002). */
typedef enum { HPMG_FMG_INTERP_CUBIC = 0, HPMG_FMG_INTERP_LINEAR = 1 } hpmg_fmg_interp;
/* pre/post = HPMG_SWEEPS_AUTO (FD problems): the measured defaults, 1 and 1,
 * but FMG in 3D 2 and 2, and 2 and 1 with cubic interpolation and MCGS. */
#define HPMG_SWEEPS_AUTO (-1)
/* split = HPMG_SPLIT_AUTO: the level split that a cost model with constants
 * measured at setup finds fastest (docs/fd.md). */
#define HPMG_SPLIT_AUTO (-1)
/* Where the solve runs. CUDA: the whole solve on the GPU (CG, V-cycle, GMRES
 * or FMG; Chebyshev, Jacobi or vertex-patch (fdm) smoothing; double, float or
 * mixed precision; a general Q_k box: Chebyshev or Jacobi, AUTO = Chebyshev,
 * and with stretched cells solver AUTO = CG, docs/bc.md);
 * other combinations are refused with HPMG_ERR_BACKEND. */
typedef enum { HPMG_DEVICE_CPU = 0, HPMG_DEVICE_CUDA = 1 } hpmg_device;

typedef struct {
  hpmg_solver_kind solver;       /* default AUTO (see hpmg_default_solver) */
  hpmg_smoother_kind smoother;   /* default AUTO (see hpmg_default_smoother) */
  hpmg_patch_mode patch_mode;    /* default multiplicative */
  hpmg_local_solver local_solver;/* default fdm */
  double patch_damping;          /* additive patch damping, 0 = default 1/2^dim */
  hpmg_patch_order patch_order;  /* multiplicative sweep order (default zorder) */
  int64_t patch_batch;           /* patches per batch: 0 = auto (sized to the cache
                                    read at run time), -1 = the whole level */
  hpmg_patch_kernel patch_kernel;/* GPU patch kernel variant (default fused) */
  hpmg_gs_order gs_order;        /* Gauss-Seidel sweep order (default lexicographic) */
  int restart;                   /* GMRES restart length (default 30) */
  int cheby_degree;              /* default 5 */
  double cheby_range;            /* smoothing range lambda_max/lambda_min, default 15 */
  int cheby_eig_iters;           /* Lanczos/CG steps for lambda_max (default 12) */
  double jacobi_omega;           /* damping of point Jacobi (default 2/3) */
  int pre, post;                 /* smoothing sweeps (default 1 and 1) */
  hpmg_cycle_kind cycle;         /* coarse-grid correction (default standard) */
  double tol;                    /* relative residual reduction (default 1e-9) */
  int maxit;                     /* default 200; FMG on a finite-difference box
                                    also takes 0: the FMG pass alone */
  int threads;                   /* OpenMP threads, 0 = runtime default */
  hpmg_precision precision;      /* default double */
  hpmg_device device;            /* default CPU */
  int verbose;                   /* 1: print one line per iteration to stdout */
  int profile;                   /* 1: exact per-phase and per-level times on the GPU
                                    (synchronizes around every phase; the CPU always
                                    times and ignores it). Default 0 */
  /* Finite-difference problems only (Q_k problems refuse other values than the
   * defaults with HPMG_ERR_ARG): */
  double sor;                    /* over-relaxation weight of RBGS and MCGS in (0,2);
                                    0 (default): 1, but 1.3 for FMG in 3D with cubic
                                    interpolation and MCGS (docs/fd.md) */
  hpmg_fmg_interp fmg_interp;    /* FMG's interpolation (default cubic; on an FD box
                                    cubic Lagrange on the stretched nodes, docs/bc.md) */
  int split;                     /* device CUDA: the finest `split` levels on the GPU,
                                    the coarser ones on the CPU (0..refine), or
                                    HPMG_SPLIT_AUTO (default) */
  int fft_measure;               /* solver FFT on the CPU: plan with FFTW_MEASURE
                                    (slower setup, faster solve); default 0 */
  /* Spectral-element problems only (docs/sem.md): */
  int sweeps_doubling;           /* 1: the p-multigrid's pre and post sweeps times
                                    2^(L-l) on level l of L (paper 001's kvMG);
                                    default 0 */
} hpmg_solver_options;

/* Constants of the FD split model (seconds, bytes/s), measured at setup for
 * split = HPMG_SPLIT_AUTO on CUDA (measured = 1). */
typedef struct {
  int measured;
  double gpu_launch_s, gpu_bw, cpu_bw, cpu_barrier_s, link_latency_s, link_bw;
} hpmg_split_costs;

typedef struct {
  int64_t dofs;
  int levels;
  int iterations;
  int converged;
  double residual0, residual;   /* initial and final residual norms (2-norm; FD: of the
                                   h^2-scaled residual h^2 (b - Ax)) */
  double rate;                  /* average reduction per iteration */
  /* wall-clock seconds per phase; solve = time to solution (excludes setup) */
  double t_setup, t_operator, t_smoother, t_transfer, t_coarse, t_krylov, t_solve;
  int64_t operator_applications; /* finest-level equivalents are not normalized */
  /* per level of the V-cycle, index 0 = coarsest (CPU solves; GPU solves with
   * profile = 1, zeros otherwise):
   * unknowns, and seconds of smoothing, of the residual matvec, and of the
   * transfers from/to the level (restriction of its residual, prolongation
   * of the correction into it). The outer iteration's own matvecs on the
   * finest level are in t_operator only. */
#define HPMG_STATS_MAX_LEVELS 32
  int64_t level_dofs[HPMG_STATS_MAX_LEVELS];
  double t_level_smoother[HPMG_STATS_MAX_LEVELS], t_level_operator[HPMG_STATS_MAX_LEVELS],
      t_level_transfer[HPMG_STATS_MAX_LEVELS];
  /* estimated bytes of host and GPU memory of the solver (Q_k on CUDA: the GPU
   * part only, bytes_host 0) */
  double bytes_host, bytes_device;
  /* FD problems (zero for Q_k; per-level arrays and operator_applications are
   * not recorded for FD): seconds of residual norms, of host<->device copies
   * (with the wait for queued GPU work), of the sine transforms, of FFT
   * planning (in t_setup); levels on the GPU; the split model's constants. */
  double t_norm, t_comm, t_fft, t_plan;
  int split;
  hpmg_split_costs split_costs;
  /* singular problems (no Dirichlet condition, lambda = 0): what projecting
   * the right-hand side onto the range removed; FD on a general box: the
   * constant sum b / sum W (docs/bc.md); P1: ||b - P b|| / ||b|| (docs/p1.md);
   * 0 otherwise */
  double compat_defect;
  /* P1 problems: matrix nonzeros, cells, and the assembly's symbolic phase
   * (host, at the problem's creation) and numeric phase with the boundary
   * conditions (at the solver's creation: host time on the CPU, the GPU
   * kernels' time on CUDA); seconds, both within t_setup */
  int64_t nnz, cells;
  double t_symbolic, t_numeric;
  /* SEM problems: unknowns of the condensed (skeleton) system the Krylov
   * method iterates on (dofs: all GLL nodes) */
  int64_t dofs_condensed;
} hpmg_stats;

typedef struct hpmg_solver_s *hpmg_solver;

void hpmg_solver_options_default(hpmg_solver_options *opt);
/* The smoother HPMG_SMOOTHER_AUTO stands for: the fastest to solution measured
 * for the dimension, degree, solver and opt->device (docs/performance.md).
 * CPU: the vertex patch for 2D k >= 6, Chebyshev-Jacobi otherwise. GPU with
 * FMG (the default solver): the vertex patch (fused kernel) for 3D k = 2..8
 * and 2D k >= 2; with CG, GMRES or the V-cycle iteration: the patch for 3D
 * k = 3..8 and 2D k >= 2; Chebyshev-Jacobi otherwise. Always Chebyshev-Jacobi where the
 * patch smoother cannot serve the other options (CG with unequal pre/post
 * counts). */
hpmg_smoother_kind hpmg_default_smoother(int dim, int degree, const hpmg_solver_options *opt);
/* The solver HPMG_SOLVER_AUTO stands for: FMG, which was faster to the same
 * relative residual than CG + V-cycle in 13 of 14 CPU cases (2D k = 2..10, 3D
 * k = 2..8, ~1e6 unknowns; 3D k = 5 CG 8% faster) and on the H200 at paper
 * 000's Table 7 sizes (docs/performance.md). FMG discards the initial guess:
 * pick CG, GMRES or the V-cycle iteration explicitly to start from one.
 * (hpmg_solver_options_resolve has the problem: a Q_k box with stretched cells
 * on CUDA resolves AUTO to CG.) */
hpmg_solver_kind hpmg_default_solver(int dim, int degree, const hpmg_solver_options *opt);
/* Checks opt for prob and replaces every automatic value by the one a solver
 * would run (solver and smoother AUTO; FD: pre/post HPMG_SWEEPS_AUTO, sor 0;
 * split AUTO is measured at creation, see hpmg_stats.split). HPMG_ERR_ARG with
 * a message for an invalid option or combination. */
hpmg_error hpmg_solver_options_resolve(hpmg_problem prob, hpmg_solver_options *opt);
hpmg_error hpmg_solver_create(hpmg_problem prob, const hpmg_solver_options *opt,
                              hpmg_solver *solver);
void hpmg_solver_destroy(hpmg_solver *solver);
/* Solve A x = b. b == NULL selects the problem's built-in right-hand side.
 * x is the initial guess on entry (set it to zero if unsure) and the solution
 * on exit. Returns HPMG_ERR_NOT_CONVERGED (with x the last iterate) if the
 * tolerance was not reached within maxit. */
hpmg_error hpmg_solver_solve(hpmg_solver solver, const double *b, double *x);
/* Same as hpmg_solver_solve for a solver on HPMG_DEVICE_CUDA, with b and x in
 * GPU memory (cudaMalloc'ed, hpmg_problem_num_dofs doubles; b may be NULL):
 * nothing of the problem's size crosses the bus (a general Q_k box: a given b
 * goes to the host and back once, its boundary data added there). Q_k problems only. */
hpmg_error hpmg_solver_solve_device(hpmg_solver solver, const double *b_device, double *x_device);
void hpmg_solver_get_stats(hpmg_solver solver, hpmg_stats *stats);

/* Bytes hpmg would allocate for this problem and solver (without creating it):
 * host memory for the CPU, GPU memory for HPMG_DEVICE_CUDA. FD problems: the
 * solver's grid vectors and the caller's solution vector. */
hpmg_error hpmg_memory_estimate(const hpmg_problem_options *po, const hpmg_solver_options *so,
                                double *bytes);

#ifdef __cplusplus
}
#endif
#endif
