/* `hpmg solve --disc sem ...`: spectral elements with static condensation
 * through the public API (an HPMG_DISC_SEM problem; paper 001, docs/sem.md).
 * Called by main.c with argv[1] = "solve". Every option is checked before
 * anything is allocated: bad input exits with 2, a problem that does not fit
 * in memory with 3, a failed solve with 1. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "core/hash.h"

enum { SEM_EXIT_BAD_INPUT = 2, SEM_EXIT_NO_MEMORY = 3, SEM_EXIT_FAILED = 1 };

static void usage(FILE *f) {
  fprintf(f,
          "usage: hpmg solve --disc sem [options]\n"
          "Solves -Laplace(u) + lambda u = f with continuous spectral elements of degree P (GLL nodal basis\n"
          "and quadrature) on a Cartesian mesh of cuboid elements, statically condensed: the element\n"
          "interiors are eliminated, CG runs on the skeleton (element faces, edges, vertices), the\n"
          "interiors are recovered afterwards (paper 001; docs/sem.md).\n"
          "options (default in brackets):\n"
          "  --dim 2|3               space dimension [3]\n"
          "  --degree P              polynomial degree, 2..32 [4]\n"
          "  --cells N|Nx,Ny[,Nz]    elements per direction [8]\n"
          "  --box Lx,Ly[,Lz]        domain lengths [1; 2 pi with --rhs waves]\n"
          "  --bc LIST, --grid LIST, --grid-file FILE, --no-project   boundary conditions per face\n"
          "                          (dirichlet, neumann, periodic: 3 elements or more), element widths\n"
          "                          (uniform, geometric:ALPHA, tanh:BETA, node lists), as for --disc fd\n"
          "                          (docs/bc.md); boundary values (dirichlet:G) need --rhs one or random\n"
          "  --lambda v              coefficient of the mass term, >= 0 [0]\n"
          "  --rhs sine|waves|one|random  manufactured solution: the box's (docs/bc.md; matches every BC mix)\n"
          "                          or paper 001's eq. 27 (a product of five waves, k = 5), or f = 1 or f\n"
          "                          pseudo-random in [-1, 1) at the GLL nodes (paper 001's Figs. 6, 7) with\n"
          "                          the --bc values (dirichlet:G, neumann:G; no exact solution) [sine]\n"
          "  --solver dcg|mg|kmg|kvmg  dcg: Jacobi-preconditioned CG on the condensed system; the\n"
          "                          p-multigrid (p = 2, 4, 8, ..., P) with the star smoother: mg: V-cycle\n"
          "                          iteration, kmg: flexible CG with one V-cycle, kvmg: kmg with the\n"
          "                          sweeps doubled per coarser level (paper 001) [auto = kvmg]\n"
          "  --tol T                 relative residual reduction of the condensed system [1e-10]\n"
          "  --maxit N               iteration limit [100000]\n"
          "  --threads N             OpenMP threads, 0 = runtime default [0]\n"
          "  --json                  print one JSON object instead of text (docs/json.md)\n"
          "  --vtu FILE              write the solution (all GLL nodes) as VTK XML, one Lagrange cell of\n"
          "                          degree P per element (ParaView)\n"
          "  --repeat N              solve N times, report the fastest (benchmarking) [1]\n"
          "  --quiet                 no per-iteration lines\n"
          "  --help, --version\n"
          "Exit status: 0 converged, 1 solve failed or did not converge, 2 invalid input, 3 not enough memory.\n");
}

/* --rhs random: f in [-1, 1) at a node, a hash of its coordinates (the same
 * values for any thread count and order) */
static double random_f(const double x[3], void *ctx) {
  (void)ctx;
  return hpmg_hash_uniform(x, 0);
}

static int bad(const char *fmt, const char *a) {
  fprintf(stderr, "hpmg: ");
  fprintf(stderr, fmt, a);
  fprintf(stderr, "\n(see hpmg solve --disc sem --help)\n");
  return SEM_EXIT_BAD_INPUT;
}

static int num(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return end != s && !*end && !errno && isfinite(*v);
}

static int integer(const char *opt, const char *s, int *v) {
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (errno || end == s || *end || x < -2147483647L || x > 2147483647L) {
    fprintf(stderr, "hpmg: %s: '%s' is not an integer\n", opt, s);
    return SEM_EXIT_BAD_INPUT;
  }
  *v = (int)x;
  return 0;
}

const char *hpmg_cli_sem_solver(const hpmg_solver_options *so) {
  if (so->solver == HPMG_SOLVER_VCYCLE) return "mg";
  if (so->solver == HPMG_SOLVER_CG && so->smoother == HPMG_SMOOTHER_PATCH) return so->sweeps_doubling ? "kvmg" : "kmg";
  return "dcg";
}

