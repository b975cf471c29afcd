#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "disc/fd/fd_box.h"
#include "disc/qk/laplace.h"
#include "disc/qk/transfer.h"
#include "io/vtu.h"
#include "qk_box.h"

int qk_box_needed(const hpmg_problem_options *o) {
  int need = o->rhs == HPMG_RHS_WAVES; /* inhomogeneous Dirichlet data */
  for (int d = 0; d < 3; d++) need |= o->cells[d] != 0 || o->spacing[d].kind != HPMG_SPACING_UNIFORM;
  for (int f = 0; f < 6; f++)
    need |= o->bc[f].kind != HPMG_BC_DIRICHLET || o->bc[f].value != 0 || o->bc[f].fn || o->bc[f].values;
  return need;
}

int qk_box_singular(const hpmg_grid *g, double lambda) {
  if (lambda != 0) return 0;
  for (int f = 0; f < 2 * g->dim; f++)
    if (g->bc[f] == HPMG_BC_DIRICHLET) return 0;
  return 1;
}

/* g with the nodes of its Dirichlet faces free too (those ends made Neumann) */
static hpmg_grid all_nodes(const hpmg_grid *g) {
  hpmg_grid a = *g;
  a.N = 1;
  for (int d = 0; d < 3; d++) {
    a.off[d] = 0;
    if (d < g->dim) {
      for (int f = 2 * d; f < 2 * d + 2; f++)
        if (a.bc[f] == HPMG_BC_DIRICHLET) a.bc[f] = HPMG_BC_NEUMANN;
      a.n[d] = g->k * g->cells[d] + (a.bc[2 * d] != HPMG_BC_PERIODIC);
    }
    a.N *= a.n[d];
  }
  return a;
}

/* per direction: the free basis at nq Gauss points per cell, the points, the weights */
typedef struct {
  hpmg_sp1d B[3];
  double *xq[3], *wq[3];
  int64_t nq[3];
} quad;

static void quad_free(quad *q) {
  for (int d = 0; d < 3; d++) {
    hpmg_sp1d_free(&q->B[d]);
    hpmg_free(&q->xq[d]);
    hpmg_free(&q->wq[d]);
  }
}

static hpmg_error quad_init(const hpmg_grid *g, int nq, quad *q) {
  memset(q, 0, sizeof *q);
  for (int d = 0; d < 3; d++) {
    q->nq[d] = d < g->dim ? g->cells[d] * nq : 1;
    HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)q->nq[d], &q->xq[d]));
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)q->nq[d], &q->wq[d]));
    if (d >= g->dim) { /* 2D: one "point" with weight 1 in z */
      q->wq[d][0] = 1.0;
      HPMG_CALL(hpmg_sp1d_identity(1, &q->B[d]));
      continue;
    }
    const hpmg_dir1d L = hpmg_grid_dir(g, d);
    HPMG_CALL(hpmg_quadrature_interpolation_1d_dir(&L, nq, &q->B[d], q->xq[d], q->wq[d]));
  }
  return HPMG_SUCCESS;
}

/* b_i = integral of f phi_i by (k+1)-point Gauss quadrature: f(x, user), or (f NULL) the
 * manufactured solution's f of o on box bx */
