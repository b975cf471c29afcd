/* The public objects on a P1 problem (p1.h, docs/p1.md). */
#include "p1.h"
#include <ctype.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "disc/p1/assembly.h"
#include "disc/p1/cuda/p1_cuda.h"
#include "disc/p1/mesh.h"
#include "la/krylov.h"
#include "la/vec.h"

struct hpmg_p1_problem_s {
  hpmg_problem_options o; /* pointers into the caller's arrays are not kept after creation */
  hpmg_p1_mesh mesh;
  hpmg_p1_pattern pat;
  double *sigma; /* per cell: comps values */
  int comps;
  /* the boundary conditions, prepared once (setup_bc) for either backend */
  uint8_t *dir;    /* Dirichlet nodes */
  double *gd;      /* their values */
  double *rhs_load; /* facet loads (Neumann, Robin data) */
  int64_t ndir, nrob;
  int64_t *rob_ptr, *rob_pos; /* Robin facet mass terms per CSR entry (hpmg_p1_bc_data) */
  double *rob_w;
  /* the host system, assembled on first use (host_system): a solver on the
   * CUDA backend assembles on the device and never needs it */
  double *val;     /* A with the boundary conditions */
  double *rhs_bc;  /* added to every b: facet loads minus the Dirichlet lift; Dirichlet rows: g */
  int singular;
  double lo[3], len[3]; /* bounding box (manufactured solution) */
  double volume;
  double t_symbolic, t_numeric, t_setup;
  char mesh_name[256];
};

/* ------------------------------------------------------------ quadrature */

/* degree-2 rules: 4 points on the tetrahedron, 3 on the triangle (barycentric, equal weights) */
static void quad_point(int dim, int q, double lam[4]) {
  if (dim == 3) {
    const double a = 0.5854101966249685, b = 0.1381966011250105;
    for (int k = 0; k < 4; k++) lam[k] = k == q ? a : b;
  } else {
    for (int k = 0; k < 3; k++) lam[k] = k == q ? 2.0 / 3.0 : 1.0 / 6.0;
    lam[3] = 0;
  }
}

/* -------------------------------------------------- manufactured solution */

/* u = prod cos(pi (x_d - lo_d) / len_d) over the mesh's bounding box: zero
 * normal flux on the box's faces for a diagonal sigma, mean zero over the box */
static double exact_u(const struct hpmg_p1_problem_s *p, const double *x) {
  double u = 1.0;
  for (int d = 0; d < p->mesh.dim; d++) u *= cos(M_PI * (x[d] - p->lo[d]) / p->len[d]);
  return u;
}
static void exact_grad(const struct hpmg_p1_problem_s *p, const double *x, double *g) {
  const int dim = p->mesh.dim;
  double c[3], s[3], k[3];
  for (int d = 0; d < dim; d++) {
    k[d] = M_PI / p->len[d];
    c[d] = cos(k[d] * (x[d] - p->lo[d]));
    s[d] = sin(k[d] * (x[d] - p->lo[d]));
  }
  for (int a = 0; a < dim; a++) {
    double v = -k[a] * s[a];
    for (int d = 0; d < dim; d++)
      if (d != a) v *= c[d];
    g[a] = v;
  }
}
/* the full symmetric sigma of cell c */
static void cell_sigma(const struct hpmg_p1_problem_s *p, int64_t c, double S[3][3]) {
  const double *s = p->sigma + c * p->comps;
  memset(S, 0, sizeof(double) * 9);
  if (p->comps == 1) {
    for (int d = 0; d < 3; d++) S[d][d] = s[0];
  } else if (p->mesh.dim == 3) {
    S[0][0] = s[0], S[1][1] = s[1], S[2][2] = s[2];
    S[0][1] = S[1][0] = s[3], S[0][2] = S[2][0] = s[4], S[1][2] = S[2][1] = s[5];
  } else {
    S[0][0] = s[0], S[1][1] = s[1], S[0][1] = S[1][0] = s[2];
  }
}
/* f = -div(sigma grad u) + lambda u for the constant sigma S */
static double exact_f(const struct hpmg_p1_problem_s *p, double S[3][3], const double *x) {
  const int dim = p->mesh.dim;
  double c[3], s[3], k[3];
  for (int d = 0; d < dim; d++) {
    k[d] = M_PI / p->len[d];
    c[d] = cos(k[d] * (x[d] - p->lo[d]));
    s[d] = sin(k[d] * (x[d] - p->lo[d]));
  }
  double f = 0.0;
  for (int a = 0; a < dim; a++)
    for (int b = 0; b < dim; b++) {
      double h; /* d_a d_b u */
      if (a == b) {
        h = -k[a] * k[a];
        for (int d = 0; d < dim; d++) h *= c[d];
      } else {
        h = k[a] * k[b] * s[a] * s[b];
        for (int d = 0; d < dim; d++)
          if (d != a && d != b) h *= c[d];
      }
      f -= S[a][b] * h;
    }
  return f + p->o.lambda * exact_u(p, x);
}

/* ------------------------------------------------------------- options */

