/* The p-multigrid of paper 001 on the condensed system; see sem_pmg.h. */
#include "sem_pmg.h"
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "disc/qk/qk_box.h"
#include "disc/qk/qk_host.h"
#include "disc/sem/sem_kernels.h"
#include "disc/sem/sem_system.h"
#include "fem/fem.h"
#include "mg/solve.h"

int hpmg_sem_pmg_degrees(int p, int *deg) {
  int n = 0;
  deg[n++] = 2;
  if (p > 4) deg[n++] = 4;
  for (int q = 8; 2 * q <= p && n < HPMG_SEM_PMG_MAX_LEVELS - 1; q *= 2) deg[n++] = q;
  if (p > 2) deg[n++] = p;
  return n;
}

typedef struct {
  hpmg_sem_pmg *pm;
  int l;
  const hpmg_sem_mesh *m;
  hpmg_sem_smoother sm; /* l > 0 */
  double *work;        /* the mesh routines' scratch */
  double *tmp;         /* ns: smoother output, prolongation, weighted fine vector */
  /* transfer from level l-1 (l > 0) */
  double *I1, *I1T;    /* (p+1) x (pc+1) and its transpose */
  int *fmap[2];        /* 3D: per face f and face node (r, c) (n x n, rows over the higher tangential
                        * direction) its boundary position, fine [0] and coarse [1] element */
  uint8_t *own;        /* 3D: 1 where fine face f is the lowest face holding that node */
  double *twork;       /* per thread */
  size_t tws;
  int nthreads;
  /* coarse solve (l == 0) */
  hpmg_sem_dcg_solver cg;
} lvctx;

/* 2D: out (rows^2) = (B (x) B) in (cols^2), B rows x cols row-major; t1: rows cols */
static void tensor_apply2(const double *B, int rows, int cols, const double *in, double *out, double *t1) {
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
}

static void mask(const hpmg_sem_mesh *m, double *v) {
  if (!m->dirichlet) return;
  const int64_t ns = m->ns;
#pragma omp parallel for schedule(static) if (hpmg_par((double)ns))
  for (int64_t i = 0; i < ns; i++)
    if (m->dirichlet[i]) v[i] = 0.0;
}

/* 2D: y = sum_e Q_e^T E_f (B (x) B) Z_c Q_e^c x: the element interpolation of
 * the boundary values of mesh `from` to the boundary of mesh `to` (B: rows =
 * to's points, cols = from's), summed over the elements (not divided); 3D
 * transfers are face_transfer's */
static void element_transfer(const lvctx *c, const hpmg_sem_mesh *from, const hpmg_sem_mesh *to, const double *B,
                             const double *x, double *y) {
  const int nf = from->el.n, nt = to->el.n;
  const int64_t nsy = to->ns;
  const size_t bigf = (size_t)nf * nf;
  const double work = (double)to->ne / to->ncolors * 2.0 * (double)bigf * (nf + nt);
#pragma omp parallel num_threads(c->nthreads) if (hpmg_par(work))
  {
    const size_t big = c->tws / 4;
    double *uin = c->twork + (size_t)omp_get_thread_num() * c->tws, *uout = uin + big, *t1 = uout + big,
           *bb = t1 + big;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < nsy; i++) y[i] = 0.0;
    for (int col = 0; col < to->ncolors; col++) {
#pragma omp for schedule(static)
      for (int64_t q = to->color_ptr[col]; q < to->color_ptr[col + 1]; q++) {
        const int64_t e = to->color_elems[q];
        hpmg_sem_gather(from, e, x, bb);
        memset(uin, 0, sizeof(double) * bigf);
        for (int k = 0; k < from->el.nb; k++) uin[from->el.bmap[k]] = bb[k];
        tensor_apply2(B, nt, nf, uin, uout, t1);
        for (int k = 0; k < to->el.nb; k++) bb[k] = uout[to->el.bmap[k]];
        hpmg_sem_scatter_add(to, e, bb, y);
      }
    }
  }
}

/* 3D, per face: the element interpolation restricted to the boundary is a
 * 2D transform of each face, since the end rows of I1 are unit vectors: the
 * trace of the interpolant on a face is the interpolant of the face's
 * trace. Prolongation (dir 0, c->I1): every fine boundary node from the
 * lowest face holding it (an edge or vertex node gets the same value from
 * any of its faces); restriction (dir 1, c->I1T): the exact transpose, each
 * fine node into the coarse face of that face. 2 (n_c^2 n_f + n_c n_f^2) per
 * face instead of the full 3D tensor product's O(n^4); batches of elements,
 * interleaved (sem_kernels.h: face_apply, the gather and scatter of
 * sem_mesh.h), the lanes added in element order. */
/* The unscaled vectors in and out, in the same region as the transfer:
 * restriction (dir 1) from the fine x, scaled into t (Dirichlet 0, else
 * x / mult) first, and y masked after; prolongation (dir 0) then y / mult
 * (Dirichlet 0), stored in y, or if xp into xp (add: added to it). */