int hpmg_cli_sem(int argc, char **argv) {
  hpmg_problem_options po;
  hpmg_solver_options so;
  hpmg_problem_options_default(&po);
  hpmg_solver_options_default(&so);
  po.disc = HPMG_DISC_SEM;
  so.tol = 1e-10;
  so.maxit = 100000;
  int json = 0, quiet = 0, repeat = 1, rc = 0, random = 0;
  const char *box_arg = NULL, *vtu = NULL;
  hpmg_cli_box_args ba = {0};
  enum { O_DIM = 256, O_DEG, O_CELLS, O_BOX, O_BC, O_GRID, O_GRIDFILE, O_NOPROJ, O_LAMBDA, O_RHS, O_SOLVER, O_TOL,
         O_MAXIT, O_THREADS, O_JSON, O_QUIET, O_HELP, O_VERSION, O_DISC, O_VTU, O_REPEAT };
  static const struct option opts[] = {
      {"dim", 1, 0, O_DIM}, {"degree", 1, 0, O_DEG}, {"cells", 1, 0, O_CELLS}, {"box", 1, 0, O_BOX},
      {"bc", 1, 0, O_BC}, {"grid", 1, 0, O_GRID}, {"grid-file", 1, 0, O_GRIDFILE}, {"no-project", 0, 0, O_NOPROJ},
      {"lambda", 1, 0, O_LAMBDA}, {"rhs", 1, 0, O_RHS}, {"solver", 1, 0, O_SOLVER}, {"tol", 1, 0, O_TOL},
      {"maxit", 1, 0, O_MAXIT}, {"threads", 1, 0, O_THREADS}, {"json", 0, 0, O_JSON}, {"quiet", 0, 0, O_QUIET},
      {"help", 0, 0, O_HELP}, {"version", 0, 0, O_VERSION}, {"disc", 1, 0, O_DISC}, {"vtu", 1, 0, O_VTU},
      {"repeat", 1, 0, O_REPEAT}, {0, 0, 0, 0}};
  int c;
  opterr = 0;
  optind = 2;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    rc = 0;
    switch (c) {
    case O_DIM: rc = integer("--dim", optarg, &po.dim); break;
    case O_DEG: rc = integer("--degree", optarg, &po.degree); break;
    case O_CELLS: ba.cells = optarg; break;
    case O_BOX: box_arg = optarg; break;
    case O_BC: ba.bc = optarg; break;
    case O_GRID: ba.grid = optarg; break;
    case O_GRIDFILE: ba.grid_file = optarg; break;
    case O_NOPROJ: ba.no_project = 1; break;
    case O_LAMBDA:
      if (!num(optarg, &po.lambda)) rc = bad("--lambda: '%s' is not a finite number", optarg);
      break;
    case O_RHS:
      random = !strcmp(optarg, "random"); /* f given as b, with the --bc values as for one */
      if (!strcmp(optarg, "sine")) po.rhs = HPMG_RHS_SINE;
      else if (!strcmp(optarg, "waves")) po.rhs = HPMG_RHS_WAVES;
      else if (!strcmp(optarg, "one") || random) po.rhs = HPMG_RHS_ONE;
      else rc = bad("--rhs: unknown value '%s' (allowed: sine, waves, one, random)", optarg);
      break;
    case O_SOLVER:
      so.sweeps_doubling = 0;
      so.smoother = HPMG_SMOOTHER_AUTO;
      if (!strcmp(optarg, "dcg") || !strcmp(optarg, "cg")) so.solver = HPMG_SOLVER_CG;
      else if (!strcmp(optarg, "auto")) so.solver = HPMG_SOLVER_AUTO;
      else if (!strcmp(optarg, "mg")) so.solver = HPMG_SOLVER_VCYCLE;
      else if (!strcmp(optarg, "kmg") || !strcmp(optarg, "kvmg")) {
        so.solver = HPMG_SOLVER_CG;
        so.smoother = HPMG_SMOOTHER_PATCH;
        so.sweeps_doubling = !strcmp(optarg, "kvmg");
      } else rc = bad("--solver: unknown value '%s' (allowed: dcg, mg, kmg, kvmg, auto)", optarg);
      break;
    case O_TOL:
      if (!num(optarg, &so.tol)) rc = bad("--tol: '%s' is not a finite number", optarg);
      break;
    case O_MAXIT: rc = integer("--maxit", optarg, &so.maxit); break;
    case O_THREADS: rc = integer("--threads", optarg, &so.threads); break;
    case O_JSON: json = 1; break;
    case O_VTU: vtu = optarg; break;
    case O_QUIET: quiet = 1; break;
    case O_REPEAT:
      if (!(rc = integer("--repeat", optarg, &repeat)) && (repeat < 1 || repeat > 100000))
        rc = bad("--repeat: '%s' is out of range (1..100000)", optarg);
      break;
    case O_HELP: usage(stdout); return 0;
    case O_VERSION: hpmg_cli_print_version(); return 0;
    case O_DISC:
      if (strcmp(optarg, "sem")) rc = bad("--disc %s given twice", optarg);
      break;
    default:
      if (optopt)
        for (const struct option *o = opts; o->name; o++)
          if (o->val == optopt) return bad("option --%s needs a value", o->name);
      return bad("unknown option for --disc sem: '%s'", argv[optind - 1]);
    }
    if (rc) return rc;
  }
  if (optind < argc) return bad("unexpected argument '%s'", argv[optind]);
  if (po.dim != 2 && po.dim != 3) {
    fprintf(stderr, "hpmg: --dim must be 2 or 3 (got %d)\n", po.dim);
    return SEM_EXIT_BAD_INPUT;
  }
  for (int d = 0; d < po.dim; d++) po.box[d] = po.rhs == HPMG_RHS_WAVES ? 2 * M_PI : 1.0;
  if (box_arg) {
    const char *s = box_arg;
    int n = 0;
    double b[4];
    while (n < 4) {
      char *end;
      errno = 0;
      b[n] = strtod(s, &end);
      if (end == s || errno || !isfinite(b[n])) return bad("--box: '%s' is not a list of numbers like 1,2,0.5", box_arg);
      n++;
      if (*end == ',') s = end + 1;
      else if (!*end) break;
      else return bad("--box: '%s' is not a list of numbers like 1,2,0.5", box_arg);
    }
    if (n != po.dim) {
      fprintf(stderr, "hpmg: --box needs exactly %d lengths for --dim %d (got %d)\n", po.dim, po.dim, n);
      return SEM_EXIT_BAD_INPUT;
    }
    for (int d = 0; d < n; d++) po.box[d] = b[d];
  }
  if (vtu && hpmg_cli_vtu_unwritable(vtu)) return SEM_EXIT_BAD_INPUT; /* before solving */
  ba.box_given = box_arg != NULL;
  double *nodes[3] = {0, 0, 0};
  rc = hpmg_cli_box_apply(&ba, &po, nodes);
  for (int d = 0; d < po.dim; d++)
    if (!po.cells[d]) po.cells[d] = 8;
  for (int f = 0; f < 2 * po.dim && !rc; f++)
    if (po.bc[f].value != 0 && po.rhs != HPMG_RHS_ONE)
      rc = bad("--bc: a boundary value needs --rhs one or random (with --rhs %s the data come from the manufactured "
               "solution)",
               po.rhs == HPMG_RHS_SINE ? "sine" : "waves");
  double need = 0;
  hpmg_error e = HPMG_SUCCESS;
  if (!rc && (e = hpmg_memory_estimate(&po, &so, &need))) rc = bad("%s", hpmg_last_error());
  so.verbose = !json && !quiet;
  hpmg_problem prob = NULL;
  hpmg_solver solver = NULL;
  if (!rc && (e = hpmg_problem_create(&po, &prob)))
    rc = e == HPMG_ERR_MEMORY ? (fprintf(stderr, "hpmg: %s\n", hpmg_last_error()), SEM_EXIT_NO_MEMORY)
                              : bad("%s", hpmg_last_error());
  for (int d = 0; d < 3; d++) free(nodes[d]);
  if (rc) return rc;
  const int64_t n = hpmg_problem_num_dofs(prob);
  if ((e = hpmg_solver_create(prob, &so, &solver))) {
    fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
    hpmg_problem_destroy(&prob);
    return e == HPMG_ERR_MEMORY ? SEM_EXIT_NO_MEMORY : e == HPMG_ERR_ARG ? SEM_EXIT_BAD_INPUT : SEM_EXIT_FAILED;
  }
  hpmg_stats st;
  hpmg_solver_get_stats(solver, &st);
  if (!json) {
    char buf[32];
    printf("hpmg %s: -Laplace u%s = f, spectral elements p = %d, %dD, %lldx%lld", HPMG_VERSION_STRING,
           po.lambda != 0 ? " + lambda u" : "", po.degree, po.dim, (long long)po.cells[0], (long long)po.cells[1]);
    if (po.dim == 3) printf("x%lld", (long long)po.cells[2]);
    printf(" elements, %lld GLL nodes, %lld condensed unknowns, ~%s\n", (long long)n, (long long)st.dofs_condensed,
           hpmg_format_bytes(need, buf, sizeof buf));
  }
  double *x = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (!x) {
    fprintf(stderr, "hpmg: cannot allocate the solution vector\n");
    hpmg_solver_destroy(&solver);
    hpmg_problem_destroy(&prob);
    return SEM_EXIT_NO_MEMORY;
  }
  memset(x, 0, sizeof(double) * (size_t)n);
  double *b = NULL; /* --rhs random: f at the GLL nodes */
  if (random) {
    b = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    const hpmg_error le = b ? hpmg_problem_load_vector(prob, random_f, NULL, b) : HPMG_ERR_MEMORY;
    if (le) {
      fprintf(stderr, "hpmg: %s\n", b ? hpmg_last_error() : "cannot allocate the right-hand side");
      free(b);
      free(x);
      hpmg_solver_destroy(&solver);
      hpmg_problem_destroy(&prob);
      return le == HPMG_ERR_MEMORY ? SEM_EXIT_NO_MEMORY : SEM_EXIT_FAILED;
    }
  }
  double tbest, tmean;
  hpmg_error se = hpmg_cli_solve_repeat(solver, b, x, repeat, &st, &tbest, &tmean);
  free(b);
  int status = se == HPMG_SUCCESS ? 0 : se == HPMG_ERR_ARG ? SEM_EXIT_BAD_INPUT : SEM_EXIT_FAILED;
  if (se) fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
  if (se == HPMG_ERR_ARG) { /* data refused before the solve (an incompatible right-hand side) */
    free(x);
    hpmg_solver_destroy(&solver);
    hpmg_problem_destroy(&prob);
    return SEM_EXIT_BAD_INPUT;
  }
  double l2 = NAN, maxerr = NAN;
  if ((se == HPMG_SUCCESS || se == HPMG_ERR_NOT_CONVERGED) && po.rhs != HPMG_RHS_ONE) hpmg_problem_error(prob, x, &l2, &maxerr);
  if (json) {
    hpmg_solver_options r = so;
    hpmg_solver_options_resolve(prob, &r);
    hpmg_cli_report rep = {.po = po, .so = r, .st = st, .n = po.cells[0], .dofs_total = n, .l2_error = l2,
                           .max_error = maxerr, .rms_error = NAN, .solve_s = tbest, .solve_mean_s = tmean,
                           .repeat = repeat, .dofs_per_s = tbest > 0 ? n / tbest : 0.0, .bytes_host = st.bytes_host,
                           .bytes_device = 0.0, .status = status, .rhs_name = random ? "random" : NULL};
    rep.nhistory = hpmg_solver_history(solver, &rep.history);
    hpmg_cli_print_json(&rep);
  } else {
    char buf[32];
    printf("summary\n");
    {
      hpmg_solver_options r = so;
      hpmg_solver_options_resolve(prob, &r);
      const char *name = hpmg_cli_sem_solver(&r);
      if (!strcmp(name, "dcg"))
        printf("  method              dcg: Jacobi-preconditioned CG on the condensed system, double precision\n");
      else
        printf("  method              %s: %s, p-multigrid of %d levels (star smoother, coarse solve at p = 2), double "
               "precision\n",
               name,
               !strcmp(name, "mg") ? "V-cycle iteration" : !strcmp(name, "kmg") ? "flexible CG with one V-cycle"
                                                                                 : "flexible CG with one V-cycle, "
                                                                                   "sweeps 2^(L-l)",
               st.levels);
    }
    printf("  unknowns            %lld GLL nodes, %lld condensed (skeleton), %d threads\n", (long long)n,
           (long long)st.dofs_condensed, omp_get_max_threads());
    printf("  iterations          %d (%s), relative residual %.3e, rate %.4f\n", st.iterations,
           st.converged ? "converged" : "NOT converged", st.residual0 > 0 ? st.residual / st.residual0 : 0.0, st.rate);
    if (po.rhs != HPMG_RHS_ONE) printf("  error               L2 %.6e   max (nodal) %.6e\n", l2, maxerr);
    if (st.compat_defect != 0) printf("  compatibility       f had mean %.3e (projected out)\n", st.compat_defect);
    printf("  time [s]            setup %.4f | iterations %.4f (load, recovery and the rest %.4f)\n", st.t_setup, st.t_krylov,
           st.t_solve - st.t_krylov);
    printf("  time to solution    %.4f s%s   (%.4g s per GLL node, %.4g DoF/s)\n", tbest,
           repeat > 1 ? " (fastest of --repeat)" : "", n > 0 ? tbest / n : 0.0, tbest > 0 ? n / tbest : 0.0);
    printf("  memory              ~%s (%.1f bytes per GLL node)\n", hpmg_format_bytes(st.bytes_host, buf, sizeof buf),
           n > 0 ? st.bytes_host / n : 0.0);
  }
  if (vtu && status == 0) {
    if ((e = hpmg_problem_write_vtu(prob, x, vtu))) {
      fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
      status = SEM_EXIT_FAILED;
    } else if (!json) printf("  wrote %s\n", vtu);
  }
  free(x);
  hpmg_solver_destroy(&solver);
  hpmg_problem_destroy(&prob);
  return status;
}