hpmg_error hpmg_p1_problem_check(const hpmg_problem_options *o) {
  HPMG_CHECK_ARG(o->mesh && *o->mesh, "a P1 problem needs a mesh (--mesh FILE, regular:L or irregular:L)");
  HPMG_CHECK_ARG(o->dim == 2 || o->dim == 3, "--dim must be 2 or 3 (got %d)", o->dim);
  HPMG_CHECK_ARG(o->lambda >= 0 && isfinite(o->lambda), "--lambda must be >= 0 and finite (got %g)", o->lambda);
  HPMG_CHECK_ARG(o->rhs == HPMG_RHS_SINE || o->rhs == HPMG_RHS_ONE || o->rhs == HPMG_RHS_VECTOR_ONE,
                 "unknown right-hand side kind %d", (int)o->rhs);
  HPMG_CHECK_ARG(o->num_sigma >= 0 && (o->num_sigma == 0 || o->sigma), "sigma: %d regions but no array", o->num_sigma);
  HPMG_CHECK_ARG(!(o->num_sigma > 0 && o->sigma_cells), "sigma: give it per region or per cell, not both");
  HPMG_CHECK_ARG(!o->sigma_cells || o->sigma_cell_comps == 1 || o->sigma_cell_comps == (o->dim == 3 ? 6 : 3) ||
                     o->sigma_cell_comps == 6 || o->sigma_cell_comps == 3,
                 "sigma_cell_comps must be 1 (scalar) or 6 (3D) / 3 (2D) tensor components (got %d)", o->sigma_cell_comps);
  for (int i = 0; i < o->num_sigma; i++) {
    HPMG_CHECK_ARG(o->sigma[i].region && *o->sigma[i].region, "sigma %d: no region name", i);
    if (!o->sigma[i].tensor)
      HPMG_CHECK_ARG(o->sigma[i].value > 0 && isfinite(o->sigma[i].value),
                     "sigma of region '%s' must be positive and finite (got %g)", o->sigma[i].region, o->sigma[i].value);
  }
  HPMG_CHECK_ARG(o->num_p1_bc >= 0 && (o->num_p1_bc == 0 || o->p1_bc), "p1_bc: %d conditions but no array", o->num_p1_bc);
  for (int i = 0; i < o->num_p1_bc; i++) {
    const hpmg_p1_bc *b = &o->p1_bc[i];
    HPMG_CHECK_ARG(b->group && *b->group, "boundary condition %d: no group name", i);
    HPMG_CHECK_ARG(b->kind == HPMG_P1_BC_DIRICHLET || b->kind == HPMG_P1_BC_NEUMANN || b->kind == HPMG_P1_BC_ROBIN,
                   "boundary condition on '%s': unknown kind %d", b->group, (int)b->kind);
    HPMG_CHECK_ARG(isfinite(b->value), "boundary condition on '%s': value %g", b->group, b->value);
    HPMG_CHECK_ARG(b->robin_alpha >= 0 && isfinite(b->robin_alpha),
                   "Robin condition on '%s': alpha must be >= 0 and finite (got %g)", b->group, b->robin_alpha);
    HPMG_CHECK_ARG(b->kind == HPMG_P1_BC_ROBIN || b->robin_alpha == 0,
                   "boundary condition on '%s': alpha applies to Robin conditions only", b->group);
    HPMG_CHECK_ARG(o->rhs != HPMG_RHS_SINE || (b->value == 0 && !b->fn),
                   "boundary condition on '%s': with the manufactured right-hand side (sine) the boundary data come "
                   "from the exact solution; leave value and fn unset (or use --rhs one|vector-one)", b->group);
    for (int j = 0; j < i; j++)
      HPMG_CHECK_ARG(strcmp(o->p1_bc[j].group, b->group), "group '%s' has two boundary conditions", b->group);
  }
  HPMG_CHECK_ARG(o->project_rhs == 0 || o->project_rhs == 1, "project_rhs must be 0 or 1 (got %d)", o->project_rhs);
  return HPMG_SUCCESS;
}

/* the tag of group `name` (dimension gdim): its name, or a decimal tag that
 * some entity carries; -1 if neither */
static int group_tag(const hpmg_p1_mesh *m, int gdim, const char *name, const int *tags, int64_t ntags) {
  int t = hpmg_p1_mesh_group_tag(m, gdim, name);
  if (t >= 0) return t;
  char *end;
  long v = strtol(name, &end, 10);
  if (end == name || *end || v < 0 || v > 2147483647L) return -1;
  for (int64_t i = 0; i < ntags; i++)
    if (tags[i] == v) return (int)v;
  return -1;
}

static hpmg_error unknown_group(const hpmg_p1_mesh *m, const char *mesh, int gdim, const char *what, const char *name) {
  char list[512] = "";
  size_t len = 0;
  for (int g = 0; g < m->num_groups && len < sizeof list - 80; g++)
    if (m->groups[g].dim == gdim)
      len += (size_t)snprintf(list + len, sizeof list - len, "%s%s (%d)", len ? ", " : "", m->groups[g].name, m->groups[g].tag);
  return hpmg_error_set(HPMG_ERR_ARG, "%s '%s' is not a physical group of %s of mesh %s (groups: %s)", what, name,
                        gdim == m->dim ? "cells" : "boundary facets", mesh, len ? list : "none");
}

static hpmg_error spd_check(int dim, const double *t, const char *what) {
  /* leading principal minors of the symmetric tensor */
  double a, b, c, d, e, f, m1, m2, m3;
  if (dim == 3) {
    a = t[0], b = t[1], c = t[2], d = t[3], e = t[4], f = t[5]; /* xx yy zz xy xz yz */
    m1 = a, m2 = a * b - d * d, m3 = a * (b * c - f * f) - d * (d * c - f * e) + e * (d * f - b * e);
  } else {
    a = t[0], b = t[1], d = t[2];
    m1 = a, m2 = a * b - d * d, m3 = 1;
  }
  int finite = 1;
  for (int i = 0; i < (dim == 3 ? 6 : 3); i++) finite &= isfinite(t[i]) != 0;
  HPMG_CHECK_ARG(finite && m1 > 0 && m2 > 0 && m3 > 0, "sigma of %s is not symmetric positive definite", what);
  return HPMG_SUCCESS;
}