static void face_transfer(const lvctx *c, int dir, const hpmg_sem_mesh *from, const hpmg_sem_mesh *to,
                          const double *x, double *y, double *t, double *xp, int add) {
  const hpmg_sem_kernels *K = hpmg_sem_kernels_select();
  const int W = K->lanes;
  const int nfi = c->m->el.n, nco = c->pm->m[c->l - 1]->el.n;
  const int nin = dir ? nfi : nco, nout = dir ? nco : nfi;
  const int *min = c->fmap[1 - dir], *mout = c->fmap[dir];
  const double *B = dir ? c->I1T : c->I1;
  const int64_t nsy = to->ns;
  const size_t nbf = (size_t)c->m->el.nb, ff = (size_t)nfi * nfi;
  /* a colour's elements, 6 faces of 2 (n_c^2 n_f + n_c n_f^2) multiply-adds each */
  const double work = (double)to->ne / to->ncolors * 24.0 * nco * nfi * (nco + nfi);
#pragma omp parallel num_threads(c->nthreads) if (hpmg_par(work))
  {
    /* lanes interleaved: the boundary vectors in and out, a face in and out, the transform's scratch */
    double *bin = c->twork + (size_t)omp_get_thread_num() * c->tws, *bout = bin + W * nbf, *fin = bout + W * nbf,
           *fout = fin + W * ff, *tmp = fout + W * ff;
    const double *in = x;
    if (dir) {
#pragma omp for schedule(static) nowait
      for (int64_t i = 0; i < nsy; i++) y[i] = 0.0;
#pragma omp for schedule(static)
      for (int64_t i = 0; i < from->ns; i++) t[i] = from->dirichlet && from->dirichlet[i] ? 0.0 : x[i] / from->mult[i];
      in = t;
    } else {
#pragma omp for schedule(static)
      for (int64_t i = 0; i < nsy; i++) y[i] = 0.0;
    }
    for (int col = 0; col < to->ncolors; col++) {
      const int64_t c0 = to->color_ptr[col], nbat = (to->color_ptr[col + 1] - c0 + W - 1) / W;
#pragma omp for schedule(static)
      for (int64_t bt = 0; bt < nbat; bt++) {
        const int64_t q0 = c0 + bt * W;
        const int nl = (int)(to->color_ptr[col + 1] - q0 < W ? to->color_ptr[col + 1] - q0 : W);
        hpmg_sem_gather_batch(from, to->color_elems + q0, nl, W, 0, in, bin);
        if (dir) memset(bout, 0, sizeof(double) * (size_t)W * (size_t)to->el.nb);
        for (int f = 0; f < 6; f++) {
          const int *fi = min + f * nin * nin, *fo = mout + f * nout * nout;
          if (dir) { /* the fine nodes this face holds first */
            const uint8_t *ow = c->own + f * nin * nin;
            for (int t = 0; t < nin * nin; t++)
              for (int l = 0; l < W; l++) fin[(size_t)t * W + l] = ow[t] ? bin[(size_t)fi[t] * W + l] : 0.0;
          } else
            for (int t = 0; t < nin * nin; t++)
              for (int l = 0; l < W; l++) fin[(size_t)t * W + l] = bin[(size_t)fi[t] * W + l];
          K->face_apply(B, nout, nin, fin, fout, tmp);
          if (dir) {
            for (int t = 0; t < nout * nout; t++)
              for (int l = 0; l < W; l++) bout[(size_t)fo[t] * W + l] += fout[(size_t)t * W + l];
          } else {
            const uint8_t *ow = c->own + f * nout * nout;
            for (int t = 0; t < nout * nout; t++)
              if (ow[t])
                for (int l = 0; l < W; l++) bout[(size_t)fo[t] * W + l] = fout[(size_t)t * W + l];
          }
        }
        hpmg_sem_scatter_add_batch(to, to->color_elems + q0, nl, W, bout, y);
      }
    }
    /* the last loop of the region: its end joins the threads, so no barrier of its own */
    if (dir) {
      if (to->dirichlet) {
#pragma omp for schedule(static) nowait
        for (int64_t i = 0; i < nsy; i++)
          if (to->dirichlet[i]) y[i] = 0.0;
      }
    } else {
#pragma omp for schedule(static) nowait
      for (int64_t i = 0; i < nsy; i++) {
        const double v = to->dirichlet && to->dirichlet[i] ? 0.0 : y[i] / to->mult[i];
        if (!xp) y[i] = v;
        else xp[i] = add ? xp[i] + v : v;
      }
    }
  }
}

/* ------------------------------------ the degree-1 level's transfers */

/* lexicographic index of J in a box of sizes s, J0 fastest */
static inline int64_t lin3(const int64_t J[3], const int64_t s[3]) { return J[0] + s[0] * (J[1] + s[1] * J[2]); }

/* per direction of mesh m: vertex (1) or cell (0) index sizes */
static void ent_sizes(const hpmg_sem_mesh *m, const int vert[3], int64_t s[3]) {
  for (int d = 0; d < 3; d++) s[d] = d >= m->dim ? 1 : vert[d] ? m->nv[d] : m->cells[d];
}

