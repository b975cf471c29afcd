/* hpmg command-line program: options -> problem + solver -> report. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hpmg.h"

#include "cli.h"

enum { EXIT_BAD_INPUT = 2, EXIT_NO_MEMORY = 3, EXIT_FAILED = 1 };

static void usage(FILE *f) {
  hpmg_problem_options p;
  hpmg_solver_options s;
  hpmg_problem_options_default(&p);
  hpmg_solver_options_default(&s);
  fprintf(f,
          "usage: hpmg solve [options]\n"
          "Solves -Laplace(u) + lambda u = f on a box (homogeneous Dirichlet faces by default; any\n"
          "Dirichlet, Neumann or periodic faces and stretched cells with the box options), continuous\n"
          "Q_k finite elements on a Cartesian mesh, matrix-free geometric multigrid.\n"
          "Built-in problem: exact solution u = prod sin(pi x_i / L_i) (a general box: the manufactured\n"
          "solutions of docs/bc.md, which match its boundary conditions).\n\n"
          "Discretization:\n"
          "  --dim 2|3             space dimension (default %d)\n"
          "  --degree k            polynomial degree, 1..%d in 2D, 1..%d in 3D (default %d)\n"
          "  --coarse n            cells per direction of the coarse mesh (default %d)\n"
          "  --refine L            uniform refinements of the coarse mesh (default %d)\n"
          "  --box Lx,Ly[,Lz]      domain lengths, anisotropic cells allowed (default 1,1,1)\n"
          "  --lambda v            coefficient of the mass term, >= 0 (default 0: Poisson)\n"
          "  --cells N|nx,ny[,nz]  cells per direction, any count (instead of --coarse/--refine; docs/bc.md)\n"
          "  --bc SPEC             per direction or face: x=periodic,ymin=neumann[:g],zmax=dirichlet[:g]\n"
          "  --grid SPEC           node spacing per direction: x=geometric:1.05,y=tanh:2 (default uniform)\n"
          "  --grid-file FILE      node coordinates per direction ('x:' then the nodes, 'y:' ...)\n"
          "  --no-project          singular problems: refuse an incompatible right-hand side (default: project)\n"
          "  --rhs sine|one|vector-one|waves  manufactured sine solution, f = 1 (load vector), b_i = 1 for\n"
          "                        every unknown (paper 000 Tables 1-3), or paper 001's eq. 27 (a product of\n"
          "                        five waves, k = 5; box 2 pi by default; Dirichlet data from it) (default sine)\n"
          "  --disc fe|fd|p1|sem   Q_k finite elements (default), finite differences (see --disc fd --help),\n"
          "                        P1 elements on a tetrahedral mesh (see --disc p1 --help), or spectral\n"
          "                        elements with static condensation (see --disc sem --help)\n"
          "Multigrid:\n"
          "  --smoother chebyshev|jacobi|gs|sgs|patch   (default: the fastest measured: patch for 2D k >= 6 on\n"
          "                        the CPU; on the GPU with FMG for 3D k = 2..8 and 2D k >= 2, with the other\n"
          "                        solvers for 3D k = 3..8 and 2D k >= 2; chebyshev otherwise; docs/performance.md)\n"
          "  --patch-mode multiplicative|additive   vertex-patch variant (default multiplicative: 2^d colors,\n"
          "                        localized residuals; post-smoothing reverses the colors)\n"
          "  --local-solver fdm|dense   patch solver: fast diagonalization (default) or explicit inverse\n"
          "  --patch-damping w     additive patch damping in (0,1] (default 1/2^dim)\n"
          "  --patch-order zorder|lexicographic|hierarchical   multiplicative sweep order (default zorder)\n"
          "  --patch-batch N|auto|all   patches per batch; colors run in sequence inside a batch\n"
          "                        (default auto: sized to the per-core L2 cache read at run time)\n"
          "  --patch-kernel fused|separate|global   GPU patch kernels (--device cuda; ignored on the CPU):\n"
          "                        fused localized residual + local solve per color (default), separate\n"
          "                        residual and solve kernels, or global residual b - Ax then local solves\n"
          "  --cheby-degree m      Chebyshev polynomial degree (default %d)\n"
          "  --cheby-range r       smoothing range lambda_max/lambda_min (default %g)\n"
          "  --jacobi-omega w      damping of point Jacobi (default %.4g)\n"
          "  --gs-order lexicographic|cellwise   Gauss-Seidel sweep order (--smoother gs|sgs, CPU): over\n"
          "                        the unknowns, x fastest (default), or deal.II's level numbering, cell\n"
          "                        by cell (paper 000 Table 3; docs/patch.md)\n"
          "  --pre n, --post n     smoothing steps before/after the coarse correction (default %d/%d)\n"
          "  --cycle standard|add-residual   coarse correction x += P e (default), or x += P e + r, the\n"
          "                        cycle of paper 000's authors' code, which reproduces its published\n"
          "                        2D counts; slower, for reproducing figures only (docs/patch.md)\n"
          "Solver:\n"
          "  --solver auto|cg|vcycle|gmres|fmg   CG or GMRES preconditioned by one V-cycle, V-cycle\n"
          "                        iteration, or full multigrid then V-cycles (iterations = V-cycles after\n"
          "                        FMG); auto = the fastest measured, FMG (default auto)\n"
          "  --restart m           GMRES restart length (default %d)\n"
          "  --tol t               relative residual reduction (default %g)\n"
          "  --maxit n             maximum iterations (default %d)\n"
          "  --precision double|float|mixed   mixed = float V-cycle inside the double outer iteration (default double)\n"
          "  --threads n           OpenMP threads (default: OMP_NUM_THREADS or all cores)\n"
          "  --device cpu|cuda     (default cpu)\n"
          "  --isa NAME            CPU kernel variant: auto (default: the best this processor runs) or one of\n"
          "                        %s (also the environment variable HPMG_ISA)\n"
          "Output:\n"
          "  --json                print one JSON object with every figure instead of text\n"
          "  --vtu FILE            write the solution as VTK XML (Lagrange cells, ParaView)\n"
          "  --quiet               no per-iteration lines\n"
          "  --profile             GPU: synchronize around every phase so that the per-phase and\n"
          "                        per-level times are exact (costs a little time; the CPU always times)\n"
          "  --help, --version\n"
          "Exit status: 0 converged, 1 solve failed or did not converge, 2 invalid input, 3 not enough memory.\n",
          p.dim, 10, 10, p.degree, p.coarse, p.refine, s.cheby_degree, s.cheby_range, s.jacobi_omega, s.pre, s.post,
          s.restart, s.tol, s.maxit, hpmg_cpu_isa_available());
}

static const char *format_bytes(double b, char *buf, size_t len) {
  const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (b >= 1024 && i < 4) { b /= 1024; i++; }
  snprintf(buf, len, "%.1f %s", b, u[i]);
  return buf;
}

/* The smoother that runs ("auto" resolved by the library). */
static hpmg_smoother_kind smoother_used(const hpmg_solver_options *so, int dim, int degree) {
  return so->smoother == HPMG_SMOOTHER_AUTO ? hpmg_default_smoother(dim, degree, so) : so->smoother;
}