static hpmg_error setup_sigma(struct hpmg_p1_problem_s *p) {
  const hpmg_problem_options *o = &p->o;
  const hpmg_p1_mesh *m = &p->mesh;
  const int dim = m->dim, tc = dim == 3 ? 6 : 3;
  const int64_t nc = m->num_cells;
  if (o->sigma_cells) {
    HPMG_CHECK_ARG(o->sigma_cell_comps == 1 || o->sigma_cell_comps == tc,
                   "sigma_cell_comps must be 1 or %d for a %dD mesh (got %d)", tc, dim, o->sigma_cell_comps);
    p->comps = o->sigma_cell_comps;
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(nc * p->comps), &p->sigma));
    memcpy(p->sigma, o->sigma_cells, sizeof(double) * (size_t)(nc * p->comps));
    for (int64_t c = 0; c < nc; c++) {
      char what[64];
      snprintf(what, sizeof what, "cell %lld", (long long)c);
      if (p->comps == 1) HPMG_CHECK_ARG(p->sigma[c] > 0 && isfinite(p->sigma[c]), "sigma of cell %lld must be positive (got %g)",
                                        (long long)c, p->sigma[c]);
      else HPMG_CALL(spd_check(dim, p->sigma + c * tc, what));
    }
    return HPMG_SUCCESS;
  }
  int tensor = 0;
  for (int i = 0; i < o->num_sigma; i++) tensor |= o->sigma[i].tensor != NULL;
  p->comps = tensor ? tc : 1;
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(nc * p->comps), &p->sigma));
  for (int64_t c = 0; c < nc; c++)
    for (int q = 0; q < p->comps; q++) p->sigma[c * p->comps + q] = p->comps == 1 || q < dim ? 1.0 : 0.0;
  for (int i = 0; i < o->num_sigma; i++) {
    const hpmg_p1_sigma *s = &o->sigma[i];
    const int tag = group_tag(m, dim, s->region, m->cell_region, nc);
    if (tag < 0) return unknown_group(m, p->mesh_name, dim, "sigma region", s->region);
    double t[6] = {0};
    if (s->tensor) {
      memcpy(t, s->tensor, sizeof(double) * (size_t)tc);
      char what[96];
      snprintf(what, sizeof what, "region '%s'", s->region);
      HPMG_CALL(spd_check(dim, t, what));
    } else {
      for (int d = 0; d < dim; d++) t[d] = s->value;
      t[0] = s->value;
    }
    for (int64_t c = 0; c < nc; c++)
      if (m->cell_region[c] == tag)
        for (int q = 0; q < p->comps; q++) p->sigma[c * p->comps + q] = t[q];
  }
  return HPMG_SUCCESS;
}

/* the cell that has facet f as a face, and its node opposite to it */
static int64_t facet_cell(const struct hpmg_p1_problem_s *p, const int64_t *fv, int64_t *opp) {
  const hpmg_p1_mesh *m = &p->mesh;
  const int nv = m->dim + 1;
  for (int64_t q = p->pat.inc_ptr[fv[0]]; q < p->pat.inc_ptr[fv[0] + 1]; q++) {
    const int64_t c = p->pat.inc[q] / nv;
    const int64_t *cv = m->cell_nodes + c * nv;
    int found = 0;
    int64_t other = -1;
    for (int k = 0; k < nv; k++) {
      int in = 0;
      for (int j = 0; j < m->dim; j++) in |= cv[k] == fv[j];
      if (in) found++;
      else other = cv[k];
    }
    if (found == m->dim) {
      *opp = other;
      return c;
    }
  }
  return -1;
}

/* boundary data g at x on a facet with outward unit normal nrm in cell c */
static double bc_data(const struct hpmg_p1_problem_s *p, const hpmg_p1_bc *b, int64_t c, const double *x, const double *nrm) {
  if (p->o.rhs == HPMG_RHS_SINE) {
    if (b->kind == HPMG_P1_BC_DIRICHLET) return exact_u(p, x);
    double S[3][3], g[3] = {0}, flux = 0.0;
    cell_sigma(p, c, S);
    exact_grad(p, x, g);
    for (int a = 0; a < p->mesh.dim; a++)
      for (int d = 0; d < p->mesh.dim; d++) flux += nrm[a] * S[a][d] * g[d];
    return flux + (b->kind == HPMG_P1_BC_ROBIN ? b->robin_alpha * exact_u(p, x) : 0.0);
  }
  if (b->fn) {
    double xx[3] = {x[0], x[1], p->mesh.dim == 3 ? x[2] : 0.0};
    return b->fn(xx, b->user);
  }
  return b->value;
}

/* one Robin facet mass term: CSR position, facet order, value */
typedef struct {
  int64_t pos, seq;
  double w;
} rob_term;
static int rob_cmp(const void *a, const void *b) {
  const rob_term *x = a, *y = b;
  if (x->pos != y->pos) return x->pos < y->pos ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}
/* the terms grouped per CSR entry, each group in facet order: rows become
 * independent (threads, GPU) while every entry adds its terms in the order
 * of the serial facet loop */
static hpmg_error robin_lists(struct hpmg_p1_problem_s *p, rob_term *rt, int64_t nrt) {
  if (nrt) qsort(rt, (size_t)nrt, sizeof *rt, rob_cmp);
  int64_t nr = 0;
  for (int64_t t = 0; t < nrt; t++) nr += t == 0 || rt[t].pos != rt[t - 1].pos;
  HPMG_CALL(hpmg_malloc(sizeof(int64_t) * (size_t)(nr + 1), &p->rob_ptr));
  HPMG_CALL(hpmg_malloc(sizeof(int64_t) * (size_t)(nr > 0 ? nr : 1), &p->rob_pos));
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(nrt > 0 ? nrt : 1), &p->rob_w));
  int64_t r = 0;
  for (int64_t t = 0; t < nrt; t++) {
    if (t == 0 || rt[t].pos != rt[t - 1].pos) {
      p->rob_ptr[r] = t;
      p->rob_pos[r++] = rt[t].pos;
    }
    p->rob_w[t] = rt[t].w;
  }
  p->rob_ptr[nr] = nrt;
  p->nrob = nr;
  return HPMG_SUCCESS;
}

static hpmg_p1_bc_data bc_changes(const struct hpmg_p1_problem_s *p) {
  const hpmg_p1_bc_data bc = {p->pat.n, p->dir, p->gd, p->ndir, p->nrob, p->rob_ptr, p->rob_pos, p->rob_w};
  return bc;
}

/* the right-hand side's boundary part from the Dirichlet lift (either backend's) */
static void bc_rhs(const struct hpmg_p1_problem_s *p, const double *lift, double *rhs) {
  for (int64_t i = 0; i < p->pat.n; i++) rhs[i] = p->dir[i] ? p->gd[i] : p->rhs_load[i] - (p->ndir ? lift[i] : 0.0);
}

