/* The p-multigrid of paper 001 on the condensed system; see sem_pmg.h. */
#include "sem_pmg.h"
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "disc/sem/sem_system.h"
#include "fem/fem.h"
#include "mg/solve.h"

int hpmg_sem_pmg_degrees(int p, int *deg) {
  int n = 0;
  for (int q = 2; q < p && n < HPMG_SEM_PMG_MAX_LEVELS - 1; q *= 2) deg[n++] = q;
  deg[n++] = p;
  return n;
}

typedef struct {
  hpmg_sem_pmg *pm;
  int l;
  const hpmg_sem_mesh *m;
  int numult;          /* kvMG: 2^{L-l}, else 1 */
  hpmg_sem_smoother sm; /* l > 0 */
  double *work;        /* the mesh routines' scratch */
  double *tmp;         /* ns: smoother output, prolongation, weighted fine vector */
  /* transfer from level l-1 (l > 0) */
  double *I1, *I1T;    /* (p+1) x (pc+1) and its transpose */
  double *twork;       /* per thread */
  size_t tws;
  int nthreads;
  /* coarse solve (l == 0) */
  hpmg_sem_dcg_solver cg;
} lvctx;

/* out (rows^dim) = (B (x) B (x) B) in (cols^dim), B rows x cols row-major */
static void tensor_apply(int dim, const double *B, int rows, int cols, const double *in, double *out, double *t1,
                         double *t2) {
  if (dim == 2) {
    for (int i2 = 0; i2 < cols; i2++) /* along x1 */
      for (int b1 = 0; b1 < rows; b1++) {
        double s = 0;
        for (int a = 0; a < cols; a++) s += B[b1 * cols + a] * in[i2 * cols + a];
        t1[i2 * rows + b1] = s;
      }
    for (int b2 = 0; b2 < rows; b2++) {
      double *o = out + b2 * rows;
      for (int b1 = 0; b1 < rows; b1++) o[b1] = 0;
      for (int a = 0; a < cols; a++) {
        const double w = B[b2 * cols + a];
        const double *t = t1 + a * rows;
        for (int b1 = 0; b1 < rows; b1++) o[b1] += w * t[b1];
      }
    }
    return;
  }
  for (int i3 = 0; i3 < cols; i3++) /* along x1: t1[i3][i2][b1] */
    for (int i2 = 0; i2 < cols; i2++) {
      const double *v = in + (i3 * cols + i2) * cols;
      double *o = t1 + (i3 * cols + i2) * rows;
      for (int b1 = 0; b1 < rows; b1++) {
        double s = 0;
        for (int a = 0; a < cols; a++) s += B[b1 * cols + a] * v[a];
        o[b1] = s;
      }
    }
  for (int i3 = 0; i3 < cols; i3++) /* along x2: t2[i3][b2][b1] */
    for (int b2 = 0; b2 < rows; b2++) {
      double *o = t2 + (i3 * rows + b2) * rows;
      for (int b1 = 0; b1 < rows; b1++) o[b1] = 0;
      for (int a = 0; a < cols; a++) {
        const double w = B[b2 * cols + a];
        const double *t = t1 + (i3 * cols + a) * rows;
        for (int b1 = 0; b1 < rows; b1++) o[b1] += w * t[b1];
      }
    }
  const int rr = rows * rows;
  for (int b3 = 0; b3 < rows; b3++) { /* along x3 */
    double *o = out + b3 * rr;
    for (int q = 0; q < rr; q++) o[q] = 0;
    for (int a = 0; a < cols; a++) {
      const double w = B[b3 * cols + a];
      if (w == 0.0) continue;
      const double *t = t2 + a * rr;
      for (int q = 0; q < rr; q++) o[q] += w * t[q];
    }
  }
}

static void mask(const hpmg_sem_mesh *m, double *v) {
  if (!m->dirichlet) return;
  const int64_t ns = m->ns;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < ns; i++)
    if (m->dirichlet[i]) v[i] = 0.0;
}

/* y = sum_e Q_e^T E_f (B (x) B (x) B) Z_c Q_e^c x: the element interpolation of
 * the boundary values of mesh `from` to the boundary of mesh `to` (B: rows =
 * to's points, cols = from's), summed over the elements (not divided) */
