/* Finite differences on general boxes (docs/bc.md): the operator's identities
 * (symmetry; h^d times the unit-box stencil), convergence orders against the
 * manufactured solutions for every BC kind per face in 2D and 3D, vertex and
 * cell layouts, uniform, geometric and tanh grids, odd and prime cell counts;
 * singular problems (projection, refusal); iteration bounds on a stretched
 * channel grid; cyclic line relaxation along periodic directions; the direct
 * solver on the GPU through the same API. Modes: unit | order2d | order3d |
 * order3d_slow | singular | lines | direct | channel2d [BETA] | channel3d [BETA] | gpu */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "disc/fd/fd_box.h"
#include "disc/fd/fd_mg.h"
#include "hpmg.h"
#include "la/backend.h"

#define D HPMG_BC_DIRICHLET
#define N HPMG_BC_NEUMANN
#define P HPMG_BC_PERIODIC

typedef struct {
  const char *name;
  int dim;
  hpmg_bc_kind bc[6];
} bc_case;

static void set_bc(hpmg_problem_options *po, const hpmg_bc_kind bc[6]) {
  for (int f = 0; f < 6; f++) po->bc[f].kind = f < 2 * po->dim ? bc[f] : HPMG_BC_DIRICHLET;
}

/* solve the manufactured problem; W-weighted L2 error and iterations */
static int solve_case(const hpmg_problem_options *po, hpmg_solver_kind solver, hpmg_smoother_kind sm, double *l2,
                      int *iters) {
  hpmg_problem prob;
  if (hpmg_problem_create(po, &prob)) {
    printf("create: %s\n", hpmg_last_error());
    return 1;
  }
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.solver = solver;
  so.smoother = sm;
  so.tol = 1e-10;
  so.maxit = 300;
  hpmg_solver s;
  if (hpmg_solver_create(prob, &so, &s)) {
    printf("solver: %s\n", hpmg_last_error());
    hpmg_problem_destroy(&prob);
    return 1;
  }
  const int64_t n = hpmg_problem_num_dofs(prob);
  double *x = calloc((size_t)n, sizeof(double));
  hpmg_error e = hpmg_solver_solve(s, NULL, x);
  if (e) printf("solve: %s\n", hpmg_last_error());
  hpmg_stats st;
  hpmg_solver_get_stats(s, &st);
  *iters = st.iterations;
  double mx;
  if (!e) e = hpmg_problem_error(prob, x, l2, &mx);
  free(x);
  hpmg_solver_destroy(&s);
  hpmg_problem_destroy(&prob);
  return e != HPMG_SUCCESS;
}

/* spacing kinds of the order tests: uniform, tanh 1.5 in every direction, or
 * geometric with a total stretch (last/first width) of 8 at every refinement */
typedef enum { SP_UNIFORM, SP_TANH, SP_GEOM } sp_kind;

static void set_spacing(hpmg_problem_options *po, sp_kind sp) {
  for (int d = 0; d < po->dim; d++) {
    if (sp == SP_TANH) po->spacing[d] = (hpmg_spacing){HPMG_SPACING_TANH, 1.5, NULL};
    else if (sp == SP_GEOM)
      po->spacing[d] = (hpmg_spacing){HPMG_SPACING_GEOMETRIC, pow(8.0, 1.0 / (double)(po->cells[d] - 1)), NULL};
    else po->spacing[d] = (hpmg_spacing){HPMG_SPACING_UNIFORM, 0, NULL};
  }
}

/* observed orders over refinements of base cells c0 by 2, 4 */
static void order_case(const bc_case *bc, hpmg_fd_layout lay, sp_kind sp, const int64_t c0[3], int nref) {
  static const char *const spn[] = {"uniform", "tanh", "geometric"};
  double e[4];
  int it[4];
  for (int r = 0; r < nref; r++) {
    hpmg_problem_options po;
    hpmg_problem_options_default(&po);
    po.disc = HPMG_DISC_FD;
    po.dim = bc->dim;
    po.box[0] = 1.0;
    po.box[1] = 2.0;
    po.box[2] = 0.75;
    po.lambda = bc->dim == 2 ? 0.0 : 1.5;
    for (int d = 0; d < bc->dim; d++) po.cells[d] = c0[d] << r;
    set_bc(&po, bc->bc);
    po.fd_layout = lay;
    set_spacing(&po, sp);
    if (solve_case(&po, HPMG_SOLVER_CG, HPMG_SMOOTHER_AUTO, &e[r], &it[r])) {
      CHECK(0, "%s %s %s: solve failed", bc->name, lay ? "cell" : "vertex", spn[sp]);
      return;
    }
  }
  printf("%-22s %-6s %-9s errors", bc->name, lay ? "cell" : "vertex", spn[sp]);
  for (int r = 0; r < nref; r++) printf(" %.3e (%d it)", e[r], it[r]);
  printf("  orders");
  for (int r = 1; r < nref; r++) {
    const double ord = log2(e[r - 1] / e[r]);
    printf(" %.3f", ord);
    /* the last refinement must be in the asymptotic range */
    if (r == nref - 1)
      CHECK(ord >= 1.8 && ord <= 2.2, "%s %s %s: order %.3f", bc->name, lay ? "cell" : "vertex", spn[sp], ord);
  }
  printf("\n");
}

static const bc_case cases2d[] = {
    {"2D all Dirichlet", 2, {D, D, D, D}},
    {"2D Neumann walls y", 2, {D, D, N, N}},
    {"2D periodic x, D y", 2, {P, P, D, D}},
    {"2D D/N mixed faces", 2, {D, N, N, D}},
    {"2D pure Neumann", 2, {N, N, N, N}},
    {"2D fully periodic", 2, {P, P, P, P}},
    {"2D channel P x, N y", 2, {P, P, N, N}},
};
static const bc_case cases3d[] = {
    {"3D all Dirichlet", 3, {D, D, D, D, D, D}},
    {"3D channel", 3, {P, P, N, N, P, P}},
    {"3D pure Neumann", 3, {N, N, N, N, N, N}},
    {"3D fully periodic", 3, {P, P, P, P, P, P}},
    {"3D mixed per face", 3, {D, N, N, D, P, P}},
};

static int mode_order2d(void) {
  const int64_t c0[3] = {13, 16, 1};
  for (size_t i = 0; i < sizeof cases2d / sizeof *cases2d; i++)
    for (int lay = 0; lay < 2; lay++)
      for (int sp = 0; sp < 3; sp++) order_case(&cases2d[i], (hpmg_fd_layout)lay, (sp_kind)sp, c0, 3);
  return check_report();
}