/* the degree-1 unknown at mesh vertex J (J_d in [0, cells_d], wrapped where
 * periodic), or -1 on a Dirichlet end */
static int64_t q1_node(const hpmg_sem_pmg *pm, const int64_t J[3]) {
  const hpmg_grid *g = &pm->q1;
  int64_t i[3] = {0, 0, 0};
  for (int d = 0; d < g->dim; d++) {
    const int64_t Jd = pm->m[0]->periodic[d] ? J[d] % pm->m[0]->nv[d] : J[d];
    i[d] = Jd - g->off[d];
    if (i[d] < 0 || i[d] >= g->n[d]) return -1;
  }
  return hpmg_grid_index(g, i[0], i[1], i[2]);
}

static double q1_val(const hpmg_sem_pmg *pm, const double *xc, const int64_t J[3]) {
  const int64_t i = q1_node(pm, J);
  return i < 0 ? 0.0 : xc[i];
}

/* y (p = 2 skeleton) = the multilinear interpolant of the vertex values xc
 * at the skeleton nodes: at p = 2 every entity has one node, its midpoint */
static void q1_prolong(const hpmg_sem_pmg *pm, const double *xc, double *y) {
  const hpmg_sem_mesh *m = pm->m[0];
  const int dim = m->dim;
  { /* vertices */
    const int v[3] = {1, 1, 1};
    int64_t s[3];
    ent_sizes(m, v, s);
    const int64_t n = s[0] * s[1] * s[2];
#pragma omp parallel for schedule(static) if (hpmg_par((double)n))
    for (int64_t q = 0; q < n; q++) {
      const int64_t J[3] = {q % s[0], (q / s[0]) % s[1], q / (s[0] * s[1])};
      y[m->off_vert + q] = q1_val(pm, xc, J);
    }
  }
  for (int k = 0; k < dim && dim == 3; k++) { /* edges along x_k: the mean of their two vertices */
    int v[3] = {1, 1, 1};
    v[k] = 0;
    int64_t s[3];
    ent_sizes(m, v, s);
    const int64_t n = s[0] * s[1] * s[2];
#pragma omp parallel for schedule(static) if (hpmg_par((double)n))
    for (int64_t q = 0; q < n; q++) {
      int64_t J[3] = {q % s[0], (q / s[0]) % s[1], q / (s[0] * s[1])};
      double a = q1_val(pm, xc, J);
      J[k]++;
      a += q1_val(pm, xc, J);
      y[m->off_edge[k] + q] = 0.5 * a;
    }
  }
  for (int k = 0; k < dim; k++) { /* faces normal to x_k: the mean of their 2^{dim-1} vertices */
    int v[3] = {0, 0, 0};
    v[k] = 1;
    int64_t s[3];
    ent_sizes(m, v, s);
    const int64_t n = s[0] * s[1] * s[2];
    const int ta = k == 0 ? 1 : 0, tb = k == 2 ? 1 : 2, nc = dim == 3 ? 4 : 2;
#pragma omp parallel for schedule(static) if (hpmg_par((double)n))
    for (int64_t q = 0; q < n; q++) {
      const int64_t J[3] = {q % s[0], (q / s[0]) % s[1], q / (s[0] * s[1])};
      double a = 0;
      for (int c = 0; c < nc; c++) {
        int64_t K[3] = {J[0], J[1], J[2]};
        K[ta] += c & 1;
        if (dim == 3) K[tb] += c >> 1;
        a += q1_val(pm, xc, K);
      }
      y[m->off_face[k] + q] = a / nc;
    }
  }
  mask(m, y);
}

/* cell index c of direction d next to a vertex, wrapped where periodic; -1 outside */
static int64_t cell_at(const hpmg_sem_mesh *m, int d, int64_t c) {
  if (m->periodic[d]) return (c + m->cells[d]) % m->cells[d];
  return c >= 0 && c < m->cells[d] ? c : -1;
}

/* yc = q1_prolong^T t (t with its Dirichlet entries zeroed by the caller):
 * per vertex unknown, the sum of its own entry, half of each edge's through
 * it and the 1/2^{dim-1} share of each face's around it */
