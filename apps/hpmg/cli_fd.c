/* `hpmg solve --disc fd ...`: finite-difference multigrid and FFT Poisson
 * solvers (paper 002) through the public API (an HPMG_DISC_FD problem).
 * Called by main.c with argv[0] = "hpmg", argv[1] = "solve". Every option is
 * checked before anything is allocated; bad input exits with 2, a problem
 * that does not fit in memory with 3, a failed solve with 1. */
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

enum { FD_EXIT_BAD_INPUT = 2, FD_EXIT_NO_MEMORY = 3, FD_EXIT_FAILED = 1 };

static void usage(FILE *f) {
  fprintf(f,
          "usage: hpmg solve --disc fd [options]\n"
          "Solves -Laplace u = f on (0,1)^d, u = 0 on the boundary, with the 5-point (2D) or\n"
          "7-point (3D) finite-difference stencil on 2^L intervals per direction; the exact\n"
          "solution is prod sin(pi x_i). Multigrid as in Feng, Shu, Xu, Zhang (paper 002).\n"
          "With any of the box options below: -Laplace u + lambda u = f on a general box (per-face\n"
          "BCs, stretched grids, any cell count, vertex or cell unknowns; CPU, cg/vcycle/fmg) with a\n"
          "manufactured solution matching the BCs (docs/bc.md).\n"
          "options (default in brackets):\n"
          "  --disc fd               finite differences (this page)\n"
          "  --dim 2|3               dimension [2]\n"
          "  --refine L              2^L intervals per direction, L levels; 1..%d in 2D, 1..%d in 3D [10]\n"
          "  --cells N|nx,ny[,nz]    cells per direction (any count; replaces --refine)\n"
          "  --box Lx,Ly[,Lz]        box lengths [1,1,1]\n"
          "  --lambda v              -Laplace u + lambda u = f, lambda >= 0 [0]\n"
          "  --bc LIST               per direction or face: x=periodic,y=neumann,z=periodic or\n"
          "                          ymin=dirichlet:0,ymax=neumann:0 (constants for the user's data;\n"
          "                          the built-in problem takes them from its exact solution) [dirichlet]\n"
          "  --grid LIST             per direction: x=uniform | x=geometric:ALPHA (cell width ratio) |\n"
          "                          y=tanh:BETA (clustering at both faces) [uniform]\n"
          "  --grid-file FILE        node coordinates: 'x:' then the x nodes, 'y:' ..., '#' comments\n"
          "  --fd-layout vertex|cell unknowns at the vertices or at the cell centres [vertex]\n"
          "  --rhs sine|one          general box: the manufactured solution, or f = 1 with the --bc\n"
          "                          constants [sine]\n"
          "  --no-project            singular problems (no Dirichlet face, lambda 0): refuse an\n"
          "                          incompatible right-hand side instead of projecting it\n"
          "  --smoother S            jacobi | rbgs (red-black GS) | mcgs (4 colors 2D, 8 colors 3D,\n"
          "                          post-smoothing in reverse color order) | auto (= mcgs) [mcgs]\n"
          "  --jacobi-omega W        Jacobi damping, 0 < W < 2 [0.8]\n"
          "  --sor W                 over-relaxation of the GS smoothers (rbgs, mcgs), 0 < W < 2;\n"
          "                          1 is plain GS [1; fmg in 3D with cubic interpolation and mcgs: 1.3]\n"
          "  --solver S              vcycle | fmg (one full-multigrid pass) | cg (PCG, one V-cycle\n"
          "                          as preconditioner) | fft (sine-transform direct solver) |\n"
          "                          auto (= vcycle on the unit box, cg on a general box: the\n"
          "                          fastest there, docs/bc.md) [auto]\n"
          "  --pre N, --post N       smoothing sweeps before/after the coarse correction, 0..100\n"
          "                          [1, 1; fmg in 3D: 2, 2, with cubic interpolation and mcgs 2, 1;\n"
          "                          general box: 1, 1, vcycle and fmg with line smoothing 2, 2]\n"
          "  --fmg-interp I          FMG's interpolation to each new level: cubic (fourth order) |\n"
          "                          linear (the cycle's prolongation, as in paper 002) [cubic]\n"
          "  --tol T                 relative residual reduction, 0 < T < 1 [1e-6]\n"
          "  --maxit N               iteration limit, 1..1000000; on a general box 0 with fmg:\n"
          "                          the FMG pass alone, no further cycle [100]\n"
          "  --threads N             OpenMP threads, 0 = runtime default [0]\n"
          "  --precision P           double | float [double]\n"
          "  --device D              cpu | cuda [cpu]\n"
          "  --split L|auto          with --device cuda: the finest L levels on the GPU, the rest on\n"
          "                          the CPU (0..L); auto picks it from a cost model [auto]\n"
          "  --repeat N              solve N times, report the fastest (benchmarking) [1]\n"
          "  --fft-measure           plan FFTW with FFTW_MEASURE (slower setup, faster solve) [off]\n"
          "  --profile               synchronize the GPU around each phase to time it [off]\n"
          "  --isa NAME              CPU kernel variant: auto (the best this processor runs) or one of\n"
          "                          %s (also HPMG_ISA) [auto]\n"
          "  --vtu FILE              write the solution as VTK XML: linear cells between the unknowns'\n"
          "                          points (vertex layout: every node, Dirichlet faces with their data;\n"
          "                          cell layout: the cell centres)\n"
          "  --json                  print one JSON object instead of text\n"
          "  --quiet                 no per-iteration lines\n"
          "  --help, --version       this text; the version and the CPU kernels in use\n",
          HPMG_FD_MAX_REFINE_2D, HPMG_FD_MAX_REFINE_3D, hpmg_cpu_isa_available());
}

