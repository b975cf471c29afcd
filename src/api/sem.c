/* The public objects on spectral elements (HPMG_DISC_SEM): box -> mesh and
 * skeleton; solve = condensed load with the boundary data, dCG, recovery of
 * the full field (docs/sem.md). */
#include "sem.h"
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "disc/fd/fd_box.h"
#include "disc/sem/sem_pmg.h"
#include "disc/sem/sem_system.h"
#include "grid/box.h"
#include "io/vtu.h"

static const char *const face_names[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};
static const char *const dir_names[3] = {"x", "y", "z"};

struct hpmg_sem_problem_s {
  hpmg_problem_options o; /* spacing nodes not kept (the box owns copies) */
  hpmg_box box;
  hpmg_sem_mesh mesh;
  double *xl[3];
  double t_setup;
};

struct hpmg_sem_solver_s {
  hpmg_sem_problem p;
  hpmg_solver_options o;
  int pmg_on;      /* MG, kMG or kvMG: the p-multigrid below */
  hpmg_sem_pmg pmg;
  double *hist;
  int nhist, cap;
  hpmg_stats st;
  /* a solve's vectors, kept between solves (so that a solve faults in no
   * new pages): f at the GLL nodes; on the skeleton the condensed
   * right-hand side, the Dirichlet values and the condensed solution */
  double *f, *rhs, *uD, *xs;
};

/* cells of direction d as the box will have them (0 if out of range) */
static int64_t cells_of(const hpmg_problem_options *o, int d) {
  if (o->cells[d]) return o->cells[d];
  if (o->coarse < 1 || o->refine < 0 || o->refine > 30) return 0;
  return (int64_t)o->coarse << o->refine;
}

hpmg_error hpmg_sem_problem_check(const hpmg_problem_options *o) {
  HPMG_CHECK_ARG(o->dim == 2 || o->dim == 3, "--dim must be 2 or 3 (got %d)", o->dim);
  HPMG_CHECK_ARG(o->degree >= HPMG_SEM_MIN_DEGREE && o->degree <= HPMG_SEM_MAX_API_DEGREE,
                 "--degree must be in %d..%d for spectral elements (--disc sem) (got %d)", HPMG_SEM_MIN_DEGREE,
                 HPMG_SEM_MAX_API_DEGREE, o->degree);
  HPMG_CHECK_ARG(o->lambda >= 0 && isfinite(o->lambda), "--lambda must be >= 0 and finite (got %g)", o->lambda);
  HPMG_CHECK_ARG(o->rhs == HPMG_RHS_SINE || o->rhs == HPMG_RHS_WAVES || o->rhs == HPMG_RHS_ONE,
                 "spectral elements take --rhs sine (the box's manufactured solution), waves (paper 001, eq. 27) or one "
                 "(f = 1, boundary data from bc)");
  HPMG_CHECK_ARG(o->fd_layout == HPMG_FD_VERTEX, "--fd-layout applies to finite differences (--disc fd) only");
  HPMG_CHECK_ARG(!o->mesh && !o->num_sigma && !o->sigma_cells && !o->num_p1_bc,
                 "mesh, sigma and the P1 boundary conditions apply to P1 problems only (disc p1)");
  HPMG_CHECK_ARG(o->project_rhs == 0 || o->project_rhs == 1, "project_rhs must be 0 or 1 (got %d)", o->project_rhs);
  double nodes = 1;
  for (int d = 0; d < o->dim; d++) {
    const int64_t c = cells_of(o, d);
    HPMG_CHECK_ARG(c >= 1 && c <= 2147483646, "elements in %s (--cells, or --coarse/--refine) must be in 1..2^31-2 (got %lld)",
                   dir_names[d], (long long)c);
    const int per = o->bc[2 * d].kind == HPMG_BC_PERIODIC || o->bc[2 * d + 1].kind == HPMG_BC_PERIODIC;
    HPMG_CHECK_ARG(!per || c >= 3, "spectral elements: periodic direction %s needs at least 3 elements (got %lld)",
                   dir_names[d], (long long)c);
    nodes *= (double)c * o->degree + 1;
  }
  HPMG_CHECK_ARG(nodes < 4.0e18, "%.3g GLL nodes overflow 64-bit indices", nodes);
  for (int f = 0; f < 2 * o->dim; f++)
    HPMG_CHECK_ARG(!o->bc[f].values, "bc %s: arrays of boundary values are not supported for spectral elements (use fn or value)",
                   face_names[f]);
  return HPMG_SUCCESS;
}

