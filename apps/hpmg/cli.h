/* The command line's two parsers (main.c: finite elements, cli_fd.c: finite
 * differences) and what they share: the names of option values, the --json
 * object (json.c, schema in docs/json.md). */
#ifndef HPMG_CLI_H
#define HPMG_CLI_H

#include <stddef.h>
#include "hpmg.h"

/* hpmg solve --disc fd ...: returns the exit status */
int hpmg_cli_fd(int argc, char **argv);
/* hpmg solve --disc p1 ...: returns the exit status */
int hpmg_cli_p1(int argc, char **argv);
/* hpmg solve --disc sem ...: returns the exit status */
int hpmg_cli_sem(int argc, char **argv);
/* hpmg --version: the library, the CPU kernel variant in use, CUDA */
void hpmg_cli_print_version(void);

/* names of option values, indexed by their enums (parsing and --json share them) */
extern const char *const hpmg_cli_smoothers[];  /* chebyshev jacobi gs sgs patch auto rbgs mcgs */
extern const char *const hpmg_cli_solvers[];    /* cg vcycle gmres fmg auto fft */
extern const char *const hpmg_cli_precisions[]; /* double float mixed */
extern const char *const hpmg_cli_rhss[], *const hpmg_cli_patch_modes[], *const hpmg_cli_local_solvers[],
    *const hpmg_cli_patch_orders[], *const hpmg_cli_patch_kernels[], *const hpmg_cli_gs_orders[], *const hpmg_cli_cycles[],
    *const hpmg_cli_fmg_interps[];

/* One solve as --json reports it. */
typedef struct {
  hpmg_problem_options po;
  hpmg_solver_options so;       /* resolved (hpmg_solver_options_resolve) */
  hpmg_stats st;
  const double *history;        /* residual per iteration */
  int nhistory;
  int64_t n, dofs_total;        /* cells (FD: intervals) per direction; grid points with the boundary */
  double l2_error, max_error, rms_error; /* NaN: not known */
  double solve_s, solve_mean_s; /* fastest and mean time to solution of `repeat` solves */
  int repeat;
  double dofs_per_s;
  double bytes_host, bytes_device; /* NaN: not estimated */
  int status;                   /* the exit status */
  const char *mesh;             /* P1: the mesh (file or built-in spec) */
  const char *rhs_name;         /* the right-hand side's name where po.rhs does not say it (SEM: random) */
} hpmg_cli_report;

/* Prints the report as one line of JSON: the same fields for both
 * discretizations, null where one does not apply (docs/json.md). */
void hpmg_cli_print_json(const hpmg_cli_report *r);

/* The box options (cli_box.c, docs/bc.md), as given on the command line. */
typedef struct {
  const char *bc, *grid, *grid_file, *cells, *layout; /* NULL: not given */
  int no_project, box_given;
} hpmg_cli_box_args;
/* Parses them into po (after --dim is known); nodes[3] receive the
 * --grid-file coordinates (the caller frees them after the problem is
 * created). 0, or 2 after a message on stderr. */
int hpmg_cli_box_apply(const hpmg_cli_box_args *a, hpmg_problem_options *po, double *nodes[3]);

/* paper 001's name of the spectral-element solver resolved options select:
 * dcg, mg, kmg or kvmg (cli_sem.c) */
const char *hpmg_cli_sem_solver(const hpmg_solver_options *so);

/* --vtu PATH: 0 when PATH's directory is writable, else 1 after a message on
 * stderr (checked before any work, so that a solve's result is not lost) */
int hpmg_cli_vtu_unwritable(const char *path);

/* Solves `repeat` times into x (iteration lines of the first solve only;
 * stops at a failure other than non-convergence); st: the last solve's
 * statistics, tbest and tmean: the fastest and mean time to solution. */
hpmg_error hpmg_cli_solve_repeat(hpmg_solver s, const double *b, double *x, int repeat, hpmg_stats *st, double *tbest,
                                 double *tmean);

/* library internals the command line reports (src/api) */
int hpmg_solver_history(hpmg_solver s, const double **h);
void hpmg_solver_set_verbose(hpmg_solver s, int verbose);
hpmg_error hpmg_problem_fd_errors(hpmg_problem p, const double *x, double *l2h, double *rms, double *maxerr);
const char *hpmg_format_bytes(double bytes, char *buf, size_t len);

#endif