static int mode_order3d(int slow) {
  const int64_t c0s[3] = {9, 6, 7}, c0f[3] = {37, 24, 29};
  for (size_t i = 0; i < sizeof cases3d / sizeof *cases3d; i++)
    for (int lay = 0; lay < 2; lay++)
      for (int sp = 0; sp < 3; sp++) {
        if (!slow && sp == 2) continue; /* geometric in 3D: the slow label */
        order_case(&cases3d[i], (hpmg_fd_layout)lay, (sp_kind)sp, slow ? c0f : c0s, slow ? 2 : 3);
      }
  return check_report();
}

/* symmetry on random vectors; uniform Dirichlet vertex = h^d times the unit-box operator */
static int mode_unit(void) {
  const bc_case *all[] = {&cases2d[1], &cases2d[3], &cases2d[4], &cases2d[5], &cases3d[1], &cases3d[4]};
  for (size_t c = 0; c < sizeof all / sizeof *all; c++)
    for (int lay = 0; lay < 2; lay++) {
      hpmg_problem_options po;
      hpmg_problem_options_default(&po);
      po.disc = HPMG_DISC_FD;
      po.dim = all[c]->dim;
      po.box[1] = 1.7;
      po.lambda = 0.3;
      po.cells[0] = 11;
      po.cells[1] = 8;
      po.cells[2] = po.dim == 3 ? 7 : 0;
      set_bc(&po, all[c]->bc);
      po.fd_layout = (hpmg_fd_layout)lay;
      po.spacing[0] = (hpmg_spacing){HPMG_SPACING_GEOMETRIC, 1.3, NULL};
      po.spacing[1] = (hpmg_spacing){HPMG_SPACING_TANH, 2.0, NULL};
      hpmg_box b;
      CHECK_OK(hpmg_box_init(&po, &b));
      fd_box_config cfg = {.solver = HPMG_SOLVER_CG, .tol = 1e-9, .maxit = 10, .pre = 1, .post = 1, .sor = 1, .line = -1,
                           .project_rhs = 1};
      fd_box_solver s;
      CHECK_OK(fd_box_solver_create(&b, po.lambda, &cfg, &s));
      const int64_t n = hpmg_box_unknowns(&b);
      double *u = malloc(sizeof(double) * (size_t)n * 4), *v = u + n, *Au = v + n, *Av = Au + n;
      for (int64_t i = 0; i < 2 * n; i++) u[i] = check_rand();
      fd_box_apply(s, u, Au);
      fd_box_apply(s, v, Av);
      double a = 0, bb = 0, sc = 0;
      for (int64_t i = 0; i < n; i++) {
        a += u[i] * Av[i];
        bb += v[i] * Au[i];
        sc += fabs(u[i] * Av[i]);
      }
      CHECK(fabs(a - bb) <= 1e-12 * sc, "%s %s: u.Av = %.17g, v.Au = %.17g", all[c]->name, lay ? "cell" : "vertex", a, bb);
      free(u);
      fd_box_solver_destroy(&s);
      hpmg_box_destroy(&b);
    }
  /* uniform unit box, homogeneous Dirichlet, vertex, 2^L cells given as cells[]:
   * the general operator is h^d times A = h^-2 stencil of fd_mg */
  for (int dim = 2; dim <= 3; dim++) {
    const int64_t nn = 16, m = nn - 1;
    hpmg_problem_options po;
    hpmg_problem_options_default(&po);
    po.disc = HPMG_DISC_FD;
    po.dim = dim;
    for (int d = 0; d < dim; d++) po.cells[d] = nn;
    hpmg_box b;
    CHECK_OK(hpmg_box_init(&po, &b));
    fd_box_config cfg = {.solver = HPMG_SOLVER_CG, .tol = 1e-9, .maxit = 10, .pre = 1, .post = 1, .sor = 1, .line = 0};
    fd_box_solver s;
    CHECK_OK(fd_box_solver_create(&b, 0.0, &cfg, &s));
    const int64_t n = hpmg_box_unknowns(&b), np = fd_points(dim, nn);
    double *u = calloc((size_t)n * 2, sizeof(double)), *Au = u + n;
    double *g = calloc((size_t)np * 2, sizeof(double)), *Ag = g + np;
    const int64_t s1 = nn + 1, s2 = s1 * s1, nz = dim == 3 ? m : 1, k0 = dim == 3;
    for (int64_t k = 0; k < nz; k++)
      for (int64_t j = 0; j < m; j++)
        for (int64_t i = 0; i < m; i++) {
          const double r = check_rand();
          u[(k * m + j) * m + i] = r;
          g[(k + k0) * s2 + (j + 1) * s1 + i + 1] = r;
        }
    fd_box_apply(s, u, Au);
    fd_ops_cpu(FD_DOUBLE)->apply(dim, nn, g, Ag);
    const double h = 1.0 / (double)nn, scale = pow(h, dim - 2);
    double maxd = 0;
    for (int64_t k = 0; k < nz; k++)
      for (int64_t j = 0; j < m; j++)
        for (int64_t i = 0; i < m; i++) {
          const double d = fabs(Au[(k * m + j) * m + i] - scale * Ag[(k + k0) * s2 + (j + 1) * s1 + i + 1]);
          if (d > maxd) maxd = d;
        }
    CHECK(maxd <= 1e-13 * scale * 2 * dim, "%dD: general operator vs h^d fd_mg operator differ by %.3g", dim, maxd);
    free(u);
    free(g);
    fd_box_solver_destroy(&s);
    hpmg_box_destroy(&b);
  }
  /* bad input, refused with HPMG_ERR_ARG */
  {
    hpmg_problem_options po;
    hpmg_problem_options_default(&po);
    po.disc = HPMG_DISC_FD;
    po.dim = 2;
    po.cells[0] = po.cells[1] = 8;
    hpmg_problem prob;
    po.bc[0].kind = HPMG_BC_PERIODIC;
    CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG, "periodic on one face accepted");
    po.bc[0].kind = HPMG_BC_DIRICHLET;
    po.bc[2].value = NAN;
    CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG, "NaN Dirichlet constant accepted");
    po.bc[2].value = 0;
    double nodes[9] = {0, 0.1, 0.2, 0.3, 0.3, 0.5, 0.6, 0.8, 1.0};
    po.spacing[0] = (hpmg_spacing){HPMG_SPACING_NODES, 0, nodes};
    CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG, "non-increasing nodes accepted");
    nodes[4] = 0.4;
    nodes[8] = 0.9;
    CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG, "nodes not ending at the box length accepted");
    nodes[8] = 1.0;
    CHECK(hpmg_problem_create(&po, &prob) == HPMG_SUCCESS, "valid nodes refused: %s", hpmg_last_error());
    if (!check_failures) hpmg_problem_destroy(&prob);
    po.spacing[0] = (hpmg_spacing){HPMG_SPACING_GEOMETRIC, 100.0, NULL};
    CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG, "vanishing cell (geometric 100 over 8 cells) accepted");
    po.spacing[0] = (hpmg_spacing){HPMG_SPACING_UNIFORM, 0, NULL};
    double vals[9] = {0, 0, 0, NAN, 0, 0, 0, 0, 0};
    po.bc[2].values = vals;
    CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG, "NaN in a values array accepted");
    po.bc[2].values = NULL;
    po.cells[0] = -3;
    CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG, "negative cells accepted");
    /* Q_k takes the box (test_qk_box), not the FD layout */
    po.cells[0] = 8;
    po.disc = HPMG_DISC_FE;
    po.fd_layout = HPMG_FD_CELL;
    CHECK(hpmg_problem_create(&po, &prob) == HPMG_ERR_ARG, "Q_k with the cell layout accepted");
  }
  /* the line smoother's per-thread scratch when a solve runs on more threads
   * than the solver was created with (omp_set_num_threads in between): the
   * same solution to rounding (CG's sums), no thread beyond the setup's
   * writing past its scratch (ASan) */
  {
    hpmg_problem_options po;
    hpmg_problem_options_default(&po);
    po.disc = HPMG_DISC_FD;
    po.dim = 2;
    po.cells[0] = po.cells[1] = 128; /* a colour's line sweep on the team (hpmg_par) */
    hpmg_box b;
    CHECK_OK(hpmg_box_init(&po, &b));
    fd_box_config cfg = {.solver = HPMG_SOLVER_CG, .tol = 1e-10, .maxit = 100, .pre = 1, .post = 1, .sor = 1, .line = 1,
                         .project_rhs = 1};
    const int nt = omp_get_max_threads();
    const int64_t n = hpmg_box_unknowns(&b);
    double *rhs = calloc((size_t)n * 3, sizeof(double)), *x1 = rhs + n, *x2 = x1 + n;
    for (int64_t i = 0; i < n; i++) rhs[i] = check_rand();
    fd_box_solver s;
    omp_set_num_threads(1);
    CHECK_OK(fd_box_solver_create(&b, 0.0, &cfg, &s));
    CHECK_OK(fd_box_solve(s, rhs, x1));
    omp_set_num_threads(nt + 3);
    CHECK_OK(fd_box_solve(s, rhs, x2));
    omp_set_num_threads(nt);
    double d = 0, xm = 0;
    for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(x1[i] - x2[i])), xm = fmax(xm, fabs(x1[i]));
    CHECK(d <= 1e-6 * xm, "line smoother on %d threads after a setup on 1: solutions differ by %.3g (max %.3g)", nt + 3,
          d, xm);
    /* set up and solved inside a caller's parallel region (a team of one: no
     * scratch reserved, every sweep allocates its own) */
    hpmg_error e3 = HPMG_SUCCESS;
    double d3 = 0;
