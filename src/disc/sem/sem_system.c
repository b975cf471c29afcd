/* The condensed spectral-element system: loads, lifting, recovery, errors,
 * dCG (sem_system.h; docs/sem.md). */
#include <math.h>
#include <omp.h>
#include <string.h>
#include "disc/sem/sem_system.h"
#include "fem/fem.h"

hpmg_error hpmg_sem_lattice_coords(const hpmg_sem_mesh *m, int d, double **xl) {
  const int p = m->p;
  const int64_t c = m->cells[d];
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(c * p + 1), xl));
  double *x = *xl;
  for (int64_t e = 0; e < c; e++) {
    const double a = m->x[d][e], h = m->x[d][e + 1] - a;
    for (int i = 0; i < p; i++) x[e * p + i] = a + 0.5 * (m->el.x[i] + 1.0) * h;
  }
  x[c * p] = m->x[d][c];
  return HPMG_SUCCESS;
}

/* lattice index (wrapped) and unwrapped coordinate index of element c's local node i */
static inline int64_t lat_index(const hpmg_sem_mesh *m, const int64_t c[3], const int i[3], int64_t gu[3]) {
  int64_t g[3];
  for (int d = 0; d < 3; d++) {
    gu[d] = d < m->dim ? c[d] * m->p + i[d] : 0;
    g[d] = gu[d] % m->nlat[d];
  }
  return g[0] + m->nlat[0] * (g[1] + m->nlat[1] * g[2]);
}

/* lattice offsets of element c's local nodes, per direction: off[d][i] =
 * ((c_d p + i) mod nlat_d) * stride_d (0 beyond dim) */
static void elem_offsets(const hpmg_sem_mesh *m, const int64_t c[3], int64_t off[3][HPMG_SEM_MAX_DEGREE + 1]) {
  int64_t stride = 1;
  for (int d = 0; d < 3; d++) {
    for (int i = 0; i <= m->p; i++) off[d][i] = d < m->dim ? ((c[d] * m->p + i) % m->nlat[d]) * stride : 0;
    stride *= m->nlat[d];
  }
}

/* F_e of element e: J_e M f at the nodes, plus the Neumann fluxes of its
 * domain faces; returns the number of non-finite boundary values */
static int64_t element_load(const hpmg_sem_mesh *m, double *const xl[3], const double *f, double shift, hpmg_sem_bc_fn bc,
                            void *bctx, int64_t e, double *Fe) {
  const hpmg_sem_element *el = &m->el;
  const int n = el->n, p = m->p, dim = m->dim, n3 = dim == 3 ? n : 1;
  const double *M = el->M;
  int64_t c[3], off[3][HPMG_SEM_MAX_DEGREE + 1];
  double h[3];
  hpmg_sem_element_coords(m, e, c);
  hpmg_sem_element_widths(m, e, h);
  elem_offsets(m, c, off);
  double jac = 1;
  for (int d = 0; d < dim; d++) jac *= 0.5 * h[d];
  for (int i3 = 0; i3 < n3; i3++)
    for (int i2 = 0; i2 < n; i2++) {
      const double c23 = jac * M[i2] * (dim == 3 ? M[i3] : 1.0);
      const double *fr = f + off[2][i3] + off[1][i2];
      double *Fr = Fe + (i3 * n + i2) * n;
      for (int i1 = 0; i1 < n; i1++) Fr[i1] = c23 * M[i1] * (fr[off[0][i1]] - shift);
    }
  int64_t bad = 0;
  for (int k = 0; k < dim; k++)
    for (int s = 0; s < 2; s++) {
      const int face = 2 * k + s;
      if (m->bc[face] != HPMG_BC_NEUMANN || c[k] != (s ? m->cells[k] - 1 : 0)) continue;
      double jf = 1;
      for (int d = 0; d < dim; d++)
        if (d != k) jf *= 0.5 * h[d];
      for (int r = 0; r < el->nloc; r++) {
        const int i[3] = {r % n, (r / n) % n, dim == 3 ? r / (n * n) : 0};
        if (i[k] != s * p) continue;
        int64_t gu[3];
        lat_index(m, c, i, gu);
        double x[3] = {0, 0, 0}, w = jf;
        for (int d = 0; d < dim; d++) {
          x[d] = xl[d][gu[d]];
          if (d != k) w *= M[i[d]];
        }
        const double g = bc(bctx, face, x);
        bad += !isfinite(g);
        Fe[r] += w * g;
      }
    }
  return bad;
}