static void element_transfer(const lvctx *c, const hpmg_sem_mesh *from, const hpmg_sem_mesh *to, const double *B,
                             const double *x, double *y) {
  const int dim = to->dim, nf = from->el.n, nt = to->el.n;
  const int64_t nsy = to->ns;
  const size_t bigf = dim == 3 ? (size_t)nf * nf * nf : (size_t)nf * nf;
#pragma omp parallel num_threads(c->nthreads)
  {
    const size_t big = c->tws / 5;
    double *uin = c->twork + (size_t)omp_get_thread_num() * c->tws, *uout = uin + big, *t1 = uout + big,
           *t2 = t1 + big, *bb = t2 + big;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < nsy; i++) y[i] = 0.0;
    for (int col = 0; col < to->ncolors; col++) {
#pragma omp for schedule(static)
      for (int64_t q = to->color_ptr[col]; q < to->color_ptr[col + 1]; q++) {
        const int64_t e = to->color_elems[q];
        hpmg_sem_gather(from, e, x, bb);
        memset(uin, 0, sizeof(double) * bigf);
        for (int k = 0; k < from->el.nb; k++) uin[from->el.bmap[k]] = bb[k];
        tensor_apply(dim, B, nt, nf, uin, uout, t1, t2);
        for (int k = 0; k < to->el.nb; k++) bb[k] = uout[to->el.bmap[k]];
        hpmg_sem_scatter_add(to, e, bb, y);
      }
    }
  }
}

void hpmg_sem_pmg_prolong(const hpmg_sem_pmg *pm, int l, const double *xc, double *y) {
  const lvctx *c = pm->mg.lv[l].ctx;
  const hpmg_sem_mesh *m = pm->m[l];
  element_transfer(c, pm->m[l - 1], m, c->I1, xc, y);
  const int64_t ns = m->ns;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < ns; i++) y[i] = m->dirichlet && m->dirichlet[i] ? 0.0 : y[i] / m->mult[i];
}

void hpmg_sem_pmg_restrict(const hpmg_sem_pmg *pm, int l, const double *x, double *yc) {
  const lvctx *c = pm->mg.lv[l].ctx;
  const hpmg_sem_mesh *m = pm->m[l];
  const int64_t ns = m->ns;
  double *t = c->tmp;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < ns; i++) t[i] = m->dirichlet && m->dirichlet[i] ? 0.0 : x[i] / m->mult[i];
  element_transfer(c, m, pm->m[l - 1], c->I1T, t, yc);
  mask(pm->m[l - 1], yc);
}

/* ----------------------------------------------------------- level slots */

static void residual(const lvctx *c, const double *b, const double *x, double *r) {
  hpmg_sem_mesh_apply(c->m, 1, x, r, c->work);
  const int64_t ns = c->m->ns;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < ns; i++) r[i] = b[i] - r[i];
}

static hpmg_error lv_smooth(hpmg_level *L, int x_is_zero, int post, int sweeps) {
  (void)post;
  lvctx *c = L->ctx;
  double *x = L->x.data, *r = L->r.data, *z = c->tmp;
  const double *b = L->b.data;
  const int64_t ns = c->m->ns;
  const int nu = sweeps * c->numult;
  for (int s = 0; s < nu; s++) {
    const int first = s == 0 && x_is_zero;
    if (!first) {
      residual(c, b, x, r);
      L->matvecs++;
    }
    hpmg_sem_smoother_apply(&c->sm, first ? b : r, z);
    if (first) memcpy(x, z, sizeof(double) * (size_t)ns);
    else {
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < ns; i++) x[i] += z[i];
    }
  }
  if (nu == 0 && x_is_zero) memset(x, 0, sizeof(double) * (size_t)ns);
  return HPMG_SUCCESS;
}

static hpmg_error lv_residual(hpmg_level *L) {
  residual(L->ctx, L->b.data, L->x.data, L->r.data);
  return HPMG_SUCCESS;
}

static hpmg_error lv_restrict(hpmg_level *L, const hpmg_vec *fine, hpmg_vec *coarse) {
  lvctx *c = L->ctx;
  hpmg_sem_pmg_restrict(c->pm, c->l, fine->data, coarse->data);
  return HPMG_SUCCESS;
}

static hpmg_error lv_prolong(hpmg_level *L, const hpmg_vec *cx, int add) {
  lvctx *c = L->ctx;
  double *x = L->x.data, *t = c->tmp;
  hpmg_sem_pmg_prolong(c->pm, c->l, cx->data, t);
  const int64_t ns = c->m->ns;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < ns; i++) x[i] = add ? x[i] + t[i] : t[i];
  return HPMG_SUCCESS;
}

static hpmg_error apply_op(void *ctx, const hpmg_vec *x, hpmg_vec *y) {
  const lvctx *c = ctx;
  hpmg_sem_mesh_apply(c->m, 1, x->data, y->data, c->work);
  return HPMG_SUCCESS;
}