static hpmg_error load_vector(const hpmg_grid *g, hpmg_function f, void *user, const hpmg_problem_options *o,
                              const hpmg_box *bx, double *b) {
  quad q;
  hpmg_kron3 T = {0};
  fd_box_manu_lattice M = {0};
  double *F = NULL;
  hpmg_error e = quad_init(g, g->k + 1, &q);
  const int64_t nq0 = q.nq[0], nq1 = q.nq[1], nq2 = q.nq[2];
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)(nq0 * nq1 * nq2), &F);
  for (int d = 0; d < 3 && !e; d++) e = hpmg_sp1d_transpose(&q.B[d], &T.A[d]);
  if (!e && !f) e = fd_box_manu_lattice_init(o, bx, q.nq, (const double *const *)q.xq, &M);
  if (!e) {
    int64_t bad = 0;
#pragma omp parallel for collapse(2) reduction(+ : bad) schedule(static)
    for (int64_t a2 = 0; a2 < nq2; a2++)
      for (int64_t a1 = 0; a1 < nq1; a1++)
        for (int64_t a0 = 0; a0 < nq0; a0++) {
          double x[3] = {q.xq[0][a0], q.xq[1][a1], g->dim == 3 ? q.xq[2][a2] : 0.0};
          double v = f ? f(x, user) : fd_box_manu_at(&M, a0, a1, a2).f;
          bad += !isfinite(v);
          F[(a2 * nq1 + a1) * nq0 + a0] = v * q.wq[0][a0] * q.wq[1][a1] * q.wq[2][a2];
        }
    if (bad) e = hpmg_error_set(HPMG_ERR_NUMERIC, "the right-hand side function returned %lld non-finite values", (long long)bad);
    else hpmg_kron3_apply(&T, HPMG_REAL_DOUBLE, F, b, 0);
  }
  hpmg_free(&F);
  hpmg_kron3_destroy(&T);
  fd_box_manu_lattice_free(&M);
  quad_free(&q);
  return e;
}

hpmg_error qk_box_load(const hpmg_grid *g, hpmg_function f, void *user, double *b) {
  HPMG_CHECK_ARG(f, "qk_box_load: no function");
  return load_vector(g, f, user, NULL, NULL, b);
}

static double one_f(const double x[3], void *user) {
  (void)x, (void)user;
  return 1.0;
}

/* positions of the nodes of every direction of grid a (z of 2D: 0) */
static hpmg_error node_positions(const hpmg_grid *a, double *pos[3]) {
  for (int d = 0; d < 3; d++) {
    HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)a->n[d], &pos[d]));
    if (d < a->dim) {
      const hpmg_dir1d L = hpmg_grid_dir(a, d);
      hpmg_node_positions_1d_dir(&L, pos[d]);
    }
  }
  return HPMG_SUCCESS;
}

/* the Dirichlet face holding node id of the all-node grid a (of g), or -1 */
static int dirichlet_face(const hpmg_grid *g, const hpmg_grid *a, const int64_t id[3]) {
  for (int d = 0; d < g->dim; d++) {
    if (g->bc[2 * d] == HPMG_BC_DIRICHLET && id[d] == 0) return 2 * d;
    if (g->bc[2 * d + 1] == HPMG_BC_DIRICHLET && id[d] == a->n[d] - 1) return 2 * d + 1;
  }
  return -1;
}

/* G at the Dirichlet nodes of g's all-node grid a (other entries untouched):
 * the manufactured solution (manu), else the faces' data o->bc; returns the
 * count of non-finite values */
static int64_t dirichlet_data(const hpmg_problem_options *o, const hpmg_box *b, const hpmg_grid *g, const hpmg_grid *a,
                              double *const pos[3], int manu, double *G) {
  int64_t bad = 0;
  for (int64_t i2 = 0; i2 < a->n[2]; i2++)
    for (int64_t i1 = 0; i1 < a->n[1]; i1++)
      for (int64_t i0 = 0; i0 < a->n[0]; i0++) {
        const int64_t id[3] = {i0, i1, i2};
        const int fc = dirichlet_face(g, a, id);
        if (fc < 0) continue;
        const double x[3] = {pos[0][i0], pos[1][i1], pos[2][i2]};
        const hpmg_bc *bc = &o->bc[fc];
        double v;
        if (manu) v = fd_box_exact(o, b, x);
        else if (bc->fn) v = bc->fn(x, bc->user);
        else if (bc->values) { /* the face's nodes, lexicographic in the other two directions */
          const int d = fc / 2, da = d == 0 ? 1 : 0, db = d == 2 ? 1 : 2;
          v = bc->values[id[da] + (g->k * g->cells[da] + 1) * (db < g->dim ? id[db] : 0)];
        } else v = bc->value;
        bad += !isfinite(v);
        G[hpmg_grid_index(a, i0, i1, i2)] = v;
      }
  return bad;
}