hpmg_error hpmg_sem_load_mean(const hpmg_sem_mesh *m, double *const xl[3], const double *f, hpmg_sem_bc_fn bc, void *bctx,
                              double *cmean, double *cabs) {
  double *buf = NULL;
  const int nloc = m->el.nloc;
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)nloc * (size_t)omp_get_max_threads(), &buf));
  double sum = 0, sabs = 0, vol = 0;
  int64_t bad = 0;
#pragma omp parallel reduction(+ : sum, sabs, vol, bad)
  {
    double *Fe = buf + (size_t)nloc * (size_t)omp_get_thread_num();
#pragma omp for schedule(static)
    for (int64_t e = 0; e < m->ne; e++) {
      bad += element_load(m, xl, f, 0.0, bc, bctx, e, Fe);
      for (int r = 0; r < nloc; r++) sum += Fe[r], sabs += fabs(Fe[r]);
      double h[3];
      hpmg_sem_element_widths(m, e, h);
      vol += h[0] * h[1] * (m->dim == 3 ? h[2] : 1.0);
    }
  }
  hpmg_free(&buf);
  if (bad) return hpmg_error_set(HPMG_ERR_NUMERIC, "%lld non-finite Neumann boundary values", (long long)bad);
  *cmean = sum / vol;
  *cabs = sabs / vol;
  return HPMG_SUCCESS;
}

double hpmg_sem_field_mean(const hpmg_sem_mesh *m, const double *u) {
  const hpmg_sem_element *el = &m->el;
  const int n = el->n, dim = m->dim;
  double sum = 0, vol = 0;
#pragma omp parallel for reduction(+ : sum, vol) schedule(static)
  for (int64_t e = 0; e < m->ne; e++) {
    int64_t c[3], gu[3];
    double h[3];
    hpmg_sem_element_coords(m, e, c);
    hpmg_sem_element_widths(m, e, h);
    const double jac = 0.5 * h[0] * 0.5 * h[1] * (dim == 3 ? 0.5 * h[2] : 1.0);
    for (int r = 0; r < el->nloc; r++) {
      const int i[3] = {r % n, (r / n) % n, dim == 3 ? r / (n * n) : 0};
      sum += jac * el->M[i[0]] * el->M[i[1]] * (dim == 3 ? el->M[i[2]] : 1.0) * u[lat_index(m, c, i, gu)];
    }
    vol += h[0] * h[1] * (dim == 3 ? h[2] : 1.0);
  }
  return sum / vol;
}