#pragma omp parallel num_threads(1)
    {
      fd_box_solver s3;
      e3 = fd_box_solver_create(&b, 0.0, &cfg, &s3);
      if (!e3) {
        memset(x2, 0, sizeof(double) * (size_t)n);
        e3 = fd_box_solve(s3, rhs, x2);
        for (int64_t i = 0; i < n; i++) d3 = fmax(d3, fabs(x1[i] - x2[i]));
        fd_box_solver_destroy(&s3);
      }
    }
    CHECK(e3 == HPMG_SUCCESS && d3 <= 1e-6 * xm, "line smoother set up in a parallel region: error %d (%s), differs by %.3g",
          (int)e3, e3 ? hpmg_last_error() : "", d3);
    free(rhs);
    fd_box_solver_destroy(&s);
    hpmg_box_destroy(&b);
  }
  return check_report();
}

/* singular problems: the projection reports the defect; project_rhs = 0 refuses
 * an incompatible b and accepts a compatible one; the solution has W-mean 0 */
static int mode_singular(void) {
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_FD;
  po.dim = 2;
  po.cells[0] = 24;
  po.cells[1] = 17;
  set_bc(&po, cases2d[4].bc);
  po.rhs = HPMG_RHS_ONE; /* f = 1, zero flux: incompatible, defect 1 */
  for (int proj = 1; proj >= 0; proj--) {
    po.project_rhs = proj;
    hpmg_problem prob;
    CHECK_OK(hpmg_problem_create(&po, &prob));
    hpmg_solver_options so;
    hpmg_solver_options_default(&so);
    so.solver = HPMG_SOLVER_CG;
    hpmg_solver s;
    CHECK_OK(hpmg_solver_create(prob, &so, &s));
    const int64_t n = hpmg_problem_num_dofs(prob);
    double *x = calloc((size_t)n, sizeof(double));
    hpmg_error e = hpmg_solver_solve(s, NULL, x);
    hpmg_stats st;
    hpmg_solver_get_stats(s, &st);
    if (proj) {
      CHECK(e == HPMG_SUCCESS, "projected singular solve failed: %s", hpmg_last_error());
      CHECK(fabs(st.compat_defect - 1.0) < 1e-12, "compat_defect %.17g, expected 1 (f = 1, zero flux)", st.compat_defect);
      /* f = 1 projected is f = 0: the solution is the constant 0 */
      double mx = 0;
      for (int64_t i = 0; i < n; i++) mx = fmax(mx, fabs(x[i]));
      CHECK(mx < 1e-10, "solution of the projected f = 1 problem is not 0 (max %.3g)", mx);
    } else CHECK(e == HPMG_ERR_ARG, "incompatible b with project_rhs = 0 not refused (%d)", (int)e);
    free(x);
    hpmg_solver_destroy(&s);
    hpmg_problem_destroy(&prob);
  }
  /* a compatible manufactured problem with project_rhs = 0: solved, defect at round-off */
  po.rhs = HPMG_RHS_SINE;
  po.project_rhs = 0;
  double l2;
  int it;
  CHECK(solve_case(&po, HPMG_SOLVER_CG, HPMG_SMOOTHER_AUTO, &l2, &it) == 0, "compatible b refused");
  CHECK(l2 < 1e-2, "pure Neumann error %.3g", l2);
  /* every solver converges on the singular channel */
  set_bc(&po, cases2d[6].bc);
  const hpmg_solver_kind sv[] = {HPMG_SOLVER_CG, HPMG_SOLVER_VCYCLE, HPMG_SOLVER_FMG};
  for (int i = 0; i < 3; i++) {
    CHECK(solve_case(&po, sv[i], HPMG_SMOOTHER_AUTO, &l2, &it) == 0, "solver %d failed on the channel", (int)sv[i]);
    CHECK(l2 < 1e-2 && it <= 40, "solver %d: error %.3g, %d iterations", (int)sv[i], l2, it);
  }
  return check_report();
}