static int bad(const char *fmt, const char *a, const char *b) {
  fprintf(stderr, "hpmg: ");
  fprintf(stderr, fmt, a, b);
  fprintf(stderr, "\n(see hpmg solve --help)\n");
  return EXIT_BAD_INPUT;
}

static int parse_int(const char *opt, const char *s, int *v) {
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (errno || end == s || *end || x < -2147483647L || x > 2147483647L) return bad("%s: '%s' is not an integer", opt, s);
  *v = (int)x;
  return 0;
}

static int parse_double(const char *opt, const char *s, double *v) {
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (errno || end == s || *end || !isfinite(x)) return bad("%s: '%s' is not a finite number", opt, s);
  *v = x;
  return 0;
}

static int parse_choice(const char *opt, const char *s, const char *const *names, int n, int *v) {
  for (int i = 0; i < n; i++)
    if (!strcmp(s, names[i])) {
      *v = i;
      return 0;
    }
  char allowed[256] = "";
  for (int i = 0; i < n; i++) {
    strcat(allowed, i ? "|" : "");
    strcat(allowed, names[i]);
  }
  fprintf(stderr, "hpmg: %s: unknown value '%s' (allowed: %s)\n", opt, s, allowed);
  return EXIT_BAD_INPUT;
}

/* hpmg --version: the library, the CPU kernels in use, and what the build has */
void hpmg_cli_print_version(void) {
  printf("hpmg %s\n", HPMG_VERSION_STRING);
  printf("CPU kernels: %s", hpmg_cpu_isa());
  if (strcmp(hpmg_cpu_isa(), hpmg_cpu_isa_level())) printf(" (%s)", hpmg_cpu_isa_level());
  printf(", %d-byte SIMD vectors; this build and processor run: %s\n", hpmg_cpu_simd_bytes(), hpmg_cpu_isa_available());
#ifdef HPMG_HAVE_CUDA
  printf("CUDA: yes\n");
#else
  printf("CUDA: not in this build\n");
#endif
}

