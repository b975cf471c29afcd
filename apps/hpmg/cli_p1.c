/* `hpmg solve --disc p1 ...`: P1 finite elements on a tetrahedral (2D:
 * triangular) mesh through the public API (an HPMG_DISC_P1 problem; paper
 * 003, docs/p1.md). Called by main.c with argv[1] = "solve". Every option is
 * checked before the mesh is read; bad input (options, mesh files, groups)
 * exits with 2, a problem that does not fit in memory with 3, a failed solve
 * with 1. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

enum { P1_EXIT_BAD_INPUT = 2, P1_EXIT_NO_MEMORY = 3, P1_EXIT_FAILED = 1 };
#define P1_MAX_ITEMS 64

static void usage(FILE *f) {
  fprintf(f,
          "usage: hpmg solve --disc p1 --mesh FILE|regular:L|irregular:L [options]\n"
          "Solves -div(sigma grad u) + lambda u = f with continuous piecewise-linear (P1) finite\n"
          "elements on a tetrahedral mesh (triangles in 2D), boundary conditions per physical group;\n"
          "Jacobi-preconditioned CG on the assembled matrix (paper 003; docs/p1.md).\n"
          "options (default in brackets):\n"
          "  --mesh M                a mesh file (Gmsh .msh 4.1/2.2, TetGen .node/.ele), or built-in:\n"
          "                          regular:L = [0,4]^3 in 8*2^L cubes of 6 tetrahedra (paper 003's\n"
          "                          Regular series; 2D: squares of 2 triangles), irregular:L = the\n"
          "                          same with interior nodes moved pseudo-randomly\n"
          "  --dim 2|3               dimension of the built-in meshes [3]\n"
          "  --lambda v              coefficient of the mass term, >= 0 [0]\n"
          "  --rhs sine|one|vector-one  f of the manufactured solution u = prod cos(pi (x_d - a_d)/L_d)\n"
          "                          over the mesh's bounding box (boundary data from u), f = 1, or\n"
          "                          b_i = 1 (paper 003's solver tests) [sine]\n"
          "  --bc-group LIST         conditions by physical group of boundary facets, comma-separated:\n"
          "                          name=dirichlet[:V] | name=neumann[:G] | name=robin:A[:G]\n"
          "                          (u = V; sigma du/dn = G; A u + sigma du/dn = G; values not allowed\n"
          "                          with --rhs sine); facets without one: zero flux [none]\n"
          "  --sigma LIST            sigma by region (a physical group of cells: name or tag),\n"
          "                          comma-separated: region=value or region=xx:yy:zz:xy:xz:yz\n"
          "                          (2D: xx:yy:xy), symmetric positive definite [1]\n"
          "  --solver cg|auto        Jacobi-preconditioned CG [cg]\n"
          "  --tol T                 relative residual reduction ||b - Ax|| / ||b - Ax0|| [1e-8]\n"
          "  --maxit N               iteration limit [100000]\n"
          "  --threads N             OpenMP threads, 0 = runtime default [0]\n"
          "  --device cpu|cuda       where CG runs [cpu]\n"
          "  --vtu FILE              write the solution on the mesh (VTK XML, ParaView)\n"
          "  --json                  print one JSON object instead of text (docs/json.md)\n"
          "  --quiet                 no per-iteration lines\n"
          "  --help, --version\n"
          "Exit status: 0 converged, 1 solve failed or did not converge, 2 invalid input (options,\n"
          "mesh file, groups), 3 not enough memory.\n");
}

static int bad(const char *fmt, const char *a) {
  fprintf(stderr, "hpmg: ");
  fprintf(stderr, fmt, a);
  fprintf(stderr, "\n(see hpmg solve --disc p1 --help)\n");
  return P1_EXIT_BAD_INPUT;
}

static int num(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return end != s && !*end && !errno && isfinite(*v);
}

/* splits s (modified) at sep into at most max parts */
static int split(char *s, char sep, char **parts, int max) {
  int n = 0;
  while (s && n < max) {
    parts[n++] = s;
    char *c = strchr(s, sep);
    if (c) *c++ = 0;
    s = c;
  }
  return s ? -1 : n;
}