/* Line GS along a periodic direction solves cyclic tridiagonal systems: on a
 * box whose other directions hold one unknown each (Dirichlet, 2 cells) the
 * only line is the whole system, so one sweep leaves a residual at round-off
 * (m = 2, 3, 7, 16 unknowns along the line, uniform and tanh, lambda 0 and
 * 0.5, along x, y and z). On 2D and 3D periodic boxes stretched along one
 * periodic direction the V-cycle iteration (lines along it, auto) and FMG
 * converge to 1e-10 within 2x of the uniform grid's count (point smoothing
 * alone stagnated there). */
/* the visiting rank of the line (a, b) across na x nb lines: a checkerboard's
 * (a + b) mod 2, else the product colours (parity, and 2 for the last index
 * of a periodic odd direction: oa, ob); bw: colours in reverse order */
static int line_rank(int checker, int oa, int ob, int64_t na, int64_t nb, int64_t ia, int64_t ib, int bw) {
  const int nc = checker ? 2 : (2 + oa) * (2 + ob);
  const int ca = oa && ia == na - 1 ? 2 : (int)(ia & 1), cb = ob && ib == nb - 1 ? 2 : (int)(ib & 1);
  const int c = checker ? (int)((ia + ib) & 1) : ca + (2 + oa) * cb;
  return bw ? nc - 1 - c : c;
}

/* the box of po, its level geometry and its periodic directions (non-zero on failure) */
static int box_geom(const hpmg_problem_options *po, hpmg_box *b, fdb_geom *g, int per[3]) {
  CHECK_OK(hpmg_box_init(po, b));
  CHECK_OK(fd_box_geom(b, po->lambda, g));
  for (int d = 0; d < 3; d++) per[d] = hpmg_box_periodic(b, d);
  return 0;
}