int hpmg_cli_vtu_unwritable(const char *path) {
  char *dup = strdup(path);
  if (!dup) return fprintf(stderr, "hpmg: out of memory\n"), 1;
  const int ok = access(dirname(dup), W_OK) == 0;
  const int err = errno;
  free(dup);
  if (!ok) fprintf(stderr, "hpmg: --vtu %s: directory is not writable (%s)\n", path, strerror(err));
  return !ok;
}

hpmg_error hpmg_cli_solve_repeat(hpmg_solver s, const double *b, double *x, int repeat, hpmg_stats *st, double *tbest,
                                 double *tmean) {
  double tmin = INFINITY, tsum = 0;
  int done = 0;
  hpmg_error e = HPMG_SUCCESS;
  for (int r = 0; r < repeat; r++) {
    if (r == 1) hpmg_solver_set_verbose(s, 0); /* iteration lines of the first solve only */
    e = hpmg_solver_solve(s, b, x);
    hpmg_solver_get_stats(s, st);
    if (e && e != HPMG_ERR_NOT_CONVERGED) break;
    if (st->t_solve < tmin) tmin = st->t_solve;
    tsum += st->t_solve;
    done++;
  }
  *tbest = isfinite(tmin) ? tmin : st->t_solve;
  *tmean = done > 0 ? tsum / done : st->t_solve;
  return e;
}