static hpmg_error setup_bc(struct hpmg_p1_problem_s *p) {
  const hpmg_problem_options *o = &p->o;
  const hpmg_p1_mesh *m = &p->mesh;
  const int dim = m->dim, nv = dim + 1;
  const int64_t n = m->num_nodes, nf = m->num_facets;
  int *fbc = NULL; /* facet -> condition index, -1: none (zero flux) */
  double *gd = NULL;
  rob_term *rt = NULL;
  int64_t nrt = 0;
  hpmg_error e = hpmg_calloc(sizeof(double) * (size_t)n, &p->rhs_load);
  if (!e) e = hpmg_calloc((size_t)n, &p->dir);
  if (!e) e = hpmg_calloc(sizeof(double) * (size_t)n, &p->gd);
  if (!e) e = hpmg_malloc(sizeof(int) * (size_t)(nf > 0 ? nf : 1), &fbc);
  if (e) goto done;
  gd = p->gd;
  for (int64_t f = 0; f < nf; f++) fbc[f] = -1;
  int robin = 0;
  for (int i = 0; i < o->num_p1_bc; i++) {
    const int tag = group_tag(m, dim - 1, o->p1_bc[i].group, m->facet_region, nf);
    if (tag < 0) {
      e = unknown_group(m, p->mesh_name, dim - 1, "boundary condition group", o->p1_bc[i].group);
      goto done;
    }
    for (int64_t f = 0; f < nf; f++)
      if (m->facet_region[f] == tag) fbc[f] = i;
    robin |= o->p1_bc[i].kind == HPMG_P1_BC_ROBIN && o->p1_bc[i].robin_alpha > 0;
  }
  if (robin) {
    int64_t nrf = 0;
    for (int64_t f = 0; f < nf; f++)
      nrf += fbc[f] >= 0 && o->p1_bc[fbc[f]].kind == HPMG_P1_BC_ROBIN && o->p1_bc[fbc[f]].robin_alpha > 0;
    e = hpmg_malloc(sizeof(rob_term) * (size_t)(nrf * dim * dim + 1), &rt);
    if (e) goto done;
  }
  /* facet terms; serial: facets are few (surface), and the order is fixed */
  for (int64_t f = 0; f < nf; f++) {
    if (fbc[f] < 0) continue;
    const hpmg_p1_bc *b = &o->p1_bc[fbc[f]];
    const int64_t *fv = m->facet_nodes + f * dim;
    int64_t opp;
    const int64_t c = facet_cell(p, fv, &opp);
    if (c < 0) {
      e = hpmg_error_set(HPMG_ERR_ARG, "boundary facet %lld (group '%s') is not a face of any cell", (long long)f, b->group);
      goto done;
    }
    double X[3][3], nrm[3] = {0}, meas;
    for (int k = 0; k < dim; k++)
      for (int d = 0; d < dim; d++) X[k][d] = m->x[d][fv[k]];
    if (dim == 3) {
      double a[3], bb[3];
      for (int d = 0; d < 3; d++) a[d] = X[1][d] - X[0][d], bb[d] = X[2][d] - X[0][d];
      nrm[0] = a[1] * bb[2] - a[2] * bb[1], nrm[1] = a[2] * bb[0] - a[0] * bb[2], nrm[2] = a[0] * bb[1] - a[1] * bb[0];
    } else {
      nrm[0] = X[1][1] - X[0][1], nrm[1] = -(X[1][0] - X[0][0]);
    }
    const double nn = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
    meas = dim == 3 ? 0.5 * nn : nn;
    double side = 0.0;
    for (int d = 0; d < dim; d++) side += (m->x[d][opp] - X[0][d]) * nrm[d];
    for (int d = 0; d < 3; d++) nrm[d] = (side > 0 ? -1.0 : 1.0) * nrm[d] / nn;
    if (b->kind == HPMG_P1_BC_DIRICHLET) {
      for (int k = 0; k < dim; k++)
        if (!p->dir[fv[k]]) {
          p->dir[fv[k]] = 1;
          gd[fv[k]] = bc_data(p, b, c, X[k], nrm);
        }
      continue;
    }
    /* (phi_k, g) on the facet: edge midpoints (3D, degree 2) or 2-point Gauss (2D) */
    if (dim == 3) {
      for (int q = 0; q < 3; q++) {
        const int a = q, bq = (q + 1) % 3;
        double xm[3];
        for (int d = 0; d < 3; d++) xm[d] = 0.5 * (X[a][d] + X[bq][d]);
        const double g = bc_data(p, b, c, xm, nrm) * meas / 3.0 * 0.5;
        p->rhs_load[fv[a]] += g;
        p->rhs_load[fv[bq]] += g;
      }
    } else {
      const double t[2] = {0.5 - 0.5 / sqrt(3.0), 0.5 + 0.5 / sqrt(3.0)};
      for (int q = 0; q < 2; q++) {
        double xq[3] = {0};
        for (int d = 0; d < 2; d++) xq[d] = (1 - t[q]) * X[0][d] + t[q] * X[1][d];
        const double g = bc_data(p, b, c, xq, nrm) * meas * 0.5;
        p->rhs_load[fv[0]] += g * (1 - t[q]);
        p->rhs_load[fv[1]] += g * t[q];
      }
    }
    if (b->kind == HPMG_P1_BC_ROBIN && b->robin_alpha > 0) { /* alpha (phi_k, phi_l) on the facet */
      const double w = b->robin_alpha * meas / (dim == 3 ? 12.0 : 6.0);
      for (int k = 0; k < dim; k++)
        for (int l = 0; l < dim; l++, nrt++) {
          rt[nrt].pos = hpmg_p1_find(&p->pat, fv[k], fv[l]);
          rt[nrt].seq = nrt;
          rt[nrt].w = w * (k == l ? 2.0 : 1.0);
        }
    }
  }
  e = robin_lists(p, rt, nrt);
  if (e) goto done;
  int64_t ndir = 0;
  for (int64_t i = 0; i < n; i++) ndir += p->dir[i];
  p->ndir = ndir;
  p->singular = ndir == 0 && o->lambda == 0 && !robin;
  (void)nv;
done:
  hpmg_free(&fbc);
  hpmg_free(&rt);
  return e;
}

void hpmg_p1_problem_destroy(hpmg_p1_problem *pp) {
  struct hpmg_p1_problem_s *p = *pp;
  if (!p) return;
  hpmg_p1_mesh_destroy(&p->mesh);
  hpmg_p1_pattern_destroy(&p->pat);
  hpmg_free(&p->sigma);
  hpmg_free(&p->val);
  hpmg_free(&p->dir);
  hpmg_free(&p->gd);
  hpmg_free(&p->rhs_load);
  hpmg_free(&p->rob_ptr);
  hpmg_free(&p->rob_pos);
  hpmg_free(&p->rob_w);
  hpmg_free(&p->rhs_bc);
  free(p);
  *pp = NULL;
}