hpmg_error hpmg_sem_condensed_rhs(const hpmg_sem_mesh *m, double *const xl[3], const double *f, double shift,
                                  hpmg_sem_bc_fn bc, void *bctx, double *rhs, double *uD) {
  const hpmg_sem_element *el = &m->el;
  const int64_t ns = m->ns;
  const int dc = m->dim + 1;
  int64_t bad = 0;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < ns; i++) rhs[i] = uD[i] = 0.0;
  /* Dirichlet values on the lattice planes of the Dirichlet faces */
  for (int face = 0; face < 2 * m->dim && m->dirichlet; face++) {
    if (m->bc[face] != HPMG_BC_DIRICHLET) continue;
    const int k = face / 2, a = k == 0 ? 1 : 0, b = k == 2 ? 1 : 2;
    const int64_t gk = (face & 1) ? m->nlat[k] - 1 : 0, nb_ = m->nlat[b], na = m->nlat[a];
#pragma omp parallel for collapse(2) reduction(+ : bad) schedule(static)
    for (int64_t ib = 0; ib < nb_; ib++)
      for (int64_t ia = 0; ia < na; ia++) {
        int64_t g[3];
        double x[3] = {0, 0, 0};
        g[k] = gk, g[a] = ia, g[b] = ib;
        for (int d = 0; d < m->dim; d++) x[d] = xl[d][g[d]];
        const double v = bc(bctx, face, x);
        bad += !isfinite(v);
        uD[hpmg_sem_skeleton_index(m, g)] = v;
      }
  }
  if (bad) return hpmg_error_set(HPMG_ERR_NUMERIC, "%lld non-finite Dirichlet boundary values", (long long)bad);
  /* per element Fhat_e summed into the skeleton, then minus Hhat uD (the
   * mesh operator, element batches; uD vanishes away from the Dirichlet
   * elements) */
  const size_t per = (size_t)el->nloc + 2 * (size_t)el->nb + m->ws;
  double *buf = NULL, *mw = NULL, *hu = NULL;
  HPMG_CALL(hpmg_malloc(sizeof(double) * per * (size_t)omp_get_max_threads(), &buf));
#pragma omp parallel reduction(+ : bad)
  {
    double *Fe = buf + per * (size_t)omp_get_thread_num(), *Fh = Fe + el->nloc, *wk = Fh + 2 * el->nb;
    for (int col = 0; col < m->ncolors; col++) {
#pragma omp for schedule(static)
      for (int64_t i = m->color_ptr[col]; i < m->color_ptr[col + 1]; i++) {
        const int64_t e = m->color_elems[i];
        bad += element_load(m, xl, f, shift, bc, bctx, e, Fe);
        hpmg_sem_condense_rhs(el, m->coef + e * dc, Fe, Fh, wk);
        hpmg_sem_scatter_add(m, e, Fh, rhs);
      }
    }
  }
  hpmg_free(&buf);
  if (bad) return hpmg_error_set(HPMG_ERR_NUMERIC, "%lld non-finite Neumann boundary values", (long long)bad);
  if (m->ndir) {
    hpmg_error e = hpmg_malloc(sizeof(double) * hpmg_sem_mesh_work_size(m), &mw);
    if (!e) e = hpmg_malloc(sizeof(double) * (size_t)ns, &hu);
    if (!e) {
      hpmg_sem_mesh_apply(m, 0, uD, hu, mw);
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < ns; i++) rhs[i] -= hu[i];
    }
    hpmg_free(&mw);
    hpmg_free(&hu);
    if (e) return e;
  }
  if (m->dirichlet) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < ns; i++)
      if (m->dirichlet[i]) rhs[i] = 0.0;
  }
  return HPMG_SUCCESS;
}