void hpmg_sem_problem_destroy(hpmg_sem_problem *pp) {
  hpmg_sem_problem p = *pp;
  if (!p) return;
  hpmg_sem_mesh_destroy(&p->mesh);
  hpmg_box_destroy(&p->box);
  for (int d = 0; d < 3; d++) hpmg_free(&p->xl[d]);
  free(p);
  *pp = NULL;
}

hpmg_error hpmg_sem_problem_create(const hpmg_problem_options *o, hpmg_sem_problem *out) {
  *out = NULL;
  HPMG_CALL(hpmg_sem_problem_check(o));
  const double t0 = hpmg_wtime();
  hpmg_sem_problem p = calloc(1, sizeof *p);
  if (!p) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the spectral-element problem");
  p->o = *o;
  for (int d = 0; d < 3; d++) p->o.spacing[d].nodes = NULL;
  hpmg_error e = hpmg_box_init(o, &p->box);
  if (e) {
    free(p);
    return e;
  }
  e = hpmg_sem_mesh_create(&p->box, o->degree, o->lambda, &p->mesh);
  if (e) {
    hpmg_box_destroy(&p->box);
    free(p);
    return e;
  }
  for (int d = 0; d < o->dim && !e; d++) e = hpmg_sem_lattice_coords(&p->mesh, d, &p->xl[d]);
  if (!e && o->dim == 2) e = hpmg_calloc(sizeof(double) * 2, &p->xl[2]);
  if (e) {
    hpmg_sem_problem_destroy(&p);
    return e;
  }
  p->t_setup = hpmg_wtime() - t0;
  *out = p;
  return HPMG_SUCCESS;
}

int64_t hpmg_sem_problem_num_dofs(hpmg_sem_problem p) { return p->mesh.nlat_total; }

void hpmg_sem_problem_grid(hpmg_sem_problem p, int64_t n[3]) {
  for (int d = 0; d < 3; d++) n[d] = p->mesh.nlat[d];
}

hpmg_error hpmg_sem_problem_load_vector(hpmg_sem_problem p, hpmg_function f, void *user, double *b) {
  const hpmg_sem_mesh *m = &p->mesh;
  const int64_t n0 = m->nlat[0], n1 = m->nlat[1], n2 = m->nlat[2];
  int64_t bad = 0;
#pragma omp parallel for collapse(2) reduction(+ : bad) schedule(static)
  for (int64_t k = 0; k < n2; k++)
    for (int64_t j = 0; j < n1; j++)
      for (int64_t i = 0; i < n0; i++) {
        const double x[3] = {p->xl[0][i], p->xl[1][j], p->xl[2][k]};
        const double v = f(x, user);
        bad += !isfinite(v);
        b[i + n0 * (j + n1 * k)] = v;
      }
  if (bad) return hpmg_error_set(HPMG_ERR_NUMERIC, "the right-hand side function returned %lld non-finite values", (long long)bad);
  return HPMG_SUCCESS;
}

/* the built-in manufactured solution: u, grad u, f */
static void manufactured(hpmg_sem_problem p, const double x[3], double *u, double grad[3], double *f) {
  fd_box_manufactured(&p->o, &p->box, x, u, grad, f);
}

static double exact_u(void *ctx, const double x[3]) {
  double u;
  manufactured(ctx, x, &u, NULL, NULL);
  return u;
}
static double f_of(const double x[3], void *ctx) {
  if (((hpmg_sem_problem)ctx)->o.rhs == HPMG_RHS_ONE) return 1.0;
  double f;
  manufactured(ctx, x, NULL, NULL, &f);
  return f;
}

/* boundary data: from the manufactured solution, or the options' value/fn */
static double bc_builtin(void *ctx, int face, const double x[3]) {
  hpmg_sem_problem p = ctx;
  double u, g[3];
  manufactured(p, x, &u, g, NULL);
  if (p->box.bc[face] == HPMG_BC_DIRICHLET) return u;
  return (face & 1) ? g[face / 2] : -g[face / 2];
}
static double bc_user(void *ctx, int face, const double x[3]) {
  const hpmg_bc *bc = &((hpmg_sem_problem)ctx)->o.bc[face];
  return bc->fn ? bc->fn(x, bc->user) : bc->value;
}

hpmg_error hpmg_sem_problem_error(hpmg_sem_problem p, const double *x, double *l2, double *maxerr) {
  return hpmg_sem_error(&p->mesh, p->xl, x, exact_u, p, hpmg_sem_singular(&p->mesh), l2, maxerr);
}