static int is_builtin(const char *mesh) { return !strncmp(mesh, "regular:", 8) || !strncmp(mesh, "irregular:", 10); }

double hpmg_p1_memory_estimate(const hpmg_problem_options *po) {
  if (!po->mesh || !is_builtin(po->mesh)) return 0.0;
  const char *c = strchr(po->mesh, ':') + 1;
  const int L = atoi(c);
  if (L < 0 || L > 20) return 0.0;
  const double n = 8.0 * ldexp(1.0, L), nodes = pow(n + 1, po->dim);
  const double cells = po->dim == 3 ? 6 * n * n * n : 2 * n * n, nv = po->dim + 1;
  const double nnz = nodes * (po->dim == 3 ? 15.0 : 7.0);
  /* mesh, pattern (incidence, slots), values and the assembly scratch, CG vectors */
  return nodes * 8 * po->dim + cells * (8 * nv + 4) + cells * nv * (8 + 2 * nv) + nnz * 12 + cells * nv * nv * 8 +
         nodes * 8 * 10;
}

hpmg_error hpmg_p1_problem_create(const hpmg_problem_options *o, hpmg_p1_problem *out) {
  *out = NULL;
  HPMG_CALL(hpmg_p1_problem_check(o));
  const double t0 = hpmg_wtime();
  struct hpmg_p1_problem_s *p = calloc(1, sizeof *p);
  if (!p) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the P1 problem");
  p->o = *o; /* sigma and the conditions are read from the caller's arrays during creation only */
  snprintf(p->mesh_name, sizeof p->mesh_name, "%s", o->mesh);
  hpmg_error e = is_builtin(o->mesh) ? hpmg_p1_mesh_builtin(o->mesh, o->dim, &p->mesh) : hpmg_p1_mesh_read(o->mesh, &p->mesh);
  if (!e) e = hpmg_p1_mesh_renumber(&p->mesh, NULL);
  if (!e) {
    p->o.dim = p->mesh.dim;
    e = setup_sigma(p);
  }
  if (!e) {
    const double ts = hpmg_wtime();
    e = hpmg_p1_pattern_build(&p->mesh, &p->pat);
    p->t_symbolic = hpmg_wtime() - ts;
  }
  if (!e) {
    const hpmg_p1_mesh *m = &p->mesh;
    for (int d = 0; d < m->dim; d++) {
      double lo = INFINITY, hi = -INFINITY;
      for (int64_t i = 0; i < m->num_nodes; i++) {
        lo = fmin(lo, m->x[d][i]);
        hi = fmax(hi, m->x[d][i]);
      }
      p->lo[d] = lo;
      p->len[d] = hi - lo;
      if (!(hi > lo)) e = hpmg_error_set(HPMG_ERR_ARG, "mesh %s is flat in direction %d", o->mesh, d);
    }
    double vol = 0.0, loc[16];
    const hpmg_p1_coef one = {NULL, 1, 0.0};
    for (int64_t c = 0; c < m->num_cells && !e; c++) {
      const double v = hpmg_p1_local_matrix(m, &one, c, loc);
      if (!(v > 0)) e = hpmg_error_set(HPMG_ERR_ARG, "mesh %s: cell %lld has volume %g (not positive)", o->mesh, (long long)c, v);
      vol += v;
    }
    p->volume = vol;
  }
  if (!e) e = setup_bc(p);
  if (e) {
    hpmg_p1_problem_destroy(&p);
    return e;
  }
  p->o.p1_bc = NULL, p->o.num_p1_bc = 0, p->o.sigma = NULL, p->o.num_sigma = 0, p->o.sigma_cells = NULL;
  p->o.mesh = p->mesh_name;
  p->t_setup = hpmg_wtime() - t0;
  *out = p;
  return HPMG_SUCCESS;
}

int64_t hpmg_p1_problem_num_dofs(hpmg_p1_problem p) { return p->mesh.num_nodes; }
int hpmg_p1_problem_dim(hpmg_p1_problem p) { return p->mesh.dim; }

/* the host numeric phase and the boundary conditions, once */
static hpmg_error host_system(struct hpmg_p1_problem_s *p) {
  if (p->val) return HPMG_SUCCESS;
  double *val = NULL, *scratch = NULL, *lift = NULL;
  const int64_t n = p->pat.n;
  hpmg_error e = hpmg_malloc(sizeof(double) * (size_t)p->pat.nnz, &val);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)(p->pat.ncells * p->pat.nv * (p->pat.nv + 1) / 2), &scratch);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)n, &lift);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)n, &p->rhs_bc);
  if (!e) {
    const double tn = hpmg_wtime();
    const hpmg_p1_coef cf = {p->sigma, p->comps, p->o.lambda};
    hpmg_p1_assemble(&p->mesh, &p->pat, &cf, scratch, val);
    const hpmg_p1_bc_data bc = bc_changes(p);
    hpmg_p1_apply_bc(&p->pat, &bc, val, lift);
    p->t_numeric = hpmg_wtime() - tn;
    bc_rhs(p, lift, p->rhs_bc);
    p->val = val;
    val = NULL;
  } else hpmg_free(&p->rhs_bc);
  hpmg_free(&val);
  hpmg_free(&scratch);
  hpmg_free(&lift);
  return e;
}

hpmg_error hpmg_p1_problem_matrix(hpmg_p1_problem p, int64_t *n, int64_t *nnz, const int64_t **rowptr, const int32_t **col,
                                  const double **val) {
  HPMG_CALL(host_system(p));
  *n = p->pat.n;
  *nnz = p->pat.nnz;
  *rowptr = p->pat.rowptr;
  *col = p->pat.col;
  *val = p->val;
  return HPMG_SUCCESS;
}
const hpmg_p1_mesh *hpmg_p1_problem_mesh(hpmg_p1_problem p) { return &p->mesh; }