static void q1_restrict(const hpmg_sem_pmg *pm, const double *t, double *yc) {
  const hpmg_sem_mesh *m = pm->m[0];
  const hpmg_grid *g = &pm->q1;
  const int dim = m->dim;
  int64_t sv[3], se[3][3], sf[3][3];
  {
    const int v[3] = {1, 1, 1};
    ent_sizes(m, v, sv);
    for (int k = 0; k < 3; k++) {
      int ve[3] = {1, 1, 1}, vf[3] = {0, 0, 0};
      ve[k] = 0, vf[k] = 1;
      ent_sizes(m, ve, se[k]);
      ent_sizes(m, vf, sf[k]);
    }
  }
  const int64_t N = g->N;
#pragma omp parallel for schedule(static) if (hpmg_par((double)N))
  for (int64_t q = 0; q < N; q++) {
    const int64_t i[3] = {q % g->n[0], (q / g->n[0]) % g->n[1], q / (g->n[0] * g->n[1])};
    int64_t J[3] = {0, 0, 0};
    for (int d = 0; d < dim; d++) J[d] = i[d] + g->off[d];
    double a = t[m->off_vert + lin3(J, sv)];
    for (int k = 0; k < dim && dim == 3; k++)
      for (int side = -1; side <= 0; side++) {
        const int64_t c = cell_at(m, k, J[k] + side);
        if (c < 0) continue;
        int64_t K[3] = {J[0], J[1], J[2]};
        K[k] = c;
        a += 0.5 * t[m->off_edge[k] + lin3(K, se[k])];
      }
    for (int k = 0; k < dim; k++) {
      const int ta = k == 0 ? 1 : 0, tb = k == 2 ? 1 : 2, nc = dim == 3 ? 4 : 2;
      for (int c = 0; c < nc; c++) {
        const int64_t ca = cell_at(m, ta, J[ta] - 1 + (c & 1));
        const int64_t cb = dim == 3 ? cell_at(m, tb, J[tb] - 1 + (c >> 1)) : 0;
        if (ca < 0 || cb < 0) continue;
        int64_t K[3] = {J[0], J[1], J[2]};
        K[ta] = ca;
        if (dim == 3) K[tb] = cb;
        a += t[m->off_face[k] + lin3(K, sf[k])] / nc;
      }
    }
    yc[q] = a;
  }
}

/* y = J xc; if xp, xp = J xc (add: xp += J xc), y scratch. J: the interpolation,
 * then (l > 0) the division by the multiplicity with the Dirichlet entries 0; in
 * 3D in the transfer's region, else in one pass with the update */
static void prolong(const hpmg_sem_pmg *pm, int l, const double *xc, double *y, double *xp, int add) {
  const hpmg_sem_mesh *m = pm->m[l];
  const int64_t ns = m->ns;
  if (l == 0) {
    q1_prolong(pm, xc, y);
    if (!xp) return;
  } else {
    const lvctx *c = pm->mg.lv[l].ctx;
    if (m->dim == 3) {
      face_transfer(c, 0, pm->m[l - 1], m, xc, y, NULL, xp, add);
      return;
    }
    element_transfer(c, pm->m[l - 1], m, c->I1, xc, y);
  }
#pragma omp parallel for schedule(static) if (hpmg_par((double)ns))
  for (int64_t i = 0; i < ns; i++) {
    const double v = l == 0 ? y[i] : m->dirichlet && m->dirichlet[i] ? 0.0 : y[i] / m->mult[i];
    if (!xp) y[i] = v;
    else xp[i] = add ? xp[i] + v : v;
  }
}

void hpmg_sem_pmg_prolong(const hpmg_sem_pmg *pm, int l, const double *xc, double *y) {
  prolong(pm, l, xc, y, NULL, 0);
}

void hpmg_sem_pmg_restrict(const hpmg_sem_pmg *pm, int l, const double *x, double *yc) {
  const lvctx *c = pm->mg.lv[l].ctx;
  const hpmg_sem_mesh *m = pm->m[l];
  const int64_t ns = m->ns;
  double *t = c->tmp;
  if (l == 0) {
#pragma omp parallel for schedule(static) if (hpmg_par((double)ns))
    for (int64_t i = 0; i < ns; i++) t[i] = m->dirichlet && m->dirichlet[i] ? 0.0 : x[i];
    q1_restrict(pm, t, yc);
    return;
  }
  if (m->dim == 3) { /* with the scaling and the mask, one region */
    face_transfer(c, 1, m, pm->m[l - 1], x, yc, t, NULL, 0);
    return;
  }
#pragma omp parallel for schedule(static) if (hpmg_par((double)ns))
  for (int64_t i = 0; i < ns; i++) t[i] = m->dirichlet && m->dirichlet[i] ? 0.0 : x[i] / m->mult[i];
  element_transfer(c, m, pm->m[l - 1], c->I1T, t, yc);
  mask(pm->m[l - 1], yc);
}

/* ----------------------------------------------------------- level slots */

static void residual(const lvctx *c, const double *b, const double *x, double *r) {
  hpmg_sem_mesh_residual(c->m, b, x, r, c->work);
}

static hpmg_error lv_smooth(hpmg_level *L, int x_is_zero, int post, int sweeps) {
  (void)post;
  lvctx *c = L->ctx;
  double *x = L->x.data, *r = L->r.data, *z = c->tmp;
  const double *b = L->b.data;
  const int64_t ns = c->m->ns;
  for (int s = 0; s < sweeps; s++) { /* the cycle's sweeps times the level's sweep_factor (kvMG) */
    const int first = s == 0 && x_is_zero;
    if (!first) {
      residual(c, b, x, r);
      L->matvecs++;
    }
    /* x = S b from zero; else x += S r with the update in the smoother's region */
    if (first) hpmg_sem_smoother_apply(&c->sm, b, x);
    else hpmg_sem_smoother_update(&c->sm, r, z, x);
  }
  if (sweeps == 0 && x_is_zero) memset(x, 0, sizeof(double) * (size_t)ns);
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
  prolong(c->pm, c->l, cx->data, c->tmp, L->x.data, add);
  return HPMG_SUCCESS;
}