/* out (g->N) = the free nodes' entries of v, a vector on all_nodes(g) */
static void free_rows(const hpmg_grid *g, const double *v, double *out) {
  const hpmg_grid a = all_nodes(g);
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t i2 = 0; i2 < g->n[2]; i2++)
    for (int64_t i1 = 0; i1 < g->n[1]; i1++)
      for (int64_t i0 = 0; i0 < g->n[0]; i0++)
        out[hpmg_grid_index(g, i0, i1, i2)] = v[hpmg_grid_index(&a, i0 + g->off[0], i1 + g->off[1], i2 + g->off[2])];
}

/* The lifting of g's Dirichlet data (the manufactured solution's with manu, else o->bc's):
 * t (g->N) = (A G) at the free nodes, G (on a = all_nodes(g), returned in *Gout unless NULL)
 * the data at the Dirichlet nodes and 0 elsewhere. */
static hpmg_error lifting(const hpmg_problem_options *o, const hpmg_box *b, const hpmg_grid *g, int manu, double **Gout,
                          double *t) {
  const hpmg_grid a = all_nodes(g);
  double *pos[3] = {0}, *G = NULL, *AG = NULL;
  hpmg_laplace opa;
  memset(&opa, 0, sizeof opa);
  hpmg_error e = node_positions(&a, pos);
  if (!e) e = hpmg_calloc(sizeof(double) * (size_t)a.N, &G);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)a.N, &AG);
  if (!e) e = hpmg_laplace_create(&a, o->lambda, &opa);
  const int64_t bad = e ? 0 : dirichlet_data(o, b, g, &a, pos, manu, G);
  if (!e && bad) e = hpmg_error_set(HPMG_ERR_NUMERIC, "Dirichlet data: %lld non-finite values", (long long)bad);
  if (!e) {
    hpmg_laplace_apply(&opa, HPMG_REAL_DOUBLE, G, AG);
    free_rows(g, AG, t);
  }
  hpmg_laplace_destroy(&opa);
  for (int d = 0; d < 3; d++) hpmg_free(&pos[d]);
  hpmg_free(&AG);
  if (!e && Gout) *Gout = G;
  else hpmg_free(&G);
  return e;
}