/* cell-wise (phi_k, f) into loc; f from the function, or the manufactured one (fn NULL) */
static hpmg_error local_loads(const struct hpmg_p1_problem_s *p, hpmg_function f, void *user, double *loc) {
  const hpmg_p1_mesh *m = &p->mesh;
  const int dim = m->dim, nv = dim + 1;
  const hpmg_p1_coef one = {NULL, 1, 0.0};
  int64_t bad = 0;
#pragma omp parallel for schedule(static) reduction(+ : bad)
  for (int64_t c = 0; c < m->num_cells; c++) {
    double tmp[16], S[3][3];
    const double meas = hpmg_p1_local_matrix(m, &one, c, tmp);
    if (!f) cell_sigma(p, c, S);
    const int64_t *v = m->cell_nodes + c * nv;
    for (int k = 0; k < nv; k++) loc[c * nv + k] = 0.0;
    for (int q = 0; q < nv; q++) {
      double lam[4], x[3] = {0, 0, 0};
      quad_point(dim, q, lam);
      for (int k = 0; k < nv; k++)
        for (int d = 0; d < dim; d++) x[d] += lam[k] * m->x[d][v[k]];
      const double fv = f ? f(x, user) : exact_f(p, S, x);
      bad += !isfinite(fv);
      for (int k = 0; k < nv; k++) loc[c * nv + k] += meas / nv * fv * lam[k];
    }
  }
  if (bad) return hpmg_error_set(HPMG_ERR_NUMERIC, "the right-hand side function returned %lld non-finite values", (long long)bad);
  return HPMG_SUCCESS;
}

hpmg_error hpmg_p1_problem_load_vector(hpmg_p1_problem p, hpmg_function f, void *user, double *b) {
  double *loc = NULL;
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(p->pat.ncells * p->pat.nv), &loc));
  hpmg_error e = local_loads(p, f, user, loc);
  if (!e) hpmg_p1_gather_vector(&p->pat, loc, b);
  hpmg_free(&loc);
  return e;
}

/* the built-in b (without the boundary terms) */
static hpmg_error builtin_rhs(hpmg_p1_problem p, double *b) {
  const int64_t n = p->mesh.num_nodes;
  if (p->o.rhs == HPMG_RHS_VECTOR_ONE) {
    for (int64_t i = 0; i < n; i++) b[i] = 1.0;
    return HPMG_SUCCESS;
  }
  if (p->o.rhs == HPMG_RHS_ONE) {
    double *loc = NULL;
    const int nv = p->pat.nv;
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(p->pat.ncells * nv), &loc));
    const hpmg_p1_coef one = {NULL, 1, 0.0};
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < p->pat.ncells; c++) {
      double tmp[16];
      const double meas = hpmg_p1_local_matrix(&p->mesh, &one, c, tmp);
      for (int k = 0; k < nv; k++) loc[c * nv + k] = meas / nv;
    }
    hpmg_p1_gather_vector(&p->pat, loc, b);
    hpmg_free(&loc);
    return HPMG_SUCCESS;
  }
  return hpmg_p1_problem_load_vector(p, NULL, NULL, b);
}

hpmg_error hpmg_p1_problem_error(hpmg_p1_problem p, const double *x, double *l2, double *maxerr) {
  const hpmg_p1_mesh *m = &p->mesh;
  const int dim = m->dim, nv = dim + 1;
  double mx = 0.0;
#pragma omp parallel for schedule(static) reduction(max : mx)
  for (int64_t i = 0; i < m->num_nodes; i++) {
    const double xi[3] = {m->x[0][i], m->x[1][i], dim == 3 ? m->x[2][i] : 0.0};
    mx = fmax(mx, fabs(x[i] - exact_u(p, xi)));
  }
  /* singular problems: the solution is defined up to a constant; compare
   * modulo the constant (the error's mean removed) */
  const hpmg_p1_coef one = {NULL, 1, 0.0};
  double s2 = 0.0, s1 = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : s1, s2)
  for (int64_t c = 0; c < m->num_cells; c++) {
    double tmp[16];
    const double meas = hpmg_p1_local_matrix(m, &one, c, tmp);
    const int64_t *v = m->cell_nodes + c * nv;
    for (int q = 0; q < nv; q++) {
      double lam[4], xq[3] = {0, 0, 0}, uh = 0.0;
      quad_point(dim, q, lam);
      for (int k = 0; k < nv; k++) {
        for (int d = 0; d < dim; d++) xq[d] += lam[k] * m->x[d][v[k]];
        uh += lam[k] * x[v[k]];
      }
      const double e = uh - exact_u(p, xq);
      s1 += meas / nv * e;
      s2 += meas / nv * e * e;
    }
  }
  if (p->singular) {
    const double mean = s1 / p->volume;
    s2 -= mean * mean * p->volume; /* integral of (e - mean)^2 */
    mx = 0.0;
#pragma omp parallel for schedule(static) reduction(max : mx)
    for (int64_t i = 0; i < m->num_nodes; i++) {
      const double xi[3] = {m->x[0][i], m->x[1][i], dim == 3 ? m->x[2][i] : 0.0};
      mx = fmax(mx, fabs(x[i] - exact_u(p, xi) - mean));
    }
  }
  if (l2) *l2 = sqrt(fmax(s2, 0.0));
  if (maxerr) *maxerr = mx;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_p1_problem_write_vtu(hpmg_p1_problem p, const double *x, const char *path) {
  return hpmg_p1_mesh_write_vtu(&p->mesh, x, "u", path);
}

/* ------------------------------------------------------------- solver */

struct hpmg_p1_solver_s {
  struct hpmg_p1_problem_s *p;
  hpmg_solver_options o;
  const hpmg_backend *be;
  double *invdiag;        /* host Jacobi */
  hpmg_p1_gpu gpu;        /* CUDA: the system assembled and solved on the device */
  const double *rhs_bc;   /* the boundary part of b: the problem's (host) or rhs_dev */
  double *rhs_dev;        /* CUDA: from the device's Dirichlet lift */
  double t_numeric;
  hpmg_vec b, x, w[4], ones;
  double *hist;
  int nhist, cap;
  hpmg_stats st;
};

typedef struct {
  const hpmg_p1_pattern *pat;
  const double *val, *invdiag;
} host_csr;

