/* The box multigrid on the GPU (docs/bc.md) equals the CPU one.
 *  kernels: every GPU kernel against the CPU kernel of the same operation,
 *    relative 1e-13: y = A x, b - A x, ||b - A x||, one multicolour point GS
 *    sweep (forward, backward, weight 1.3), one line GS sweep along each
 *    direction (cyclic along a periodic one; forward, backward; product colours
 *    and a checkerboard), the mean removal;
 *  solve: fd_box_solver on the GPU (every level but the coarsest there, and
 *    with the default split) against the CPU: CG, V-cycle iteration and FMG (cubic
 *    FMG interpolation) to
 *    1e-10 (or stagnating alike), the same iteration count, residual histories equal to 1e-8 of the
 *    initial residual, solutions equal to 1e-10 relative;
 * over every BC kind per face in 2D and 3D (Dirichlet, Neumann, periodic,
 * mixed), vertex and cell layouts, uniform and stretched (tanh, geometric)
 * grids, odd / even / prime cell counts.
 * Modes: kernels | solve | quick (a few solves, for the sanitizers).
 * Exit 77 (skip) without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "disc/fd/fd_box.h"
#include "disc/fd/fd_box_cuda.h"
#include "hpmg.h"
#include "la/backend.h"

#define BD HPMG_BC_DIRICHLET
#define BN HPMG_BC_NEUMANN
#define BP HPMG_BC_PERIODIC

typedef struct {
  const char *name;
  int dim;
  hpmg_bc_kind bc[6];
} bc_case;

static const bc_case cases[] = {
    {"2D all Dirichlet", 2, {BD, BD, BD, BD}},       {"2D BD/BN mixed faces", 2, {BD, BN, BN, BD}},
    {"2D pure Neumann", 2, {BN, BN, BN, BN}},        {"2D fully periodic", 2, {BP, BP, BP, BP}},
    {"2D channel", 2, {BP, BP, BN, BN}},             {"3D all Dirichlet", 3, {BD, BD, BD, BD, BD, BD}},
    {"3D channel", 3, {BP, BP, BN, BN, BP, BP}},       {"3D pure Neumann", 3, {BN, BN, BN, BN, BN, BN}},
    {"3D fully periodic", 3, {BP, BP, BP, BP, BP, BP}}, {"3D mixed per face", 3, {BD, BN, BN, BD, BP, BP}},
    {"3D BN/BD mixed faces", 3, {BN, BD, BD, BN, BN, BD}},
};
#define NCASES (sizeof cases / sizeof *cases)

/* cell counts: even, odd, prime (periodic directions >= 2) */
static const int64_t CELLS[3][3] = {{16, 12, 10}, {15, 13, 9}, {17, 11, 7}};
static const char *CNAME[3] = {"even", "odd", "prime"};

static const hpmg_backend *be;

static void options(const bc_case *c, int lay, int sp, int cells, hpmg_problem_options *po) {
  hpmg_problem_options_default(po);
  po->disc = HPMG_DISC_FD;
  po->dim = c->dim;
  po->box[0] = 2.0;
  po->box[1] = 1.3;
  po->box[2] = 0.9;
  po->lambda = 0;
  for (int d = 0; d < c->dim; d++) po->cells[d] = CELLS[cells][d] * (c->dim == 2 ? 3 : 1);
  for (int f = 0; f < 6; f++) po->bc[f].kind = f < 2 * c->dim ? c->bc[f] : BD;
  po->fd_layout = lay ? HPMG_FD_CELL : HPMG_FD_VERTEX;
  if (sp == 1) po->spacing[1] = (hpmg_spacing){HPMG_SPACING_TANH, 2.5, NULL};
  if (sp == 2) {
    po->spacing[0] = (hpmg_spacing){HPMG_SPACING_GEOMETRIC, 1.08, NULL};
    po->spacing[1] = (hpmg_spacing){HPMG_SPACING_TANH, 1.5, NULL};
  }
}

static double *dev_from(const double *h, int64_t n) {
  void *d = NULL;
  if (be->alloc(sizeof(double) * (size_t)n, &d) || be->to_device(h, d, sizeof(double) * (size_t)n)) return NULL;
  return d;
}

static double maxdiff(const double *a, const double *b, int64_t n, double *scale) {
  double d = 0, m = 0;
  for (int64_t i = 0; i < n; i++) {
    d = fmax(d, fabs(a[i] - b[i]));
    m = fmax(m, fabs(a[i]));
  }
  *scale = m;
  return d;
}

