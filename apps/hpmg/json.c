/* hpmg solve --json: one object with the same fields for finite elements and
 * finite differences; a field that does not apply to the discretization is
 * null (docs/json.md lists every field). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include "cli.h"

const char *const hpmg_cli_smoothers[] = {"chebyshev", "jacobi", "gs", "sgs", "patch", "auto", "rbgs", "mcgs"},
                 *const hpmg_cli_solvers[] = {"cg", "vcycle", "gmres", "fmg", "auto", "fft"},
                 *const hpmg_cli_precisions[] = {"double", "float", "mixed"},
                 *const hpmg_cli_rhss[] = {"sine", "one", "vector-one", "waves"},
                 *const hpmg_cli_patch_modes[] = {"multiplicative", "additive"},
                 *const hpmg_cli_local_solvers[] = {"fdm", "dense"},
                 *const hpmg_cli_patch_orders[] = {"zorder", "lexicographic", "hierarchical"},
                 *const hpmg_cli_patch_kernels[] = {"fused", "separate", "global"},
                 *const hpmg_cli_gs_orders[] = {"lexicographic", "cellwise"},
                 *const hpmg_cli_cycles[] = {"standard", "add-residual"},
                 *const hpmg_cli_fmg_interps[] = {"cubic", "linear"};

/* "key":value with printf's format, or "key":null */
static void num(const char *key, const char *fmt, int present, double v) {
  printf(",\"%s\":", key);
  if (present) printf(fmt, v);
  else printf("null");
}
static void str(const char *key, int present, const char *v) {
  if (present) printf(",\"%s\":\"%s\"", key, v);
  else printf(",\"%s\":null", key);
}
/* errors keep -1 for "not known" (no closed-form solution) */
static double err(double e) { return isnan(e) ? -1 : e; }