static hpmg_error host_apply(void *ctx, const hpmg_vec *x, hpmg_vec *y) {
  const host_csr *A = ctx;
  hpmg_p1_spmv(A->pat, A->val, x->data, y->data);
  return HPMG_SUCCESS;
}
static hpmg_error host_jacobi(void *ctx, const hpmg_vec *r, hpmg_vec *z) {
  const host_csr *A = ctx;
  const double *rr = r->data, *d = A->invdiag;
  double *zz = z->data;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < r->n; i++) zz[i] = d[i] * rr[i];
  return HPMG_SUCCESS;
}

/* removes the constant: v -= mean(v) (ones is the vector of ones) */
static hpmg_error project_constant(void *ctx, hpmg_vec *v) {
  struct hpmg_p1_solver_s *s = ctx;
  double sum;
  HPMG_CALL(hpmg_v_dot(v, &s->ones, &sum));
  return hpmg_v_axpy(-sum / (double)v->n, &s->ones, v);
}

static void monitor(void *ctx, int it, double rn, double r0) {
  struct hpmg_p1_solver_s *s = ctx;
  hpmg_history_record(s->hist, &s->nhist, s->cap, it, rn, r0, s->o.verbose);
}

hpmg_error hpmg_p1_options_resolve(hpmg_solver_options *so) {
  HPMG_CHECK_ARG(so->solver == HPMG_SOLVER_AUTO || so->solver == HPMG_SOLVER_CG,
                 "P1 problems are solved by Jacobi-preconditioned CG until the algebraic multigrid exists: use "
                 "--solver cg (or auto)");
  HPMG_CHECK_ARG(so->smoother == HPMG_SMOOTHER_AUTO || so->smoother == HPMG_SMOOTHER_JACOBI,
                 "P1 problems: the preconditioner is point Jacobi (--smoother jacobi or auto)");
  HPMG_CHECK_ARG(so->precision == HPMG_PREC_DOUBLE, "P1 problems are solved in double precision");
  HPMG_CHECK_ARG(so->tol > 0 && so->tol < 1, "--tol must be in (0,1) (got %g)", so->tol);
  HPMG_CHECK_ARG(so->maxit >= 1 && so->maxit <= 100000000, "--maxit must be in 1..1e8 (got %d)", so->maxit);
  HPMG_CHECK_ARG(so->threads >= 0 && so->threads <= 4096, "--threads must be in 0..4096 (got %d)", so->threads);
  HPMG_CHECK_ARG(so->device == HPMG_DEVICE_CPU || so->device == HPMG_DEVICE_CUDA, "unknown device %d", (int)so->device);
  so->solver = HPMG_SOLVER_CG;
  so->smoother = HPMG_SMOOTHER_JACOBI;
  return HPMG_SUCCESS;
}

void hpmg_p1_solver_destroy(hpmg_p1_solver *sp) {
  struct hpmg_p1_solver_s *s = *sp;
  if (!s) return;
  hpmg_vec_destroy(&s->b);
  hpmg_vec_destroy(&s->x);
  hpmg_vec_destroy(&s->ones);
  for (int i = 0; i < 4; i++) hpmg_vec_destroy(&s->w[i]);
#ifdef HPMG_HAVE_CUDA
  hpmg_p1_gpu_destroy(&s->gpu);
#endif
  hpmg_free(&s->invdiag);
  hpmg_free(&s->rhs_dev);
  hpmg_free(&s->hist);
  free(s);
  *sp = NULL;
}