static int solve_fe(int argc, char **argv) {
  hpmg_problem_options po;
  hpmg_solver_options so;
  hpmg_problem_options_default(&po);
  hpmg_solver_options_default(&so);
  int json = 0, quiet = 0, dim_set = 0, refine_set = 0, patch_set = 0, restart_set = 0, gs_set = 0, rc;
  const char *vtu = NULL;
  char *box_arg = NULL;
  enum { O_DIM = 256, O_DEG, O_COARSE, O_REFINE, O_BOX, O_LAMBDA, O_RHS, O_SMOOTHER, O_CHEBDEG, O_CHEBRANGE, O_OMEGA,
         O_PRE, O_POST, O_SOLVER, O_TOL, O_MAXIT, O_THREADS, O_PREC, O_JSON, O_VTU, O_HELP, O_DEVICE, O_DISC, O_QUIET,
         O_VERSION, O_PMODE, O_LOCAL, O_PDAMP, O_RESTART, O_PORDER, O_PBATCH, O_PKERNEL, O_PROFILE,
         O_GSORDER, O_CYCLE, O_ISA, O_BC, O_GRID, O_GRIDFILE, O_CELLS, O_LAYOUT, O_NOPROJ };
  static const struct option opts[] = {
      {"dim", 1, 0, O_DIM}, {"degree", 1, 0, O_DEG}, {"coarse", 1, 0, O_COARSE}, {"refine", 1, 0, O_REFINE},
      {"box", 1, 0, O_BOX}, {"lambda", 1, 0, O_LAMBDA}, {"rhs", 1, 0, O_RHS}, {"smoother", 1, 0, O_SMOOTHER},
      {"cheby-degree", 1, 0, O_CHEBDEG}, {"cheby-range", 1, 0, O_CHEBRANGE}, {"jacobi-omega", 1, 0, O_OMEGA},
      {"pre", 1, 0, O_PRE}, {"post", 1, 0, O_POST}, {"solver", 1, 0, O_SOLVER}, {"tol", 1, 0, O_TOL},
      {"maxit", 1, 0, O_MAXIT}, {"threads", 1, 0, O_THREADS}, {"precision", 1, 0, O_PREC}, {"json", 0, 0, O_JSON},
      {"vtu", 1, 0, O_VTU}, {"help", 0, 0, O_HELP}, {"device", 1, 0, O_DEVICE}, {"disc", 1, 0, O_DISC},
      {"quiet", 0, 0, O_QUIET}, {"version", 0, 0, O_VERSION}, {"patch-mode", 1, 0, O_PMODE},
      {"local-solver", 1, 0, O_LOCAL}, {"patch-damping", 1, 0, O_PDAMP}, {"restart", 1, 0, O_RESTART},
      {"patch-order", 1, 0, O_PORDER}, {"patch-batch", 1, 0, O_PBATCH}, {"patch-kernel", 1, 0, O_PKERNEL},
      {"profile", 0, 0, O_PROFILE}, {"gs-order", 1, 0, O_GSORDER}, {"cycle", 1, 0, O_CYCLE},
      {"isa", 1, 0, O_ISA}, {"bc", 1, 0, O_BC}, {"grid", 1, 0, O_GRID}, {"grid-file", 1, 0, O_GRIDFILE},
      {"cells", 1, 0, O_CELLS}, {"fd-layout", 1, 0, O_LAYOUT}, {"no-project", 0, 0, O_NOPROJ}, {0, 0, 0, 0}};
  /* the box options (cli_box.c): parsed, then checked by the library */
  hpmg_cli_box_args ba = {0};
  double *nodes[3] = {0, 0, 0};
  static const char *const devices[] = {"cpu", "cuda"}, *const discs[] = {"fe", "fd"};
  int c, v;
  opterr = 0;
  optind = 2; /* argv[1] is "solve" */
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    rc = 0;
    switch (c) {
    case O_DIM: rc = parse_int("--dim", optarg, &po.dim); dim_set = 1; break;
    case O_DEG: rc = parse_int("--degree", optarg, &po.degree); break;
    case O_COARSE: rc = parse_int("--coarse", optarg, &po.coarse); break;
    case O_REFINE: rc = parse_int("--refine", optarg, &po.refine); refine_set = 1; break;
    case O_BOX: box_arg = optarg; break;
    case O_LAMBDA: rc = parse_double("--lambda", optarg, &po.lambda); break;
    case O_RHS: rc = parse_choice("--rhs", optarg, hpmg_cli_rhss, 4, &v); po.rhs = v; break;
    case O_SMOOTHER: rc = parse_choice("--smoother", optarg, hpmg_cli_smoothers, 5, &v); so.smoother = v; break;
    case O_PMODE: rc = parse_choice("--patch-mode", optarg, hpmg_cli_patch_modes, 2, &v); so.patch_mode = v; patch_set = 1; break;
    case O_LOCAL: rc = parse_choice("--local-solver", optarg, hpmg_cli_local_solvers, 2, &v); so.local_solver = v; patch_set = 1; break;
    case O_PDAMP: rc = parse_double("--patch-damping", optarg, &so.patch_damping); patch_set = 1; break;
    case O_PORDER: rc = parse_choice("--patch-order", optarg, hpmg_cli_patch_orders, 3, &v); so.patch_order = v; patch_set = 1; break;
    case O_PBATCH:
      patch_set = 1;
      if (!strcmp(optarg, "auto")) so.patch_batch = 0;
      else if (!strcmp(optarg, "all")) so.patch_batch = -1;
      else {
        int nb;
        rc = parse_int("--patch-batch", optarg, &nb);
        if (!rc && nb < 1) rc = bad("%s: '%s' must be a positive count, auto or all", "--patch-batch", optarg);
        so.patch_batch = nb;
      }
      break;
    case O_PKERNEL: rc = parse_choice("--patch-kernel", optarg, hpmg_cli_patch_kernels, 3, &v); so.patch_kernel = v; patch_set = 1; break;
    case O_RESTART: rc = parse_int("--restart", optarg, &so.restart); restart_set = 1; break;
    case O_GSORDER: rc = parse_choice("--gs-order", optarg, hpmg_cli_gs_orders, 2, &v); so.gs_order = v; gs_set = 1; break;
    case O_CYCLE: rc = parse_choice("--cycle", optarg, hpmg_cli_cycles, 2, &v); so.cycle = v; break;
    case O_CHEBDEG: rc = parse_int("--cheby-degree", optarg, &so.cheby_degree); break;
    case O_CHEBRANGE: rc = parse_double("--cheby-range", optarg, &so.cheby_range); break;
    case O_OMEGA: rc = parse_double("--jacobi-omega", optarg, &so.jacobi_omega); break;
    case O_PRE: rc = parse_int("--pre", optarg, &so.pre); break;
    case O_POST: rc = parse_int("--post", optarg, &so.post); break;
    case O_SOLVER: rc = parse_choice("--solver", optarg, hpmg_cli_solvers, 5, &v); so.solver = v; break;
    case O_TOL: rc = parse_double("--tol", optarg, &so.tol); break;
    case O_MAXIT: rc = parse_int("--maxit", optarg, &so.maxit); break;
    case O_THREADS: rc = parse_int("--threads", optarg, &so.threads); break;
    case O_PREC: rc = parse_choice("--precision", optarg, hpmg_cli_precisions, 3, &v); so.precision = v; break;
    case O_JSON: json = 1; break;
    case O_QUIET: quiet = 1; break;
    case O_PROFILE: so.profile = 1; break;
    case O_VTU: vtu = optarg; break;
    case O_HELP: usage(stdout); return 0;
    case O_VERSION: hpmg_cli_print_version(); return 0;
    case O_ISA:
      if (hpmg_set_cpu_isa(optarg)) return bad("--isa: %s%s", hpmg_last_error(), "");
      break;
    case O_DEVICE:
      rc = parse_choice("--device", optarg, devices, 2, &v);
      so.device = v == 1 ? HPMG_DEVICE_CUDA : HPMG_DEVICE_CPU;
      break;
    case O_DISC: rc = parse_choice("--disc", optarg, discs, 2, &v); break;
    case O_BC: ba.bc = optarg; break;
    case O_GRID: ba.grid = optarg; break;
    case O_GRIDFILE: ba.grid_file = optarg; break;
    case O_CELLS: ba.cells = optarg; break;
    case O_LAYOUT: ba.layout = optarg; break;
    case O_NOPROJ: ba.no_project = 1; break;
    case '?':
    default:
      if (optopt) {
        for (const struct option *o = opts; o->name; o++)
          if (o->val == optopt) return bad("option --%s needs a value%s", o->name, "");
      }
      return bad("unknown option '%s'%s", argv[optind - 1], "");
    }
    if (rc) return rc;
  }
  if (optind < argc) return bad("unexpected argument '%s'%s", argv[optind], "");
  if (dim_set && !refine_set) po.refine = po.dim == 2 ? 8 : 5;
  if (box_arg) {
    if (po.dim != 2 && po.dim != 3) { /* before po.box[po.dim - 1] is written */
      fprintf(stderr, "hpmg: --dim must be 2 or 3 (got %d)\n", po.dim);
      return EXIT_BAD_INPUT;
    }
    char *s = box_arg, *end;
    int n = 0;
    double b[4];
    while (n < 4) {
      errno = 0;
      b[n] = strtod(s, &end);
      if (end == s || errno || !isfinite(b[n])) return bad("--box: '%s' is not a list of numbers like 1,2,0.5%s", box_arg, "");
      n++;
      if (*end == ',') s = end + 1;
      else if (*end == 0) break;
      else return bad("--box: '%s' is not a list of numbers like 1,2,0.5%s", box_arg, "");
    }
    if (n != po.dim) {
      fprintf(stderr, "hpmg: --box needs exactly %d lengths for --dim %d (got %d)\n", po.dim, po.dim, n);
      return EXIT_BAD_INPUT;
    }
    for (int d = 0; d < n; d++) po.box[d] = b[d];
  } else if (po.rhs == HPMG_RHS_WAVES)
    for (int d = 0; d < po.dim; d++) po.box[d] = 2 * M_PI; /* paper 001's domain, as --disc sem */
  if (vtu && hpmg_cli_vtu_unwritable(vtu)) return EXIT_BAD_INPUT; /* before solving */
  ba.box_given = box_arg != NULL;
  rc = hpmg_cli_box_apply(&ba, &po, nodes);
  if (!rc && (ba.bc || ba.grid || ba.grid_file || ba.cells || ba.layout || ba.no_project)) {
    hpmg_problem chk = NULL; /* the library's message for a bad box, before any work */
    if (hpmg_problem_create(&po, &chk)) rc = bad("%s%s", hpmg_last_error(), "");
    hpmg_problem_destroy(&chk);
  }
  /* --grid-file's nodes live until the problem has copied them */