static int mode_lines(void) {
  const fdb_kernels *k = hpmg_fdb_kernels_select();
  double worst = 0;
  for (int dim = 2; dim <= 3; dim++)
    for (int dl = 0; dl < dim; dl++)
      for (int mi = 0; mi < 4; mi++)
        for (int v = 0; v < 4; v++) {
          const int64_t ms[4] = {2, 3, 7, 16};
          hpmg_problem_options po;
          hpmg_problem_options_default(&po);
          po.disc = HPMG_DISC_FD;
          po.dim = dim;
          po.lambda = v & 1 ? 0.5 : 0.0;
          for (int d = 0; d < dim; d++) {
            po.cells[d] = d == dl ? ms[mi] : 2;
            po.box[d] = 1.0 + 0.3 * d;
            po.bc[2 * d].kind = po.bc[2 * d + 1].kind = d == dl ? P : D;
          }
          if ((v & 2) && ms[mi] >= 3) po.spacing[dl] = (hpmg_spacing){HPMG_SPACING_TANH, 2.0, NULL};
          hpmg_box b;
          CHECK_OK(hpmg_box_init(&po, &b));
          fdb_geom g;
          CHECK_OK(fd_box_geom(&b, po.lambda, &g));
          const int64_t n = g.n[0] * g.n[1] * g.n[2]; /* g.N: N is a macro here */
          CHECK(n == ms[mi], "dim %d line %c: %lld unknowns, expected %lld", dim, "xyz"[dl], (long long)n,
                (long long)ms[mi]);
          int per[3] = {0, 0, 0};
          per[dl] = 1;
          double *x = malloc(sizeof(double) * (size_t)(2 * n)), *rhs = x + n;
          hpmg_scratch scr = {0}; /* empty: every thread allocates its own */
          for (int64_t i = 0; i < 2 * n; i++) x[i] = check_rand();
          const double r0 = k->residual_norm(&g, x, rhs);
          k->line_sweep(&g, per, dl, 1, v & 1, x, rhs, &scr);
          const double r1 = k->residual_norm(&g, x, rhs) / r0;
          worst = fmax(worst, r1);
          CHECK(r1 <= 1e-13, "dim %d cyclic line along %c, m = %lld, %s, lambda %g: residual %.3g of r0 after one sweep",
                dim, "xyz"[dl], (long long)n, v & 2 ? "tanh" : "uniform", po.lambda, r1);
          free(x);
          hpmg_scratch_free(&scr);
          fd_box_geom_free(&g);
          hpmg_box_destroy(&b);
        }
  printf("cyclic line solves: worst residual after one sweep %.3g of r0\n", worst);
  /* fd_box_line_table: the coefficients where every line has the same ones (the
   * channel's lines along y; uniform Dirichlet x in the vertex layout too), none
   * where they differ (Neumann ends' half widths, stretched x, cyclic lines); its recursion solves the
   * line's tridiagonal system (checked against the operator's line entries) */
  {
    static const struct {
      hpmg_bc_kind bc[6];
      int stretch_x, dl, want;
    } tc[] = {{{P, P, N, N, P, P}, 0, 1, 1}, {{P, P, D, N, P, P}, 0, 1, 1}, {{D, D, N, N, P, P}, 0, 1, 1},
              {{N, N, N, N, P, P}, 0, 1, 0}, {{P, P, N, N, P, P}, 1, 1, 0}, {{P, P, N, N, P, P}, 0, 0, 0},
              {{P, P, P, P, P, P}, 0, 1, 0}};
    for (size_t c = 0; c < sizeof tc / sizeof *tc; c++) {
      hpmg_problem_options po;
      hpmg_problem_options_default(&po);
      po.disc = HPMG_DISC_FD;
      po.dim = 3;
      po.lambda = 0.4;
      po.cells[0] = 6;
      po.cells[1] = 11;
      po.cells[2] = 4;
      set_bc(&po, tc[c].bc);
      po.spacing[1] = (hpmg_spacing){HPMG_SPACING_TANH, 2.5, NULL};
      if (tc[c].stretch_x) po.spacing[0] = (hpmg_spacing){HPMG_SPACING_TANH, 1.5, NULL};
      hpmg_box b;
      fdb_geom g;
      int per[3];
      if (box_geom(&po, &b, &g, per)) return check_report();
      const int dl = tc[c].dl;
      const int64_t m = g.n[dl];
      double *tab = malloc(sizeof(double) * (size_t)(3 * m)), *r = malloc(sizeof(double) * (size_t)(3 * m));
      double *y = r + m, *dp = y + m;
      const int got = fd_box_line_table(&g, per, dl, tab);
      CHECK(got == tc[c].want, "line table case %zu: %d, expected %d", c, got, tc[c].want);
      if (got) { /* T y = r with T the operator's entries on the line through (0, ., 0) */
        for (int64_t t = 0; t < m; t++) r[t] = check_rand();
        double pd = 0;
        for (int64_t t = 0; t < m; t++) dp[t] = pd = (r[t] - tab[m + t] * pd) * tab[2 * m + t];
        y[m - 1] = dp[m - 1];
        for (int64_t t = m - 2; t >= 0; t--) y[t] = dp[t] - tab[t] * y[t + 1];
        const int64_t nn = g.n[0] * g.n[1] * g.n[2]; /* g.N: N is a macro here */
        double *e = calloc((size_t)nn * 2, sizeof(double)), *Ae = e + nn, worst_t = 0, sc = 0;
        const fdb_kernels *kk = hpmg_fdb_kernels_select();
        for (int64_t u = 0; u < m; u++) e[u * g.n[0]] = y[u]; /* y on the line through (0, ., 0) */
        kk->apply(&g, e, NULL, Ae);
        for (int64_t t = 0; t < m; t++) {
          worst_t = fmax(worst_t, fabs(Ae[t * g.n[0]] - r[t]));
          sc = fmax(sc, fabs(r[t]));
        }
        CHECK(worst_t <= 1e-12 * sc, "line table case %zu: |T y - r| %.3g", c, worst_t);
        free(e);
      }
      free(tab);
      free(r);
      fd_box_geom_free(&g);
      hpmg_box_destroy(&b);
    }
  }
  /* the sweep's colours: after one sweep a line solves its equations (residual
   * at round-off on it) exactly when none of its neighbours is visited after
   * it. Asked for a checkerboard: two colours (a + b) mod 2 of the indices
   * across, unless a direction across is periodic with an odd count; else
   * the product colours (parities and the last index of an odd periodic
   * direction). */
  {
    static const struct {
      hpmg_bc_kind bc[6];
      int64_t cells[3];
      int dl, checker;
    } cc[] = {{{P, P, N, N, P, P}, {6, 7, 4}, 1, 1}, {{D, D, N, N, N, N}, {6, 5, 5}, 1, 1},
              {{P, P, D, D, N, N}, {8, 5, 4}, 2, 1}, {{P, P, N, N, P, P}, {5, 7, 4}, 1, 0},
              {{N, N, D, D, P, P}, {4, 6, 7}, 0, 0}};
    int nsolved = 0, nlines = 0;
    for (size_t c = 0; c < sizeof cc / sizeof *cc; c++)
      for (int v = 0; v < 4; v++) {
        const int bw = v & 1, ask = v >> 1;
        hpmg_problem_options po;
        hpmg_problem_options_default(&po);
        po.disc = HPMG_DISC_FD;
        po.dim = 3;
        po.lambda = 0.3;
        for (int d = 0; d < 3; d++) po.cells[d] = cc[c].cells[d];
        set_bc(&po, cc[c].bc);
        po.spacing[cc[c].dl] = (hpmg_spacing){HPMG_SPACING_TANH, 2.0, NULL};
        hpmg_box b;
        fdb_geom g;
        int per[3];
        if (box_geom(&po, &b, &g, per)) return check_report();
        const int dl = cc[c].dl, da = dl == 0 ? 1 : 0, db = dl == 2 ? 1 : 2;
        CHECK(fd_box_line_checker(g.n, per, dl) == cc[c].checker, "colour case %zu: checkerboard %d, expected %d", c,
              fd_box_line_checker(g.n, per, dl), cc[c].checker);
        const int64_t nn = g.n[0] * g.n[1] * g.n[2], na = g.n[da], nb = g.n[db];
        double *x = malloc(sizeof(double) * (size_t)(3 * nn)), *rhs = x + nn, *r = rhs + nn;
        hpmg_scratch scr = {0};
        hpmg_scratch_reserve(&scr, sizeof(double) * (size_t)fd_box_line_scratch(dl, g.n[dl]));
        for (int64_t i = 0; i < 2 * nn; i++) x[i] = check_rand();
        k->line_sweep(&g, per, dl, ask, bw, x, rhs, &scr);
        k->apply(&g, x, rhs, r);
        const int checker = ask && cc[c].checker;
        double sc = 0;
        for (int64_t i = 0; i < 2 * nn; i++) sc = fmax(sc, fabs(x[i]));
        const int oa = per[da] && (na & 1), ob = per[db] && (nb & 1); /* a third colour across */
        const int64_t stride[3] = {1, g.n[0], g.n[0] * g.n[1]};
        for (int64_t ib = 0; ib < nb; ib++)
          for (int64_t ia = 0; ia < na; ia++) {
            const int rank = line_rank(checker, oa, ob, na, nb, ia, ib, bw);
            int later = 0;
            const int64_t nbr[4][2] = {{ia - 1, ib}, {ia + 1, ib}, {ia, ib - 1}, {ia, ib + 1}};
            for (int q = 0; q < 4; q++) {
              int64_t ja = nbr[q][0], jb = nbr[q][1];
              if (per[da]) ja = (ja + na) % na;
              if (per[db]) jb = (jb + nb) % nb;
              if (ja < 0 || ja >= na || jb < 0 || jb >= nb || (ja == ia && jb == ib)) continue;
              later |= line_rank(checker, oa, ob, na, nb, ja, jb, bw) > rank;
            }
            double rl = 0;
            for (int64_t t = 0; t < g.n[dl]; t++) rl = fmax(rl, fabs(r[ia * stride[da] + ib * stride[db] + t * stride[dl]]));
            nlines++;
            nsolved += !later;
            CHECK(later ? rl > 1e-6 * sc : rl <= 1e-12 * sc,
                  "colour case %zu (%s, %s): line (%lld, %lld) residual %.3g (scale %.3g), a neighbour visited later: %d",
                  c, bw ? "backward" : "forward", checker ? "checkerboard" : "product", (long long)ia, (long long)ib, rl, sc, later);
          }
        free(x);
        hpmg_scratch_free(&scr);
        fd_box_geom_free(&g);
        hpmg_box_destroy(&b);
      }
    printf("line colours: %d of %d lines exactly solved after one sweep, those with no neighbour visited later "
           "(checkerboard asked or not, 5 boxes, both orders)\n", nsolved, nlines);
  }
  /* the multigrid on periodic boxes stretched along a periodic direction */
  static const struct {
    int dim;
    int64_t cells[3];
    int sd; /* the stretched direction */
  } cs[] = {{2, {45, 39, 1}, 1}, {2, {45, 39, 1}, 0}, {3, {24, 21, 20}, 1}, {3, {24, 21, 20}, 2}};
  for (size_t c = 0; c < sizeof cs / sizeof *cs; c++) {
    int it[2][2];
    for (int st = 0; st < 2; st++)
      for (int sv = 0; sv < 2; sv++) {
        hpmg_problem_options po;
        hpmg_problem_options_default(&po);
        po.disc = HPMG_DISC_FD;
        po.dim = cs[c].dim;
        for (int d = 0; d < po.dim; d++) po.cells[d] = cs[c].cells[d];
        for (int f = 0; f < 2 * po.dim; f++) po.bc[f].kind = P;
        if (st) po.spacing[cs[c].sd] = (hpmg_spacing){HPMG_SPACING_TANH, 2.5, NULL};
        double l2;
        CHECK(solve_case(&po, sv ? HPMG_SOLVER_FMG : HPMG_SOLVER_VCYCLE, HPMG_SMOOTHER_AUTO, &l2, &it[st][sv]) == 0,
              "%dD periodic, tanh along %c: solve failed", po.dim, "xyz"[cs[c].sd]);
      }
    printf("%dD fully periodic %lldx%lldx%lld, tanh 2.5 along %c: V-cycle %d -> %d, FMG %d -> %d iterations "
           "(uniform -> stretched)\n",
           cs[c].dim, (long long)cs[c].cells[0], (long long)cs[c].cells[1], (long long)cs[c].cells[2],
           "xyz"[cs[c].sd], it[0][0], it[1][0], it[0][1], it[1][1]);
    for (int sv = 0; sv < 2; sv++)
      CHECK(it[1][sv] <= 2 * it[0][sv], "%dD tanh along %c: %s %d iterations, uniform %d", cs[c].dim, "xyz"[cs[c].sd],
            sv ? "FMG" : "V-cycle", it[1][sv], it[0][sv]);
  }
  return check_report();
}