static int parse_bcs(char *arg, hpmg_p1_bc *bc, int *nbc) {
  char *items[P1_MAX_ITEMS];
  const int n = split(arg, ',', items, P1_MAX_ITEMS);
  if (n < 0) return bad("--bc-group: more than 64 conditions%s", "");
  for (int i = 0; i < n; i++) {
    char *eq = strchr(items[i], '=');
    if (!eq || eq == items[i]) return bad("--bc-group: '%s' is not name=kind[:values]", items[i]);
    *eq = 0;
    hpmg_p1_bc *b = &bc[i];
    memset(b, 0, sizeof *b);
    b->group = items[i];
    char *f[4];
    const int nf = split(eq + 1, ':', f, 4);
    int ok = nf >= 1;
    if (ok && !strcmp(f[0], "dirichlet")) b->kind = HPMG_P1_BC_DIRICHLET, ok = nf <= 2 && (nf < 2 || num(f[1], &b->value));
    else if (ok && !strcmp(f[0], "neumann")) b->kind = HPMG_P1_BC_NEUMANN, ok = nf <= 2 && (nf < 2 || num(f[1], &b->value));
    else if (ok && !strcmp(f[0], "robin"))
      b->kind = HPMG_P1_BC_ROBIN, ok = (nf == 2 || nf == 3) && num(f[1], &b->robin_alpha) && (nf < 3 || num(f[2], &b->value));
    else ok = 0;
    if (!ok) return bad("--bc-group: '%s' is not dirichlet[:V], neumann[:G] or robin:A[:G]", eq + 1);
  }
  *nbc = n;
  return 0;
}

static int parse_sigma(char *arg, hpmg_p1_sigma *sg, double (*tensors)[6], int *ns) {
  char *items[P1_MAX_ITEMS];
  const int n = split(arg, ',', items, P1_MAX_ITEMS);
  if (n < 0) return bad("--sigma: more than 64 regions%s", "");
  for (int i = 0; i < n; i++) {
    char *eq = strchr(items[i], '=');
    if (!eq || eq == items[i]) return bad("--sigma: '%s' is not region=value or region=xx:yy:zz:xy:xz:yz", items[i]);
    *eq = 0;
    memset(&sg[i], 0, sizeof sg[i]);
    sg[i].region = items[i];
    char *f[7];
    const int nf = split(eq + 1, ':', f, 7);
    int ok = nf == 1 || nf == 3 || nf == 6;
    for (int k = 0; ok && k < nf; k++) ok = num(f[k], nf == 1 ? &sg[i].value : &tensors[i][k]);
    if (!ok) return bad("--sigma: '%s' is not a value or 3 (2D) / 6 (3D) tensor components", eq + 1);
    if (nf > 1) sg[i].tensor = tensors[i], sg[i].value = nf; /* value: the component count, checked below */
  }
  *ns = n;
  return 0;
}

