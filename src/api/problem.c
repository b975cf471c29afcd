/* Public problem object: geometry, discretization, built-in data, errors, output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/isa.h"
#include "fem/fem.h"
#include "io/vtu.h"
#include "la/vec.h"
#include "disc/qk/transfer.h"
#include "disc/fd/fd_box.h"
#include "disc/qk/qk_box.h"
#include "fd.h"
#include "p1.h"
#include "sem.h"
#include "problem_impl.h"

int hpmg_max_degree(int dim) { return dim == 2 ? 10 : 10; }

void hpmg_problem_options_default(hpmg_problem_options *o) {
  memset(o, 0, sizeof *o);
  o->dim = 3;
  o->degree = 4;
  o->coarse = 1;
  o->refine = 5;
  o->box[0] = o->box[1] = o->box[2] = 1.0;
  o->lambda = 0.0;
  o->rhs = HPMG_RHS_SINE;
  o->disc = HPMG_DISC_FE;
  o->project_rhs = 1;
}

/* Q_k problems: boundary conditions, spacings, cell counts and the FD layout
 * beyond the defaults are refused until the Q_k discretization implements
 * them (finite differences take them: hpmg_box_init validates). */
static hpmg_error box_defaults_only(const hpmg_problem_options *o) {
  for (int d = 0; d < 3; d++) {
    HPMG_CHECK_ARG(o->cells[d] == 0, "cells per direction (--cells) are supported for --disc fd only: use --coarse/--refine");
    HPMG_CHECK_ARG(o->spacing[d].kind == HPMG_SPACING_UNIFORM, "non-uniform spacing (--grid) is supported for --disc fd only");
  }
  for (int f = 0; f < 6; f++)
    HPMG_CHECK_ARG(o->bc[f].kind == HPMG_BC_DIRICHLET && o->bc[f].value == 0 && !o->bc[f].fn && !o->bc[f].values,
                   "boundary conditions other than homogeneous Dirichlet (--bc) are supported for --disc fd only");
  HPMG_CHECK_ARG(o->fd_layout == HPMG_FD_VERTEX, "--fd-layout applies to finite differences (--disc fd) only");
  HPMG_CHECK_ARG(o->project_rhs == 0 || o->project_rhs == 1, "project_rhs must be 0 or 1 (got %d)", o->project_rhs);
  return HPMG_SUCCESS;
}

hpmg_error hpmg_problem_options_check(const hpmg_problem_options *o) {
  HPMG_CHECK_ARG(o, "problem options are NULL");
  HPMG_CHECK_ARG(o->disc == HPMG_DISC_FE || o->disc == HPMG_DISC_FD || o->disc == HPMG_DISC_P1 || o->disc == HPMG_DISC_SEM,
                 "unknown discretization %d (fe, fd, p1 or sem)", (int)o->disc);
  if (o->disc == HPMG_DISC_FD) return hpmg_fd_problem_check(o);
  if (o->disc == HPMG_DISC_SEM) return hpmg_sem_problem_check(o);
  if (o->disc == HPMG_DISC_FE && qk_box_needed(o)) { /* the box itself is checked by hpmg_box_init */
    HPMG_CHECK_ARG(o->fd_layout == HPMG_FD_VERTEX, "--fd-layout applies to finite differences (--disc fd) only");
    HPMG_CHECK_ARG(o->project_rhs == 0 || o->project_rhs == 1, "project_rhs must be 0 or 1 (got %d)", o->project_rhs);
    HPMG_CHECK_ARG(o->rhs != HPMG_RHS_VECTOR_ONE, "the vector of ones as right-hand side is for the default Q_k mesh only");
  } else HPMG_CALL(box_defaults_only(o));
  if (o->disc == HPMG_DISC_P1) return hpmg_p1_problem_check(o);
  HPMG_CHECK_ARG(!o->mesh && !o->num_sigma && !o->sigma_cells && !o->num_p1_bc,
                 "mesh, sigma and the P1 boundary conditions apply to P1 problems only (disc p1)");
  HPMG_CHECK_ARG(o->dim == 2 || o->dim == 3, "--dim must be 2 or 3 (got %d)", o->dim);
  HPMG_CHECK_ARG(o->degree >= 1 && o->degree <= hpmg_max_degree(o->dim),
                 "--degree must be in 1..%d for dim %d (got %d)", hpmg_max_degree(o->dim), o->dim, o->degree);
  HPMG_CHECK_ARG(o->coarse >= 1 && o->coarse <= 1 << 20, "--coarse must be in 1..%d (got %d)", 1 << 20, o->coarse);
  HPMG_CHECK_ARG(o->refine >= 0 && o->refine <= 30, "--refine must be in 0..30 (got %d)", o->refine);
  HPMG_CHECK_ARG(o->refine >= 1 || (int64_t)o->degree * o->coarse > 1,
                 "degree 1 on a single coarse cell has no unknowns: use --refine >= 1");
  for (int d = 0; d < o->dim; d++)
    HPMG_CHECK_ARG(o->box[d] > 0 && isfinite(o->box[d]), "--box lengths must be positive and finite (got %g)", o->box[d]);
  HPMG_CHECK_ARG(o->lambda >= 0 && isfinite(o->lambda), "--lambda must be >= 0 and finite (got %g)", o->lambda);
  HPMG_CHECK_ARG(o->rhs == HPMG_RHS_SINE || o->rhs == HPMG_RHS_ONE || o->rhs == HPMG_RHS_VECTOR_ONE ||
                     o->rhs == HPMG_RHS_WAVES,
                 "unknown right-hand side kind %d", (int)o->rhs);
  /* cells per direction and node counts must fit the index types */
  double cells = (double)o->coarse * ldexp(1.0, o->refine);
  HPMG_CHECK_ARG(cells * o->degree < 2147483647.0,
                 "%g cells of degree %d per direction exceed 2^31 nodes per direction", cells, o->degree);
  double n = pow(cells * o->degree - 1, o->dim);
  HPMG_CHECK_ARG(n < 9.2e18, "%.3g unknowns overflow 64-bit indices", n);
  return HPMG_SUCCESS;
}