static hpmg_error apply_op(void *ctx, const hpmg_vec *x, hpmg_vec *y) {
  const lvctx *c = ctx;
  hpmg_sem_mesh_apply(c->m, 1, x->data, y->data, c->work);
  return HPMG_SUCCESS;
}

static hpmg_error hmg_precondition(void *ctx, const hpmg_vec *r, hpmg_vec *z) {
  return hpmg_mg_precondition(ctx, r, z);
}

/* the p = 2 level: CG to coarse_rtol from zero, Jacobi-preconditioned, or
 * (hlev) flexible CG preconditioned by one cycle of hmg (star smoothing at
 * p = 2, the degree-1 correction) */
static hpmg_error lv_coarse_run(hpmg_level *L) {
  lvctx *c = L->ctx;
  hpmg_sem_pmg *pm = c->pm;
  pm->coarse_solves++;
  if (pm->coarse == HPMG_SEM_COARSE_FDM) { /* exact */
    const int singular = hpmg_sem_singular(c->m);
    if (singular) HPMG_CALL(hpmg_sem_project_constants(NULL, &L->b));
    hpmg_sem_fdm_solve(&pm->fdm, L->b.data, L->x.data);
    if (singular) HPMG_CALL(hpmg_sem_project_constants(NULL, &L->x));
    return HPMG_SUCCESS;
  }
  hpmg_krylov_params prm = {0};
  prm.rtol = pm->coarse_rtol;
  prm.x0_zero = 1;
  hpmg_krylov_info info;
  if (pm->hlev) {
    prm.maxit = HPMG_SEM_COARSE_MAX_ITS;
    const int singular = hpmg_sem_singular(c->m);
    prm.project = singular ? hpmg_sem_project_constants : NULL;
    if (singular) HPMG_CALL(hpmg_sem_project_constants(NULL, &L->b));
    hpmg_linop A = {c, apply_op, NULL, NULL}, M = {&pm->hmg, hmg_precondition, NULL, NULL};
    HPMG_CALL(hpmg_pcg(&A, &M, &L->b, &L->x, c->cg.w, 1, &prm, &info));
    if (singular) HPMG_CALL(hpmg_sem_project_constants(NULL, &L->x));
  } else {
    prm.maxit = (int)(10 * c->m->ns + 100 < 1000000 ? 10 * c->m->ns + 100 : 1000000);
    HPMG_CALL(hpmg_sem_dcg_run(&c->cg, &L->b, &L->x, &prm, &info));
  }
  pm->coarse_its += info.iterations;
  if (!info.converged)
    return hpmg_error_set(HPMG_ERR_NOT_CONVERGED, "sem p-multigrid: the coarse CG (p = %d) did not converge in %d iterations",
                          c->m->p, info.iterations);
  return HPMG_SUCCESS;
}

/* the coarse solve on the calling thread where the p = 2 level's colours
 * hold less than hpmg_par_min of work each (sem_mesh.h): then every
 * region inside, also the Krylov vectors' and the degree-1 multigrid's,
 * would wake passive threads for microseconds of work */
static hpmg_error lv_coarse(hpmg_level *L) {
  const lvctx *c = L->ctx;
  const hpmg_sem_mesh *m = c->m;
  const double work = (double)m->ne / (m->ncolors > 0 ? m->ncolors : 1) * hpmg_sem_condensed_flops(&m->el);
  /* FDM's loops size their own regions */
  if (c->pm->coarse == HPMG_SEM_COARSE_FDM || hpmg_par(work) || omp_in_parallel()) return lv_coarse_run(L);
  const int nt = omp_get_max_threads();
  omp_set_num_threads(1);
  const hpmg_error e = lv_coarse_run(L);
  omp_set_num_threads(nt);
  return e;
}

static void lv_destroy(hpmg_level *L) {
  lvctx *c = L->ctx;
  if (!c) return;
  if (c->sm.m) hpmg_sem_smoother_destroy(&c->sm);
  hpmg_free(&c->work);
  hpmg_free(&c->tmp);
  hpmg_free(&c->I1);
  hpmg_free(&c->I1T);
  for (int i = 0; i < 2; i++) hpmg_free(&c->fmap[i]);
  hpmg_free(&c->own);
  hpmg_free(&c->twork);
  if (c->cg.m) hpmg_sem_dcg_destroy(&c->cg);
  free(c);
  L->ctx = NULL;
}

/* ------------------------------------------------ the degree-1 level */