static hpmg_error lv_coarse(hpmg_level *L) {
  lvctx *c = L->ctx;
  hpmg_krylov_params prm = {0};
  prm.rtol = c->pm->coarse_rtol;
  prm.maxit = (int)(10 * c->m->ns + 100 < 1000000 ? 10 * c->m->ns + 100 : 1000000);
  prm.x0_zero = 1;
  hpmg_krylov_info info;
  HPMG_CALL(hpmg_sem_dcg_run(&c->cg, &L->b, &L->x, &prm, &info));
  c->pm->coarse_its += info.iterations;
  if (!info.converged)
    return hpmg_error_set(HPMG_ERR_NOT_CONVERGED, "sem p-multigrid: the coarse CG (p = %d) did not converge in %d iterations",
                          c->m->p, info.iterations);
  return HPMG_SUCCESS;
}

static void lv_destroy(hpmg_level *L) {
  lvctx *c = L->ctx;
  if (!c) return;
  if (c->sm.m) hpmg_sem_smoother_destroy(&c->sm);
  hpmg_free(&c->work);
  hpmg_free(&c->tmp);
  hpmg_free(&c->I1);
  hpmg_free(&c->I1T);
  hpmg_free(&c->twork);
  if (c->cg.m) hpmg_sem_dcg_destroy(&c->cg);
  free(c);
  L->ctx = NULL;
}

static const hpmg_level_ops sem_ops = {
    .smooth = lv_smooth,
    .residual = lv_residual,
    .restrict_to = lv_restrict,
    .prolong = lv_prolong,
    .coarse_solve = lv_coarse,
    .destroy = lv_destroy,
};

/* the level's data */
static hpmg_error level_create(hpmg_sem_pmg *pm, int l, int L, lvctx **out) {
  lvctx *c = calloc(1, sizeof *c);
  *out = c;
  if (!c) return hpmg_error_set(HPMG_ERR_MEMORY, "sem p-multigrid: cannot allocate a level");
  const hpmg_sem_mesh *m = pm->m[l];
  c->pm = pm;
  c->l = l;
  c->m = m;
  c->numult = pm->kind == HPMG_SEM_SOLVE_KVMG ? 1 << (L - l) : 1;
  c->nthreads = omp_get_max_threads();
  HPMG_CALL(hpmg_malloc(sizeof(double) * hpmg_sem_mesh_work_size(m), &c->work));
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)m->ns, &c->tmp));
  if (l == 0) {
    HPMG_CALL(hpmg_sem_dcg_create(m, &c->cg));
    return HPMG_SUCCESS;
  }
  HPMG_CALL(hpmg_sem_smoother_create(m, &c->sm));
  const hpmg_sem_element *ef = &m->el, *ec = &pm->m[l - 1]->el;
  const int nf = ef->n, nc = ec->n;
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(nf * nc), &c->I1));
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(nf * nc), &c->I1T));
  for (int i = 0; i < nf; i++) {
    double *row = c->I1 + (size_t)i * nc;
    if (i == 0 || i == nf - 1) { /* the end nodes coincide: exact 0 and 1 */
      for (int j = 0; j < nc; j++) row[j] = 0.0;
      row[i == 0 ? 0 : nc - 1] = 1.0;
    } else hpmg_lagrange_eval(nc, ec->x, ef->x[i], row, NULL);
  }
  for (int i = 0; i < nf; i++)
    for (int j = 0; j < nc; j++) c->I1T[(size_t)j * nf + i] = c->I1[(size_t)i * nc + j];
  const size_t big = m->dim == 3 ? (size_t)nf * nf * nf : (size_t)nf * nf;
  c->tws = 5 * (big > (size_t)ef->nb ? big : (size_t)ef->nb);
  return hpmg_malloc(sizeof(double) * c->tws * (size_t)c->nthreads, &c->twork);
}

void hpmg_sem_pmg_destroy(hpmg_sem_pmg *pm) {
  hpmg_mg_destroy(&pm->mg);
  for (int l = 0; l < pm->nlevels - 1; l++) hpmg_sem_mesh_destroy(&pm->mesh[l]);
  memset(pm, 0, sizeof *pm);
}