hpmg_error hpmg_sem_recover_field(const hpmg_sem_mesh *m, double *const xl[3], const double *f, double shift,
                                  hpmg_sem_bc_fn bc, void *bctx, const double *us, double *u) {
  const hpmg_sem_element *el = &m->el;
  const int n = el->n, p = m->p, dim = m->dim, dc = dim + 1;
  const size_t per = 2 * (size_t)el->nloc + (size_t)el->nb + m->ws;
  double *buf = NULL;
  HPMG_CALL(hpmg_malloc(sizeof(double) * per * (size_t)omp_get_max_threads(), &buf));
  int64_t bad = 0;
#pragma omp parallel reduction(+ : bad)
  {
    double *Fe = buf + per * (size_t)omp_get_thread_num(), *ue = Fe + el->nloc, *ub = ue + el->nloc, *wk = ub + el->nb;
#pragma omp for schedule(static)
    for (int64_t e = 0; e < m->ne; e++) {
      int64_t c[3], off[3][HPMG_SEM_MAX_DEGREE + 1];
      hpmg_sem_element_coords(m, e, c);
      elem_offsets(m, c, off);
      hpmg_sem_gather(m, e, us, ub);
      bad += element_load(m, xl, f, shift, bc, bctx, e, Fe);
      hpmg_sem_recover(el, m->coef + e * dc, Fe, ub, ue, wk);
      /* each element writes the nodes it owns: local index < p per
       * direction, and p on the last cell of a non-periodic direction, a
       * partition of the lattice (the boundary values are copies of us) */
      int hi[3];
      for (int d = 0; d < 3; d++)
        hi[d] = d >= dim ? 1 : (c[d] == m->cells[d] - 1 && !m->periodic[d]) ? n : p;
      for (int i3 = 0; i3 < hi[2]; i3++)
        for (int i2 = 0; i2 < hi[1]; i2++) {
          double *ur = u + off[2][i3] + off[1][i2];
          const double *er = ue + (i3 * n + i2) * n;
          for (int i1 = 0; i1 < hi[0]; i1++) ur[off[0][i1]] = er[i1];
        }
    }
  }
  hpmg_free(&buf);
  if (bad) return hpmg_error_set(HPMG_ERR_NUMERIC, "%lld non-finite Neumann boundary values", (long long)bad);
  return HPMG_SUCCESS;
}

/* ------------------------------------------------------------------ errors */

/* sum over elements of the integral of (u_h - u - shift)^k, k = 1 or 2, by q-point Gauss */
static hpmg_error quad_sum(const hpmg_sem_mesh *m, const double *u, hpmg_sem_field_fn exact, void *ectx, double shift,
                           int power, double *out, double *vol_out) {
  const hpmg_sem_element *el = &m->el;
  const int n = el->n, q = m->p + 2, dim = m->dim;
  double xg[64], wg[64], nodes[HPMG_SEM_MAX_DEGREE + 1];
  hpmg_gauss(q, xg, wg);
  for (int i = 0; i < n; i++) nodes[i] = 0.5 * (el->x[i] + 1.0);
  double *B = NULL, *buf = NULL;
  const int q3 = dim == 3 ? q * q * q : q * q, n3 = el->nloc;
  const size_t per = (size_t)n3 + 3 * (size_t)(q3 > n3 ? q3 : n3) + (size_t)q * n * n;
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(q * n), &B));
  hpmg_error er = hpmg_malloc(sizeof(double) * per * (size_t)omp_get_max_threads(), &buf);
  if (er) {
    hpmg_free(&B);
    return er;
  }
  for (int a = 0; a < q; a++) hpmg_lagrange_eval(n, nodes, xg[a], B + a * n, NULL);
  double sum = 0, vol = 0;