static double worst_kernel = 0;
static int tabled_sweeps = 0; /* line sweeps also run from fd_box_line_table's coefficients */

/* GPU result y (device) against the CPU's yc: max |diff| <= 1e-13 max |yc| */
static void cmp(const char *what, const char *label, const double *yd, const double *yc, int64_t n) {
  double *y = malloc(sizeof(double) * (size_t)n);
  CHECK(be->to_host(yd, y, sizeof(double) * (size_t)n) == HPMG_SUCCESS, "to_host: %s", hpmg_last_error());
  double sc;
  const double d = maxdiff(y, yc, n, &sc);
  const double rel = sc > 0 ? d / sc : d;
  if (rel > worst_kernel) worst_kernel = rel;
  CHECK(rel <= 1e-13, "%s %s: GPU vs CPU relative difference %.3g", label, what, rel);
  free(y);
}

static int kernels_case(const bc_case *c, int lay, int sp, int cells) {
  hpmg_problem_options po;
  options(c, lay, sp, cells, &po);
  po.lambda = sp == 2 ? 0.7 : 0;
  char label[160];
  snprintf(label, sizeof label, "%s %s %s %s", c->name, lay ? "cell" : "vertex",
           sp == 0 ? "uniform" : sp == 1 ? "tanh" : "geometric+tanh", CNAME[cells]);
  hpmg_box b;
  CHECK_OK(hpmg_box_init(&po, &b));
  fdb_geom g, dg;
  CHECK_OK(fd_box_geom(&b, po.lambda, &g));
  CHECK_OK(fd_box_geom_to_device(&g, be, &dg));
  const fdb_kernels *k = hpmg_fdb_kernels_select();
  const int64_t n = g.N;
  double *x = malloc(sizeof(double) * (size_t)n * 3), *rhs = x + n, *y = rhs + n;
  for (int64_t i = 0; i < 2 * n; i++) x[i] = check_rand();
  double *dx = dev_from(x, n), *db = dev_from(rhs, n), *dy = dev_from(y, n), *dcp = NULL, *red = NULL;
  CHECK_OK(be->alloc(sizeof(double) * (size_t)fdb_cuda_red_len(&g), (void **)&red));
  CHECK_OK(be->alloc(sizeof(double) * (size_t)fdb_cuda_line_cp_len(n, 1), (void **)&dcp));
  /* apply and residual */
  k->apply(&g, x, NULL, y);
  CHECK_OK(fdb_cuda_apply(&dg, dx, NULL, dy));
  cmp("A x", label, dy, y, n);
  k->apply(&g, x, rhs, y);
  CHECK_OK(fdb_cuda_apply(&dg, dx, db, dy));
  cmp("b - A x", label, dy, y, n);
  const double rc = k->residual_norm(&g, x, rhs);
  double rg;
  CHECK_OK(fdb_cuda_residual_norm(&dg, dx, db, red, &rg));
  CHECK(fabs(rg - rc) <= 1e-13 * rc, "%s: residual norm %.17g (GPU) vs %.17g (CPU)", label, rg, rc);
  int per[3];
  for (int d = 0; d < 3; d++) per[d] = d < b.dim && hpmg_box_periodic(&b, d);
  /* point GS, forward then backward, weight 1.3 */
  double *xc = malloc(sizeof(double) * (size_t)n);
  memcpy(xc, x, sizeof(double) * (size_t)n);
  for (int bw = 0; bw < 2; bw++) {
    k->gs_sweep(&g, per, 1.3, bw, xc, rhs);
    CHECK_OK(fdb_cuda_gs_sweep(&dg, per, 1.3, bw, dx, db));
  }
  cmp("point GS", label, dx, xc, n);
  /* line GS along each direction (cyclic lines along a periodic one), forward then backward;
   * where the lines' coefficients are alike also from fd_box_line_table's table */
  for (int dl = 0; dl < b.dim; dl++) {
    hpmg_scratch scr = {0};
    hpmg_scratch_reserve(&scr, sizeof(double) * (size_t)fd_box_line_scratch(dl, g.n[dl]));
    double *tab = malloc(sizeof(double) * (size_t)(3 * g.n[dl])), *dtab = NULL;
    const int tabled = fd_box_line_table(&g, per, dl, tab);
    if (tabled) dtab = dev_from(tab, 3 * g.n[dl]);
    double *x0 = malloc(sizeof(double) * (size_t)n), *dx2 = NULL;
    CHECK(be->to_host(dx, x0, sizeof(double) * (size_t)n) == HPMG_SUCCESS, "to_host: %s", hpmg_last_error());
    if (tabled) dx2 = dev_from(x0, n);
    for (int v = 0; v < 4; v++) { /* forward, backward; product colours, then a checkerboard where it can */
      const int bw = v & 1, chk = v >> 1;
      k->line_sweep(&g, per, dl, chk, bw, xc, rhs, &scr);
      CHECK_OK(fdb_cuda_line_sweep(&dg, per, dl, chk, bw, dx, db, NULL, dcp, dy));
      if (tabled) CHECK_OK(fdb_cuda_line_sweep(&dg, per, dl, chk, bw, dx2, db, dtab, dcp, dy));
    }
    char what[48];
    snprintf(what, sizeof what, "line GS along %c", "xyz"[dl]);
    cmp(what, label, dx, xc, n);
    if (tabled) {
      snprintf(what, sizeof what, "line GS along %c (tabled)", "xyz"[dl]);
      cmp(what, label, dx2, xc, n);
      tabled_sweeps++;
      be->free((void **)&dx2);
      be->free((void **)&dtab);
    }
    free(x0);
    free(tab);
    hpmg_scratch_free(&scr);
  }
  /* mean removal */
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += xc[i];
  for (int64_t i = 0; i < n; i++) xc[i] -= s / (double)n;
  CHECK_OK(fdb_cuda_mean_remove(n, dx, red));
  cmp("mean removal", label, dx, xc, n);
  be->free((void **)&dx);
  be->free((void **)&db);
  be->free((void **)&dy);
  be->free((void **)&dcp);
  be->free((void **)&red);
  free(x);
  free(xc);
  fd_box_geom_device_free(be, &dg);
  fd_box_geom_free(&g);
  hpmg_box_destroy(&b);
  return 0;
}