hpmg_error hpmg_sem_problem_write_vtu(hpmg_sem_problem p, const double *x, const char *path) {
  const hpmg_sem_mesh *m = &p->mesh;
  return hpmg_vtu_write_lattice(path, m->dim, m->p, m->cells, p->xl, m->nlat, x, "u");
}

double hpmg_sem_memory_estimate(const hpmg_problem_options *o) {
  double ne = 1, nlat = 1;
  for (int d = 0; d < o->dim; d++) {
    const double c = (double)cells_of(o, d);
    ne *= c;
    nlat *= c * o->degree + 1;
  }
  const double ns = nlat - ne * pow(o->degree - 1, o->dim);
  /* skeleton: rhs, uD, x, dCG's b, 4 work vectors, the inverse diagonal;
   * full field: f, the caller's b and x; per element: coefficients, entity offsets, colour */
  return 9.0 * 8 * ns + 3.0 * 8 * nlat + ne * (8.0 * (o->dim + 1) + 8.0 * (o->dim == 3 ? 26 : 8) + 9.0) + 1.0 * ns;
}

/* ------------------------------------------------------------------ solver */

/* The solvers of paper 001 in hpmg_solver_options terms: dCG = CG with the
 * point-Jacobi preconditioner (smoother AUTO or JACOBI); MG = VCYCLE with the
 * star smoother; kMG = CG with the star smoother (PATCH: the star is the
 * vertex patch of the condensed system), a V-cycle as flexible CG's
 * preconditioner; kvMG = kMG with sweeps_doubling. Solver AUTO = kvMG for
 * every degree (faster than dCG from p = 2 on with the h-multigrid coarse
 * solve, and the fewest iterations on stretched and anisotropic meshes;
 * docs/sem.md), or dCG with smoother JACOBI. */
static int sem_uses_pmg(const hpmg_solver_options *so) {
  return so->solver == HPMG_SOLVER_VCYCLE || (so->solver == HPMG_SOLVER_CG && so->smoother == HPMG_SMOOTHER_PATCH);
}

hpmg_error hpmg_sem_options_resolve(hpmg_solver_options *so) {
  HPMG_CHECK_ARG(so->solver == HPMG_SOLVER_AUTO || so->solver == HPMG_SOLVER_CG || so->solver == HPMG_SOLVER_VCYCLE,
                 "spectral elements (--disc sem) are solved by dCG (Jacobi-preconditioned CG on the condensed system), "
                 "MG (V-cycle iteration of the p-multigrid), kMG or kvMG (flexible CG with one V-cycle): --solver "
                 "dcg|mg|kmg|kvmg");
  if (so->solver == HPMG_SOLVER_AUTO) { /* kvMG (docs/sem.md, "--solver auto"); dCG where Jacobi is asked for */
    HPMG_CHECK_ARG(so->smoother == HPMG_SMOOTHER_AUTO || so->smoother == HPMG_SMOOTHER_JACOBI ||
                       so->smoother == HPMG_SMOOTHER_PATCH,
                   "spectral elements: --solver auto takes --smoother jacobi (dCG) or patch (kvMG) or none");
    so->solver = HPMG_SOLVER_CG;
    if (so->smoother != HPMG_SMOOTHER_JACOBI) so->smoother = HPMG_SMOOTHER_PATCH, so->sweeps_doubling = 1;
  }
  if (so->solver == HPMG_SOLVER_VCYCLE) {
    HPMG_CHECK_ARG(so->smoother == HPMG_SMOOTHER_AUTO || so->smoother == HPMG_SMOOTHER_PATCH,
                   "spectral elements: the p-multigrid smooths with the star smoother (--smoother patch or auto)");
    so->smoother = HPMG_SMOOTHER_PATCH;
  } else {
    HPMG_CHECK_ARG(so->smoother == HPMG_SMOOTHER_AUTO || so->smoother == HPMG_SMOOTHER_JACOBI ||
                       so->smoother == HPMG_SMOOTHER_PATCH,
                   "spectral elements: CG is preconditioned by point Jacobi (dCG: --smoother jacobi or auto) or by a "
                   "V-cycle with the star smoother (kMG, kvMG: --smoother patch)");
    if (so->smoother == HPMG_SMOOTHER_AUTO) so->smoother = HPMG_SMOOTHER_JACOBI;
  }
  HPMG_CHECK_ARG(so->sweeps_doubling == 0 || so->sweeps_doubling == 1, "sweeps_doubling must be 0 or 1 (got %d)",
                 so->sweeps_doubling);
  HPMG_CHECK_ARG(!so->sweeps_doubling || sem_uses_pmg(so),
                 "spectral elements: sweeps doubled per coarser level (kvMG) needs the p-multigrid (--solver kvmg)");
  if (sem_uses_pmg(so))
    HPMG_CHECK_ARG(so->pre >= 0 && so->pre <= 64 && so->post >= 0 && so->post <= 64 && so->pre + so->post >= 1,
                   "spectral elements: --pre %d and --post %d must be in 0..64, at least one sweep in all", so->pre,
                   so->post);
  HPMG_CHECK_ARG(so->cycle == HPMG_CYCLE_STANDARD, "spectral elements: the V-cycle is the standard one (--cycle standard)");
  HPMG_CHECK_ARG(so->precision == HPMG_PREC_DOUBLE, "spectral elements are solved in double precision");
  HPMG_CHECK_ARG(so->device == HPMG_DEVICE_CPU, "spectral elements run on the CPU (--device cpu)");
  HPMG_CHECK_ARG(so->tol > 0 && so->tol < 1, "--tol must be in (0,1) (got %g)", so->tol);
  HPMG_CHECK_ARG(so->maxit >= 1 && so->maxit <= 100000000, "--maxit must be in 1..1e8 (got %d)", so->maxit);
  HPMG_CHECK_ARG(so->threads >= 0 && so->threads <= 4096, "--threads must be in 0..4096 (got %d)", so->threads);
  return HPMG_SUCCESS;
}