int hpmg_cli_p1(int argc, char **argv) {
  enum { O_DISC = 256, O_MESH, O_DIM, O_LAMBDA, O_RHS, O_BC, O_SIGMA, O_SOLVER, O_TOL, O_MAXIT, O_THREADS, O_DEVICE,
         O_VTU, O_JSON, O_QUIET, O_HELP, O_VERSION };
  static const struct option opts[] = {
      {"disc", 1, 0, O_DISC},       {"mesh", 1, 0, O_MESH},       {"dim", 1, 0, O_DIM},     {"lambda", 1, 0, O_LAMBDA},
      {"rhs", 1, 0, O_RHS},         {"bc-group", 1, 0, O_BC},     {"sigma", 1, 0, O_SIGMA}, {"solver", 1, 0, O_SOLVER},
      {"tol", 1, 0, O_TOL},         {"maxit", 1, 0, O_MAXIT},     {"threads", 1, 0, O_THREADS},
      {"device", 1, 0, O_DEVICE},   {"vtu", 1, 0, O_VTU},         {"json", 0, 0, O_JSON},   {"quiet", 0, 0, O_QUIET},
      {"help", 0, 0, O_HELP},       {"version", 0, 0, O_VERSION}, {0, 0, 0, 0}};
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_P1;
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.solver = HPMG_SOLVER_CG;
  so.smoother = HPMG_SMOOTHER_JACOBI;
  so.tol = 1e-8;
  so.maxit = 100000;
  static hpmg_p1_bc bcs[P1_MAX_ITEMS];
  static hpmg_p1_sigma sigmas[P1_MAX_ITEMS];
  static double tensors[P1_MAX_ITEMS][6];
  int json = 0, quiet = 0, c, rc;
  const char *vtu = NULL;
  double v;
  opterr = 0;
  optind = 2;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    rc = 0;
    switch (c) {
    case O_DISC:
      if (strcmp(optarg, "p1")) return bad("--disc %s cannot be combined with the P1 options", optarg);
      break;
    case O_MESH: po.mesh = optarg; break;
    case O_DIM:
      if (!num(optarg, &v) || (v != 2 && v != 3)) return bad("--dim: '%s' (allowed: 2, 3)", optarg);
      po.dim = (int)v;
      break;
    case O_LAMBDA:
      if (!num(optarg, &po.lambda) || po.lambda < 0) return bad("--lambda: '%s' is not a number >= 0", optarg);
      break;
    case O_RHS: {
      int k = -1;
      for (int i = 0; i < 3; i++)
        if (!strcmp(optarg, hpmg_cli_rhss[i])) k = i;
      if (k < 0) return bad("--rhs: unknown value '%s' (allowed: sine|one|vector-one)", optarg);
      po.rhs = (hpmg_rhs_kind)k;
      break;
    }
    case O_BC: rc = parse_bcs(optarg, bcs, &po.num_p1_bc), po.p1_bc = bcs; break;
    case O_SIGMA: rc = parse_sigma(optarg, sigmas, tensors, &po.num_sigma), po.sigma = sigmas; break;
    case O_SOLVER:
      if (strcmp(optarg, "cg") && strcmp(optarg, "auto"))
        return bad("--solver %s: P1 problems are solved by Jacobi-preconditioned CG (cg, auto) until the algebraic "
                   "multigrid exists", optarg);
      break;
    case O_TOL:
      if (!num(optarg, &so.tol) || !(so.tol > 0 && so.tol < 1)) return bad("--tol: '%s' is not in (0,1)", optarg);
      break;
    case O_MAXIT:
      if (!num(optarg, &v) || v < 1 || v > 1e8 || v != floor(v)) return bad("--maxit: '%s' is not an integer in 1..1e8", optarg);
      so.maxit = (int)v;
      break;
    case O_THREADS:
      if (!num(optarg, &v) || v < 0 || v > 4096 || v != floor(v)) return bad("--threads: '%s' is not in 0..4096", optarg);
      so.threads = (int)v;
      break;
    case O_DEVICE:
      if (!strcmp(optarg, "cpu")) so.device = HPMG_DEVICE_CPU;
      else if (!strcmp(optarg, "cuda")) so.device = HPMG_DEVICE_CUDA;
      else return bad("--device: unknown value '%s' (allowed: cpu|cuda)", optarg);
      break;
    case O_VTU: vtu = optarg; break;
    case O_JSON: json = 1; break;
    case O_QUIET: quiet = 1; break;
    case O_HELP: usage(stdout); return 0;
    case O_VERSION: hpmg_cli_print_version(); return 0;
    default:
      if (optopt)
        for (const struct option *o = opts; o->name; o++)
          if (o->val == optopt) return bad("option --%s needs a value", o->name);
      return bad("unknown option '%s' for --disc p1", argv[optind - 1]);
    }
    if (rc) return rc;
  }
  if (optind < argc) return bad("unexpected argument '%s'", argv[optind]);
  if (!po.mesh) return bad("--disc p1 needs --mesh FILE, regular:L or irregular:L%s", "");
  for (int i = 0; i < po.num_sigma; i++)
    if (sigmas[i].tensor && sigmas[i].value != (po.dim == 3 ? 6 : 3)) {
      fprintf(stderr, "hpmg: --sigma %s: a %dD tensor has %d components (got %g)\n", sigmas[i].region, po.dim,
              po.dim == 3 ? 6 : 3, sigmas[i].value);
      return P1_EXIT_BAD_INPUT;
    } else if (sigmas[i].tensor) sigmas[i].value = 0;
  if (vtu && hpmg_cli_vtu_unwritable(vtu)) return P1_EXIT_BAD_INPUT; /* before solving */
  so.verbose = !json && !quiet;
  double need;
  hpmg_error e = hpmg_memory_estimate(&po, &so, &need);
  if (e) {
    fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
    return P1_EXIT_BAD_INPUT;
  }
  hpmg_problem prob;
  hpmg_solver solver;
  if ((e = hpmg_problem_create(&po, &prob))) {
    fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
    return e == HPMG_ERR_MEMORY ? P1_EXIT_NO_MEMORY : P1_EXIT_BAD_INPUT;
  }
  if ((e = hpmg_solver_create(prob, &so, &solver))) {
    fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
    hpmg_problem_destroy(&prob);
    return e == HPMG_ERR_MEMORY ? P1_EXIT_NO_MEMORY : (e == HPMG_ERR_ARG || e == HPMG_ERR_BACKEND) ? P1_EXIT_BAD_INPUT
                                                                                                 : P1_EXIT_FAILED;
  }
  hpmg_stats st;
  hpmg_solver_get_stats(solver, &st);
  const int64_t n = hpmg_problem_num_dofs(prob);
  if (!json)
    printf("hpmg %s: -div(sigma grad u)%s = f, P1 on %s, %lld nodes, %lld cells, %lld nonzeros\n", HPMG_VERSION_STRING,
           po.lambda != 0 ? " + lambda u" : "", po.mesh, (long long)n, (long long)st.cells, (long long)st.nnz);
  double *x = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (!x) {
    fprintf(stderr, "hpmg: cannot allocate the solution vector\n");
    hpmg_solver_destroy(&solver);
    hpmg_problem_destroy(&prob);
    return P1_EXIT_NO_MEMORY;
  }
  memset(x, 0, sizeof(double) * (size_t)n);
  const hpmg_error se = hpmg_solver_solve(solver, NULL, x);
  hpmg_solver_get_stats(solver, &st);
  int status = se == HPMG_SUCCESS ? 0 : P1_EXIT_FAILED;
  if (se) fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
  double l2 = NAN, maxerr = NAN;
  if ((se == HPMG_SUCCESS || se == HPMG_ERR_NOT_CONVERGED) && po.rhs == HPMG_RHS_SINE) hpmg_problem_error(prob, x, &l2, &maxerr);
  if (json) {
    hpmg_cli_report r = {.po = po, .so = so, .st = st, .n = 0, .dofs_total = n, .l2_error = l2, .max_error = maxerr,
                         .rms_error = NAN, .solve_s = st.t_solve, .solve_mean_s = st.t_solve, .repeat = 1,
                         .dofs_per_s = st.t_solve > 0 ? n / st.t_solve : 0.0,
                         .bytes_host = so.device == HPMG_DEVICE_CPU ? need : NAN,
                         .bytes_device = so.device == HPMG_DEVICE_CUDA ? need : 0.0, .status = status, .mesh = po.mesh};
    r.nhistory = hpmg_solver_history(solver, &r.history);
    hpmg_cli_print_json(&r);
  } else {
    printf("summary\n");
    printf("  method              Jacobi-preconditioned CG on the assembled matrix, double, %s\n",
           so.device == HPMG_DEVICE_CUDA ? "GPU" : "CPU");
    printf("  mesh                %s: %lld nodes, %lld cells, %lld nonzeros, %d threads\n", po.mesh, (long long)n,
           (long long)st.cells, (long long)st.nnz, omp_get_max_threads());
    printf("  iterations          %d (%s), relative residual %.3e, rate %.4f\n", st.iterations,
           st.converged ? "converged" : "NOT converged", st.residual0 > 0 ? st.residual / st.residual0 : 0.0, st.rate);
    if (st.compat_defect > 0) printf("  singular problem    right-hand side projected, relative defect %.3e\n", st.compat_defect);
    if (po.rhs == HPMG_RHS_SINE) printf("  error               L2 %.6e   max (nodal) %.6e\n", l2, maxerr);
    printf("  time [s]            setup %.4f (assembly: symbolic %.4f, numeric %.4f) | CG %.4f\n", st.t_setup,
           st.t_symbolic, st.t_numeric, st.t_krylov);
    printf("  time to solution    %.4f s\n", st.t_solve);
  }
  if (vtu && status == 0) {
    if ((e = hpmg_problem_write_vtu(prob, x, vtu))) {
      fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
      status = P1_EXIT_FAILED;
    } else if (!json) printf("  wrote %s\n", vtu);
  }
  free(x);
  hpmg_solver_destroy(&solver);
  hpmg_problem_destroy(&prob);
  return status;
}