#pragma omp parallel reduction(+ : sum, vol)
  {
    double *ue = buf + per * (size_t)omp_get_thread_num(), *t1 = ue + n3, *t2 = t1 + (q3 > n3 ? q3 : n3),
           *t3 = t2 + (q3 > n3 ? q3 : n3);
#pragma omp for schedule(static)
    for (int64_t e = 0; e < m->ne; e++) {
      int64_t c[3];
      double h[3];
      hpmg_sem_element_coords(m, e, c);
      hpmg_sem_element_widths(m, e, h);
      for (int r = 0; r < n3; r++) {
        const int i[3] = {r % n, (r / n) % n, dim == 3 ? r / (n * n) : 0};
        int64_t gu[3];
        ue[r] = u[lat_index(m, c, i, gu)];
      }
      /* interpolate to the Gauss points: x1, then x2, then x3 */
      const int n2 = dim == 3 ? n * n : n; /* outer lines after the first pass */
      for (int o = 0; o < n2; o++) /* t1[o][a1] */
        for (int a = 0; a < q; a++) {
          double s = 0;
          for (int i = 0; i < n; i++) s += B[a * n + i] * ue[o * n + i];
          t1[o * q + a] = s;
        }
      const int o3 = dim == 3 ? n : 1;
      for (int z = 0; z < o3; z++) /* t2[z][a2][a1] */
        for (int a2 = 0; a2 < q; a2++)
          for (int a1 = 0; a1 < q; a1++) {
            double s = 0;
            for (int i = 0; i < n; i++) s += B[a2 * n + i] * t1[(z * n + i) * q + a1];
            t2[(z * q + a2) * q + a1] = s;
          }
      const double *uq = t2;
      if (dim == 3) {
        for (int a3 = 0; a3 < q; a3++)
          for (int t = 0; t < q * q; t++) {
            double s = 0;
            for (int i = 0; i < n; i++) s += B[a3 * n + i] * t2[i * q * q + t];
            t3[a3 * q * q + t] = s;
          }
        uq = t3;
      }
      for (int t = 0; t < q3; t++) {
        const int a[3] = {t % q, (t / q) % q, dim == 3 ? t / (q * q) : 0};
        double x[3] = {0, 0, 0}, w = 1;
        for (int d = 0; d < dim; d++) {
          x[d] = m->x[d][c[d]] + xg[a[d]] * h[d];
          w *= wg[a[d]] * h[d];
        }
        const double er = uq[t] - exact(ectx, x) - shift;
        sum += w * (power == 1 ? er : er * er);
        vol += w;
      }
    }
  }
  hpmg_free(&buf);
  hpmg_free(&B);
  *out = sum;
  if (vol_out) *vol_out = vol;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_sem_error(const hpmg_sem_mesh *m, double *const xl[3], const double *u, hpmg_sem_field_fn exact,
                          void *ectx, int mean_free, double *l2, double *maxerr) {
  HPMG_CHECK_ARG(m->p + 2 <= 64, "sem error: degree %d too high for the quadrature", m->p);
  double shift = 0, s2 = 0;
  if (mean_free) {
    double s1, vol;
    HPMG_CALL(quad_sum(m, u, exact, ectx, 0.0, 1, &s1, &vol));
    shift = s1 / vol;
  }
  HPMG_CALL(quad_sum(m, u, exact, ectx, shift, 2, &s2, NULL));
  const int64_t n0 = m->nlat[0], n1 = m->nlat[1], n2 = m->nlat[2];
  double mx = 0;
#pragma omp parallel for collapse(2) reduction(max : mx) schedule(static)
  for (int64_t g2 = 0; g2 < n2; g2++)
    for (int64_t g1 = 0; g1 < n1; g1++)
      for (int64_t g0 = 0; g0 < n0; g0++) {
        const double x[3] = {xl[0][g0], xl[1][g1], m->dim == 3 ? xl[2][g2] : 0.0};
        const double er = fabs(u[g0 + n0 * (g1 + n1 * g2)] - exact(ectx, x) - shift);
        mx = er > mx ? er : mx;
      }
  if (l2) *l2 = sqrt(s2);
  if (maxerr) *maxerr = mx;
  return HPMG_SUCCESS;
}

/* -------------------------------------------------------------------- dCG */

static hpmg_error dcg_apply(void *ctx, const hpmg_vec *x, hpmg_vec *y) {
  const hpmg_sem_dcg_solver *c = ctx;
  hpmg_sem_mesh_apply(c->m, 1, x->data, y->data, c->work);
  return HPMG_SUCCESS;
}

static hpmg_error dcg_jacobi(void *ctx, const hpmg_vec *r, hpmg_vec *z) {
  const hpmg_sem_dcg_solver *c = ctx;
  const double *rr = r->data, *d = c->invdiag;
  double *zz = z->data;
  const int64_t n = r->n;
#pragma omp parallel for schedule(static) if (hpmg_par((double)n))
  for (int64_t i = 0; i < n; i++) zz[i] = d[i] * rr[i];
  return HPMG_SUCCESS;
}