/* the channel: periodic x, z, Neumann y, tanh y with first-cell aspect ratio
 * >= 50: iterations to 1e-9 within 2x of the uniform grid's, for the default
 * (robust) smoother; the point smoother's counts printed for docs/bc.md */
static int channel_iters(int dim, const int64_t cells[3], double beta, int line, int *iters, double *aspect) {
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_FD;
  po.dim = dim;
  po.box[0] = 2 * M_PI;
  po.box[1] = 2;
  po.box[2] = M_PI;
  for (int d = 0; d < dim; d++) po.cells[d] = cells[d];
  const hpmg_bc_kind bc[6] = {P, P, N, N, P, P};
  set_bc(&po, bc);
  if (beta > 0) po.spacing[1] = (hpmg_spacing){HPMG_SPACING_TANH, beta, NULL};
  hpmg_box b;
  CHECK_OK(hpmg_box_init(&po, &b));
  const double hx = po.box[0] / (double)cells[0], hy0 = b.x[1][1] - b.x[1][0];
  *aspect = hx / hy0;
  hpmg_box_destroy(&b);
  hpmg_problem prob;
  CHECK_OK(hpmg_problem_create(&po, &prob));
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.solver = HPMG_SOLVER_CG;
  so.smoother = line ? HPMG_SMOOTHER_AUTO : HPMG_SMOOTHER_MCGS;
  so.tol = 1e-9;
  so.maxit = 500;
  hpmg_solver s;
  CHECK_OK(hpmg_solver_create(prob, &so, &s));
  const int64_t n = hpmg_problem_num_dofs(prob);
  double *x = calloc((size_t)n, sizeof(double));
  hpmg_error e = hpmg_solver_solve(s, NULL, x);
  hpmg_stats st;
  hpmg_solver_get_stats(s, &st);
  *iters = e ? -1 : st.iterations;
  free(x);
  hpmg_solver_destroy(&s);
  hpmg_problem_destroy(&prob);
  return 0;
}

static int mode_channel(int dim, int64_t c0, int64_t c1, int64_t c2, double beta) {
  const int64_t cells[3] = {c0, c1, c2};
  int iu_pt, iu_ln, is_pt, is_ln;
  double a_u, a_s;
  channel_iters(dim, cells, 0, 0, &iu_pt, &a_u);
  channel_iters(dim, cells, 0, 1, &iu_ln, &a_u);
  channel_iters(dim, cells, beta, 0, &is_pt, &a_s);
  channel_iters(dim, cells, beta, 1, &is_ln, &a_s);
  printf("channel %dD %lldx%lldx%lld, CG to 1e-9: uniform (aspect %.2f) point GS %d, default %d; tanh %.2f (first-cell "
         "aspect %.1f) point GS %d, default (line GS in y) %d\n",
         dim, (long long)c0, (long long)c1, (long long)(dim == 3 ? c2 : 1), a_u, iu_pt, iu_ln, beta, a_s, is_pt, is_ln);
  CHECK(a_s >= 50, "first-cell aspect ratio %.1f < 50", a_s);
  CHECK(iu_ln > 0 && is_ln > 0 && is_ln <= 2 * iu_ln, "stretched %d iterations vs uniform %d", is_ln, iu_ln);
  return check_report();
}

/* FMG's cubic interpolation (fd_box_fmg_interp_1d): exact for cubics on
 * stretched nodes (every non-periodic BC pair, both layouts), 4th order for a
 * smooth periodic function, refused below 4 coarse unknowns; and the FMG pass
 * (maxit 0) with it leaves a residual at least 2.5x below the linear one's
 * (2D stretched Dirichlet 41x, 3D cell layout 27x, the channel 2.9x) */
static double cubic_q(double x) { return 1.0 + 2.0 * x - 3.0 * x * x + 0.7 * x * x * x; }
static double per_f(double x, double L) { return sin(2 * M_PI * x / L) + 0.3 * cos(4 * M_PI * x / L); }