static int bad(const char *opt, const char *val, const char *allowed) {
  fprintf(stderr, "hpmg: %s: invalid value '%s' (allowed: %s)\n(see hpmg solve --disc fd --help)\n", opt,
          val, allowed);
  return FD_EXIT_BAD_INPUT;
}

static int parse_int(const char *s, long lo, long hi, int *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) return 0;
  *out = (int)v;
  return 1;
}
static int parse_double(const char *s, double lo, double hi, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (!*s || *end || !(v > lo) || !(v < hi)) return 0;
  *out = v;
  return 1;
}

/* option values in the order of the command line's names */
static const char *const solver_names[] = {"vcycle", "fmg", "cg", "fft", "auto"};
static const hpmg_solver_kind solver_kinds[] = {HPMG_SOLVER_VCYCLE, HPMG_SOLVER_FMG, HPMG_SOLVER_CG, HPMG_SOLVER_FFT,
                                                HPMG_SOLVER_AUTO};
static const char *const smoother_names[] = {"jacobi", "rbgs", "mcgs", "auto"};
static const hpmg_smoother_kind smoother_kinds[] = {HPMG_SMOOTHER_JACOBI, HPMG_SMOOTHER_RBGS, HPMG_SMOOTHER_MCGS,
                                                  HPMG_SMOOTHER_AUTO};
static const char *const fmg_interp_names[] = {"linear", "cubic"};
static const hpmg_fmg_interp fmg_interp_kinds[] = {HPMG_FMG_INTERP_LINEAR, HPMG_FMG_INTERP_CUBIC};