hpmg_error hpmg_sem_pmg_coarse_hmg(hpmg_sem_pmg *pm, hpmg_krylov_info *info) {
  HPMG_CHECK_ARG(pm->hlev, "sem p-multigrid: no degree-1 level (the coarse solver is CG)");
  hpmg_level *L = &pm->hmg.lv[0], *F = &pm->qmg.lv[pm->qmg.nlevels - 1];
  const int64_t n = L->n;
  memcpy(F->b.data, L->b.data, sizeof(double) * (size_t)n);
  if (pm->q1_singular) HPMG_CALL(qk_box_project_mean(NULL, &F->b));
  HPMG_CALL(hpmg_v_zero(&F->x));
  hpmg_krylov_params prm = {0};
  prm.rtol = pm->q1_rtol;
  prm.maxit = HPMG_SEM_COARSE_MAX_ITS;
  const hpmg_linop A = hpmg_qk_host_linop(&pm->qmg);
  HPMG_CALL(hpmg_mg_stationary(&pm->qmg, &A, &F->b, &F->x, pm->qw, 1, 0.0, &prm, info));
  pm->q1_cycles += info->iterations;
  if (!info->converged)
    return hpmg_error_set(HPMG_ERR_NOT_CONVERGED,
                          "sem p-multigrid: the degree-1 coarse multigrid reached %.3g (relative) in %d V-cycles, not %.3g",
                          info->r0 > 0 ? info->rnorm / info->r0 : 0.0, info->iterations, pm->q1_rtol);
  if (pm->q1_singular) HPMG_CALL(qk_box_project_mean(NULL, &F->x));
  memcpy(L->x.data, F->x.data, sizeof(double) * (size_t)n);
  return HPMG_SUCCESS;
}

static hpmg_error q1_coarse(hpmg_level *L) {
  hpmg_krylov_info info;
  return hpmg_sem_pmg_coarse_hmg(L->ctx, &info);
}

static const hpmg_level_ops q1_ops = {.coarse_solve = q1_coarse};

static const hpmg_level_ops sem_ops = {
    .smooth = lv_smooth,
    .residual = lv_residual,
    .restrict_to = lv_restrict,
    .prolong = lv_prolong,
    .coarse_solve = lv_coarse,
    .destroy = lv_destroy,
};

/* the p = 2 level in hmg: the context of mg's level 0, destroyed there */
static const hpmg_level_ops sem_ops_p2 = {
    .smooth = lv_smooth,
    .residual = lv_residual,
    .restrict_to = lv_restrict,
    .prolong = lv_prolong,
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
  c->nthreads = omp_get_max_threads();
  HPMG_CALL(hpmg_calloc(sizeof(double) * hpmg_sem_mesh_work_size(m), &c->work));
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)m->ns, &c->tmp));
  if (l == 0) { /* FDM's tables, or CG's vectors; hlev: the star smoother too (the transfers to degree 1
                   need no tables) */
    if (pm->coarse == HPMG_SEM_COARSE_FDM) return hpmg_sem_fdm_create(m, &pm->fdm);
    HPMG_CALL(hpmg_sem_dcg_create(m, &c->cg));
    if (pm->hlev) HPMG_CALL(hpmg_sem_smoother_create(m, &c->sm));
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
  if (m->dim == 3) { /* the face tables of the fine and the coarse element, the fine nodes' lowest faces */
    const hpmg_sem_element *els[2] = {ef, ec};
    for (int w = 0; w < 2; w++) {
      const hpmg_sem_element *el = els[w];
      const int n = el->n, p = el->p;
      int *inv = NULL;
      HPMG_CALL(hpmg_malloc(sizeof(int) * (size_t)(6 * n * n), &c->fmap[w]));
      HPMG_CALL(hpmg_malloc(sizeof(int) * (size_t)el->nloc, &inv));
      for (int k = 0; k < el->nb; k++) inv[el->bmap[k]] = k;
      if (w == 0) {
        hpmg_error e = hpmg_malloc((size_t)(6 * n * n), &c->own);
        if (e) {
          hpmg_free(&inv);
          return e;
        }
      }
      for (int f = 0; f < 6; f++) {
        const int k = f / 2, R = k == 2 ? 1 : 2, C = k == 0 ? 1 : 0;
        for (int r = 0; r < n; r++)
          for (int cc = 0; cc < n; cc++) {
            int i[3];
            i[k] = f % 2 ? p : 0, i[R] = r, i[C] = cc;
            const int t = f * n * n + r * n + cc;
            c->fmap[w][t] = inv[(i[2] * n + i[1]) * n + i[0]];
            if (w == 0) {
              int lower = 0;
              for (int g = 0; g < f; g++) lower |= i[g / 2] == (g % 2 ? p : 0);
              c->own[t] = !lower;
            }
          }
      }
      hpmg_free(&inv);
    }
  }
  if (m->dim == 3) /* face_transfer: lanes of two boundary vectors and three faces */
    c->tws = (size_t)hpmg_sem_kernels_select()->lanes * (2 * (size_t)ef->nb + 3 * (size_t)nf * nf);
  else /* element_transfer: an element's values in and out, the transform's scratch, a boundary vector */
    c->tws = 4 * ((size_t)nf * nf > (size_t)ef->nb ? (size_t)nf * nf : (size_t)ef->nb);
  return hpmg_calloc(sizeof(double) * c->tws * (size_t)c->nthreads, &c->twork);
}