hpmg_error qk_box_rhs(const hpmg_problem_options *o, const hpmg_box *b, const hpmg_grid *g, const double *load,
                      double *rhs) {
  const int manu = !load && fd_box_rhs_manufactured(o->rhs);
  if (load) memcpy(rhs, load, sizeof(double) * (size_t)g->N);
  else HPMG_CALL(load_vector(g, manu ? NULL : one_f, NULL, o, b, rhs));
  int anyd = 0, anyn = 0;
  for (int f = 0; f < 2 * g->dim; f++) anyd |= g->bc[f] == HPMG_BC_DIRICHLET, anyn |= g->bc[f] == HPMG_BC_NEUMANN;
  hpmg_error e = HPMG_SUCCESS;
  if (anyd) { /* lifting: rhs -= (A G) at the free nodes */
    double *t = NULL;
    e = hpmg_malloc(sizeof(double) * (size_t)g->N, &t);
    if (!e) e = lifting(o, b, g, manu, NULL, t);
    if (!e)
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < g->N; i++) rhs[i] -= t[i];
    hpmg_free(&t);
  }
  if (anyn && !e) { /* fluxes: rhs_i += integral over the face of g phi_i */
    quad q;
    e = quad_init(g, g->k + 1, &q);
    for (int fc = 0; fc < 2 * g->dim && !e; fc++) {
      if (g->bc[fc] != HPMG_BC_NEUMANN) continue;
      const int d = fc / 2, hi = fc & 1, da = d == 0 ? 1 : 0, db = d == 2 ? 1 : 2;
      const hpmg_bc *bc = &o->bc[fc];
      const hpmg_sp1d *Ba = &q.B[da], *Bb = &q.B[db];
      int64_t bad = 0;
      for (int64_t qb = 0; qb < q.nq[db]; qb++)
        for (int64_t qa = 0; qa < q.nq[da]; qa++) {
          double x[3];
          x[d] = hi ? b->len[d] : 0.0;
          x[da] = q.xq[da][qa];
          x[db] = q.xq[db][qb];
          double v;
          if (manu) {
            double grad[3], f;
            fd_box_manufactured(o, b, x, NULL, grad, &f);
            v = hi ? grad[d] : -grad[d];
          } else if (bc->fn) v = bc->fn(x, bc->user);
          else v = bc->value;
          bad += !isfinite(v);
          v *= q.wq[da][qa] * q.wq[db][qb];
          for (int pa = Ba->rowptr[qa]; pa < Ba->rowptr[qa + 1]; pa++)
            for (int pb = Bb->rowptr[qb]; pb < Bb->rowptr[qb + 1]; pb++) {
              int64_t id[3];
              id[d] = hi ? g->n[d] - 1 : 0;
              id[da] = Ba->col[pa];
              id[db] = Bb->col[pb];
              rhs[hpmg_grid_index(g, id[0], id[1], id[2])] += Ba->val[pa] * Bb->val[pb] * v;
            }
        }
      if (bad)
        e = hpmg_error_set(HPMG_ERR_NUMERIC, "Neumann data of face %d (0 = xmin .. 5 = zmax): %lld non-finite values", fc,
                           (long long)bad);
    }
    quad_free(&q);
  }
  return e;
}

hpmg_error qk_box_solve_rhs(const hpmg_problem_options *o, const hpmg_box *b, const hpmg_grid *g, const double *load,
                            const double *w, double sumw, double *rhs, double *c) {
  const int64_t n = g->N;
  *c = 0;
  if (!load && fd_box_rhs_manufactured(o->rhs))
    for (int f = 0; f < 2 * o->dim; f++)
      HPMG_CHECK_ARG(o->bc[f].value == 0 && !o->bc[f].fn && !o->bc[f].values,
                     "the built-in right-hand sides (rhs sine, waves: a manufactured solution, docs/bc.md) take their boundary "
                     "data from that solution: leave the faces' value, fn and values unset, or pass b");
  if (load && hpmg_vec_count_nonfinite(HPMG_REAL_DOUBLE, n, load))
    return hpmg_error_set(HPMG_ERR_NUMERIC, "%lld non-finite entries (NaN/Inf) in the right-hand side",
                          (long long)hpmg_vec_count_nonfinite(HPMG_REAL_DOUBLE, n, load));
  HPMG_CALL(qk_box_rhs(o, b, g, load, rhs));
  if (!w) return HPMG_SUCCESS;
  /* sum b = 0 is needed: b -= (sum b / sum m) m, a constant removed from f */
  double sb = 0, sa = 0;
  for (int64_t i = 0; i < n; i++) sb += rhs[i], sa += fabs(rhs[i]);
  *c = sb / sumw;
  HPMG_CALL(fd_box_compat_check(sb, sa, sumw, o->project_rhs));
  for (int64_t i = 0; i < n; i++) rhs[i] -= *c * w[i];
  hpmg_vec v = hpmg_vec_wrap(hpmg_backend_host(), HPMG_REAL_DOUBLE, n, rhs);
  return qk_box_project_mean(NULL, &v); /* its round-off */
}

int qk_box_dirichlet(const hpmg_problem_options *o) {
  for (int f = 0; f < 2 * o->dim; f++)
    if (o->bc[f].kind == HPMG_BC_DIRICHLET) return 1;
  return 0;
}