/* max |Pc u_c - u(fine unknowns)| for fine cells cf (even), coarse = every other node */
static double interp_err(int64_t cf, hpmg_bc_kind lo, hpmg_bc_kind hi, hpmg_fd_layout lay, int per) {
  const double L = 1.7;
  double *x = malloc(sizeof(double) * (size_t)(cf + 1)), *X = malloc(sizeof(double) * (size_t)(cf / 2 + 1));
  for (int64_t i = 0; i <= cf; i++) { /* smoothly stretched nodes */
    const double t = (double)i / (double)cf;
    x[i] = L * (per ? t : t + 0.15 * sin(M_PI * t) * (1 - t));
  }
  for (int64_t J = 0; J <= cf / 2; J++) X[J] = x[2 * J];
  fdb_csr Pc;
  memset(&Pc, 0, sizeof Pc);
  double err = INFINITY;
  if (fd_box_fmg_interp_1d(x, cf, X, cf / 2, lo, hi, lay, &Pc) == HPMG_SUCCESS) {
    const int64_t f0 = lay == HPMG_FD_VERTEX && lo == D, F0 = f0;
    double *uc = malloc(sizeof(double) * (size_t)Pc.cols);
    for (int64_t J = 0; J < Pc.cols; J++) {
      const double p = lay == HPMG_FD_CELL ? 0.5 * (X[J] + X[J + 1]) : X[J + F0];
      uc[J] = per ? per_f(p, L) : cubic_q(p);
    }
    err = 0;
    for (int64_t i = 0; i < Pc.rows; i++) {
      const double p = lay == HPMG_FD_CELL ? 0.5 * (x[i] + x[i + 1]) : x[i + f0];
      double v = 0;
      for (int64_t e = Pc.ptr[i]; e < Pc.ptr[i + 1]; e++) v += Pc.val[e] * uc[Pc.col[e]];
      err = fmax(err, fabs(v - (per ? per_f(p, L) : cubic_q(p))));
    }
    free(uc);
  }
  free(Pc.ptr);
  free(Pc.col);
  free(Pc.val);
  free(x);
  free(X);
  return err;
}

static int fmg_pass_relres(const hpmg_problem_options *po, hpmg_fmg_interp fi, double *relres) {
  hpmg_problem prob;
  CHECK_OK(hpmg_problem_create(po, &prob));
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.solver = HPMG_SOLVER_FMG;
  so.fmg_interp = fi;
  so.maxit = 0;
  so.tol = 1e-14;
  so.pre = so.post = 1;
  hpmg_solver s;
  CHECK_OK(hpmg_solver_create(prob, &so, &s));
  const int64_t n = hpmg_problem_num_dofs(prob);
  double *x = calloc((size_t)n, sizeof(double));
  const hpmg_error e = hpmg_solver_solve(s, NULL, x);
  hpmg_stats st;
  hpmg_solver_get_stats(s, &st);
  CHECK(e == HPMG_ERR_NOT_CONVERGED && st.iterations == 0, "FMG pass: error %d (%s), %d iterations", (int)e, hpmg_last_error(),
        st.iterations);
  *relres = st.residual / st.residual0;
  free(x);
  hpmg_solver_destroy(&s);
  hpmg_problem_destroy(&prob);
  return 0;
}

static int mode_fmg(void) {
  static const hpmg_bc_kind pairs[4][2] = {{N, N}, {D, D}, {D, N}, {N, D}};
  double worst = 0;
  for (int lay = 0; lay < 2; lay++)
    for (int c = 0; c < 4; c++) {
      const double e = interp_err(14, pairs[c][0], pairs[c][1], (hpmg_fd_layout)lay, 0);
      worst = fmax(worst, e);
      CHECK(e <= 1e-12, "cubic on stretched nodes, %s, %c%c: max error %.3g", lay ? "cell" : "vertex",
            "DNP"[pairs[c][0] == N], "DNP"[pairs[c][1] == N], e);
    }
  printf("cubic FMG interpolation of a cubic on stretched nodes: max error %.3g\n", worst);
  for (int lay = 0; lay < 2; lay++) {
    const double e1 = interp_err(32, P, P, (hpmg_fd_layout)lay, 1), e2 = interp_err(64, P, P, (hpmg_fd_layout)lay, 1);
    printf("periodic, %s: errors %.3g, %.3g (order %.2f)\n", lay ? "cell" : "vertex", e1, e2, log2(e1 / e2));
    CHECK(log2(e1 / e2) >= 3.6, "periodic %s: order %.2f", lay ? "cell" : "vertex", log2(e1 / e2));
  }
  CHECK(interp_err(4, N, N, HPMG_FD_CELL, 0) == INFINITY, "2 coarse cells (2 unknowns) accepted for cubic");
  static const struct {
    int dim;
    int64_t cells[3];
    hpmg_bc_kind bc[6];
    int lay, sd;
    double beta, box[3];
  } cs[] = {{2, {96, 64, 1}, {P, P, D, D, D, D}, 0, 1, 2.9, {2 * M_PI, 2, 1}},
            {3, {40, 40, 40}, {D, D, N, N, P, P}, 1, 1, 2.0, {1, 1, 1}},
            {3, {32, 24, 32}, {P, P, N, N, P, P}, 0, 1, 2.9, {2 * M_PI, 2, M_PI}}};
  for (size_t c = 0; c < sizeof cs / sizeof *cs; c++) {
    hpmg_problem_options po;
    hpmg_problem_options_default(&po);
    po.disc = HPMG_DISC_FD;
    po.dim = cs[c].dim;
    po.fd_layout = (hpmg_fd_layout)cs[c].lay;
    for (int d = 0; d < po.dim; d++) {
      po.cells[d] = cs[c].cells[d];
      po.box[d] = cs[c].box[d];
    }
    set_bc(&po, cs[c].bc);
    po.spacing[cs[c].sd] = (hpmg_spacing){HPMG_SPACING_TANH, cs[c].beta, NULL};
    double rl = 0, rc = 0;
    fmg_pass_relres(&po, HPMG_FMG_INTERP_LINEAR, &rl);
    fmg_pass_relres(&po, HPMG_FMG_INTERP_CUBIC, &rc);
    printf("%dD %lldx%lldx%lld %s: FMG pass relative residual linear %.3g, cubic %.3g\n", po.dim,
           (long long)po.cells[0], (long long)po.cells[1], (long long)(po.dim == 3 ? po.cells[2] : 1),
           po.fd_layout ? "cell" : "vertex", rl, rc);
    CHECK(rc <= rl / 2.5, "case %zu: cubic FMG pass residual %.3g not 2.5x below linear %.3g", c, rc, rl);
  }
  return check_report();
}

/* the multigrid (CG to 1e-13) and the direct solver (fd_direct.h) solve the
 * same operator: their solutions agree; singular ones both with W-mean 0 */