hpmg_error hpmg_problem_create(const hpmg_problem_options *o, hpmg_problem *out) {
  *out = NULL;
  HPMG_CALL(hpmg_isa_check_env()); /* an invalid HPMG_ISA is refused, not ignored */
  HPMG_CALL(hpmg_problem_options_check(o));
  struct hpmg_problem_s *p = calloc(1, sizeof *p);
  if (!p) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate problem");
  p->o = *o;
  if (o->disc == HPMG_DISC_P1) {
    hpmg_error e = hpmg_p1_problem_create(o, &p->p1);
    if (e) {
      free(p);
      return e;
    }
    p->o.dim = hpmg_p1_problem_dim(p->p1);
    p->o.mesh = NULL, p->o.sigma = NULL, p->o.num_sigma = 0, p->o.sigma_cells = NULL, p->o.p1_bc = NULL, p->o.num_p1_bc = 0;
    *out = p;
    return HPMG_SUCCESS;
  }
  if (o->disc == HPMG_DISC_SEM) {
    hpmg_error e = hpmg_sem_problem_create(o, &p->sem);
    if (e) {
      free(p);
      return e;
    }
    for (int d = 0; d < 3; d++) p->o.spacing[d].nodes = NULL;
    *out = p;
    return HPMG_SUCCESS;
  }
  if (o->disc == HPMG_DISC_FD && fd_box_needed(o)) {
    hpmg_error e = hpmg_box_init(o, &p->box);
    if (e) {
      free(p);
      return e;
    }
    /* the options keep no pointer into the caller's arrays: the nodes are the box's */
    for (int d = 0; d < 3; d++) p->o.spacing[d].nodes = NULL;
    p->fdbox = 1;
    p->box_builtin = 1;
    memset(&p->g, 0, sizeof p->g);
    p->g.dim = o->dim;
    p->g.k = 1;
    for (int d = 0; d < 3; d++) {
      p->g.cells[d] = p->box.cells[d];
      p->g.n[d] = hpmg_box_n(&p->box, d);
    }
    p->g.N = hpmg_box_unknowns(&p->box);
    *out = p;
    return HPMG_SUCCESS;
  }
  if (o->disc == HPMG_DISC_FE && qk_box_needed(o)) {
    hpmg_error e = hpmg_box_init(o, &p->box);
    if (!e) {
      for (int d = 0; d < 3; d++) p->o.spacing[d].nodes = NULL; /* the nodes are the box's */
      p->qkbox = 1;
      p->box_builtin = 1;
      e = hpmg_grid_init_box(&p->box, o->degree, &p->g);
      if (e) hpmg_box_destroy(&p->box);
    }
    if (e) {
      free(p);
      return e;
    }
    *out = p;
    return HPMG_SUCCESS;
  }
  int64_t c = (int64_t)o->coarse << o->refine, cells[3] = {c, c, c};
  /* the FD grid's points are the nodes of Q1 on its 2^refine intervals */
  hpmg_error e = hpmg_grid_init(o->dim, o->disc == HPMG_DISC_FD ? 1 : o->degree, cells, o->box, &p->g);
  if (e) {
    free(p);
    return e;
  }
  *out = p;
  return HPMG_SUCCESS;
}