static int mode_kernels(void) {
  for (size_t c = 0; c < NCASES; c++)
    for (int lay = 0; lay < 2; lay++)
      for (int sp = 0; sp < 3; sp++)
        for (int cells = 0; cells < 3; cells++) kernels_case(&cases[c], lay, sp, cells);
  printf("kernels: worst GPU/CPU relative difference %.3g (%d line sweeps also from the coefficient table)\n",
         worst_kernel, tabled_sweeps);
  CHECK(tabled_sweeps > 0, "no case ran the tabled line sweep");
  return check_report();
}

static double worst_sol = 0, worst_hist = 0;
static int not_converged = 0, solves = 0;

/* CPU and GPU solves of the same problem; gpu_min 1: every level but the coarsest on the GPU */
static int solve_case(const bc_case *c, int lay, int sp, int cells, hpmg_solver_kind solver, int64_t gpu_min) {
  hpmg_problem_options po;
  options(c, lay, sp, cells, &po);
  char label[200];
  snprintf(label, sizeof label, "%s %s %s %s %s gpu_min %lld", c->name, lay ? "cell" : "vertex",
           sp == 0 ? "uniform" : sp == 1 ? "tanh" : "geometric+tanh", CNAME[cells],
           solver == HPMG_SOLVER_CG ? "CG" : solver == HPMG_SOLVER_FMG ? "FMG" : "V-cycle", (long long)gpu_min);
  hpmg_box b;
  CHECK_OK(hpmg_box_init(&po, &b));
  const int64_t n = hpmg_box_unknowns(&b);
  double *rhs = malloc(sizeof(double) * (size_t)n), *x[2] = {malloc(sizeof(double) * (size_t)n), malloc(sizeof(double) * (size_t)n)};
  CHECK_OK(fd_box_rhs(&po, &b, NULL, rhs));
  solves++;
  double hist[2][320];
  int nh[2], it[2], ngpu = 0;
  hpmg_error err[2];
  for (int dev = 0; dev < 2; dev++) {
    /* the same line colours on both (the default puts a checkerboard on the GPU's levels only):
     * the product colours and the checkerboard in turn */
    fd_box_config cfg = {.solver = solver, .tol = 1e-10, .maxit = 300, .pre = 2, .post = 2, .sor = 1, .line = -1,
                         .project_rhs = 1, .device = dev, .gpu_min = gpu_min, .fmg_cubic = 1,
                         .line_colours = solves & 1 ? 2 : 1};
    if (solver == HPMG_SOLVER_CG) cfg.pre = cfg.post = 1;
    fd_box_solver s;
    CHECK_OK(fd_box_solver_create(&b, po.lambda, &cfg, &s));
    if (dev) ngpu = fd_box_gpu_levels(s);
    err[dev] = fd_box_solve(s, rhs, x[dev]);
    /* the CPU's V-cycle iteration stagnates on some stretched 2D grids
     * (docs/bc.md): the GPU must then stagnate alike */
    CHECK(err[dev] == HPMG_SUCCESS || err[dev] == HPMG_ERR_NOT_CONVERGED, "%s (%s): %s", label, dev ? "GPU" : "CPU",
          hpmg_last_error());
    const double *h;
    nh[dev] = fd_box_history(s, &h);
    if (nh[dev] > 320) nh[dev] = 320;
    memcpy(hist[dev], h, sizeof(double) * (size_t)nh[dev]);
    hpmg_stats st;
    fd_box_get_stats(s, &st);
    it[dev] = st.iterations;
    fd_box_solver_destroy(&s);
  }
  CHECK(ngpu >= 1, "%s: no level on the GPU", label);
  CHECK(err[0] == err[1], "%s: CPU returns %d, GPU %d", label, (int)err[0], (int)err[1]);
  if (err[0] == HPMG_ERR_NOT_CONVERGED) not_converged++;
  CHECK(it[0] == it[1] && nh[0] == nh[1], "%s: %d iterations (CPU) vs %d (GPU)", label, it[0], it[1]);
  for (int i = 0; i < nh[0] && i < nh[1]; i++) {
    const double d = fabs(hist[0][i] - hist[1][i]) / hist[0][0];
    if (d > worst_hist) worst_hist = d;
    CHECK(d <= 1e-8, "%s: residual %d: %.17g (CPU) vs %.17g (GPU)", label, i, hist[0][i], hist[1][i]);
  }
  double sc;
  const double d = maxdiff(x[0], x[1], n, &sc), rel = d / sc;
  if (rel > worst_sol) worst_sol = rel;
  CHECK(rel <= 1e-10, "%s: solutions differ by %.3g relative (%d levels on the GPU)", label, rel, ngpu);
  free(rhs);
  free(x[0]);
  free(x[1]);
  hpmg_box_destroy(&b);
  return 0;
}