hpmg_error hpmg_sem_pmg_create(const hpmg_box *box, const hpmg_sem_mesh *fine, hpmg_sem_mg_kind kind, int pre,
                               int post, hpmg_sem_pmg *pm) {
  memset(pm, 0, sizeof *pm);
  HPMG_CHECK_ARG(kind == HPMG_SEM_SOLVE_MG || kind == HPMG_SEM_SOLVE_KMG || kind == HPMG_SEM_SOLVE_KVMG,
                 "sem p-multigrid: unknown solver kind %d", (int)kind);
  HPMG_CHECK_ARG(pre >= 0 && pre <= 64 && post >= 0 && post <= 64 && pre + post >= 1,
                 "sem p-multigrid: smoothing sweeps (--pre %d, --post %d) must be in 0..64, at least one in all", pre, post);
  pm->kind = kind;
  /* MG iterates a fixed linear cycle: its coarse CG is solved tight.
   * Flexible CG (kMG, kvMG) admits a preconditioner that varies from one
   * application to the next: 1e-3 leaves the iteration counts of Table 1
   * and Fig. 6 unchanged and saves up to half the time at p = 4
   * (docs/sem.md, "p-multigrid"). */
  pm->coarse_rtol = kind == HPMG_SEM_SOLVE_MG ? 1e-12 : 1e-3;
  const int nl = hpmg_sem_pmg_degrees(fine->p, pm->deg);
  const int L = nl - 1;
  hpmg_error e = HPMG_SUCCESS;
  for (int l = 0; l < L && !e; l++) {
    e = hpmg_sem_mesh_create(box, pm->deg[l], fine->lambda, &pm->mesh[l]);
    if (!e) {
      pm->m[l] = &pm->mesh[l];
      pm->nlevels = l + 1; /* meshes to destroy on failure */
    }
  }
  if (e) {
    for (int l = 0; l < pm->nlevels; l++) hpmg_sem_mesh_destroy(&pm->mesh[l]);
    memset(pm, 0, sizeof *pm);
    return e;
  }
  pm->m[L] = fine;
  pm->nlevels = nl;
  const hpmg_cycle_options opt = {.pre = pre, .post = post, .add_residual = 0, .timing = 0};
  e = hpmg_mg_init(&pm->mg, nl, HPMG_REAL_DOUBLE, &opt, 0);
  for (int l = 0; l < nl && !e; l++) {
    hpmg_level *lv = &pm->mg.lv[l];
    lvctx *c = NULL;
    e = level_create(pm, l, L, &c);
    lv->ops = &sem_ops; /* destroy frees a partial ctx too */
    lv->ctx = c;
    lv->be = hpmg_backend_host();
    lv->n = pm->m[l]->ns;
  }
  if (!e) e = hpmg_mg_setup(&pm->mg, NULL);
  if (e) hpmg_sem_pmg_destroy(pm);
  return e;
}

double hpmg_sem_pmg_bytes(const hpmg_sem_pmg *pm) {
  double b = 0;
  for (int l = 0; l < pm->nlevels; l++) {
    const lvctx *c = pm->mg.lv[l].ctx;
    const hpmg_sem_mesh *m = pm->m[l];
    if (l < pm->nlevels - 1) b += hpmg_sem_mesh_bytes(m);
    b += 3.0 * 8 * (double)m->ns + 8.0 * (double)m->ns;            /* b, x, r; tmp */
    b += 8.0 * (double)hpmg_sem_mesh_work_size(m);
    if (l == 0) b += 5.0 * 8 * (double)m->ns;                        /* inverse diagonal, CG's vectors */
    else b += hpmg_sem_smoother_bytes(&c->sm) + 8.0 * (double)c->tws * c->nthreads;
  }
  return b;
}

/* ------------------------------------------------------------------ solve */

hpmg_error hpmg_sem_pmg_solve(hpmg_sem_pmg *pm, const double *rhs, double *x, hpmg_krylov_params *prm,
                              hpmg_krylov_info *info) {
  const int top = pm->nlevels - 1;
  const hpmg_sem_mesh *m = pm->m[top];
  const int64_t ns = m->ns;
  const hpmg_backend *be = hpmg_backend_host();
  hpmg_vec w[4] = {{0}}, vb = {0};
  hpmg_error e = HPMG_SUCCESS;
  for (int i = 0; i < 4 && !e; i++) e = hpmg_vec_create(be, HPMG_REAL_DOUBLE, ns, &w[i]);
  if (!e) e = hpmg_vec_create(be, HPMG_REAL_DOUBLE, ns, &vb);
  if (!e) {
    memcpy(vb.data, rhs, sizeof(double) * (size_t)ns);
    const int singular = hpmg_sem_singular(m);
    prm->project = singular ? hpmg_sem_project_constants : NULL;
    prm->pctx = NULL;
    if (singular) hpmg_sem_project_constants(NULL, &vb);
    hpmg_linop A = {pm->mg.lv[top].ctx, apply_op, NULL, NULL};
    hpmg_vec vx = hpmg_vec_wrap(be, HPMG_REAL_DOUBLE, ns, x);
    pm->coarse_its = 0;
    if (pm->kind == HPMG_SEM_SOLVE_MG) e = hpmg_mg_stationary(&pm->mg, &A, &vb, &vx, w, 0, 0.0, prm, info);
    else {
      hpmg_linop M = hpmg_mg_linop(&pm->mg);
      e = hpmg_pcg(&A, &M, &vb, &vx, w, 1, prm, info);
    }
    if (!e && singular) hpmg_sem_project_constants(NULL, &vx);
  }
  for (int i = 0; i < 4; i++) hpmg_vec_destroy(&w[i]);
  hpmg_vec_destroy(&vb);
  return e;
}