#define RETURN_FREEING_NODES(v)                         \
  do {                                                  \
    for (int d_ = 0; d_ < 3; d_++) free(nodes[d_]);     \
    return (v);                                         \
  } while (0)
  if (rc) RETURN_FREEING_NODES(rc);
  so.verbose = !json && !quiet;
  if (so.solver == HPMG_SOLVER_AUTO) so.solver = hpmg_default_solver(po.dim, po.degree, &so); /* print what runs */
  /* options of one method given with another are refused, not ignored */
  hpmg_smoother_kind sm = smoother_used(&so, po.dim, po.degree);
  if (patch_set && so.smoother == HPMG_SMOOTHER_AUTO) { /* a patch option implies the patch smoother */
    so.smoother = HPMG_SMOOTHER_PATCH;
    sm = HPMG_SMOOTHER_PATCH;
  }
  if (patch_set && sm != HPMG_SMOOTHER_PATCH) {
    fprintf(stderr, "hpmg: --patch-mode, --local-solver, --patch-damping, --patch-order, --patch-batch and --patch-kernel apply to --smoother patch only (smoother is %s)\n",
            hpmg_cli_smoothers[sm]);
    RETURN_FREEING_NODES(EXIT_BAD_INPUT);
  }
  if (gs_set && sm != HPMG_SMOOTHER_GS && sm != HPMG_SMOOTHER_SGS) {
    fprintf(stderr, "hpmg: --gs-order applies to --smoother gs and sgs only (smoother is %s)\n", hpmg_cli_smoothers[sm]);
    RETURN_FREEING_NODES(EXIT_BAD_INPUT);
  }
  if (restart_set && so.solver != HPMG_SOLVER_GMRES) {
    fprintf(stderr, "hpmg: --restart applies to --solver gmres only (solver is %s)\n", hpmg_cli_solvers[so.solver]);
    RETURN_FREEING_NODES(EXIT_BAD_INPUT);
  }

  double need;
  hpmg_error e = hpmg_memory_estimate(&po, &so, &need);
  if (e) {
    fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
    RETURN_FREEING_NODES(EXIT_BAD_INPUT);
  }
  hpmg_problem prob;
  hpmg_solver solver;
  e = hpmg_problem_create(&po, &prob);
  for (int d = 0; d < 3; d++) free(nodes[d]), po.spacing[d].nodes = NULL;