void hpmg_problem_destroy(hpmg_problem *p) {
  if (*p) hpmg_p1_problem_destroy(&(*p)->p1);
  if (*p) hpmg_sem_problem_destroy(&(*p)->sem);
  if (*p && ((*p)->fdbox || (*p)->qkbox)) hpmg_box_destroy(&(*p)->box);
  free(*p);
  *p = NULL;
}

hpmg_p1_problem hpmg_problem_p1(hpmg_problem p) { return p->p1; }

int64_t hpmg_problem_num_dofs(hpmg_problem p) {
  if (p->sem) return hpmg_sem_problem_num_dofs(p->sem);
  return p->p1 ? hpmg_p1_problem_num_dofs(p->p1) : p->g.N;
}

void hpmg_problem_grid(hpmg_problem p, int64_t n[3]) {
  if (p->p1) { /* unstructured: all nodes in one direction */
    n[0] = hpmg_p1_problem_num_dofs(p->p1), n[1] = n[2] = 1;
    return;
  }
  if (p->sem) {
    hpmg_sem_problem_grid(p->sem, n);
    return;
  }
  for (int d = 0; d < 3; d++) n[d] = p->g.n[d];
}

/* 1D quadrature data of direction d: interpolation matrix to nq Gauss points
 * per cell, physical points and weights. */
typedef struct {
  hpmg_sp1d B[3];
  double *xq[3], *wq[3];
  int64_t nq[3];
} quad3;

static void quad3_free(quad3 *q) {
  for (int d = 0; d < 3; d++) {
    hpmg_sp1d_free(&q->B[d]);
    hpmg_free(&q->xq[d]);
    hpmg_free(&q->wq[d]);
  }
}

static hpmg_error quad3_init(const hpmg_grid *g, int nq, quad3 *q) {
  memset(q, 0, sizeof *q);
  for (int d = 0; d < 3; d++) {
    if (d >= g->dim) { /* 2D: one "point" with weight 1 in z */
      double one = 1.0;
      HPMG_CALL(hpmg_sp1d_from_dense(1, 1, &one, &q->B[d]));
      HPMG_CALL(hpmg_calloc(sizeof(double), &q->xq[d]));
      HPMG_CALL(hpmg_malloc(sizeof(double), &q->wq[d]));
      q->wq[d][0] = 1.0;
      q->nq[d] = 1;
      continue;
    }
    q->nq[d] = g->cells[d] * nq;
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)q->nq[d], &q->xq[d]));
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)q->nq[d], &q->wq[d]));
    HPMG_CALL(hpmg_quadrature_interpolation_1d(g->k, (int)g->cells[d], g->h[d], nq, &q->B[d], q->xq[d], q->wq[d]));
  }
  return HPMG_SUCCESS;
}

static double exact_1d(const hpmg_problem_options *o, int d, double x) {
  return d < o->dim ? sin(M_PI * x / o->box[d]) : 1.0;
}

/* Built-in right-hand side. VECTOR_ONE is the vector of ones itself; the other two are
 * load vectors of separable f = c prod g_d(x_d), so b = c (bz (x) by (x) bx) with
 * b_d = B_d^T (w g_d) by (k+1)-point Gauss. */
hpmg_error hpmg_problem_builtin_rhs(hpmg_problem p, double *b) {
  const hpmg_grid *g = &p->g;
  const hpmg_problem_options *o = &p->o;
  if (o->rhs == HPMG_RHS_VECTOR_ONE) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < g->N; i++) b[i] = 1.0;
    return HPMG_SUCCESS;
  }
  quad3 q;
  double *bd[3] = {0};
  hpmg_error e = quad3_init(g, g->k + 1, &q);
  double c = o->rhs == HPMG_RHS_ONE ? 1.0 : o->lambda;
  for (int d = 0; d < o->dim && o->rhs == HPMG_RHS_SINE; d++) c += (M_PI / o->box[d]) * (M_PI / o->box[d]);
  for (int d = 0; d < 3 && !e; d++) {
    e = hpmg_calloc(sizeof(double) * (size_t)g->n[d], &bd[d]);
    if (e) break;
    if (d >= g->dim) { bd[d][0] = 1.0; continue; }
    const hpmg_sp1d *B = &q.B[d];
    for (int64_t row = 0; row < q.nq[d]; row++) {
      double f = q.wq[d][row] * (o->rhs == HPMG_RHS_ONE ? 1.0 : exact_1d(o, d, q.xq[d][row]));
      for (int pp = B->rowptr[row]; pp < B->rowptr[row + 1]; pp++) bd[d][B->col[pp]] += B->val[pp] * f;
    }
  }
  if (!e) {
    const int64_t nx = g->n[0], ny = g->n[1], nz = g->n[2];
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t i2 = 0; i2 < nz; i2++)
      for (int64_t i1 = 0; i1 < ny; i1++) {
        double s = c * bd[2][i2] * bd[1][i1];
        double *row = b + (i2 * ny + i1) * nx;
        for (int64_t i0 = 0; i0 < nx; i0++) row[i0] = s * bd[0][i0];
      }
  }
  for (int d = 0; d < 3; d++) hpmg_free(&bd[d]);
  quad3_free(&q);
  return e;
}