hpmg_error hpmg_p1_solver_create(hpmg_p1_problem p, const hpmg_solver_options *so, hpmg_p1_solver *out) {
  *out = NULL;
  hpmg_solver_options o = *so;
  HPMG_CALL(hpmg_p1_options_resolve(&o));
  const double t0 = hpmg_wtime();
  const hpmg_backend *be = hpmg_backend_host();
  if (o.device == HPMG_DEVICE_CUDA) HPMG_CALL(hpmg_backend_cuda(&be));
  if (o.threads > 0) omp_set_num_threads(o.threads);
  struct hpmg_p1_solver_s *s = calloc(1, sizeof *s);
  if (!s) return hpmg_error_set(HPMG_ERR_MEMORY, "cannot allocate the P1 solver");
  s->p = p;
  s->o = o;
  s->be = be;
  s->cap = o.maxit + 2;
  const int64_t n = p->pat.n;
  hpmg_error e = hpmg_malloc(sizeof(double) * (size_t)s->cap, &s->hist);
  if (o.device == HPMG_DEVICE_CUDA) {
#ifdef HPMG_HAVE_CUDA
    /* numeric phase and boundary conditions on the device; only the lift
     * (n doubles) comes back, for the host-built right-hand side */
    if (!e) e = hpmg_p1_gpu_create(&p->mesh, &p->pat, 1, &s->gpu);
    const hpmg_p1_bc_data bc = bc_changes(p);
    if (!e) e = hpmg_p1_gpu_set_bc(s->gpu, &bc);
    const hpmg_p1_coef cf = {p->sigma, p->comps, p->o.lambda};
    if (!e) e = hpmg_p1_gpu_assemble(s->gpu, &cf, &s->t_numeric);
    if (!e) e = hpmg_malloc(sizeof(double) * (size_t)n, &s->rhs_dev);
    if (!e && p->ndir) e = hpmg_p1_gpu_get_lift(s->gpu, s->rhs_dev);
    if (!e) bc_rhs(p, s->rhs_dev, s->rhs_dev); /* in place: row i reads lift[i] only */
    s->rhs_bc = s->rhs_dev;
#endif
  } else {
    if (!e) e = host_system(p);
    s->t_numeric = p->t_numeric;
    s->rhs_bc = p->rhs_bc;
    if (!e) e = hpmg_malloc(sizeof(double) * (size_t)n, &s->invdiag);
  }
  if (!e && !s->gpu) {
    for (int64_t i = 0; i < n; i++) {
      const double d = p->val[p->pat.diag[i]];
      if (!(d > 0)) {
        e = hpmg_error_set(HPMG_ERR_NUMERIC, "P1 matrix: diagonal entry %lld is %g (not positive)", (long long)i, d);
        break;
      }
      s->invdiag[i] = 1.0 / d;
    }
  }
  if (!e) e = hpmg_vec_create(be, HPMG_REAL_DOUBLE, n, &s->b);
  if (!e) e = hpmg_vec_create(be, HPMG_REAL_DOUBLE, n, &s->x);
  for (int i = 0; i < 4 && !e; i++) e = hpmg_vec_create(be, HPMG_REAL_DOUBLE, n, &s->w[i]);
  if (!e && p->singular) {
    e = hpmg_vec_create(be, HPMG_REAL_DOUBLE, n, &s->ones);
    double *h = NULL;
    if (!e) e = hpmg_malloc(sizeof(double) * (size_t)n, &h);
    if (!e) {
      for (int64_t i = 0; i < n; i++) h[i] = 1.0;
      e = be->to_device(h, s->ones.data, sizeof(double) * (size_t)n);
    }
    hpmg_free(&h);
  }
  if (e) {
    hpmg_p1_solver_destroy(&s);
    return e;
  }
  s->st.dofs = n;
  s->st.levels = 1;
  s->st.nnz = p->pat.nnz;
  s->st.cells = p->pat.ncells;
  s->st.t_symbolic = p->t_symbolic;
  s->st.t_numeric = s->t_numeric;
  s->st.t_setup = p->t_setup + (hpmg_wtime() - t0);
  s->st.bytes_host = hpmg_p1_memory_estimate(&p->o);
  *out = s;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_p1_solver_solve(hpmg_p1_solver s, const double *b_in, double *x) {
  struct hpmg_p1_problem_s *p = s->p;
  const int64_t n = p->pat.n;
  const double t0 = hpmg_wtime();
  double *b = NULL;
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)n, &b));
  hpmg_error e = HPMG_SUCCESS;
  if (b_in) {
    const int64_t bad = hpmg_vec_count_nonfinite(HPMG_REAL_DOUBLE, n, b_in);
    if (bad) e = hpmg_error_set(HPMG_ERR_NUMERIC, "%lld non-finite entries (NaN/Inf) in the right-hand side", (long long)bad);
    else memcpy(b, b_in, sizeof(double) * (size_t)n);
  } else e = builtin_rhs(p, b);
  if (!e && hpmg_vec_count_nonfinite(HPMG_REAL_DOUBLE, n, x))
    e = hpmg_error_set(HPMG_ERR_NUMERIC, "non-finite entries (NaN/Inf) in the initial guess");
  if (e) {
    hpmg_free(&b);
    return e;
  }
  for (int64_t i = 0; i < n; i++) b[i] = p->dir[i] ? s->rhs_bc[i] : b[i] + s->rhs_bc[i];
  s->st.compat_defect = 0.0;
  if (p->singular) { /* b -= mean(b): the component along the null space (constants) */
    double sum = 0.0, nb = 0.0;
    for (int64_t i = 0; i < n; i++) sum += b[i], nb += b[i] * b[i];
    const double mean = sum / (double)n;
    s->st.compat_defect = nb > 0 ? fabs(mean) * sqrt((double)n) / sqrt(nb) : 0.0;
    if (!p->o.project_rhs && s->st.compat_defect > 1e-12) {
      hpmg_free(&b);
      return hpmg_error_set(HPMG_ERR_ARG,
                            "the problem is singular (zero Neumann, lambda = 0) and the right-hand side is not "
                            "compatible (relative defect %.3e); set project_rhs to project it",
                            s->st.compat_defect);
    }
    for (int64_t i = 0; i < n; i++) b[i] -= mean;
  }
  e = s->be->to_device(b, s->b.data, sizeof(double) * (size_t)n);
  if (!e) e = s->be->to_device(x, s->x.data, sizeof(double) * (size_t)n);
  hpmg_free(&b);
  if (e) return e;
  host_csr hc = {&p->pat, p->val, s->invdiag};
  hpmg_linop A = {&hc, host_apply, NULL, NULL}, M = {&hc, host_jacobi, NULL, NULL};
#ifdef HPMG_HAVE_CUDA
  if (s->gpu) {
    A = hpmg_p1_gpu_linop(s->gpu);
    M = hpmg_p1_gpu_jacobi(s->gpu);
  }
#endif
  hpmg_krylov_params prm = {0};
  prm.rtol = s->o.tol;
  prm.maxit = s->o.maxit;
  prm.x0_zero = 0;
  prm.mon = monitor;
  prm.mctx = s;
  if (p->singular) {
    prm.project = project_constant;
    prm.pctx = s;
  }
  hpmg_krylov_info info = {0};
  s->nhist = 0;
  const double tk = hpmg_wtime();
  e = hpmg_pcg(&A, &M, &s->b, &s->x, s->w, 0, &prm, &info);
  if (!e && p->singular) e = project_constant(s, &s->x);
  if (!e) e = s->be->sync();
  s->st.t_krylov = hpmg_wtime() - tk;
  if (!e) e = s->be->to_host(s->x.data, x, sizeof(double) * (size_t)n);
  hpmg_krylov_stats(&info, &s->st);
  s->st.t_solve = hpmg_wtime() - t0;
  if (e) return e;
  if (!info.converged) return hpmg_not_converged(&info, info.r0 > 0 ? info.rnorm / info.r0 : 0.0, s->o.tol);
  return HPMG_SUCCESS;
}

void hpmg_p1_solver_get_stats(hpmg_p1_solver s, hpmg_stats *st) { *st = s->st; }
int hpmg_p1_solver_history(hpmg_p1_solver s, const double **h) {
  *h = s->hist;
  return s->nhist;
}
void hpmg_p1_solver_set_verbose(hpmg_p1_solver s, int verbose) { s->o.verbose = verbose; }

hpmg_error hpmg_p1_solver_system(hpmg_p1_solver s, double *val, double *rhs_bc) {
  const struct hpmg_p1_problem_s *p = s->p;
#ifdef HPMG_HAVE_CUDA
  if (s->gpu) HPMG_CALL(hpmg_p1_gpu_get_values(s->gpu, val));
#endif
  if (!s->gpu) memcpy(val, p->val, sizeof(double) * (size_t)p->pat.nnz);
  memcpy(rhs_bc, s->rhs_bc, sizeof(double) * (size_t)p->pat.n);
  return HPMG_SUCCESS;
}