static int mode_solve(int quick) {
  const hpmg_solver_kind solvers[3] = {HPMG_SOLVER_CG, HPMG_SOLVER_VCYCLE, HPMG_SOLVER_FMG};
  if (quick) { /* 2D mixed, 3D channel (line GS), 3D N/D mixed; vertex and cell */
    const int pick[3] = {1, 6, 10};
    for (int c = 0; c < 3; c++) solve_case(&cases[pick[c]], c & 1, 1, c, solvers[c], 1);
    printf("solve: worst solution difference %.3g relative, worst history difference %.3g of r0\n", worst_sol, worst_hist);
    return check_report();
  }
  for (size_t c = 0; c < NCASES; c++)
    for (int lay = 0; lay < 2; lay++)
      for (int sp = 0; sp < 3; sp++) {
        /* the cell counts, solvers and splits over the cases, not every combination */
        const int k = (int)c + lay + sp, cells = (k + (int)c) % 3;
        solve_case(&cases[c], lay, sp, cells, solvers[k % 3], (k + cells) % 2 ? 1 : 0);
      }
  printf("solve: %d solves, worst solution difference %.3g relative, worst history difference %.3g of r0; %d not "
         "converged on the CPU (stagnation), alike on the GPU\n", solves, worst_sol, worst_hist, not_converged);
  return check_report();
}

int main(int argc, char **argv) {
  if (hpmg_backend_cuda(&be) != HPMG_SUCCESS) {
    printf("skipped: %s\n", hpmg_last_error());
    return 77;
  }
  const char *m = argc > 1 ? argv[1] : "kernels";
  if (!strcmp(m, "kernels")) return mode_kernels();
  if (!strcmp(m, "solve")) return mode_solve(0);
  if (!strcmp(m, "quick")) return mode_solve(1);
  printf("unknown mode %s\n", m);
  return 2;
}