void hpmg_sem_solver_destroy(hpmg_sem_solver *sp) {
  hpmg_sem_solver s = *sp;
  if (!s) return;
  if (s->pmg_on) hpmg_sem_pmg_destroy(&s->pmg);
  hpmg_free(&s->hist);
  hpmg_free(&s->f);
  hpmg_free(&s->rhs);
  hpmg_free(&s->uD);
  hpmg_free(&s->xs);
  free(s);
  *sp = NULL;
}

hpmg_error hpmg_sem_solver_create(hpmg_sem_problem p, const hpmg_solver_options *so, hpmg_sem_solver *out) {
  *out = NULL;
  hpmg_solver_options o = *so;
  HPMG_CALL(hpmg_sem_options_resolve(&o));
  if (o.threads > 0) omp_set_num_threads(o.threads);
  hpmg_sem_solver s = calloc(1, sizeof *s);
  if (!s) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the spectral-element solver");
  s->p = p;
  s->o = o;
  s->cap = o.maxit + 2;
  const int64_t N = p->mesh.nlat_total, ns = p->mesh.ns;
  hpmg_error e = hpmg_malloc(sizeof(double) * (size_t)s->cap, &s->hist);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)N, &s->f);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)ns, &s->rhs);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)ns, &s->uD);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)ns, &s->xs);
  if (!e) { /* first touch now, by the threads that will use them, not in the first solve */
    hpmg_vec_zero(HPMG_REAL_DOUBLE, N, s->f);
    double *sk[3] = {s->rhs, s->uD, s->xs};
    for (int i = 0; i < 3; i++) hpmg_vec_zero(HPMG_REAL_DOUBLE, ns, sk[i]);
  }
  if (e) {
    hpmg_sem_solver_destroy(&s);
    return e;
  }
  s->st.dofs = p->mesh.nlat_total;
  s->st.dofs_condensed = p->mesh.ns;
  s->st.levels = 1;
  s->st.t_setup = p->t_setup;
  s->st.bytes_host = hpmg_sem_memory_estimate(&p->o);
  if (sem_uses_pmg(&o)) {
    const double t0 = hpmg_wtime();
    const hpmg_sem_mg_kind kind = o.solver == HPMG_SOLVER_VCYCLE ? HPMG_SEM_SOLVE_MG
                                  : o.sweeps_doubling            ? HPMG_SEM_SOLVE_KVMG
                                                                 : HPMG_SEM_SOLVE_KMG;
    e = hpmg_sem_pmg_create(&p->box, &p->mesh, kind, o.pre, o.post, HPMG_SEM_COARSE_AUTO, &s->pmg);
    if (e) {
      hpmg_sem_solver_destroy(&s);
      return e;
    }
    s->pmg_on = 1;
    s->st.levels = s->pmg.nlevels;
    s->st.t_setup += hpmg_wtime() - t0;
    /* dCG's Jacobi diagonal and two of its vectors are not needed, the hierarchy is */
    s->st.bytes_host += hpmg_sem_pmg_bytes(&s->pmg) - 3.0 * 8 * (double)p->mesh.ns;
  }
  *out = s;
  return HPMG_SUCCESS;
}