static hpmg_error fmg_shifts(const hpmg_problem_options *o, const hpmg_box *b, int builtin, const hpmg_grid *const *g,
                             hpmg_mg *mg) {
  const int nl = mg->nlevels, manu = builtin && fd_box_rhs_manufactured(o->rhs);
  int lift = 0; /* 1: nonzero Dirichlet data every level can evaluate; -1: data given as values */
  for (int f = 0; f < 2 * g[0]->dim; f++) {
    if (g[0]->bc[f] != HPMG_BC_DIRICHLET) continue;
    if (manu || o->bc[f].fn || o->bc[f].value != 0) lift = lift < 0 ? lift : 1;
    if (!manu && o->bc[f].values) lift = -1;
  }
  if (lift != 1 || nl < 2) {
    for (int l = 0; l < nl; l++) HPMG_CALL(hpmg_mg_set_fmg_shift(mg, l, NULL, NULL));
    return HPMG_SUCCESS;
  }
  /* level by level from the coarsest: G, t of the coarser level (c) and of this one */
  double *Gc = NULL, *tc = NULL, *qc = NULL, *G = NULL, *t = NULL, *sc = NULL, *PG = NULL, *q = NULL;
  hpmg_error e = HPMG_SUCCESS;
  for (int l = 0; l < nl && !e; l++) {
    const hpmg_grid a = all_nodes(g[l]);
    e = hpmg_malloc(sizeof(double) * (size_t)g[l]->N, &t);
    if (!e) e = lifting(o, b, g[l], manu, &G, t);
    if (!e && l > 0) {
      const hpmg_grid ac = all_nodes(g[l - 1]);
      hpmg_kron3 P = {0}, R = {0}, Pa = {0}, Ra = {0};
      e = hpmg_transfer_create_grids(g[l - 1], g[l], &P, &R);
      if (!e) e = hpmg_transfer_create_grids(&ac, &a, &Pa, &Ra);
      if (!e) e = hpmg_malloc(sizeof(double) * (size_t)g[l - 1]->N, &sc);
      if (!e) e = hpmg_malloc(sizeof(double) * (size_t)a.N, &PG);
      if (!e) e = hpmg_malloc(sizeof(double) * (size_t)g[l]->N, &q);
      if (!e) { /* b shift of the coarser level: R t - t_c; x shift of this one: its free rows of P G_c */
        hpmg_kron3_apply(&R, HPMG_REAL_DOUBLE, t, sc, 0);
        for (int64_t i = 0; i < g[l - 1]->N; i++) sc[i] -= tc[i];
        hpmg_kron3_apply(&Pa, HPMG_REAL_DOUBLE, Gc, PG, 0);
        free_rows(g[l], PG, q);
        e = hpmg_mg_set_fmg_shift(mg, l - 1, sc, qc);
      }
      hpmg_kron3_destroy(&P), hpmg_kron3_destroy(&R), hpmg_kron3_destroy(&Pa), hpmg_kron3_destroy(&Ra);
      hpmg_free(&sc), hpmg_free(&PG), hpmg_free(&qc);
      qc = q, q = NULL;
    }
    hpmg_free(&Gc), hpmg_free(&tc);
    Gc = G, tc = t, G = NULL, t = NULL;
  }
  if (!e) e = hpmg_mg_set_fmg_shift(mg, nl - 1, NULL, qc);
  hpmg_free(&Gc), hpmg_free(&tc), hpmg_free(&qc), hpmg_free(&G), hpmg_free(&t), hpmg_free(&q);
  return e;
}

hpmg_error qk_box_fmg_shifts(const hpmg_problem_options *o, const hpmg_box *b, int builtin, const hpmg_grid *const *g,
                             hpmg_mg *mg, int *made_for, double *t_setup) {
  if (*made_for == builtin) return HPMG_SUCCESS;
  const double t0 = hpmg_wtime();
  const hpmg_error e = fmg_shifts(o, b, builtin, g, mg);
  *made_for = e ? -1 : builtin;
  *t_setup += hpmg_wtime() - t0;
  return e;
}