void hpmg_cli_print_json(const hpmg_cli_report *r) {
  const hpmg_problem_options *po = &r->po;
  const hpmg_solver_options *so = &r->so;
  const hpmg_stats *st = &r->st;
  const int fe = po->disc == HPMG_DISC_FE, fd = po->disc == HPMG_DISC_FD, p1 = po->disc == HPMG_DISC_P1,
            sem = po->disc == HPMG_DISC_SEM, grid = fe || fd;
  const hpmg_smoother_kind sm = so->smoother;
  const int patch = sm == HPMG_SMOOTHER_PATCH && !sem, gs = sm == HPMG_SMOOTHER_GS || sm == HPMG_SMOOTHER_SGS;
  /* Q_k on the GPU times phases and levels only with --profile: null there, not 0 */
  const int timed = fd || so->device == HPMG_DEVICE_CPU || so->profile;
  printf("{\"disc\":\"%s\",\"device\":\"%s\",\"dim\":%d", fe ? "fe" : fd ? "fd" : sem ? "sem" : "p1",
         so->device == HPMG_DEVICE_CUDA ? "cuda" : "cpu", po->dim);
  num("degree", "%.0f", fe || sem, po->degree);
  num("coarse", "%.0f", grid, po->coarse);
  num("refine", "%.0f", grid, po->refine);
  num("n", "%.0f", grid || sem, (double)r->n);
  if (sem) printf(",\"elements\":[%lld,%lld,%lld]", (long long)po->cells[0], (long long)po->cells[1],
                  (long long)(po->dim == 3 ? po->cells[2] : 0));
  else printf(",\"elements\":null");
  if (grid || sem) printf(",\"box\":[%g,%g,%g]", po->box[0], po->box[1], po->dim == 3 ? po->box[2] : 0.0);
  else printf(",\"box\":null");
  printf(",\"lambda\":%g", po->lambda);
  str("mesh", p1, r->mesh);
  str("rhs", 1, r->rhs_name ? r->rhs_name : hpmg_cli_rhss[po->rhs]);
  str("solver", 1, sem ? hpmg_cli_sem_solver(so) : hpmg_cli_solvers[so->solver]);
  num("restart", "%.0f", fe, so->restart);
  str("smoother", 1, hpmg_cli_smoothers[sm]);
  str("patch_mode", 1, patch ? hpmg_cli_patch_modes[so->patch_mode] : "none");
  str("patch_order", 1, patch ? hpmg_cli_patch_orders[so->patch_order] : "none");
  num("patch_batch", "%.0f", fe, (double)so->patch_batch);
  str("local_solver", 1, patch ? hpmg_cli_local_solvers[so->local_solver] : "none");
  str("patch_kernel", 1, patch ? hpmg_cli_patch_kernels[so->patch_kernel] : "none");
  str("gs_order", 1, gs ? hpmg_cli_gs_orders[so->gs_order] : "none");
  num("cheby_degree", "%.0f", fe, so->cheby_degree);
  num("jacobi_omega", "%g", grid, so->jacobi_omega);
  num("sor", "%g", fd, so->sor);
  num("pre", "%.0f", grid, so->pre);
  num("post", "%.0f", grid, so->post);
  str("fmg_interp", fd, hpmg_cli_fmg_interps[so->fmg_interp]);
  str("cycle", grid, hpmg_cli_cycles[so->cycle]);
  str("precision", 1, hpmg_cli_precisions[so->precision]);
  printf(",\"tol\":%g,\"maxit\":%d,\"threads\":%d,\"isa\":\"%s\",\"simd_bytes\":%d", so->tol, so->maxit,
         omp_get_max_threads(), hpmg_cpu_isa(), hpmg_cpu_simd_bytes());
  num("split", "%.0f", fd, st->split);
  printf(",\"dofs\":%lld,\"dofs_total\":%lld,\"levels\":%d,\"iterations\":%d,\"converged\":%s,\"residual0\":%.6e,"
         "\"residual\":%.6e,\"relres\":%.6e,\"rate\":%.6f,\"l2_error\":%.6e,\"max_error\":%.6e",
         (long long)st->dofs, (long long)r->dofs_total, st->levels, st->iterations, st->converged ? "true" : "false",
         st->residual0, st->residual, st->residual0 > 0 ? st->residual / st->residual0 : 0.0, st->rate,
         err(r->l2_error), err(r->max_error));
  num("rms_error", "%.6e", fd, err(r->rms_error));
  num("setup_s", "%.6e", 1, st->t_setup);
  num("plan_s", "%.6e", fd, st->t_plan);
  num("operator_s", "%.6e", grid && timed, st->t_operator);
  num("smoother_s", "%.6e", grid && timed, st->t_smoother);
  num("transfer_s", "%.6e", grid && timed, st->t_transfer);
  num("coarse_s", "%.6e", grid && timed, st->t_coarse);
  num("krylov_s", "%.6e", timed, st->t_krylov);
  num("norm_s", "%.6e", fd, st->t_norm);
  num("comm_s", "%.6e", fd, st->t_comm);
  num("fft_s", "%.6e", fd, st->t_fft);
  printf(",\"solve_s\":%.6e,\"solve_mean_s\":%.6e,\"repeat\":%d,\"dofs_per_s\":%.6e", r->solve_s, r->solve_mean_s,
         r->repeat, r->dofs_per_s);
  num("matvecs", "%.0f", fe || p1 || sem, (double)st->operator_applications);
  num("dofs_condensed", "%.0f", sem, (double)st->dofs_condensed);
  num("nnz", "%.0f", p1, (double)st->nnz);
  num("cells", "%.0f", p1, (double)st->cells);
  num("symbolic_s", "%.6e", p1, st->t_symbolic);
  num("numeric_s", "%.6e", p1, st->t_numeric);
  num("compat_defect", "%.6e", p1 || sem, st->compat_defect);
  num("bytes_host", "%.0f", !isnan(r->bytes_host), r->bytes_host);
  num("bytes_device", "%.0f", !isnan(r->bytes_device), r->bytes_device);
  printf(",\"status\":%d", r->status);
  if (fd) {
    const hpmg_split_costs *c = &st->split_costs;
    printf(",\"split_costs\":{\"measured\":%d,\"gpu_launch_s\":%.3e,\"gpu_bw\":%.4e,\"cpu_bw\":%.4e,"
           "\"cpu_barrier_s\":%.3e,\"link_latency_s\":%.3e,\"link_bw\":%.4e}",
           c->measured, c->gpu_launch_s, c->gpu_bw, c->cpu_bw, c->cpu_barrier_s, c->link_latency_s, c->link_bw);
  } else printf(",\"split_costs\":null");
  printf(",\"history\":[");
  for (int i = 0; i < r->nhistory; i++) printf("%s%.6e", i ? "," : "", r->history[i]);
  printf("]");
  if (fe) {
    printf(",\"per_level\":[");
    for (int l = st->levels - 1, first = 1; l >= 0; l--) {
      if (l >= HPMG_STATS_MAX_LEVELS || st->level_dofs[l] == 0) continue;
      printf("%s{\"level\":%d,\"dofs\":%lld", first ? "" : ",", l, (long long)st->level_dofs[l]);
      num("smoother_s", "%.6e", timed, st->t_level_smoother[l]);
      num("operator_s", "%.6e", timed, st->t_level_operator[l]);
      num("transfer_s", "%.6e", timed, st->t_level_transfer[l]);
      printf("}");
      first = 0;
    }
    printf("]");
  } else printf(",\"per_level\":null");
  printf("}\n");
}