/* general FD box: f at the unknowns' points */
static hpmg_error box_point_values(hpmg_problem p, hpmg_function f, void *user, double *b) {
  double *pt[3] = {0};
  hpmg_error e = HPMG_SUCCESS;
  for (int d = 0; d < 3 && !e; d++) e = fd_box_points(&p->box, d, &pt[d]);
  const int64_t nx = p->g.n[0], ny = p->g.n[1], nz = p->g.n[2];
  int64_t bad = 0;
  if (!e) {
#pragma omp parallel for collapse(2) reduction(+ : bad) schedule(static)
    for (int64_t k = 0; k < nz; k++)
      for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++) {
          const double x[3] = {pt[0][i], pt[1][j], pt[2][k]};
          const double v = f(x, user);
          bad += !isfinite(v);
          b[(k * ny + j) * nx + i] = v;
        }
    if (bad) e = hpmg_error_set(HPMG_ERR_NUMERIC, "the right-hand side function returned %lld non-finite values", (long long)bad);
  }
  for (int d = 0; d < 3; d++) hpmg_free(&pt[d]);
  return e;
}

hpmg_error hpmg_problem_load_vector(hpmg_problem p, hpmg_function f, void *user, double *b) {
  HPMG_CHECK_ARG(p && f && b, "load vector: problem, function and output must be non-NULL");
  if (p->fdbox) return box_point_values(p, f, user, b);
  if (p->o.disc == HPMG_DISC_FD) return hpmg_fd_point_values(p->o.dim, p->o.refine, f, user, b);
  if (p->p1) return hpmg_p1_problem_load_vector(p->p1, f, user, b);
  if (p->sem) return hpmg_sem_problem_load_vector(p->sem, f, user, b);
  return qk_box_load(&p->g, f, user, b);
}

hpmg_error hpmg_problem_error(hpmg_problem p, const double *x, double *l2, double *maxerr) {
  HPMG_CHECK_ARG(p && x, "error: problem and solution must be non-NULL");
  if (p->fdbox) return fd_box_error(&p->o, &p->box, x, l2, maxerr);
  if (p->o.disc == HPMG_DISC_FD) {
    hpmg_fd_error(p->o.dim, p->o.refine, x, l2, NULL, maxerr);
    return HPMG_SUCCESS;
  }
  if (p->p1) return hpmg_p1_problem_error(p->p1, x, l2, maxerr);
  if (p->sem) return hpmg_sem_problem_error(p->sem, x, l2, maxerr);
  if (p->qkbox) return qk_box_error(&p->o, &p->box, &p->g, x, l2, maxerr);
  const hpmg_grid *g = &p->g;
  const hpmg_problem_options *o = &p->o;
  const int64_t nx = g->n[0], ny = g->n[1], nz = g->n[2];
  /* max error at the nodes (boundary nodes are exact) */
  double *pos[3] = {0};
  for (int d = 0; d < 3; d++) {
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)g->n[d], &pos[d]));
    if (d < g->dim) {
      hpmg_node_positions_1d(g->k, (int)g->cells[d], g->h[d], pos[d]);
      for (int64_t i = 0; i < g->n[d]; i++) pos[d][i] = exact_1d(o, d, pos[d][i]);
    } else pos[d][0] = 1.0;
  }
  double mx = 0.0;