void hpmg_sem_pmg_destroy(hpmg_sem_pmg *pm) {
  hpmg_mg_destroy(&pm->hmg); /* before mg: its p = 2 level uses mg's level 0 context */
  hpmg_mg_destroy(&pm->mg);
  hpmg_mg_destroy(&pm->qmg);
  hpmg_sem_fdm_destroy(&pm->fdm);
  for (int i = 0; i < 2; i++) hpmg_vec_destroy(&pm->qw[i]);
  for (int i = 0; i < 4; i++) hpmg_vec_destroy(&pm->w[i]);
  hpmg_vec_destroy(&pm->vb);
  for (int l = 0; l < pm->nlevels - 1; l++) hpmg_sem_mesh_destroy(&pm->mesh[l]);
  memset(pm, 0, sizeof *pm);
}

/* the degree-1 level: its grid (the mesh's cells, widths and conditions),
 * its geometric multigrid and work vectors; pm->hlev = 0 where the grid has
 * no unknown */
static hpmg_error q1_create(const hpmg_box *box, const hpmg_sem_mesh *fine, hpmg_sem_pmg *pm) {
  HPMG_CALL(hpmg_grid_init_box(box, 1, &pm->q1));
  for (int d = 0; d < 3; d++) /* the mesh's copy of the coordinates (the box need not outlive pm) */
    if (pm->q1.xn[d]) pm->q1.xn[d] = fine->x[d];
  if (pm->q1.N == 0) return HPMG_SUCCESS;
  pm->hlev = 1;
  pm->q1_singular = qk_box_singular(&pm->q1, fine->lambda);
  hpmg_qk_smoother_options so = {0};
  so.smoother = HPMG_SMOOTHER_CHEBYSHEV; /* the Q_k defaults (hpmg_solver_options_default) */
  so.cheby_degree = 5;
  so.cheby_range = 15.0;
  so.cheby_eig_iters = 12;
  const hpmg_cycle_options co = {.pre = 1, .post = 1, .add_residual = 0, .timing = 0};
  HPMG_CALL(hpmg_qk_host_create_box(&pm->q1, fine->lambda, pm->q1_singular, HPMG_REAL_DOUBLE, &so, &co, 0, &pm->qmg));
  for (int i = 0; i < 2; i++) HPMG_CALL(hpmg_vec_create(hpmg_backend_host(), HPMG_REAL_DOUBLE, pm->q1.N, &pm->qw[i]));
  return HPMG_SUCCESS;
}

