/* `hpmg solve --disc fd ...`: finite-difference multigrid and FFT Poisson
 * solvers (paper 002). Called by main.c with argv[0] = "hpmg", argv[1] =
 * "solve". Every option is checked before anything is allocated; bad input
 * exits with 2, a problem that does not fit in memory with 3, a failed
 * solve with 1. */
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "mg/fd_mg.h"

enum { FD_EXIT_BAD_INPUT = 2, FD_EXIT_NO_MEMORY = 3, FD_EXIT_FAILED = 1 };

static void usage(FILE *f) {
  fprintf(f,
          "usage: hpmg solve --disc fd [options]\n"
          "Solves -Laplace u = f on (0,1)^d, u = 0 on the boundary, with the 5-point (2D) or\n"
          "7-point (3D) finite-difference stencil on 2^L intervals per direction; the exact\n"
          "solution is prod sin(pi x_i). Multigrid as in Feng, Shu, Xu, Zhang (paper 002).\n"
          "options (default in brackets):\n"
          "  --disc fd               finite differences (this page)\n"
          "  --dim 2|3               dimension [2]\n"
          "  --refine L              2^L intervals per direction, L levels; 1..%d in 2D, 1..%d in 3D [10]\n"
          "  --smoother S            jacobi | rbgs (red-black GS) | mcgs (4 colors 2D, 8 colors 3D,\n"
          "                          post-smoothing in reverse color order) [mcgs]\n"
          "  --jacobi-omega W        Jacobi damping, 0 < W < 2 [0.8]\n"
          "  --sor W                 over-relaxation of the GS smoothers (rbgs, mcgs), 0 < W < 2;\n"
          "                          1 is plain GS [1; fmg in 3D with cubic interpolation and mcgs: 1.3]\n"
          "  --solver S              vcycle | fmg (one full-multigrid pass) | cg (PCG, one V-cycle\n"
          "                          as preconditioner) | fft (sine-transform direct solver) [vcycle]\n"
          "  --pre N, --post N       smoothing sweeps before/after the coarse correction, 0..100\n"
          "                          [1, 1; fmg in 3D: 2, 2, with cubic interpolation and mcgs 2, 1]\n"
          "  --fmg-interp I          FMG's interpolation to each new level: cubic (fourth order) |\n"
          "                          linear (the cycle's prolongation, as in paper 002) [cubic]\n"
          "  --tol T                 relative residual reduction, 0 < T < 1 [1e-6]\n"
          "  --maxit N               iteration limit, 1..1000000 [100]\n"
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
          "  --json                  print one JSON object instead of text\n"
          "  --quiet                 no per-iteration lines\n"
          "  --help, --version       this text; the version and the CPU kernels in use\n",
          FD_MAX_REFINE_2D, FD_MAX_REFINE_3D, hpmg_cpu_isa_available());
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

typedef struct {
  int json;
  double *hist;
  int nhist, cap;
} monitor_ctx;

static void monitor(void *vctx, int it, double res, double rel) {
  monitor_ctx *m = vctx;
  if (it < m->cap) { m->hist[it] = res; m->nhist = it + 1; }
  if (m->json) return;
  const double prev = it > 0 && it - 1 < m->cap ? m->hist[it - 1] : res;
  if (it == 0) printf("  iter     residual    rel.resid   reduction\n");
  printf("  %4d  %11.4e  %11.4e  %10.4f\n", it, res, rel, prev > 0 ? res / prev : 0.0);
  fflush(stdout);
}

static const char *solver_names[] = {"vcycle", "fmg", "cg", "fft"};
static const char *smoother_names[] = {"jacobi", "rbgs", "mcgs"};
static const char *fmg_interp_names[] = {"linear", "cubic"}; /* fd_fmg_interp */

int hpmg_cli_fd(int argc, char **argv) {
  enum { O_DISC = 256, O_DIM, O_REFINE, O_SMOOTHER, O_OMEGA, O_SOLVER, O_PRE, O_POST, O_TOL, O_MAXIT,
         O_THREADS, O_PREC, O_DEVICE, O_SPLIT, O_JSON, O_HELP, O_REPEAT, O_MEASURE, O_PROFILE, O_QUIET, O_FMGI, O_SOR,
         O_ISA, O_VERSION };
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
      {0, 0, 0, 0}};
  fd_config c;
  fd_config_default(&c);
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
      if (!parse_int(a, 2, 3, &c.dim)) return bad("--dim", a, "2 or 3");
      break;
    case O_REFINE:
      if (!parse_int(a, 1, FD_MAX_REFINE_2D, &c.refine)) return bad("--refine", a, "1..15 (2D), 1..10 (3D)");
      break;
    case O_SMOOTHER:
      for (i = 0; i < 3 && strcmp(a, smoother_names[i]); i++) {}
      if (i == 3) return bad("--smoother", a, "jacobi, rbgs, mcgs");
      c.smoother = (fd_smoother_kind)i;
      break;
    case O_OMEGA:
      if (!parse_double(a, 0, 2, &c.omega)) return bad("--jacobi-omega", a, "a number in (0,2)");
      break;
    case O_SOR:
      if (!parse_double(a, 0, 2, &c.sor)) return bad("--sor", a, "a number in (0,2)");
      break;
    case O_SOLVER:
      for (i = 0; i < 4 && strcmp(a, solver_names[i]); i++) {}
      if (i == 4) return bad("--solver", a, "vcycle, fmg, cg, fft");
      c.solver = (fd_solver_kind)i;
      break;
    case O_PRE:
      if (!parse_int(a, 0, 100, &c.pre)) return bad("--pre", a, "0..100");
      break;
    case O_POST:
      if (!parse_int(a, 0, 100, &c.post)) return bad("--post", a, "0..100");
      break;
    case O_FMGI:
      for (i = 0; i < 2 && strcmp(a, fmg_interp_names[i]); i++) {}
      if (i == 2) return bad("--fmg-interp", a, "cubic, linear");
      c.fmg_interp = (fd_fmg_interp)i;
      break;
    case O_TOL:
      if (!parse_double(a, 0, 1, &c.tol)) return bad("--tol", a, "a number in (0,1)");
      break;
    case O_MAXIT:
      if (!parse_int(a, 1, 1000000, &c.maxit)) return bad("--maxit", a, "1..1000000");
      break;
    case O_THREADS:
      if (!parse_int(a, 0, 4096, &c.threads)) return bad("--threads", a, "0..4096");
      break;
    case O_PREC:
      if (!strcmp(a, "double")) c.prec = FD_DOUBLE;
      else if (!strcmp(a, "float")) c.prec = FD_FLOAT;
      else return bad("--precision", a, "double, float");
      break;
    case O_DEVICE:
      if (!strcmp(a, "cpu")) c.device = FD_DEVICE_CPU;
      else if (!strcmp(a, "cuda")) c.device = FD_DEVICE_CUDA;
      else return bad("--device", a, "cpu, cuda");
      break;
    case O_SPLIT:
      split_given = 1;
      if (!strcmp(a, "auto")) c.split = FD_SPLIT_AUTO;
      else if (!parse_int(a, 0, FD_MAX_REFINE_2D, &c.split)) return bad("--split", a, "auto or 0..L");
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
    case O_MEASURE: c.fft_measure = 1; break;
    case O_PROFILE: c.profile = 1; break;
    default:
      fprintf(stderr, "(see hpmg solve --disc fd --help)\n");
      return FD_EXIT_BAD_INPUT;
    }
  }
  if (optind < ac) {
    fprintf(stderr, "hpmg: unexpected argument '%s' (see hpmg solve --disc fd --help)\n", av[optind]);
    return FD_EXIT_BAD_INPUT;
  }
  if (split_given && c.device != FD_DEVICE_CUDA) {
    fprintf(stderr, "hpmg: --split needs --device cuda (the split puts the finest levels on the GPU)\n");
    return FD_EXIT_BAD_INPUT;
  }
  fd_config_resolve(&c);
  if (fd_config_check(&c)) {
    fprintf(stderr, "hpmg: %s\n(see hpmg solve --disc fd --help)\n", hpmg_last_error());
    return FD_EXIT_BAD_INPUT;
  }
  const int64_t n = (int64_t)1 << c.refine, total = fd_points(c.dim, n);
  /* Float FMG has no stopping test to report a shortfall: say before solving
   * that its rounding error exceeds the discretization error, from n = 256 on
   * (3D with SOR: from 1024 on; docs/fd.md, Precision). */
  const int64_t float_n = c.dim == 3 && c.sor != 1 ? 1024 : 256;
  if (c.solver == FD_SOLVER_FMG && c.prec == FD_FLOAT && n >= float_n)
    fprintf(stderr, "hpmg: warning: in float precision the FMG error grows like n^2 from rounding and exceeds "
                    "the discretization error (about %.0e here) from n = %lld on (3D plain GS at 256^3: 3.9e-5 "
                    "against 4.7e-6 in double; 3D SOR 1.3 at 1024^3: 4.9e-7 against 9.6e-8); use --precision double\n",
            0.8 / ((double)n * (double)n), (long long)float_n);
  double hb, db;
  fd_memory_estimate(&c, &hb, &db);
  hb += 8.0 * (double)total; /* the solution vector */
  if (c.solver == FD_SOLVER_FFT || c.prec == FD_FLOAT || c.device == FD_DEVICE_CUDA) hb += 8.0 * (double)total;
  const uint64_t avail = hpmg_memory_available();
  char b1[32], b2[32];
  if (avail > 0 && hb > 0.9 * (double)avail) {
    fprintf(stderr, "hpmg: --refine %d in %dD needs about %s of host memory; %s is available\n", c.refine, c.dim,
            hpmg_format_bytes(hb, b1, sizeof b1), hpmg_format_bytes((double)avail, b2, sizeof b2));
    return FD_EXIT_NO_MEMORY;
  }
  monitor_ctx mon = {json || quiet, NULL, 0, c.maxit + 2};
  mon.hist = calloc((size_t)mon.cap, sizeof(double));
  double *x = malloc(sizeof(double) * (size_t)total);
  if (!x || !mon.hist) {
    fprintf(stderr, "hpmg: cannot allocate the solution vector (%s)\n", hpmg_format_bytes(8.0 * total, b1, sizeof b1));
    free(x); free(mon.hist);
    return FD_EXIT_NO_MEMORY;
  }
  c.monitor = monitor;
  c.monitor_ctx = &mon;
  fd_solver s;
  hpmg_error e = fd_solver_create(&c, &s);
  if (e) {
    fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
    free(x); free(mon.hist);
    return e == HPMG_ERR_MEMORY ? FD_EXIT_NO_MEMORY
           : (e == HPMG_ERR_ARG || e == HPMG_ERR_BACKEND) ? FD_EXIT_BAD_INPUT : FD_EXIT_FAILED;
  }
  fd_stats st;
  fd_solver_get_stats(s, &st);
  const int nthreads = c.threads > 0 ? c.threads : omp_get_max_threads();
  if (!json) {
    printf("hpmg %s: -Laplace u = f, finite differences (%d-point), %dD, %lld^%d intervals, %lld unknowns, "
           "%d levels\n  solver %s", HPMG_VERSION_STRING, 2 * c.dim + 1, c.dim, (long long)n, c.dim,
           (long long)st.unknowns, st.levels, solver_names[c.solver]);
    if (c.solver != FD_SOLVER_FFT) {
      printf(" (%s", smoother_names[c.smoother]);
      if (c.smoother == FD_SMOOTH_JACOBI) printf(" omega %g", c.omega);
      else if (c.sor != 1) printf(" SOR %g", c.sor);
      printf(", V(%d,%d)", c.pre, c.post);
      if (c.solver == FD_SOLVER_FMG) printf(", %s FMG interpolation", fmg_interp_names[c.fmg_interp]);
      printf(")");
    }
    printf(", %s, %s", c.device == FD_DEVICE_CUDA ? "cuda" : "cpu", c.prec == FD_DOUBLE ? "double" : "float");
    if (c.device == FD_DEVICE_CUDA && c.solver != FD_SOLVER_FFT) printf(", %d GPU levels (split)", st.split);
    if (st.split_costs.measured) /* --split auto: the model's constants, measured now */
      printf("\n  split auto from measured launch %.1f us, GPU %.2f TB/s, CPU %.1f GB/s, fork/join %.1f us, "
             "copy %.1f us + %.1f GB/s", st.split_costs.gpu_launch_s * 1e6, st.split_costs.gpu_bw * 1e-12,
             st.split_costs.cpu_bw * 1e-9, st.split_costs.cpu_barrier_s * 1e6, st.split_costs.link_latency_s * 1e6,
             st.split_costs.link_bw * 1e-9);
    printf(", %d threads, ~%s host", nthreads, hpmg_format_bytes(hb, b1, sizeof b1));
    if (db > 0) printf(", ~%s device", hpmg_format_bytes(db, b2, sizeof b2));
    printf("\n");
  }
  double tmin = INFINITY, tsum = 0;
  for (int r = 0; r < repeat; r++) {
    if (r > 0) { c.monitor = NULL; }
    mon.json = json || quiet || r > 0;
    e = fd_solver_solve(s, NULL, x);
    fd_solver_get_stats(s, &st);
    if (e && e != HPMG_ERR_NOT_CONVERGED) break;
    if (st.t_solve < tmin) tmin = st.t_solve;
    tsum += st.t_solve;
  }
  int status = e == HPMG_SUCCESS ? 0 : FD_EXIT_FAILED;
  if (e) fprintf(stderr, "hpmg: %s\n", hpmg_last_error());
  double l2h = NAN, rms = NAN, mx = NAN;
  if (e == HPMG_SUCCESS || e == HPMG_ERR_NOT_CONVERGED) fd_error_norms(c.dim, n, x, &l2h, &rms, &mx);
  const double relres = st.res0 > 0 ? st.res / st.res0 : 0;
  const double tbest = isfinite(tmin) ? tmin : st.t_solve;
  if (json) {
    printf("{\"disc\":\"fd\",\"dim\":%d,\"refine\":%d,\"n\":%lld,\"unknowns\":%lld,\"points\":%lld,"
           "\"solver\":\"%s\",\"smoother\":\"%s\",\"omega\":%g,\"sor\":%g,\"pre\":%d,\"post\":%d,\"fmg_interp\":\"%s\",\"tol\":%g,\"maxit\":%d,"
           "\"threads\":%d,\"isa\":\"%s\",\"simd_bytes\":%d,\"precision\":\"%s\",\"device\":\"%s\",\"split\":%d,\"levels\":%d,"
           "\"iterations\":%d,\"converged\":%s,\"res0\":%.6e,\"res\":%.6e,\"relres\":%.6e,\"rate\":%.6f,"
           "\"err_l2h\":%.6e,\"err_rms\":%.6e,\"err_max\":%.6e,\"t_setup\":%.6e,\"t_plan\":%.6e,"
           "\"t_solve\":%.6e,\"t_solve_mean\":%.6e,\"repeat\":%d,\"t_smooth\":%.6e,\"t_residual\":%.6e,"
           "\"t_transfer\":%.6e,\"t_coarse\":%.6e,\"t_comm\":%.6e,\"t_norm\":%.6e,\"t_krylov\":%.6e,"
           "\"t_fft\":%.6e,\"dofs_per_s\":%.6e,\"bytes_host\":%.0f,\"bytes_device\":%.0f,\"status\":%d,"
           "\"split_costs\":{\"measured\":%d,\"gpu_launch_s\":%.3e,\"gpu_bw\":%.4e,\"cpu_bw\":%.4e,"
           "\"cpu_barrier_s\":%.3e,\"link_latency_s\":%.3e,\"link_bw\":%.4e},\"history\":[",
           c.dim, c.refine, (long long)n, (long long)st.unknowns, (long long)total, solver_names[c.solver],
           smoother_names[c.smoother], c.omega, c.sor, c.pre, c.post, fmg_interp_names[c.fmg_interp], c.tol, c.maxit, nthreads,
           hpmg_cpu_isa(), hpmg_cpu_simd_bytes(), c.prec == FD_DOUBLE ? "double" : "float", c.device == FD_DEVICE_CUDA ? "cuda" : "cpu", st.split,
           st.levels, st.iterations, st.converged ? "true" : "false", st.res0, st.res, relres, st.rate,
           isnan(l2h) ? -1 : l2h, isnan(rms) ? -1 : rms, isnan(mx) ? -1 : mx, st.t_setup, st.t_plan, tbest,
           repeat > 0 ? tsum / repeat : 0, repeat, st.t_smooth, st.t_residual, st.t_transfer, st.t_coarse,
           st.t_comm, st.t_norm, st.t_krylov, st.t_fft, tbest > 0 ? st.unknowns / tbest : 0, hb, db, status,
           st.split_costs.measured, st.split_costs.gpu_launch_s, st.split_costs.gpu_bw, st.split_costs.cpu_bw,
           st.split_costs.cpu_barrier_s, st.split_costs.link_latency_s, st.split_costs.link_bw);
    for (i = 0; i < mon.nhist; i++) printf("%s%.6e", i ? "," : "", mon.hist[i]);
    printf("]}\n");
  } else {
    printf("summary\n");
    printf("  unknowns            %lld ((%lld+1)^%d points with the boundary), %d levels, %d threads, "
           "CPU kernels %s\n", (long long)st.unknowns, (long long)n, c.dim, st.levels, nthreads, hpmg_cpu_isa());
    printf("  iterations          %d (%s), relative residual %.3e, rate %.4f\n", st.iterations,
           st.converged ? "converged" : "NOT converged", relres, st.rate);
    printf("  error vs exact      discrete L2 (h^d-weighted) %.6e   rms over grid %.6e   max %.6e\n", l2h, rms, mx);
    if (c.solver == FD_SOLVER_FFT)
      printf("  time [s]            setup %.4f (plan %.4f) | transforms+scaling %.4f\n", st.t_setup, st.t_plan, st.t_fft);
    else
      printf("  time [s]            setup %.4f | smooth %.4f residual %.4f transfer %.4f coarse %.4f "
             "norm %.4f krylov %.4f host<->device %.4f%s\n",
             st.t_setup, st.t_smooth, st.t_residual, st.t_transfer, st.t_coarse, st.t_norm, st.t_krylov,
             st.t_comm, c.device == FD_DEVICE_CUDA && !c.profile ? " (GPU phases unsynchronized: use --profile)" : "");
    printf("  time to solution    %.4f s%s   (%.4g DoF/s)\n", tbest, repeat > 1 ? " (fastest of --repeat)" : "",
           tbest > 0 ? st.unknowns / tbest : 0.0);
  }
  free(x);
  free(mon.hist);
  fd_solver_destroy(&s);
  return status;
}