#pragma omp parallel for collapse(2) reduction(max : mx) schedule(static)
  for (int64_t i2 = 0; i2 < nz; i2++)
    for (int64_t i1 = 0; i1 < ny; i1++)
      for (int64_t i0 = 0; i0 < nx; i0++) {
        double e = fabs(x[(i2 * ny + i1) * nx + i0] - pos[0][i0] * pos[1][i1] * pos[2][i2]);
        mx = e > mx ? e : mx;
      }
  for (int d = 0; d < 3; d++) hpmg_free(&pos[d]);
  if (maxerr) *maxerr = mx;
  /* L2 error with (k+2)-point Gauss, streaming over quadrature planes */
  quad3 q;
  HPMG_CALL(quad3_init(g, g->k + 2, &q));
  const int64_t nq0 = q.nq[0], nq1 = q.nq[1], nq2 = q.nq[2];
  double *ue[3];
  for (int d = 0; d < 3; d++) {
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)q.nq[d], &ue[d]));
    for (int64_t a = 0; a < q.nq[d]; a++) ue[d][a] = exact_1d(o, d, q.xq[d][a]);
  }
  double s = 0.0;
  const hpmg_sp1d *Bx = &q.B[0], *By = &q.B[1], *Bz = &q.B[2];
#pragma omp parallel reduction(+ : s)
  {
    double *tp = malloc(sizeof(double) * (size_t)(nx * ny)), *line = malloc(sizeof(double) * (size_t)nx);
#pragma omp for schedule(static)
    for (int64_t a2 = 0; a2 < nq2; a2++) {
      memset(tp, 0, sizeof(double) * (size_t)(nx * ny));
      for (int pp = Bz->rowptr[a2]; pp < Bz->rowptr[a2 + 1]; pp++) {
        const double c = Bz->val[pp], *src = x + (int64_t)Bz->col[pp] * nx * ny;
        for (int64_t i = 0; i < nx * ny; i++) tp[i] += c * src[i];
      }
      for (int64_t a1 = 0; a1 < nq1; a1++) {
        memset(line, 0, sizeof(double) * (size_t)nx);
        for (int pp = By->rowptr[a1]; pp < By->rowptr[a1 + 1]; pp++) {
          const double c = By->val[pp], *src = tp + (int64_t)By->col[pp] * nx;
          for (int64_t i = 0; i < nx; i++) line[i] += c * src[i];
        }
        const double w12 = q.wq[1][a1] * q.wq[2][a2], u12 = ue[1][a1] * ue[2][a2];
        for (int64_t a0 = 0; a0 < nq0; a0++) {
          double v = 0.0;
          for (int pp = Bx->rowptr[a0]; pp < Bx->rowptr[a0 + 1]; pp++) v += Bx->val[pp] * line[Bx->col[pp]];
          double e = v - ue[0][a0] * u12;
          s += q.wq[0][a0] * w12 * e * e;
        }
      }
    }
    free(tp);
    free(line);
  }
  for (int d = 0; d < 3; d++) hpmg_free(&ue[d]);
  quad3_free(&q);
  if (l2) *l2 = sqrt(s);
  return HPMG_SUCCESS;
}

/* FD problems: hpmg_problem_error's norms and the RMS error over all (n+1)^d
 * grid points, paper 002's FMG tables (internal, for the command line). */
hpmg_error hpmg_problem_fd_errors(hpmg_problem p, const double *x, double *l2h, double *rms, double *maxerr) {
  HPMG_CHECK_ARG(p && x && p->o.disc == HPMG_DISC_FD, "fd errors: an FD problem and a solution are needed");
  if (p->fdbox) {
    if (rms) *rms = NAN;
    return fd_box_error(&p->o, &p->box, x, l2h, maxerr);
  }
  hpmg_fd_error(p->o.dim, p->o.refine, x, l2h, rms, maxerr);
  return HPMG_SUCCESS;
}

hpmg_error hpmg_problem_write_vtu(hpmg_problem p, const double *x, const char *path) {
  HPMG_CHECK_ARG(p && x && path, "write_vtu: problem, solution and path must be non-NULL");
  if (p->p1) return hpmg_p1_problem_write_vtu(p->p1, x, path);
  if (p->sem) return hpmg_sem_problem_write_vtu(p->sem, x, path);
  if (p->qkbox) return qk_box_write_vtu(&p->o, &p->box, &p->g, x, p->box_builtin, path);
  if (p->fdbox) return fd_box_write_vtu(&p->o, &p->box, x, p->box_builtin, path);
  int cells[3] = {(int)p->g.cells[0], (int)p->g.cells[1], (int)p->g.cells[2]};
  return hpmg_vtu_write(path, p->g.dim, p->g.k, cells, p->o.box, x, "u");
}