#undef RETURN_FREEING_NODES
  if (e) {
    fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
    return EXIT_BAD_INPUT;
  }
  { /* the smoother that runs (a general box takes Chebyshev where the default mesh would take patch) */
    hpmg_solver_options r = so;
    if (!hpmg_solver_options_resolve(prob, &r)) sm = r.smoother;
  }
  const int64_t n = hpmg_problem_num_dofs(prob);
  int64_t total = 1, cells[3];
  char cells_s[96];
  for (int d = 0; d < po.dim; d++) { /* a general box (--cells, --grid-file) has its own counts */
    cells[d] = po.cells[d] ? po.cells[d] : (int64_t)po.coarse << po.refine;
    total *= (int64_t)po.degree * cells[d] + 1;
  }
  if (po.cells[0]) snprintf(cells_s, sizeof cells_s, po.dim == 3 ? "%lldx%lldx%lld" : "%lldx%lld", (long long)cells[0],
                            (long long)cells[1], (long long)cells[2]);
  else snprintf(cells_s, sizeof cells_s, "%lld^%d", (long long)cells[0], po.dim);
  if (!json) {
    char buf[32];
    printf("hpmg %s: -Laplace u%s = f, Q%d, %dD, %s cells, %lld unknowns (%lld with boundary), ~%s\n",
           HPMG_VERSION_STRING, po.lambda != 0 ? " + lambda u" : "", po.degree, po.dim, cells_s, (long long)n,
           (long long)total, format_bytes(need, buf, sizeof buf));
  }
  if ((e = hpmg_solver_create(prob, &so, &solver))) {
    fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
    hpmg_problem_destroy(&prob);
    return e == HPMG_ERR_MEMORY ? EXIT_NO_MEMORY : (e == HPMG_ERR_ARG || e == HPMG_ERR_BACKEND) ? EXIT_BAD_INPUT : EXIT_FAILED;
  }
  /* the zero initial guess written, not calloc'ed: calloc may hand out
   * untouched pages that the solver's NaN check maps to the shared zero page,
   * and every first write into them then costs a copy-on-write fault with a
   * TLB shootdown on every thread (about 45 ms at 2e6 unknowns on 2 cores) */
  double *x = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (x) memset(x, 0, sizeof(double) * (size_t)n);
  if (!x) {
    fprintf(stderr, "hpmg: cannot allocate the solution vector\n");
    return EXIT_NO_MEMORY;
  }
  hpmg_error se = hpmg_solver_solve(solver, NULL, x);
  hpmg_stats st;
  hpmg_solver_get_stats(solver, &st);
  /* an incompatible right-hand side with --no-project is bad input */
  int status = se == HPMG_SUCCESS ? 0 : se == HPMG_ERR_ARG ? EXIT_BAD_INPUT : EXIT_FAILED;
  if (se) fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
  double l2 = NAN, maxerr = NAN;
  if (se == HPMG_SUCCESS || se == HPMG_ERR_NOT_CONVERGED) hpmg_problem_error(prob, x, &l2, &maxerr);
  if (po.rhs != HPMG_RHS_SINE && po.rhs != HPMG_RHS_WAVES) l2 = maxerr = NAN; /* no closed-form solution for f = 1 or b = 1 */
  if (json) {
    hpmg_cli_report r = {.po = po, .so = so, .st = st, .n = cells[0], .dofs_total = total,
                         .l2_error = l2, .max_error = maxerr, .rms_error = NAN, .solve_s = st.t_solve,
                         .solve_mean_s = st.t_solve, .repeat = 1, .dofs_per_s = st.t_solve > 0 ? total / st.t_solve : 0.0,
                         .bytes_host = so.device == HPMG_DEVICE_CPU ? need : NAN,
                         .bytes_device = so.device == HPMG_DEVICE_CUDA ? need : 0.0, .status = status};
    r.so.smoother = sm;
    r.nhistory = hpmg_solver_history(solver, &r.history);
    hpmg_cli_print_json(&r);
  } else {
    printf("summary\n");
    const int gs = sm == HPMG_SMOOTHER_GS || sm == HPMG_SMOOTHER_SGS;
    printf("  method              %s, smoother %s%s%s%s%s%s%s, %d pre / %d post%s, %s precision\n", hpmg_cli_solvers[so.solver],
           hpmg_cli_smoothers[sm], sm == HPMG_SMOOTHER_PATCH ? " (" : "", sm == HPMG_SMOOTHER_PATCH ? hpmg_cli_patch_modes[so.patch_mode] : "",
           sm == HPMG_SMOOTHER_PATCH ? (so.local_solver == HPMG_LOCAL_FDM ? ", fdm)" : ", dense)") : "",
           gs ? " (" : "", gs ? hpmg_cli_gs_orders[so.gs_order] : "", gs ? " order)" : "", so.pre, so.post,
           so.cycle == HPMG_CYCLE_ADD_RESIDUAL ? ", coarse correction + residual" : "", hpmg_cli_precisions[so.precision]);
    printf("  unknowns            %lld (%lld with boundary), %d levels, %d threads, CPU kernels %s\n",
           (long long)st.dofs, (long long)total, st.levels, omp_get_max_threads(), hpmg_cpu_isa());
    printf("  iterations          %d (%s), relative residual %.3e, rate %.4f\n", st.iterations,
           st.converged ? "converged" : "NOT converged", st.residual0 > 0 ? st.residual / st.residual0 : 0.0, st.rate);
    if (po.rhs == HPMG_RHS_SINE || po.rhs == HPMG_RHS_WAVES) printf("  error               L2 %.6e   max (nodal) %.6e\n", l2, maxerr);
    if (st.compat_defect != 0) printf("  compatibility       defect %.3e (the mean of f removed by the projection)\n", st.compat_defect);
    printf("  time [s]            setup %.4f | operator %.4f smoother %.4f transfer %.4f coarse %.4f krylov %.4f\n",
           st.t_setup, st.t_operator, st.t_smoother, st.t_transfer, st.t_coarse, st.t_krylov);
    printf("  time to solution    %.4f s   (%.4g DoF/s, %lld operator applications)\n", st.t_solve,
           st.t_solve > 0 ? total / st.t_solve : 0.0, (long long)st.operator_applications);
    const int timed = so.device == HPMG_DEVICE_CPU || so.profile; /* the GPU times levels with --profile */
    if (!timed) printf("  per level           not timed on the GPU without --profile\n");
    for (int l = st.levels - 1, first = 1; l >= 0 && timed; l--) {
      if (l >= HPMG_STATS_MAX_LEVELS || st.level_dofs[l] == 0) continue;
      printf("  %s level %2d %10lld unknowns: smoother %.4f residual %.4f transfer %.4f s\n",
             first ? "per level" : "         ", l, (long long)st.level_dofs[l], st.t_level_smoother[l],
             st.t_level_operator[l], st.t_level_transfer[l]);
      first = 0;
    }
  }
  if (vtu && status == 0) {
    if ((e = hpmg_problem_write_vtu(prob, x, vtu))) {
      fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
      status = EXIT_FAILED;
    } else if (!json) printf("  wrote %s\n", vtu);
  }
  free(x);
  hpmg_solver_destroy(&solver);
  hpmg_problem_destroy(&prob);
  return status;
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? EXIT_BAD_INPUT : 0;
  }
  const char *isa_env = getenv("HPMG_ISA");
  if (isa_env && *isa_env && hpmg_set_cpu_isa(isa_env)) {
    fprintf(stderr, "hpmg: HPMG_ISA=%s: %s\n", isa_env, hpmg_last_error());
    return EXIT_BAD_INPUT;
  }
  if (!strcmp(argv[1], "--version")) {
    hpmg_cli_print_version();
    return 0;
  }
  if (strcmp(argv[1], "solve")) {
    fprintf(stderr, "hpmg: unknown command '%s' (the command is: hpmg solve [options]; see hpmg --help)\n", argv[1]);
    return EXIT_BAD_INPUT;
  }
  for (int i = 2; i < argc; i++) { /* finite differences and P1 have their own option sets */
    if ((!strcmp(argv[i], "--disc") && i + 1 < argc && !strcmp(argv[i + 1], "fd")) || !strcmp(argv[i], "--disc=fd"))
      return hpmg_cli_fd(argc, argv);
    if ((!strcmp(argv[i], "--disc") && i + 1 < argc && !strcmp(argv[i + 1], "p1")) || !strcmp(argv[i], "--disc=p1"))
      return hpmg_cli_p1(argc, argv);
    if ((!strcmp(argv[i], "--disc") && i + 1 < argc && !strcmp(argv[i + 1], "sem")) || !strcmp(argv[i], "--disc=sem"))
      return hpmg_cli_sem(argc, argv);
  }
  return solve_fe(argc, argv);
}