int hpmg_cli_fd(int argc, char **argv) {
  enum { O_DISC = 256, O_DIM, O_REFINE, O_SMOOTHER, O_OMEGA, O_SOLVER, O_PRE, O_POST, O_TOL, O_MAXIT,
         O_THREADS, O_PREC, O_DEVICE, O_SPLIT, O_JSON, O_HELP, O_REPEAT, O_MEASURE, O_PROFILE, O_QUIET, O_FMGI, O_SOR,
         O_ISA, O_VERSION, O_BC, O_GRID, O_GRIDFILE, O_CELLS, O_LAYOUT, O_NOPROJ, O_BOX, O_LAMBDA, O_RHS, O_VTU };
  static const struct option opts[] = {
      {"disc", required_argument, 0, O_DISC},        {"dim", required_argument, 0, O_DIM},
      {"refine", required_argument, 0, O_REFINE},    {"smoother", required_argument, 0, O_SMOOTHER},
      {"jacobi-omega", required_argument, 0, O_OMEGA}, {"solver", required_argument, 0, O_SOLVER},
      {"pre", required_argument, 0, O_PRE},          {"post", required_argument, 0, O_POST},
      {"tol", required_argument, 0, O_TOL},          {"maxit", required_argument, 0, O_MAXIT},
      {"threads", required_argument, 0, O_THREADS},  {"precision", required_argument, 0, O_PREC},
      {"device", required_argument, 0, O_DEVICE},    {"split", required_argument, 0, O_SPLIT},
      {"json", no_argument, 0, O_JSON},              {"help", no_argument, 0, O_HELP},
      {"quiet", no_argument, 0, O_QUIET},
      {"repeat", required_argument, 0, O_REPEAT},    {"fft-measure", no_argument, 0, O_MEASURE},
      {"profile", no_argument, 0, O_PROFILE},        {"fmg-interp", required_argument, 0, O_FMGI},
      {"sor", required_argument, 0, O_SOR},          {"isa", required_argument, 0, O_ISA},
      {"version", no_argument, 0, O_VERSION},
      {"bc", required_argument, 0, O_BC},            {"grid", required_argument, 0, O_GRID},
      {"grid-file", required_argument, 0, O_GRIDFILE}, {"cells", required_argument, 0, O_CELLS},
      {"fd-layout", required_argument, 0, O_LAYOUT}, {"no-project", no_argument, 0, O_NOPROJ},
      {"box", required_argument, 0, O_BOX},          {"lambda", required_argument, 0, O_LAMBDA},
      {"rhs", required_argument, 0, O_RHS},          {"vtu", required_argument, 0, O_VTU},
      {0, 0, 0, 0}};
  hpmg_cli_box_args ba = {0};
  int smoother_given = 0, rhs_given = 0;
  const char *box_arg = NULL, *vtu = NULL;
  double *nodes[3] = {0, 0, 0};
  /* the command line's defaults: 2D, 2^10 intervals, V(1,1)-cycle iteration
   * with multicolor GS to 1e-6 as in paper 002, sweeps by solver */
  hpmg_problem_options po;
  hpmg_problem_options_default(&po);
  po.disc = HPMG_DISC_FD;
  po.dim = 2;
  po.refine = 10;
  hpmg_solver_options so;
  hpmg_solver_options_default(&so);
  so.solver = HPMG_SOLVER_AUTO;
  so.smoother = HPMG_SMOOTHER_MCGS;
  so.jacobi_omega = 0.8;
  so.pre = so.post = HPMG_SWEEPS_AUTO;
  so.tol = 1e-6;
  so.maxit = 100;
  int json = 0, quiet = 0, repeat = 1, split_given = 0, i;
  /* parse argv[2..] as its own command line ("solve" is not an option) */
  char *av[argc > 1 ? argc : 2];
  int ac = 0;
  av[ac++] = "hpmg solve";
  for (i = 2; i < argc; i++) av[ac++] = argv[i];
  optind = 0;
  opterr = 1;
  int ch;
  while ((ch = getopt_long(ac, av, "", opts, NULL)) != -1) {
    const char *a = optarg;
    switch (ch) {
    case O_DISC:
      if (strcmp(a, "fd")) return bad("--disc", a, "fd here; fe is the default solver");
      break;
    case O_DIM:
      if (!parse_int(a, 2, 3, &po.dim)) return bad("--dim", a, "2 or 3");
      break;
    case O_REFINE:
      if (!parse_int(a, 1, HPMG_FD_MAX_REFINE_2D, &po.refine)) return bad("--refine", a, "1..15 (2D), 1..10 (3D)");
      break;
    case O_SMOOTHER:
      smoother_given = 1;
      for (i = 0; i < 4 && strcmp(a, smoother_names[i]); i++) {}
      if (i == 4) return bad("--smoother", a, "jacobi, rbgs, mcgs, auto");
      so.smoother = smoother_kinds[i];
      break;
    case O_OMEGA:
      if (!parse_double(a, 0, 2, &so.jacobi_omega)) return bad("--jacobi-omega", a, "a number in (0,2)");
      break;
    case O_SOR:
      if (!parse_double(a, 0, 2, &so.sor)) return bad("--sor", a, "a number in (0,2)");
      break;
    case O_SOLVER:
      for (i = 0; i < 5 && strcmp(a, solver_names[i]); i++) {}
      if (i == 5) return bad("--solver", a, "vcycle, fmg, cg, fft, auto");
      so.solver = solver_kinds[i];
      break;
    case O_PRE:
      if (!parse_int(a, 0, 100, &so.pre)) return bad("--pre", a, "0..100");
      break;
    case O_POST:
      if (!parse_int(a, 0, 100, &so.post)) return bad("--post", a, "0..100");
      break;
    case O_FMGI:
      for (i = 0; i < 2 && strcmp(a, fmg_interp_names[i]); i++) {}
      if (i == 2) return bad("--fmg-interp", a, "cubic, linear");
      so.fmg_interp = fmg_interp_kinds[i];
      break;
    case O_TOL:
      if (!parse_double(a, 0, 1, &so.tol)) return bad("--tol", a, "a number in (0,1)");
      break;
    case O_MAXIT:
      if (!parse_int(a, 0, 1000000, &so.maxit)) return bad("--maxit", a, "0..1000000");
      break;
    case O_THREADS:
      if (!parse_int(a, 0, 4096, &so.threads)) return bad("--threads", a, "0..4096");
      break;
    case O_PREC:
      if (!strcmp(a, "double")) so.precision = HPMG_PREC_DOUBLE;
      else if (!strcmp(a, "float")) so.precision = HPMG_PREC_FLOAT;
      else return bad("--precision", a, "double, float");
      break;
    case O_DEVICE:
      if (!strcmp(a, "cpu")) so.device = HPMG_DEVICE_CPU;
      else if (!strcmp(a, "cuda")) so.device = HPMG_DEVICE_CUDA;
      else return bad("--device", a, "cpu, cuda");
      break;
    case O_SPLIT:
      split_given = 1;
      if (!strcmp(a, "auto")) so.split = HPMG_SPLIT_AUTO;
      else if (!parse_int(a, 0, HPMG_FD_MAX_REFINE_2D, &so.split)) return bad("--split", a, "auto or 0..L");
      break;
    case O_JSON: json = 1; break;
    case O_QUIET: quiet = 1; break;
    case O_HELP: usage(stdout); return 0;
    case O_VERSION: hpmg_cli_print_version(); return 0;
    case O_ISA:
      if (hpmg_set_cpu_isa(a)) {
        fprintf(stderr, "hpmg: --isa: %s\n", hpmg_last_error());
        return FD_EXIT_BAD_INPUT;
      }
      break;
    case O_REPEAT:
      if (!parse_int(a, 1, 100000, &repeat)) return bad("--repeat", a, "1..100000");
      break;
    case O_MEASURE: so.fft_measure = 1; break;
    case O_BC:
    case O_GRID:
      if (ch == O_BC ? ba.bc != NULL : ba.grid != NULL) {
        fprintf(stderr, "hpmg: --%s given twice: name every direction or face in one comma-separated list\n",
                ch == O_BC ? "bc" : "grid");
        return FD_EXIT_BAD_INPUT;
      }
      if (ch == O_BC) ba.bc = a;
      else ba.grid = a;
      break;
    case O_GRIDFILE: ba.grid_file = a; break;
    case O_CELLS: ba.cells = a; break;
    case O_LAYOUT: ba.layout = a; break;
    case O_NOPROJ: ba.no_project = 1; break;
    case O_BOX: box_arg = a; break;
    case O_VTU: vtu = a; break;
    case O_RHS:
      if (!strcmp(a, "sine")) po.rhs = HPMG_RHS_SINE;
      else if (!strcmp(a, "one")) po.rhs = HPMG_RHS_ONE;
      else return bad("--rhs", a, "sine, one");
      rhs_given = 1;
      break;
    case O_LAMBDA: {
      char *end;
      po.lambda = strtod(a, &end);
      if (!*a || *end || !(po.lambda >= 0) || !isfinite(po.lambda)) return bad("--lambda", a, "a finite number >= 0");
    } break;
    case O_PROFILE: so.profile = 1; break;
    default:
      fprintf(stderr, "(see hpmg solve --disc fd --help)\n");
      return FD_EXIT_BAD_INPUT;
    }
  }
  if (optind < ac) {
    fprintf(stderr, "hpmg: unexpected argument '%s' (see hpmg solve --disc fd --help)\n", av[optind]);
    return FD_EXIT_BAD_INPUT;
  }
  if (split_given && so.device != HPMG_DEVICE_CUDA) {
    fprintf(stderr, "hpmg: --split needs --device cuda (the split puts the finest levels on the GPU)\n");
    return FD_EXIT_BAD_INPUT;
  }
  so.verbose = !json && !quiet;
  if (box_arg) {
    double L[3] = {1, 1, 1};
    int nb = 0;
    const char *p = box_arg;
    for (;;) {
      char *end;
      if (nb == 3) return bad("--box", box_arg, "2 or 3 positive lengths like 6.28,2,3.14");
      L[nb++] = strtod(p, &end);
      if (end == p || !(L[nb - 1] > 0) || !isfinite(L[nb - 1])) return bad("--box", box_arg, "positive lengths like 6.28,2,3.14");
      if (*end == ',') p = end + 1;
      else if (!*end) break;
      else return bad("--box", box_arg, "positive lengths like 6.28,2,3.14");
    }
    if (nb != po.dim) return bad("--box", box_arg, po.dim == 2 ? "2 lengths for --dim 2" : "3 lengths for --dim 3");
    for (int d = 0; d < 3; d++) po.box[d] = L[d];
  }
  ba.box_given = box_arg != NULL;
  if (rhs_given && po.rhs != HPMG_RHS_SINE && !(box_arg || ba.bc || ba.grid || ba.grid_file || ba.cells || ba.layout || po.lambda != 0)) {
    fprintf(stderr, "hpmg: --rhs one needs a general box (--bc, --cells, --grid, ...); the unit-box solver has the sine problem\n");
    return FD_EXIT_BAD_INPUT;
  }
  /* a general box smooths with auto (line GS along a stretched direction) unless told otherwise */
  if (!smoother_given && (box_arg || ba.bc || ba.grid || ba.grid_file || ba.cells || ba.layout || po.lambda != 0))
    so.smoother = HPMG_SMOOTHER_AUTO;
  if (vtu && hpmg_cli_vtu_unwritable(vtu)) return FD_EXIT_BAD_INPUT; /* before solving */
  int brc = hpmg_cli_box_apply(&ba, &po, nodes);
  /* the CLI always solves with the built-in right-hand side: refuse boundary
   * values it would ignore before any work (the API checks at the solve) */
  for (int f = 0; f < 2 * po.dim && !brc; f++)
    if (po.rhs == HPMG_RHS_SINE && po.bc[f].value != 0) {
      fprintf(stderr, "hpmg: --bc: a boundary value needs --rhs one (with --rhs sine the manufactured solution "
                      "gives the boundary data, docs/bc.md)\n");
      brc = FD_EXIT_BAD_INPUT;
    }
  hpmg_problem prob = NULL;
  if (!brc && (hpmg_problem_create(&po, &prob) || hpmg_solver_options_resolve(prob, &so))) {
    fprintf(stderr, "hpmg: %s\n(see hpmg solve --disc fd --help)\n", hpmg_last_error());
    brc = FD_EXIT_BAD_INPUT;
  }
  for (int d = 0; d < 3; d++) free(nodes[d]); /* the problem holds its own copy */
  if (brc) {
    hpmg_problem_destroy(&prob);
    return brc;
  }
  const int general = rhs_given || po.fd_layout != HPMG_FD_VERTEX || po.lambda != 0 || po.cells[0] || po.cells[1] || po.cells[2] ||
                      box_arg || ba.bc || ba.grid || ba.grid_file;
  const int64_t n = general ? (po.cells[0] ? po.cells[0] : (int64_t)1 << po.refine) : (int64_t)1 << po.refine;
  const int64_t total = general ? hpmg_problem_num_dofs(prob)
                                : po.dim == 2 ? (n + 1) * (n + 1) : (n + 1) * (n + 1) * (n + 1);
  /* Float FMG has no stopping test to report a shortfall: say before solving
   * that its rounding error exceeds the discretization error, from n = 256 on
   * (3D with SOR: from 1024 on; docs/fd.md, Precision). */
  const int64_t float_n = po.dim == 3 && so.sor != 1 ? 1024 : 256;
  if (so.solver == HPMG_SOLVER_FMG && so.precision == HPMG_PREC_FLOAT && n >= float_n)
    fprintf(stderr, "hpmg: warning: in float precision the FMG error grows like n^2 from rounding and exceeds "
                    "the discretization error (about %.0e here) from n = %lld on (3D plain GS at 256^3: 3.9e-5 "
                    "against 4.7e-6 in double; 3D SOR 1.3 at 1024^3: 4.9e-7 against 9.6e-8); use --precision double\n",
            0.8 / ((double)n * (double)n), (long long)float_n);
  hpmg_solver s;
  hpmg_error e = hpmg_solver_create(prob, &so, &s);
  if (e) {
    fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
    hpmg_problem_destroy(&prob);
    return e == HPMG_ERR_MEMORY ? FD_EXIT_NO_MEMORY
           : (e == HPMG_ERR_ARG || e == HPMG_ERR_BACKEND) ? FD_EXIT_BAD_INPUT : FD_EXIT_FAILED;
  }
  const int64_t unknowns = hpmg_problem_num_dofs(prob);
  char b1[32], b2[32];
  double *x = malloc(sizeof(double) * (size_t)unknowns);
  if (!x) {
    fprintf(stderr, "hpmg: cannot allocate the solution vector (%s)\n",
            hpmg_format_bytes(8.0 * (double)unknowns, b1, sizeof b1));
    hpmg_solver_destroy(&s);
    hpmg_problem_destroy(&prob);
    return FD_EXIT_NO_MEMORY;
  }
  hpmg_stats st;
  hpmg_solver_get_stats(s, &st);
  const double hb = st.bytes_host, db = st.bytes_device;
  const int nthreads = so.threads > 0 ? so.threads : omp_get_max_threads();
  const int fft = so.solver == HPMG_SOLVER_FFT, cuda = so.device == HPMG_DEVICE_CUDA;
  if (!json) {
   if (general) {
    static const char *const bcn[] = {"D", "N", "P"};
    printf("hpmg %s: -Laplace u%s = f, finite differences (%d-point) on a general box, %dD, %lld",
           HPMG_VERSION_STRING, po.lambda != 0 ? " + lambda u" : "", 2 * po.dim + 1, po.dim, (long long)(po.cells[0] ? po.cells[0] : n));
    for (int d = 1; d < po.dim; d++) printf(" x %lld", (long long)(po.cells[d] ? po.cells[d] : n));
    printf(" cells, BCs (xmin..) ");
    for (int f = 0; f < 2 * po.dim; f++) printf("%s", bcn[po.bc[f].kind]);
    printf(", %s unknowns %lld", po.fd_layout == HPMG_FD_CELL ? "cell" : "vertex", (long long)st.dofs);
    printf(", %d levels\n  solver %s", st.levels, hpmg_cli_solvers[so.solver]);
   } else {
    printf("hpmg %s: -Laplace u = f, finite differences (%d-point), %dD, %lld^%d intervals, %lld unknowns, "
           "%d levels\n  solver %s", HPMG_VERSION_STRING, 2 * po.dim + 1, po.dim, (long long)n, po.dim,
           (long long)st.dofs, st.levels, hpmg_cli_solvers[so.solver]);
   }
    if (!fft) {
      printf(" (%s", general && so.smoother == HPMG_SMOOTHER_AUTO ? "auto: line GS along a stretched direction, else mcgs"
                                                                 : hpmg_cli_smoothers[so.smoother]);
      if (so.smoother == HPMG_SMOOTHER_JACOBI) printf(" omega %g", so.jacobi_omega);
      else if (so.sor != 1) printf(" SOR %g", so.sor);
      printf(", V(%d,%d)", so.pre, so.post);
      if (so.solver == HPMG_SOLVER_FMG)
        printf(", %s FMG interpolation", hpmg_cli_fmg_interps[so.fmg_interp]);
      printf(")");
    }
    printf(", %s, %s", cuda ? "cuda" : "cpu", hpmg_cli_precisions[so.precision]);
    if (cuda && !fft) printf(", %d GPU levels (split)", st.split);
    if (st.split_costs.measured) /* --split auto: the model's constants, measured now */
      printf("\n  split auto from measured launch %.1f us, GPU %.2f TB/s, CPU %.1f GB/s, fork/join %.1f us, "
             "copy %.1f us + %.1f GB/s", st.split_costs.gpu_launch_s * 1e6, st.split_costs.gpu_bw * 1e-12,
             st.split_costs.cpu_bw * 1e-9, st.split_costs.cpu_barrier_s * 1e6, st.split_costs.link_latency_s * 1e6,
             st.split_costs.link_bw * 1e-9);
    printf(", %d threads, ~%s host", nthreads, hpmg_format_bytes(hb, b1, sizeof b1));
    if (db > 0) printf(", ~%s device", hpmg_format_bytes(db, b2, sizeof b2));
    printf("\n");
  }
  double tbest, tmean;
  e = hpmg_cli_solve_repeat(s, NULL, x, repeat, &st, &tbest, &tmean);
  /* an incompatible right-hand side with --no-project is bad input */
  int status = e == HPMG_SUCCESS ? 0 : e == HPMG_ERR_ARG ? FD_EXIT_BAD_INPUT : FD_EXIT_FAILED;
  if (e) fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
  double l2h = NAN, rms = NAN, mx = NAN;
  if (e == HPMG_SUCCESS || e == HPMG_ERR_NOT_CONVERGED) hpmg_problem_fd_errors(prob, x, &l2h, &rms, &mx);
  if (vtu && status == 0) {
    const hpmg_error ve = hpmg_problem_write_vtu(prob, x, vtu);
    if (ve) {
      fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
      status = ve == HPMG_ERR_ARG ? FD_EXIT_BAD_INPUT : FD_EXIT_FAILED;
    }
  }
  const double relres = st.residual0 > 0 ? st.residual / st.residual0 : 0;
  if (json) {
    hpmg_cli_report rep = {.po = po, .so = so, .st = st, .n = n, .dofs_total = total, .l2_error = l2h, .max_error = mx,
                           .rms_error = rms, .solve_s = tbest, .solve_mean_s = tmean,
                           .repeat = repeat, .dofs_per_s = tbest > 0 ? st.dofs / tbest : 0, .bytes_host = hb,
                           .bytes_device = db, .status = status};
    rep.nhistory = hpmg_solver_history(s, &rep.history);
    hpmg_cli_print_json(&rep);
  } else if (e == HPMG_SUCCESS || e == HPMG_ERR_NOT_CONVERGED) {
    printf("summary\n");
    if (general)
      printf("  unknowns            %lld, %d levels, %d threads, CPU kernels %s\n", (long long)st.dofs, st.levels,
             nthreads, hpmg_cpu_isa());
    else
      printf("  unknowns            %lld ((%lld+1)^%d points with the boundary), %d levels, %d threads, "
             "CPU kernels %s\n", (long long)st.dofs, (long long)n, po.dim, st.levels, nthreads, hpmg_cpu_isa());
    printf("  iterations          %d (%s), relative residual %.3e, rate %.4f\n", st.iterations,
           st.converged ? "converged" : "NOT converged", relres, st.rate);
    if (general && po.rhs != HPMG_RHS_SINE) printf("  error vs exact      (no exact solution for --rhs one)\n");
    if (general && po.rhs == HPMG_RHS_SINE) printf("  error vs exact      discrete L2 (W-weighted) %.6e   max %.6e\n", l2h, mx);
    if (general) {
      if (st.compat_defect != 0) printf("  compatibility       defect %.3e (the mean of f removed by the projection)\n", st.compat_defect);
    } else
      printf("  error vs exact      discrete L2 (h^d-weighted) %.6e   rms over grid %.6e   max %.6e\n", l2h, rms, mx);
    if (fft)
      printf("  time [s]            setup %.4f (plan %.4f) | transforms+scaling %.4f\n", st.t_setup, st.t_plan, st.t_fft);
    else
      printf("  time [s]            setup %.4f | smooth %.4f residual %.4f transfer %.4f coarse %.4f "
             "norm %.4f krylov %.4f host<->device %.4f%s\n",
             st.t_setup, st.t_smoother, st.t_operator, st.t_transfer, st.t_coarse, st.t_norm, st.t_krylov,
             st.t_comm, cuda && !so.profile ? " (GPU phases unsynchronized: use --profile)" : "");
    printf("  time to solution    %.4f s%s   (%.4g DoF/s)\n", tbest, repeat > 1 ? " (fastest of --repeat)" : "",
           tbest > 0 ? st.dofs / tbest : 0.0);
    if (vtu && status == 0) printf("  wrote %s\n", vtu);
  }
  free(x);
  hpmg_solver_destroy(&s);
  hpmg_problem_destroy(&prob);
  return status;
}