static int mode_direct(void) {
  const bc_case *all[] = {&cases3d[0], &cases3d[1], &cases3d[2], &cases3d[4], &cases2d[5], &cases2d[3]};
  for (size_t c = 0; c < sizeof all / sizeof *all; c++)
    for (int lay = 0; lay < 2; lay++) {
      hpmg_problem_options po;
      hpmg_problem_options_default(&po);
      po.disc = HPMG_DISC_FD;
      po.dim = all[c]->dim;
      po.box[0] = 2;
      po.cells[0] = 13;
      po.cells[1] = 10;
      po.cells[2] = po.dim == 3 ? 9 : 0;
      set_bc(&po, all[c]->bc);
      po.fd_layout = (hpmg_fd_layout)lay;
      po.spacing[1] = (hpmg_spacing){HPMG_SPACING_TANH, 2.0, NULL};
      hpmg_problem prob;
      CHECK_OK(hpmg_problem_create(&po, &prob));
      const int64_t n = hpmg_problem_num_dofs(prob);
      double *x[2] = {calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double))};
      for (int k = 0; k < 2; k++) {
        hpmg_solver_options so;
        hpmg_solver_options_default(&so);
        so.solver = k ? HPMG_SOLVER_FFT : HPMG_SOLVER_CG;
        so.tol = 1e-13;
        hpmg_solver s;
        CHECK_OK(hpmg_solver_create(prob, &so, &s));
        CHECK_OK(hpmg_solver_solve(s, NULL, x[k]));
        hpmg_solver_destroy(&s);
      }
      double d = 0, m = 0;
      for (int64_t i = 0; i < n; i++) {
        d = fmax(d, fabs(x[0][i] - x[1][i]));
        m = fmax(m, fabs(x[1][i]));
      }
      CHECK(d <= 1e-9 * fmax(1.0, m), "%s %s: multigrid and direct solutions differ by %.3g", all[c]->name,
            lay ? "cell" : "vertex", d);
      free(x[0]);
      free(x[1]);
      hpmg_problem_destroy(&prob);
    }
  return check_report();
}

/* GPU (label gpu; 77 without a GPU): a general box through the public API
 * with the direct solver on CUDA (staged through the CUDA backend) equals
 * the CPU direct solve, and so does the box multigrid on CUDA (CG) */
static int mode_gpu(void) {
  const hpmg_backend *be;
  if (hpmg_backend_cuda(&be) != HPMG_SUCCESS) {
    printf("skipped: %s\n", hpmg_last_error());
    return 77;
  }
  const bc_case *all[] = {&cases3d[1], &cases3d[2], &cases3d[4], &cases2d[3]};
  for (size_t c = 0; c < sizeof all / sizeof *all; c++)
    for (int lay = 0; lay < 2; lay++) {
      hpmg_problem_options po;
      hpmg_problem_options_default(&po);
      po.disc = HPMG_DISC_FD;
      po.dim = all[c]->dim;
      po.box[0] = 2 * M_PI;
      po.box[1] = 2;
      po.cells[0] = 48;
      po.cells[1] = 37;
      po.cells[2] = po.dim == 3 ? 20 : 0;
      set_bc(&po, all[c]->bc);
      po.fd_layout = (hpmg_fd_layout)lay;
      po.spacing[1] = (hpmg_spacing){HPMG_SPACING_TANH, 2.5, NULL};
      hpmg_problem prob;
      CHECK_OK(hpmg_problem_create(&po, &prob));
      const int64_t n = hpmg_problem_num_dofs(prob);
      double *x[2] = {calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double))};
      double err[2] = {0, 0};
      for (int k = 0; k < 2; k++) {
        hpmg_solver_options so;
        hpmg_solver_options_default(&so);
        so.solver = HPMG_SOLVER_FFT;
        so.device = k ? HPMG_DEVICE_CUDA : HPMG_DEVICE_CPU;
        hpmg_solver s;
        CHECK_OK(hpmg_solver_create(prob, &so, &s));
        CHECK_OK(hpmg_solver_solve(s, NULL, x[k]));
        hpmg_solver_destroy(&s);
        double mx;
        CHECK_OK(hpmg_problem_error(prob, x[k], &err[k], &mx));
      }
      double d = 0, m = 0;
      for (int64_t i = 0; i < n; i++) {
        d = fmax(d, fabs(x[0][i] - x[1][i]));
        m = fmax(m, fabs(x[0][i]));
      }
      CHECK(d <= 1e-11 * fmax(1.0, m), "%s %s: GPU and CPU direct solutions differ by %.3g", all[c]->name,
            lay ? "cell" : "vertex", d);
      CHECK(fabs(err[0] - err[1]) <= 1e-9 * err[0], "%s: errors %.17g (CPU) vs %.17g (GPU)", all[c]->name, err[0], err[1]);
      /* the box multigrid on CUDA (CG to 1e-13) solves the same operator */
      hpmg_solver_options so;
      hpmg_solver_options_default(&so);
      so.solver = HPMG_SOLVER_CG;
      so.device = HPMG_DEVICE_CUDA;
      so.tol = 1e-13;
      hpmg_solver s = NULL;
      CHECK_OK(hpmg_solver_create(prob, &so, &s));
      CHECK_OK(hpmg_solver_solve(s, NULL, x[1]));
      hpmg_solver_destroy(&s);
      d = 0;
      for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(x[0][i] - x[1][i]));
      CHECK(d <= 1e-9 * fmax(1.0, m), "%s %s: GPU multigrid and CPU direct solutions differ by %.3g", all[c]->name,
            lay ? "cell" : "vertex", d);
      free(x[0]);
      free(x[1]);
      hpmg_problem_destroy(&prob);
    }
  return check_report();
}

int main(int argc, char **argv) {
  const char *m = argc > 1 ? argv[1] : "unit";
  if (!strcmp(m, "unit")) return mode_unit();
  if (!strcmp(m, "order2d")) return mode_order2d();
  if (!strcmp(m, "order3d")) return mode_order3d(0);
  if (!strcmp(m, "order3d_slow")) return mode_order3d(1);
  if (!strcmp(m, "singular")) return mode_singular();
  if (!strcmp(m, "lines")) return mode_lines();
  if (!strcmp(m, "fmg")) return mode_fmg();
  if (!strcmp(m, "direct")) return mode_direct();
  if (!strcmp(m, "gpu")) return mode_gpu();
  if (!strcmp(m, "channel2d")) return mode_channel(2, 128, 96, 1, argc > 2 ? atof(argv[2]) : 2.8);
  if (!strcmp(m, "channel3d")) return mode_channel(3, 64, 48, 64, argc > 2 ? atof(argv[2]) : 2.9);
  printf("unknown mode %s\n", m);
  return 2;
}