hpmg_error qk_box_error(const hpmg_problem_options *o, const hpmg_box *b, const hpmg_grid *g, const double *x,
                        double *l2, double *mx) {
  const hpmg_grid a = all_nodes(g);
  double *pos[3] = {0}, *U = NULL, *En = NULL, *Uq = NULL;
  quad q;
  hpmg_kron3 T = {0};
  fd_box_manu_lattice Mn = {0}, Mq = {0}; /* the solution at the nodes and the quadrature points */
  hpmg_error e = node_positions(&a, pos);
  if (!e) e = fd_box_manu_lattice_init(o, b, a.n, (const double *const *)pos, &Mn);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)a.N, &U);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)a.N, &En);
  if (!e) e = quad_init(&a, g->k + 2, &q);
  else memset(&q, 0, sizeof q);
  const int64_t nq0 = q.nq[0], nq1 = q.nq[1], nq2 = q.nq[2];
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)(nq0 * nq1 * nq2), &Uq);
  if (!e) e = fd_box_manu_lattice_init(o, b, q.nq, (const double *const *)q.xq, &Mq);
  for (int d = 0; d < 3 && !e; d++) { /* U at the quadrature points: T = Bz (x) By (x) Bx (moved from q) */
    T.A[d] = q.B[d];
    memset(&q.B[d], 0, sizeof q.B[d]);
  }
  double s1 = 0, s2 = 0, sw = 0, m = 0;
  if (!e) {
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t i2 = 0; i2 < a.n[2]; i2++)
      for (int64_t i1 = 0; i1 < a.n[1]; i1++)
        for (int64_t i0 = 0; i0 < a.n[0]; i0++) {
          const int64_t id[3] = {i0, i1, i2}, ia = hpmg_grid_index(&a, i0, i1, i2);
          const double u = fd_box_manu_at(&Mn, i0, i1, i2).u;
          if (dirichlet_face(g, &a, id) >= 0) U[ia] = u;
          else U[ia] = x[hpmg_grid_index(g, i0 - g->off[0], i1 - g->off[1], i2 - g->off[2])];
          En[ia] = U[ia] - u;
        }
    hpmg_kron3_apply(&T, HPMG_REAL_DOUBLE, U, Uq, 0);
    /* two passes: the error at the quadrature points (into Uq), its mean, then the norm of e - mean
     * (one pass with sum w e^2 - mean^2 sum w cancels: the mean of a singular problem's error is O(1)) */
#pragma omp parallel for collapse(2) schedule(static) reduction(+ : s1, sw)
    for (int64_t a2 = 0; a2 < nq2; a2++)
      for (int64_t a1 = 0; a1 < nq1; a1++)
        for (int64_t a0 = 0; a0 < nq0; a0++) {
          const double w = q.wq[0][a0] * q.wq[1][a1] * q.wq[2][a2];
          double *er = &Uq[(a2 * nq1 + a1) * nq0 + a0];
          *er -= fd_box_manu_at(&Mq, a0, a1, a2).u;
          s1 += w * *er;
          sw += w;
        }
    const double c = qk_box_singular(g, o->lambda) ? s1 / sw : 0.0;
#pragma omp parallel for collapse(2) schedule(static) reduction(+ : s2)
    for (int64_t a2 = 0; a2 < nq2; a2++)
      for (int64_t a1 = 0; a1 < nq1; a1++)
        for (int64_t a0 = 0; a0 < nq0; a0++) {
          const double er = Uq[(a2 * nq1 + a1) * nq0 + a0] - c;
          s2 += q.wq[0][a0] * q.wq[1][a1] * q.wq[2][a2] * er * er;
        }
    for (int64_t i = 0; i < a.N; i++) m = fabs(En[i] - c) > m ? fabs(En[i] - c) : m;
  }
  if (l2) *l2 = sqrt(s2 > 0 ? s2 : 0);
  if (mx) *mx = m;
  for (int d = 0; d < 3; d++) hpmg_free(&pos[d]);
  hpmg_free(&U);
  hpmg_free(&En);
  hpmg_free(&Uq);
  hpmg_kron3_destroy(&T);
  fd_box_manu_lattice_free(&Mn);
  fd_box_manu_lattice_free(&Mq);
  quad_free(&q);
  return e;
}