/* v -= mean(v): the constants, the null space of a singular condensed system */
hpmg_error hpmg_sem_project_constants(void *ctx, hpmg_vec *v) {
  (void)ctx;
  double *a = v->data, s = 0;
  const int64_t n = v->n;
#pragma omp parallel for reduction(+ : s) schedule(static) if (hpmg_par((double)n))
  for (int64_t i = 0; i < n; i++) s += a[i];
  s /= (double)n;
#pragma omp parallel for schedule(static) if (hpmg_par((double)n))
  for (int64_t i = 0; i < n; i++) a[i] -= s;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_sem_dcg_create(const hpmg_sem_mesh *m, hpmg_sem_dcg_solver *s) {
  memset(s, 0, sizeof *s);
  s->m = m;
  const int64_t ns = m->ns;
  hpmg_error e = hpmg_malloc(sizeof(double) * hpmg_sem_mesh_work_size(m), &s->work);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)ns, &s->invdiag);
  for (int i = 0; i < 4 && !e; i++) e = hpmg_vec_create(hpmg_backend_host(), HPMG_REAL_DOUBLE, ns, &s->w[i]);
  if (!e) {
    hpmg_sem_mesh_diagonal(m, s->invdiag, s->work);
    for (int64_t i = 0; i < ns && !e; i++) {
      if (!(s->invdiag[i] > 0))
        e = hpmg_error_set(HPMG_ERR_NUMERIC, "sem: diagonal entry %lld of the condensed operator (p = %d) is %g",
                           (long long)i, m->p, s->invdiag[i]);
      else s->invdiag[i] = 1.0 / s->invdiag[i];
    }
  }
  if (e) hpmg_sem_dcg_destroy(s);
  return e;
}

void hpmg_sem_dcg_destroy(hpmg_sem_dcg_solver *s) {
  for (int i = 0; i < 4; i++) hpmg_vec_destroy(&s->w[i]);
  hpmg_free(&s->work);
  hpmg_free(&s->invdiag);
}

hpmg_error hpmg_sem_dcg_run(hpmg_sem_dcg_solver *s, hpmg_vec *b, hpmg_vec *x, hpmg_krylov_params *prm,
                            hpmg_krylov_info *info) {
  const int singular = hpmg_sem_singular(s->m);
  prm->project = singular ? hpmg_sem_project_constants : NULL;
  prm->pctx = NULL;
  if (singular) HPMG_CALL(hpmg_sem_project_constants(NULL, b));
  hpmg_linop A = {s, dcg_apply, NULL, NULL}, M = {s, dcg_jacobi, NULL, NULL};
  HPMG_CALL(hpmg_pcg(&A, &M, b, x, s->w, 0, prm, info));
  if (singular) HPMG_CALL(hpmg_sem_project_constants(NULL, x));
  return HPMG_SUCCESS;
}

hpmg_error hpmg_sem_dcg(const hpmg_sem_mesh *m, const double *rhs, double *x, hpmg_krylov_params *prm,
                        hpmg_krylov_info *info) {
  const int64_t ns = m->ns;
  const hpmg_backend *be = hpmg_backend_host();
  hpmg_sem_dcg_solver c;
  hpmg_vec vb = {0};
  hpmg_error e = hpmg_sem_dcg_create(m, &c);
  if (e) return e;
  e = hpmg_vec_create(be, HPMG_REAL_DOUBLE, ns, &vb);
  if (!e) {
    memcpy(vb.data, rhs, sizeof(double) * (size_t)ns);
    hpmg_vec vx = hpmg_vec_wrap(be, HPMG_REAL_DOUBLE, ns, x);
    e = hpmg_sem_dcg_run(&c, &vb, &vx, prm, info);
  }
  hpmg_vec_destroy(&vb);
  hpmg_sem_dcg_destroy(&c);
  return e;
}