hpmg_error hpmg_sem_pmg_create(const hpmg_box *box, const hpmg_sem_mesh *fine, hpmg_sem_mg_kind kind, int pre,
                               int post, hpmg_sem_coarse_kind coarse, hpmg_sem_pmg *pm) {
  memset(pm, 0, sizeof *pm);
  HPMG_CHECK_ARG(kind == HPMG_SEM_SOLVE_MG || kind == HPMG_SEM_SOLVE_KMG || kind == HPMG_SEM_SOLVE_KVMG,
                 "sem p-multigrid: unknown solver kind %d", (int)kind);
  HPMG_CHECK_ARG(pre >= 0 && pre <= 64 && post >= 0 && post <= 64 && pre + post >= 1,
                 "sem p-multigrid: smoothing sweeps (--pre %d, --post %d) must be in 0..64, at least one in all", pre, post);
  HPMG_CHECK_ARG(coarse == HPMG_SEM_COARSE_HMG || coarse == HPMG_SEM_COARSE_CG || coarse == HPMG_SEM_COARSE_FDM ||
                     coarse == HPMG_SEM_COARSE_AUTO,
                 "sem p-multigrid: unknown coarse solver %d", (int)coarse);
  pm->kind = kind;
  pm->q1_rtol = HPMG_SEM_Q1_RTOL;
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
  if (coarse == HPMG_SEM_COARSE_AUTO) {
    const double ne0 = (double)pm->m[0]->ne;
    coarse = hpmg_sem_fdm_flops(pm->m[0]) <= HPMG_SEM_FDM_MAX_FLOPS_PER_ELEMENT * ne0 &&
                     hpmg_sem_fdm_setup_flops(pm->m[0]) <= HPMG_SEM_FDM_MAX_SETUP_FLOPS_PER_ELEMENT * ne0
                 ? HPMG_SEM_COARSE_FDM
                 : HPMG_SEM_COARSE_HMG;
  }
  pm->coarse = coarse;
  if (coarse == HPMG_SEM_COARSE_HMG) e = q1_create(box, fine, pm);
  /* the Jacobi-CG (CG, and HMG where the vertex grid has no unknown, hlev
   * 0), as paper 001: MG iterates a fixed linear cycle, so its coarse CG is
   * solved tight; flexible CG (kMG, kvMG) admits a preconditioner that varies
   * from one application to the next, and 1e-3 leaves the iteration counts
   * of Table 1 and Fig. 6 unchanged (docs/sem.md, "p-multigrid") */
  pm->coarse_rtol = coarse == HPMG_SEM_COARSE_FDM ? 0.0 /* exact */
                    : pm->hlev                    ? HPMG_SEM_COARSE_RTOL_HMG
                    : kind == HPMG_SEM_SOLVE_MG   ? HPMG_SEM_COARSE_RTOL_CG
                                                  : HPMG_SEM_COARSE_RTOL_CG_FLEX;
  const hpmg_cycle_options opt = {.pre = pre, .post = post, .add_residual = 0, .timing = 1};
  if (!e) e = hpmg_mg_init(&pm->mg, nl, HPMG_REAL_DOUBLE, &opt, 0);
  for (int l = 0; l < nl && !e; l++) {
    hpmg_level *lv = &pm->mg.lv[l];
    lvctx *c = NULL;
    e = level_create(pm, l, L, &c);
    lv->ops = &sem_ops; /* destroy frees a partial ctx too */
    /* kvMG: nu_l = 2^{L-l} sweeps (a variable V-cycle). The p = 2 level
     * smooths only inside the coarse solve's preconditioner hmg, one sweep
     * before and after: the coarse CG iterates to coarse_rtol either way, and
     * 2^L sweeps there took 2-3x its time for the same outer counts
     * (docs/sem.md, "Coarse solve by h-multigrid") */
    lv->sweep_factor = pm->kind == HPMG_SEM_SOLVE_KVMG && l > 0 ? 1 << (L - l) : 1;
    lv->ctx = c;
    lv->be = hpmg_backend_host();
    lv->n = pm->m[l]->ns;
  }
  if (!e) e = hpmg_mg_setup(&pm->mg, NULL);
  if (!e && pm->hlev) { /* the coarse solve's preconditioner: degree 1 below p = 2, one sweep before and after */
    const hpmg_cycle_options hopt = {.pre = 1, .post = 1, .add_residual = 0, .timing = 0};
    e = hpmg_mg_init(&pm->hmg, 2, HPMG_REAL_DOUBLE, &hopt, 0);
    if (!e) {
      hpmg_level *q = &pm->hmg.lv[0], *l2 = &pm->hmg.lv[1];
      q->ops = &q1_ops;
      q->ctx = pm;
      q->be = hpmg_backend_host();
      q->n = pm->q1.N;
      l2->ops = &sem_ops_p2;
      l2->ctx = pm->mg.lv[0].ctx;
      l2->be = hpmg_backend_host();
      l2->n = pm->m[0]->ns;
      e = hpmg_mg_setup(&pm->hmg, NULL);
    }
  }
  for (int i = 0; i < 4 && !e; i++) e = hpmg_vec_create(hpmg_backend_host(), HPMG_REAL_DOUBLE, fine->ns, &pm->w[i]);
  if (!e) e = hpmg_vec_create(hpmg_backend_host(), HPMG_REAL_DOUBLE, fine->ns, &pm->vb);
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
    if (l == 0) /* FDM's tables, or the inverse diagonal and CG's vectors */
      b += pm->coarse == HPMG_SEM_COARSE_FDM ? hpmg_sem_fdm_bytes(m) : 5.0 * 8 * (double)m->ns;
    if (l > 0 || pm->hlev) b += hpmg_sem_smoother_bytes(&c->sm) + 8.0 * (double)c->tws * c->nthreads;
  }
  if (pm->hlev) { /* hmg's p = 2 and degree-1 b, x, r; the degree-1 multigrid's two work vectors, about six
                     vectors per level (b, x, r, Chebyshev's two, scratch) and the dense coarsest factor */
    b += 3.0 * 8 * (double)pm->m[0]->ns + 3.0 * 8 * (double)pm->q1.N + 2.0 * 8 * (double)pm->q1.N;
    for (int l = 0; l < pm->qmg.nlevels; l++) b += 6.0 * 8 * (double)pm->qmg.lv[l].n;
    const double n0 = (double)pm->qmg.lv[0].n;
    b += n0 <= 3000 ? 8.0 * n0 * n0 : 0.0;
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
  hpmg_vec *w = pm->w, *vb = &pm->vb;
  hpmg_vec_copy(HPMG_REAL_DOUBLE, ns, rhs, vb->data);
  const int singular = hpmg_sem_singular(m);
  prm->project = singular ? hpmg_sem_project_constants : NULL;
  prm->pctx = NULL;
  if (singular) hpmg_sem_project_constants(NULL, vb);
  hpmg_linop A = {pm->mg.lv[top].ctx, apply_op, NULL, NULL};
  hpmg_vec vx = hpmg_vec_wrap(be, HPMG_REAL_DOUBLE, ns, x);
  pm->coarse_its = 0;
  pm->coarse_solves = 0;
  pm->q1_cycles = 0;
  hpmg_error e;
  if (pm->kind == HPMG_SEM_SOLVE_MG) e = hpmg_mg_stationary(&pm->mg, &A, vb, &vx, w, 0, 0.0, prm, info);
  else {
    hpmg_linop M = hpmg_mg_linop(&pm->mg);
    e = hpmg_pcg(&A, &M, vb, &vx, w, 1, prm, info);
  }
  if (!e && singular) hpmg_sem_project_constants(NULL, &vx);
  return e;
}