hpmg_error qk_box_write_vtu(const hpmg_problem_options *o, const hpmg_box *b, const hpmg_grid *g, const double *x,
                            int builtin, const char *path) {
  const hpmg_grid a = all_nodes(g);
  hpmg_grid un = a; /* the unwrapped lattice's coordinates: a periodic direction's last node too */
  int64_t cells[3] = {1, 1, 1}, nlat[3] = {1, 1, 1};
  for (int d = 0; d < g->dim; d++) {
    cells[d] = g->cells[d];
    nlat[d] = a.n[d];
    if (un.bc[2 * d] == HPMG_BC_PERIODIC) un.bc[2 * d] = un.bc[2 * d + 1] = HPMG_BC_NEUMANN, un.n[d]++;
  }
  double *pos[3] = {0}, *U = NULL;
  hpmg_error e = node_positions(&un, pos);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)a.N, &U);
  if (!e) {
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t i2 = 0; i2 < g->n[2]; i2++)
      for (int64_t i1 = 0; i1 < g->n[1]; i1++)
        for (int64_t i0 = 0; i0 < g->n[0]; i0++)
          U[hpmg_grid_index(&a, i0 + g->off[0], i1 + g->off[1], i2 + g->off[2])] = x[hpmg_grid_index(g, i0, i1, i2)];
    const int64_t bad = dirichlet_data(o, b, g, &a, pos, builtin && fd_box_rhs_manufactured(o->rhs), U);
    if (bad) e = hpmg_error_set(HPMG_ERR_NUMERIC, "Dirichlet data: %lld non-finite values", (long long)bad);
  }
  if (!e) e = hpmg_vtu_write_lattice(path, g->dim, g->k, cells, pos, nlat, U, "u");
  for (int d = 0; d < 3; d++) hpmg_free(&pos[d]);
  hpmg_free(&U);
  return e;
}

hpmg_error qk_box_weights(const hpmg_grid *g, double *m) {
  quad q;
  double *md[3] = {0};
  hpmg_error e = quad_init(g, g->k + 1, &q);
  for (int d = 0; d < 3 && !e; d++) {
    e = hpmg_calloc(sizeof(double) * (size_t)g->n[d], &md[d]);
    for (int64_t r = 0; r < q.nq[d] && !e; r++)
      for (int p = q.B[d].rowptr[r]; p < q.B[d].rowptr[r + 1]; p++) md[d][q.B[d].col[p]] += q.B[d].val[p] * q.wq[d][r];
  }
  if (!e) {
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t i2 = 0; i2 < g->n[2]; i2++)
      for (int64_t i1 = 0; i1 < g->n[1]; i1++)
        for (int64_t i0 = 0; i0 < g->n[0]; i0++) m[hpmg_grid_index(g, i0, i1, i2)] = md[0][i0] * md[1][i1] * md[2][i2];
  }
  for (int d = 0; d < 3; d++) hpmg_free(&md[d]);
  quad_free(&q);
  return e;
}

hpmg_error qk_box_project_mean(void *ctx, hpmg_vec *v) {
  (void)ctx;
  const int64_t n = v->n;
  double s = 0;
  if (v->real == HPMG_REAL_DOUBLE) {
    double *a = v->data;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (int64_t i = 0; i < n; i++) s += a[i];
    s /= (double)n;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) a[i] -= s;
  } else {
    float *a = v->data;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (int64_t i = 0; i < n; i++) s += a[i];
    const float c = (float)(s / (double)n);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) a[i] -= c;
  }
  return HPMG_SUCCESS;
}