static void monitor(void *ctx, int it, double rn, double r0) {
  hpmg_sem_solver s = ctx;
  hpmg_history_record(s->hist, &s->nhist, s->cap, it, rn, r0, s->o.verbose);
}

hpmg_error hpmg_sem_solver_solve(hpmg_sem_solver s, const double *b, double *x) {
  hpmg_sem_problem p = s->p;
  const hpmg_sem_mesh *m = &p->mesh;
  const int64_t N = m->nlat_total, ns = m->ns;
  const int user_bc = b || p->o.rhs == HPMG_RHS_ONE;
  if (!user_bc)
    for (int f = 0; f < 2 * p->o.dim; f++)
      HPMG_CHECK_ARG(!p->o.bc[f].fn && p->o.bc[f].value == 0,
                     "bc %s: boundary data need a right-hand side b (the built-in one takes them from the manufactured "
                     "solution)",
                     face_names[f]);
  const double t0 = hpmg_wtime();
  double t_data = 0, *f = s->f, *rhs = s->rhs, *uD = s->uD, *xs = s->xs;
  hpmg_error e = HPMG_SUCCESS;
  if (b) {
    const int64_t bad = hpmg_vec_count_nonfinite(HPMG_REAL_DOUBLE, N, b);
    if (bad) e = hpmg_error_set(HPMG_ERR_NUMERIC, "%lld non-finite entries (NaN/Inf) in the right-hand side", (long long)bad);
    else memcpy(f, b, sizeof(double) * (size_t)N);
  } else { /* the built-in problem's f at the GLL nodes: the problem's data, not the solve (not in t_solve) */
    const double tf = hpmg_wtime();
    e = hpmg_sem_problem_load_vector(p, f_of, p, f);
    t_data = hpmg_wtime() - tf;
  }
  hpmg_sem_bc_fn bcfn = user_bc ? bc_user : bc_builtin;
  const double setup = s->st.t_setup, bytes = s->st.bytes_host;
  memset(&s->st, 0, sizeof s->st);
  s->st.t_setup = setup;
  s->st.bytes_host = bytes;
  s->st.dofs = N;
  s->st.dofs_condensed = ns;
  s->st.levels = s->pmg_on ? s->pmg.nlevels : 1;
  double shift = 0;
  const int singular = hpmg_sem_singular(m);
  if (!e && singular) {
    double c, cabs;
    e = hpmg_sem_load_mean(m, p->xl, f, bcfn, p, &c, &cabs);
    if (!e) {
      s->st.compat_defect = c;
      if (p->o.project_rhs) shift = c;
      else e = fd_box_compat_check(c, cabs, 1.0, 0);
    }
  }
  if (!e) e = hpmg_sem_condensed_rhs(m, p->xl, f, shift, bcfn, p, rhs, uD);
  hpmg_krylov_info info = {0};
  if (!e) {
    hpmg_krylov_params prm = {0};
    prm.rtol = s->o.tol;
    prm.maxit = s->o.maxit;
    prm.x0_zero = 1;
    prm.mon = monitor;
    prm.mctx = s;
    s->nhist = 0;
    memset(xs, 0, sizeof(double) * (size_t)ns);
    const double tk = hpmg_wtime();
    e = s->pmg_on ? hpmg_sem_pmg_solve(&s->pmg, rhs, xs, &prm, &info) : hpmg_sem_dcg(m, rhs, xs, &prm, &info);
    s->st.t_krylov = hpmg_wtime() - tk;
  }
  if (!e) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < ns; i++) xs[i] += uD[i];
    e = hpmg_sem_recover_field(m, p->xl, f, shift, bcfn, p, xs, x);
  }
  if (!e && singular) {
    const double mean = hpmg_sem_field_mean(m, x);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N; i++) x[i] -= mean;
  }
  hpmg_krylov_stats(&info, &s->st);
  s->st.t_solve = hpmg_wtime() - t0 - t_data;
  if (e) return e;
  if (!info.converged) return hpmg_not_converged(&info, info.r0 > 0 ? info.rnorm / info.r0 : 0.0, s->o.tol);
  return HPMG_SUCCESS;
}

void hpmg_sem_solver_get_stats(hpmg_sem_solver s, hpmg_stats *st) { *st = s->st; }
int hpmg_sem_solver_history(hpmg_sem_solver s, const double **h) {
  *h = s->hist;
  return s->nhist;
}
void hpmg_sem_solver_set_verbose(hpmg_sem_solver s, int verbose) { s->o.verbose = verbose; }
