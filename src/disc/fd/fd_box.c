/* Finite differences on a general box (fd_box.h, docs/bc.md). */
#include "core/par.h"
#include "disc/fd/fd_box.h"
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "disc/fd/fd_box_cuda.h"
#include "io/vtu.h"
#include "la/krylov.h"
#include "mg/mg.h"
#include "mg/solve.h"

/* coarsest level: at most this many unknowns (dense Cholesky) */
#define FDB_COARSE_MAX 512

int fd_box_needed(const hpmg_problem_options *o) {
  int need = o->fd_layout != HPMG_FD_VERTEX || o->lambda != 0;
  for (int d = 0; d < 3; d++) need |= o->cells[d] != 0 || o->spacing[d].kind != HPMG_SPACING_UNIFORM;
  for (int d = 0; d < o->dim; d++) need |= o->box[d] != 1.0;
  for (int f = 0; f < 6; f++)
    need |= o->bc[f].kind != HPMG_BC_DIRICHLET || o->bc[f].value != 0 || o->bc[f].fn || o->bc[f].values;
  return need;
}

/* ---------------------------------------------------------- 1D data */

static int64_t first_of(hpmg_fd_layout lay, hpmg_bc_kind lo) { return lay == HPMG_FD_VERTEX && lo == HPMG_BC_DIRICHLET; }

static int64_t n_of(hpmg_fd_layout lay, int64_t cells, hpmg_bc_kind lo, hpmg_bc_kind hi) {
  if (lay == HPMG_FD_CELL || lo == HPMG_BC_PERIODIC) return cells;
  return cells + 1 - (lo == HPMG_BC_DIRICHLET) - (hi == HPMG_BC_DIRICHLET);
}

/* the contract of box.h for one direction: nodes x[0..cells] */
static hpmg_error build_1d(const double *x, int64_t cells, hpmg_bc_kind lo, hpmg_bc_kind hi, hpmg_fd_layout lay,
                           int64_t *nout, double **w, double **kd, double **klo, double **khi) {
  const int64_t n = n_of(lay, cells, lo, hi), f0 = first_of(lay, lo);
  const int per = lo == HPMG_BC_PERIODIC;
  *nout = n;
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)n, w));
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)n, kd));
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)n, klo));
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)n, khi));
  const double L = x[cells] - x[0];
  for (int64_t u = 0; u < n; u++) {
    double ww = 0, d = 0, a = 0, c = 0;
    if (lay == HPMG_FD_VERTEX) {
      const int64_t p = u + f0;
      if (per) {
        const double hl = x[p == 0 ? cells : p] - x[p == 0 ? cells - 1 : p - 1], hr = x[p + 1] - x[p];
        ww = 0.5 * (hl + hr);
        a = 1 / hl;
        c = 1 / hr;
        d = a + c;
      } else {
        if (p > 0) {
          const double hl = x[p] - x[p - 1];
          ww += 0.5 * hl;
          d += 1 / hl;
          if (p - 1 >= f0) a = 1 / hl; /* else a Dirichlet node: its value goes to the rhs */
        }
        if (p < cells) {
          const double hr = x[p + 1] - x[p];
          ww += 0.5 * hr;
          d += 1 / hr;
          if (p + 1 <= cells - (hi == HPMG_BC_DIRICHLET)) c = 1 / hr;
        }
      }
    } else {
      const double cu = 0.5 * (x[u] + x[u + 1]);
      ww = x[u + 1] - x[u];
      if (u > 0) a = 1 / (cu - 0.5 * (x[u - 1] + x[u]));
      else if (per) a = 1 / (cu + L - 0.5 * (x[cells - 1] + x[cells]));
      else if (lo == HPMG_BC_DIRICHLET) d += 2 / ww;
      if (u < n - 1) c = 1 / (0.5 * (x[u + 1] + x[u + 2]) - cu);
      else if (per) c = 1 / (0.5 * (x[0] + x[1]) + L - cu);
      else if (hi == HPMG_BC_DIRICHLET) d += 2 / ww;
      d += a + c;
    }
    (*w)[u] = ww;
    (*kd)[u] = d;
    (*klo)[u] = a;
    (*khi)[u] = c;
  }
  return HPMG_SUCCESS;
}

static void geom_free(fdb_geom *g) {
  for (int d = 0; d < 3; d++) {
    hpmg_free(&g->w[d]);
    hpmg_free(&g->kd[d]);
    hpmg_free(&g->klo[d]);
    hpmg_free(&g->khi[d]);
  }
}
void fd_box_geom_free(fdb_geom *g) { geom_free(g); }

/* z of a 2D problem: one unknown, w = 1, K = 0 */
static hpmg_error unit_dir(fdb_geom *g, int d) {
  g->n[d] = 1;
  HPMG_CALL(hpmg_calloc(sizeof(double), &g->w[d]));
  HPMG_CALL(hpmg_calloc(sizeof(double), &g->kd[d]));
  HPMG_CALL(hpmg_calloc(sizeof(double), &g->klo[d]));
  HPMG_CALL(hpmg_calloc(sizeof(double), &g->khi[d]));
  g->w[d][0] = 1;
  return HPMG_SUCCESS;
}

static hpmg_error geom_build(int dim, double *const x[3], const int64_t cells[3], const hpmg_bc_kind bc[6],
                             hpmg_fd_layout lay, double lambda, fdb_geom *g) {
  memset(g, 0, sizeof *g);
  g->dim = dim;
  g->lambda = lambda;
  hpmg_error e = HPMG_SUCCESS;
  for (int d = 0; d < 3 && !e; d++)
    e = d < dim ? build_1d(x[d], cells[d], bc[2 * d], bc[2 * d + 1], lay, &g->n[d], &g->w[d], &g->kd[d], &g->klo[d],
                           &g->khi[d])
                : unit_dir(g, d);
  if (e) {
    geom_free(g);
    return e;
  }
  g->N = g->n[0] * g->n[1] * g->n[2];
  return HPMG_SUCCESS;
}

int fd_box_line_table(const fdb_geom *g, const int per[3], int dl, double *tab) {
  const int da = dl == 0 ? 1 : 0, db = dl == 2 ? 1 : 2;
  if (per[dl] && g->n[dl] >= 2) return 0; /* cyclic lines: Sherman-Morrison per line */
  const int oth[2] = {da, db};
  for (int q = 0; q < 2; q++) {
    const int d = oth[q];
    for (int64_t i = 1; i < g->n[d]; i++) /* equal up to the rounding of the node coordinates' differences */
      if (fabs(g->w[d][i] - g->w[d][0]) > 1e-12 * fabs(g->w[d][0]) ||
          fabs(g->kd[d][i] - g->kd[d][0]) > 1e-12 * fabs(g->kd[d][0]))
        return 0;
  }
  const int64_t m = g->n[dl];
  const double wo = g->w[da][0] * g->w[db][0];
  double pc = 0;
  for (int64_t t = 0; t < m; t++) { /* the GPU sweep's recursion (cuda/fd_box.cu, k_line) on the line through 0 */
    const double dg = fdb_point_diag(g, dl == 0 ? t : 0, dl == 1 ? t : 0, dl == 2 ? t : 0);
    const double lw = t > 0 ? -g->klo[dl][t] * wo : 0.0, h = t < m - 1 ? -g->khi[dl][t] * wo : 0.0;
    const double den = dg - lw * pc;
    pc = h / den;
    tab[t] = pc;
    tab[m + t] = lw;
    tab[2 * m + t] = 1.0 / den;
  }
  return 1;
}

hpmg_error fd_box_geom(const hpmg_box *b, double lambda, fdb_geom *g) {
  return geom_build(b->dim, b->x, b->cells, b->bc, b->layout, lambda, g);
}

static void points_1d(const double *x, int64_t cells, hpmg_bc_kind lo, hpmg_bc_kind hi, hpmg_fd_layout lay,
                      double *p) {
  const int64_t n = n_of(lay, cells, lo, hi), f0 = first_of(lay, lo);
  for (int64_t u = 0; u < n; u++) p[u] = lay == HPMG_FD_CELL ? 0.5 * (x[u] + x[u + 1]) : x[u + f0];
}

hpmg_error fd_box_points(const hpmg_box *b, int d, double **p) {
  const int64_t n = hpmg_box_n(b, d);
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)n, p));
  if (d >= b->dim) (*p)[0] = 0;
  else points_1d(b->x[d], b->cells[d], b->bc[2 * d], b->bc[2 * d + 1], b->layout, *p);
  return HPMG_SUCCESS;
}

/* ------------------------------------------------ the manufactured solution */

/* per direction g, g', g'' by the BC pair (docs/bc.md) */
static void manu_1d(hpmg_bc_kind lo, hpmg_bc_kind hi, double L, double x, double *g, double *g1, double *g2) {
  const double s = x / L, pi = M_PI;
  double a, a1, a2; /* in s */
  if (lo == HPMG_BC_PERIODIC) {
    a = cos(2 * pi * s) + sin(2 * pi * s);
    a1 = 2 * pi * (cos(2 * pi * s) - sin(2 * pi * s));
    a2 = -4 * pi * pi * a;
  } else {
    const double q = lo == hi ? pi : 0.5 * pi; /* DD/NN: half wave; DN/ND: quarter wave */
    if (lo == HPMG_BC_DIRICHLET) {
      a = sin(q * s);
      a1 = q * cos(q * s);
    } else {
      a = cos(q * s);
      a1 = -q * sin(q * s);
    }
    a2 = -q * q * a;
    a += 0.5 * s; /* a linear part: inhomogeneous values and fluxes */
    a1 += 0.5;
  }
  *g = a;
  *g1 = a1 / L;
  *g2 = a2 / (L * L);
}

/* ------------------------------------------------ paper 001, eq. 27 (k = 5) */

void fd_box_waves(int dim, double lambda, const double x[3], double *u, double grad[3], double *f) {
  static const double a[5][3] = {{1, -3, 2}, {1, 0, 0}, {0, -1, 0}, {2, 1, 0}, {3, -2, 2}};
  static const double c0[5] = {0, 1, 1, 0, 0};
  const double k = 5.0;
  double phi[5], dphi[5], a2[5];
  const double x3 = dim == 3 ? x[2] : 0.0;
  for (int j = 0; j < 5; j++) {
    const double t = k * (c0[j] + a[j][0] * x[0] + a[j][1] * x[1] + a[j][2] * x3);
    phi[j] = j == 0 ? cos(t) : sin(t);
    dphi[j] = j == 0 ? -k * sin(t) : k * cos(t); /* d phi / d(a.x) */
    a2[j] = 0;
    for (int d = 0; d < dim; d++) a2[j] += a[j][d] * a[j][d];
  }
  double prod = 1;
  for (int j = 0; j < 5; j++) prod *= phi[j];
  double lap = 0, g[3] = {0, 0, 0};
  for (int j = 0; j < 5; j++) {
    double others = 1;
    for (int i = 0; i < 5; i++)
      if (i != j) others *= phi[i];
    lap += -k * k * a2[j] * phi[j] * others;
    for (int d = 0; d < dim; d++) g[d] += dphi[j] * a[j][d] * others;
    for (int i = j + 1; i < 5; i++) {
      double rest = 1, dot = 0;
      for (int l = 0; l < 5; l++)
        if (l != i && l != j) rest *= phi[l];
      for (int d = 0; d < dim; d++) dot += a[i][d] * a[j][d];
      lap += 2.0 * dphi[i] * dphi[j] * dot * rest;
    }
  }
  if (u) *u = prod;
  if (grad)
    for (int d = 0; d < 3; d++) grad[d] = d < dim ? g[d] : 0.0;
  if (f) *f = lambda * prod - lap;
}

typedef fd_box_manu_val manu_val;

static manu_val manufactured(const hpmg_problem_options *o, const hpmg_box *b, const double x[3]) {
  manu_val v;
  if (o->rhs == HPMG_RHS_WAVES) {
    fd_box_waves(b->dim, o->lambda, x, &v.u, v.grad, &v.f);
    return v;
  }
  /* per thread and direction the last factor evaluated, keyed by everything it depends on: the
   * callers visit points in tensor order (spectral elements' load and error at the quadrature
   * points of each element), so y and z repeat and only x needs a sine and cosine */
  static _Thread_local struct {
    hpmg_bc_kind lo, hi;
    double L, x, g, g1, g2;
  } memo[3];
  double g[3] = {1, 1, 1}, g1[3] = {0, 0, 0}, g2[3] = {0, 0, 0};
  for (int d = 0; d < b->dim; d++) {
    const hpmg_bc_kind lo = b->bc[2 * d], hi = b->bc[2 * d + 1];
    if (!(memo[d].x == x[d] && memo[d].L == b->len[d] && memo[d].lo == lo && memo[d].hi == hi)) {
      manu_1d(lo, hi, b->len[d], x[d], &memo[d].g, &memo[d].g1, &memo[d].g2);
      memo[d].lo = lo, memo[d].hi = hi, memo[d].L = b->len[d], memo[d].x = x[d];
    }
    g[d] = memo[d].g, g1[d] = memo[d].g1, g2[d] = memo[d].g2;
  }
  return fd_box_manu_combine(o->lambda, g, g1, g2);
}

hpmg_error fd_box_manu_lattice_init(const hpmg_problem_options *o, const hpmg_box *b, const int64_t n[3],
                                    const double *const x[3], fd_box_manu_lattice *L) {
  memset(L, 0, sizeof *L);
  L->o = o;
  L->dim = b->dim;
  for (int d = 0; d < 3; d++) L->x[d] = x[d];
  if (o->rhs == HPMG_RHS_WAVES) return HPMG_SUCCESS;
  for (int d = 0; d < 3; d++) {
    const hpmg_error e = hpmg_malloc(sizeof(double) * (size_t)(3 * n[d]), &L->t[d]);
    if (e) {
      fd_box_manu_lattice_free(L);
      return e;
    }
    double *t = L->t[d];
    for (int64_t i = 0; i < n[d]; i++)
      if (d < b->dim) manu_1d(b->bc[2 * d], b->bc[2 * d + 1], b->len[d], x[d][i], &t[3 * i], &t[3 * i + 1], &t[3 * i + 2]);
      else t[3 * i] = 1, t[3 * i + 1] = t[3 * i + 2] = 0;
  }
  return HPMG_SUCCESS;
}

void fd_box_manu_lattice_free(fd_box_manu_lattice *L) {
  for (int d = 0; d < 3; d++) hpmg_free(&L->t[d]);
}

double fd_box_exact(const hpmg_problem_options *o, const hpmg_box *b, const double x[3]) {
  return manufactured(o, b, x).u;
}

void fd_box_manufactured(const hpmg_problem_options *o, const hpmg_box *b, const double x[3], double *u, double grad[3],
                         double *f) {
  const manu_val v = manufactured(o, b, x);
  if (u) *u = v.u;
  if (grad)
    for (int d = 0; d < 3; d++) grad[d] = v.grad[d];
  if (f) *f = v.f;
}

/* ------------------------------------------------------ right-hand side */

/* Face fc's data (Dirichlet value, or outward flux) at the point x of the
 * face whose other directions da < db lie at lattice positions pa, pb: the
 * manufactured solution's (manu), the face's function, its values array (per
 * node of the face; vertex layout: pa, pb are nodes; cell layout: cell
 * centres, the mean of the face cell's corner nodes, or -1 / -2 for the min /
 * max face's node) or its constant */
static double face_point_value(const hpmg_problem_options *o, const hpmg_box *b, int manu, int fc, const double x[3],
                               int64_t pa, int64_t pb) {
  const int d = fc / 2, da = d == 0 ? 1 : 0, db = d == 2 ? 1 : 2;
  if (manu) {
    const manu_val m = manufactured(o, b, x);
    return b->bc[fc] == HPMG_BC_DIRICHLET ? m.u : (fc & 1) ? m.grad[d] : -m.grad[d];
  }
  const hpmg_bc *bc = &o->bc[fc];
  if (bc->fn) return bc->fn(x, bc->user);
  if (!bc->values) return bc->value;
  const int64_t sa = b->cells[da] + 1;
  if (db >= b->dim) pb = 0;
  if (b->layout == HPMG_FD_VERTEX) return bc->values[pa + sa * pb];
  int64_t a[2], c[2] = {0, 0};
  a[0] = pa == -1 ? 0 : pa == -2 ? b->cells[da] : pa;
  a[1] = pa < 0 ? a[0] : pa + 1;
  if (db < b->dim) {
    c[0] = pb == -1 ? 0 : pb == -2 ? b->cells[db] : pb;
    c[1] = pb < 0 ? c[0] : pb + 1;
  }
  double sum = 0.0;
  for (int q = 0; q < 4; q++) sum += bc->values[a[q & 1] + sa * c[q >> 1]];
  return 0.25 * sum;
}

hpmg_error fd_box_rhs(const hpmg_problem_options *o, const hpmg_box *b, const double *f, double *rhs) {
  fdb_geom g;
  double *p[3] = {0};
  HPMG_CALL(fd_box_geom(b, o->lambda, &g));
  hpmg_error e = HPMG_SUCCESS;
  for (int d = 0; d < 3 && !e; d++) e = fd_box_points(b, d, &p[d]);
  const int manu = !f && o->rhs == HPMG_RHS_SINE;
  const int64_t nx = g.n[0], ny = g.n[1], nz = g.n[2];
  int64_t bad = 0;
  fd_box_manu_lattice M = {0};
  if (!e && manu) e = fd_box_manu_lattice_init(o, b, g.n, (const double *const *)p, &M);
  if (!e) {
#pragma omp parallel for collapse(2) schedule(static) reduction(+ : bad)
    for (int64_t k = 0; k < nz; k++)
      for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++) {
          const int64_t id = (k * ny + j) * nx + i;
          const double fv = manu ? fd_box_manu_at(&M, i, j, k).f : f ? f[id] : 1.0;
          bad += !isfinite(fv);
          rhs[id] = g.w[0][i] * g.w[1][j] * g.w[2][k] * fv;
        }
    if (bad) e = hpmg_error_set(HPMG_ERR_NUMERIC, "the right-hand side has %lld non-finite values", (long long)bad);
  }
  /* faces: Dirichlet values times their coupling, Neumann fluxes times the dual area */
  for (int fc = 0; fc < 2 * b->dim && !e; fc++) {
    const int d = fc / 2, hi = fc & 1;
    const hpmg_bc_kind kind = b->bc[fc];
    if (kind == HPMG_BC_PERIODIC) continue;
    const int da = d == 0 ? 1 : 0, db = d == 2 ? 1 : 2;
    const int64_t cells = b->cells[d];
    const double hedge = hi ? b->x[d][cells] - b->x[d][cells - 1] : b->x[d][1] - b->x[d][0];
    const double coup = kind == HPMG_BC_NEUMANN ? 1.0 : b->layout == HPMG_FD_CELL ? 2.0 / hedge : 1.0 / hedge;
    const int64_t u = hi ? g.n[d] - 1 : 0; /* the unknown index next to the face */
    const double xf = hi ? b->len[d] : 0.0;
    const int64_t stride[3] = {1, nx, nx * ny};
    /* the lattice positions of unknown 0 in da, db: its node (vertex layout), its cell (cell layout) */
    const int64_t fa = hpmg_box_first(b, da), fb = hpmg_box_first(b, db);
    int64_t badf = 0;
#pragma omp parallel for collapse(2) schedule(static) reduction(+ : badf)
    for (int64_t ib = 0; ib < g.n[db]; ib++)
      for (int64_t ia = 0; ia < g.n[da]; ia++) {
        double x[3];
        x[d] = xf;
        x[da] = p[da][ia];
        x[db] = p[db][ib];
        const double v = face_point_value(o, b, manu, fc, x, ia + fa, ib + fb);
        badf += !isfinite(v);
        rhs[u * stride[d] + ia * stride[da] + ib * stride[db]] += coup * v * g.w[da][ia] * g.w[db][ib];
      }
    if (badf)
      e = hpmg_error_set(HPMG_ERR_NUMERIC, "boundary data of face %d (0 = xmin .. 5 = zmax) has %lld non-finite values",
                         fc, (long long)badf);
  }
  fd_box_manu_lattice_free(&M);
  for (int d = 0; d < 3; d++) hpmg_free(&p[d]);
  geom_free(&g);
  return e;
}

hpmg_error fd_box_error(const hpmg_problem_options *o, const hpmg_box *b, const double *x, double *l2, double *mx) {
  fdb_geom g;
  double *p[3] = {0};
  HPMG_CALL(fd_box_geom(b, o->lambda, &g));
  hpmg_error e = HPMG_SUCCESS;
  for (int d = 0; d < 3 && !e; d++) e = fd_box_points(b, d, &p[d]);
  const int64_t nx = g.n[0], ny = g.n[1], nz = g.n[2];
  const int singular = hpmg_box_neumann_like(b) && o->lambda == 0;
  double shift = 0;
  fd_box_manu_lattice M = {0};
  if (!e) e = fd_box_manu_lattice_init(o, b, g.n, (const double *const *)p, &M);
  if (!e && singular) { /* both to W-mean zero */
    double s = 0, sw = 0;
#pragma omp parallel for collapse(2) schedule(static) reduction(+ : s, sw)
    for (int64_t k = 0; k < nz; k++)
      for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++) {
          const double w = g.w[0][i] * g.w[1][j] * g.w[2][k];
          s += w * (x[(k * ny + j) * nx + i] - fd_box_manu_at(&M, i, j, k).u);
          sw += w;
        }
    shift = s / sw;
  }
  double s2 = 0, m = 0;
  if (!e) {
#pragma omp parallel for collapse(2) schedule(static) reduction(+ : s2) reduction(max : m)
    for (int64_t k = 0; k < nz; k++)
      for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++) {
          const double w = g.w[0][i] * g.w[1][j] * g.w[2][k];
          const double er = x[(k * ny + j) * nx + i] - fd_box_manu_at(&M, i, j, k).u - shift;
          s2 += w * er * er;
          if (fabs(er) > m) m = fabs(er);
        }
  }
  if (l2) *l2 = sqrt(s2);
  if (mx) *mx = m;
  fd_box_manu_lattice_free(&M);
  for (int d = 0; d < 3; d++) hpmg_free(&p[d]);
  geom_free(&g);
  return e;
}

/* ------------------------------------------------------------- levels */

typedef struct {
  fdb_geom g;
  int dim, per[3], line; /* line: direction of line GS, -1: point GS */
  int checker;           /* the line sweep's colours: 1 a checkerboard (fd_box_line_checker) */
  double omega;
  double *x[3];          /* node coordinates (owned) */
  int64_t cells[3];
  /* from the next coarser level to this one, per direction (coarsened[d]) */
  int coarsened[3];
  fdb_csr P[3], R[3];
  fdb_csr Pc[3];         /* FMG's cubic interpolation (fmg_cubic) */
  int fmg_cubic;
  int64_t nc[3];         /* the coarser level's unknowns per direction */
  double *t1, *t2;
  hpmg_scratch scratch; /* the line smoother's, per thread (CPU) */
  /* coarsest: Cholesky factor of A (+ the null space's rank-one term) */
  double *chol;
  int singular;
  hpmg_level_ops slots;
  const fdb_kernels *k;
  /* on the GPU (dev): the 1D data, transfers, t1, t2 and the reduction
   * scratch red in device memory; cp: the line smoother's scratch (the
   * solver's, not owned) */
  int dev;
  const hpmg_backend *be;
  fdb_geom dg;
  fdb_csr dP[3], dR[3], dPc[3];
  double *red, *cp;
  double *ltab; /* fd_box_line_table's coefficients (device), NULL where the lines differ */
} fdb_level;

static void csr_free(fdb_csr *m) {
  hpmg_free(&m->ptr);
  hpmg_free(&m->col);
  hpmg_free(&m->val);
}

/* the CSR of the rows given as (column, value) lists of nr entries each */
static hpmg_error csr_of_rows(int64_t rows, int64_t cols, int nr, const int64_t *c, const double *v, fdb_csr *M) {
  memset(M, 0, sizeof *M);
  M->rows = rows;
  M->cols = cols;
  int64_t nnz = 0;
  for (int64_t i = 0; i < rows * nr; i++) nnz += c[i] >= 0;
  HPMG_CALL(hpmg_calloc(sizeof(int64_t) * (size_t)(rows + 1), &M->ptr));
  HPMG_CALL(hpmg_calloc(sizeof(int64_t) * (size_t)(nnz + 1), &M->col));
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)(nnz + 1), &M->val));
  int64_t q = 0;
  for (int64_t i = 0; i < rows; i++) {
    M->ptr[i] = q;
    for (int r = 0; r < nr; r++)
      if (c[i * nr + r] >= 0) {
        M->col[q] = c[i * nr + r];
        M->val[q++] = v[i * nr + r];
      }
  }
  M->ptr[rows] = q;
  return HPMG_SUCCESS;
}

/* R = P^T, each row's entries in P's row order */
static hpmg_error csr_transpose(const fdb_csr *P, fdb_csr *R) {
  memset(R, 0, sizeof *R);
  R->rows = P->cols;
  R->cols = P->rows;
  const int64_t nnz = P->ptr[P->rows];
  HPMG_CALL(hpmg_calloc(sizeof(int64_t) * (size_t)(R->rows + 2), &R->ptr));
  HPMG_CALL(hpmg_calloc(sizeof(int64_t) * (size_t)(nnz + 1), &R->col));
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)(nnz + 1), &R->val));
  for (int64_t t = 0; t < nnz; t++) R->ptr[P->col[t] + 2]++;
  for (int64_t J = 0; J < R->rows; J++) R->ptr[J + 2] += R->ptr[J + 1];
  for (int64_t i = 0; i < P->rows; i++)
    for (int64_t t = P->ptr[i]; t < P->ptr[i + 1]; t++) {
      const int64_t at = R->ptr[P->col[t] + 1]++;
      R->col[at] = i;
      R->val[at] = P->val[t];
    }
  return HPMG_SUCCESS;
}

/* P: fine unknowns x coarse unknowns, 2 entries a row at most, as lists */
typedef struct {
  int64_t c[2];
  double v[2];
} prow;

/* the unknown of coarse node J (vertex layout), -1 for a Dirichlet node */
static int64_t vnode_unknown(int64_t J, int64_t nc, hpmg_bc_kind lo, hpmg_bc_kind hi) {
  if (lo == HPMG_BC_PERIODIC) return J % nc;
  if ((J == 0 && lo == HPMG_BC_DIRICHLET) || (J == nc && hi == HPMG_BC_DIRICHLET)) return -1;
  return J - (lo == HPMG_BC_DIRICHLET);
}

/* linear interpolation from the coarse grid (nodes X, nc cells) to the fine
 * one (nodes x, cells) in direction d */
static hpmg_error build_p(const double *x, int64_t cells, const double *X, int64_t nc, hpmg_bc_kind lo, hpmg_bc_kind hi,
                          hpmg_fd_layout lay, fdb_csr *P, fdb_csr *R) {
  const int64_t nf = n_of(lay, cells, lo, hi), ncu = n_of(lay, nc, lo, hi);
  const int per = lo == HPMG_BC_PERIODIC;
  const double L = x[cells];
  int64_t *pc = NULL;
  double *pv = NULL;
  hpmg_error e = hpmg_malloc(sizeof(int64_t) * (size_t)(2 * nf), &pc);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)(2 * nf), &pv);
  for (int64_t i = 0; i < nf && !e; i++) {
    prow row, *r = &row;
    r->c[0] = r->c[1] = -1;
    r->v[0] = r->v[1] = 0;
    if (lay == HPMG_FD_VERTEX) {
      const int64_t p = i + first_of(lay, lo);
      int64_t J = p / 2;
      if (J > nc - 1) J = nc - 1;
      const int64_t a = 2 * J, bnode = J == nc - 1 ? cells : 2 * J + 2;
      if (p == a) {
        r->c[0] = vnode_unknown(J, nc, lo, hi);
        r->v[0] = 1;
      } else if (p == bnode) {
        r->c[0] = vnode_unknown(nc, nc, lo, hi);
        r->v[0] = 1;
      } else {
        const double t = (x[p] - x[a]) / (x[bnode] - x[a]);
        r->c[0] = vnode_unknown(J, nc, lo, hi);
        r->v[0] = 1 - t;
        r->c[1] = vnode_unknown(J + 1, nc, lo, hi);
        r->v[1] = t;
      }
    } else {
      const double cf = 0.5 * (x[i] + x[i + 1]);
      const double C0 = 0.5 * (X[0] + X[1]), Cl = 0.5 * (X[nc - 1] + X[nc]);
      if (cf < C0 || cf > Cl) {
        const int low = cf < C0;
        if (per) { /* between the last centre and the first one shifted by L */
          const double a = Cl - L * low, bb = C0 + L * !low, t = (cf - a) / (bb - a);
          r->c[0] = nc - 1;
          r->v[0] = 1 - t;
          r->c[1] = 0;
          r->v[1] = t;
        } else {
          const hpmg_bc_kind k = low ? lo : hi;
          const int64_t J = low ? 0 : nc - 1;
          r->c[0] = J;
          r->v[0] = 1;
          if (k == HPMG_BC_DIRICHLET) /* towards 0 at the face */
            r->v[0] = low ? cf / C0 : (L - cf) / (L - Cl);
        }
      } else {
        int64_t J = 0;
        /* the coarse cell holding cf (about i/2) */
        J = i / 2 > nc - 1 ? nc - 1 : i / 2;
        while (J > 0 && 0.5 * (X[J] + X[J + 1]) > cf) J--;
        while (J < nc - 1 && 0.5 * (X[J + 1] + X[J + 2]) <= cf) J++;
        const double a = 0.5 * (X[J] + X[J + 1]);
        if (J == nc - 1 || cf == a) {
          r->c[0] = J;
          r->v[0] = 1;
        } else {
          const double bb = 0.5 * (X[J + 1] + X[J + 2]), t = (cf - a) / (bb - a);
          r->c[0] = J;
          r->v[0] = 1 - t;
          r->c[1] = J + 1;
          r->v[1] = t;
        }
      }
    }
    for (int q = 0; q < 2; q++) {
      pc[2 * i + q] = r->c[q];
      pv[2 * i + q] = r->v[q];
    }
  }
  /* CSR of P and of its transpose */
  if (!e) e = csr_of_rows(nf, ncu, 2, pc, pv, P);
  if (!e) e = csr_transpose(P, R);
  hpmg_free(&pc);
  hpmg_free(&pv);
  return e;
}

hpmg_error fd_box_fmg_interp_1d(const double *x, int64_t cells, const double *X, int64_t nc, hpmg_bc_kind lo,
                                hpmg_bc_kind hi, hpmg_fd_layout lay, fdb_csr *Pc) {
  const int64_t nf = n_of(lay, cells, lo, hi), ncu = n_of(lay, nc, lo, hi);
  const int per = lo == HPMG_BC_PERIODIC;
  HPMG_CHECK_ARG(ncu >= 4, "fd box: cubic interpolation needs 4 coarse unknowns (got %lld)", (long long)ncu);
  const double L = x[cells];
  double *pf = NULL, *pc = NULL, *val = NULL;
  int64_t *col = NULL;
  hpmg_error e = hpmg_malloc(sizeof(double) * (size_t)nf, &pf);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)ncu, &pc);
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)nf * 4, &val);
  if (!e) e = hpmg_malloc(sizeof(int64_t) * (size_t)nf * 4, &col);
  if (!e) {
    points_1d(x, cells, lo, hi, lay, pf);
    points_1d(X, nc, lo, hi, lay, pc);
    int64_t J = -1; /* the last coarse unknown at or before pf[i] (-1: none) */
    for (int64_t i = 0; i < nf; i++) {
      while (J + 1 < ncu && pc[J + 1] <= pf[i]) J++;
      int64_t s0 = J - 1;
      if (!per) s0 = s0 < 0 ? 0 : s0 > ncu - 4 ? ncu - 4 : s0;
      double xs[4];
      int64_t cs[4];
      for (int m = 0; m < 4; m++) { /* a periodic index wraps, its position shifted by a period */
        const int64_t t = s0 + m, w = ((t % ncu) + ncu) % ncu;
        cs[m] = w;
        xs[m] = pc[w] + L * (double)((t - w) / ncu);
      }
      for (int m = 0; m < 4; m++) {
        double l = 1.0;
        for (int k = 0; k < 4; k++)
          if (k != m) l *= (pf[i] - xs[k]) / (xs[m] - xs[k]);
        col[4 * i + m] = l != 0.0 ? cs[m] : -1; /* at a coarse point: that point alone */
        val[4 * i + m] = l;
      }
    }
    e = csr_of_rows(nf, ncu, 4, col, val, Pc);
  }
  hpmg_free(&pf);
  hpmg_free(&pc);
  hpmg_free(&val);
  hpmg_free(&col);
  return e;
}

static void dcsr_free(const hpmg_backend *be, fdb_csr *m) {
  be->free((void **)&m->ptr);
  be->free((void **)&m->col);
  be->free((void **)&m->val);
}

static hpmg_error dev_copy(const hpmg_backend *be, const void *h, size_t bytes, void **d) {
  HPMG_CALL(be->alloc(bytes > 0 ? bytes : 8, d));
  if (bytes > 0) HPMG_CALL(be->to_device(h, *d, bytes));
  return HPMG_SUCCESS;
}

static hpmg_error dcsr_copy(const hpmg_backend *be, const fdb_csr *h, fdb_csr *d) {
  memset(d, 0, sizeof *d);
  d->rows = h->rows;
  d->cols = h->cols;
  const size_t nnz = (size_t)h->ptr[h->rows];
  HPMG_CALL(dev_copy(be, h->ptr, sizeof(int64_t) * (size_t)(h->rows + 1), (void **)&d->ptr));
  HPMG_CALL(dev_copy(be, h->col, sizeof(int64_t) * nnz, (void **)&d->col));
  HPMG_CALL(dev_copy(be, h->val, sizeof(double) * nnz, (void **)&d->val));
  return HPMG_SUCCESS;
}

void fd_box_geom_device_free(const hpmg_backend *be, fdb_geom *d) {
  for (int k = 0; k < 3; k++) {
    be->free((void **)&d->w[k]);
    be->free((void **)&d->kd[k]);
    be->free((void **)&d->klo[k]);
    be->free((void **)&d->khi[k]);
  }
}

hpmg_error fd_box_geom_to_device(const fdb_geom *g, const hpmg_backend *be, fdb_geom *d) {
  *d = *g;
  for (int k = 0; k < 3; k++) d->w[k] = d->kd[k] = d->klo[k] = d->khi[k] = NULL;
  hpmg_error e = HPMG_SUCCESS;
  for (int k = 0; k < 3 && !e; k++) {
    const size_t bytes = sizeof(double) * (size_t)g->n[k];
    e = dev_copy(be, g->w[k], bytes, (void **)&d->w[k]);
    if (!e) e = dev_copy(be, g->kd[k], bytes, (void **)&d->kd[k]);
    if (!e) e = dev_copy(be, g->klo[k], bytes, (void **)&d->klo[k]);
    if (!e) e = dev_copy(be, g->khi[k], bytes, (void **)&d->khi[k]);
  }
  if (e) fd_box_geom_device_free(be, d);
  return e;
}

static void level_free(fdb_level *q) {
  geom_free(&q->g);
  for (int d = 0; d < 3; d++) {
    hpmg_free(&q->x[d]);
    csr_free(&q->P[d]);
    csr_free(&q->R[d]);
    csr_free(&q->Pc[d]);
  }
  if (q->dev) {
    fd_box_geom_device_free(q->be, &q->dg);
    for (int d = 0; d < 3; d++) {
      dcsr_free(q->be, &q->dP[d]);
      dcsr_free(q->be, &q->dR[d]);
      dcsr_free(q->be, &q->dPc[d]);
    }
    q->be->free((void **)&q->t1);
    q->be->free((void **)&q->t2);
    q->be->free((void **)&q->red);
    q->be->free((void **)&q->ltab);
  }
  hpmg_free(&q->t1);
  hpmg_free(&q->t2);
  hpmg_scratch_free(&q->scratch);
  hpmg_free(&q->chol);
}

static fdb_level *FQ(const hpmg_level *L) { return L->ctx; }

static hpmg_error s_smooth(hpmg_level *L, int x_is_zero, int post, int sweeps) {
  fdb_level *q = FQ(L);
  if (x_is_zero) HPMG_CALL(hpmg_v_zero(&L->x));
  for (int s = 0; s < sweeps; s++) {
    if (q->dev) { /* the line recursion's scratch: cp, and the level's r (free while smoothing) */
      if (q->line >= 0)
        HPMG_CALL(fdb_cuda_line_sweep(&q->dg, q->per, q->line, q->checker, post, L->x.data, L->b.data, q->ltab, q->cp,
                                      L->r.data));
      else HPMG_CALL(fdb_cuda_gs_sweep(&q->dg, q->per, q->omega, post, L->x.data, L->b.data));
    } else if (q->line >= 0) q->k->line_sweep(&q->g, q->per, q->line, q->checker, post, L->x.data, L->b.data, &q->scratch);
    else q->k->gs_sweep(&q->g, q->per, q->omega, post, L->x.data, L->b.data);
  }
  return HPMG_SUCCESS;
}

static hpmg_error s_residual(hpmg_level *L) {
  fdb_level *q = FQ(L);
  if (q->dev) return fdb_cuda_apply(&q->dg, L->x.data, L->b.data, L->r.data);
  q->k->apply(&q->g, L->x.data, L->b.data, L->r.data);
  return HPMG_SUCCESS;
}

/* entries of the temporaries t1, t2 that tensor() writes (the intermediate
 * results of a transfer in two or three directions) */
static void tensor_tmp(const fdb_level *q, int64_t *m1, int64_t *m2) {
  *m1 = *m2 = 1;
  for (int restrict_ = 0; restrict_ < 2; restrict_++) {
    int64_t dims[3];
    for (int d = 0; d < 3; d++) dims[d] = restrict_ ? q->g.n[d] : q->nc[d];
    int last = -1, flip = 0;
    for (int d = 0; d < 3; d++)
      if (q->coarsened[d]) last = d;
    for (int d = 0; d < 3; d++) {
      if (!q->coarsened[d]) continue;
      dims[d] = restrict_ ? q->nc[d] : q->g.n[d];
      if (d == last) break;
      const int64_t sz = dims[0] * dims[1] * dims[2];
      int64_t *m = flip ? m2 : m1;
      if (sz > *m) *m = sz;
      flip = !flip;
    }
  }
}

/* y (+)= M_d ... x over the coarsened directions, one at a time (M = R, P,
 * or FMG's Pc: which = TR_RESTRICT, TR_PROLONG, TR_FMG) */
enum { TR_PROLONG = 0, TR_RESTRICT = 1, TR_FMG = 2 };
static hpmg_error tensor(fdb_level *q, int which, const double *x, double *y, int add) {
  const int restrict_ = which == TR_RESTRICT;
  int64_t dims[3];
  for (int d = 0; d < 3; d++) dims[d] = restrict_ ? q->g.n[d] : q->nc[d];
  int last = -1;
  for (int d = 0; d < 3; d++)
    if (q->coarsened[d]) last = d;
  const double *src = x;
  int flip = 0;
  for (int d = 0; d < 3; d++) {
    if (!q->coarsened[d]) continue;
    const fdb_csr *M = which == TR_RESTRICT ? &q->R[d] : which == TR_FMG ? &q->Pc[d] : &q->P[d];
    const fdb_csr *dM = which == TR_RESTRICT ? &q->dR[d] : which == TR_FMG ? &q->dPc[d] : &q->dP[d];
    double *dst = d == last ? y : (flip ? q->t2 : q->t1);
    if (q->dev) HPMG_CALL(fdb_cuda_apply1d(d, dims, dM, src, dst, d == last ? add : 0));
    else q->k->apply1d(d, dims, M, src, dst, d == last ? add : 0);
    dims[d] = M->rows;
    src = dst;
    flip = !flip;
  }
  return HPMG_SUCCESS;
}

static hpmg_error s_restrict(hpmg_level *L, const hpmg_vec *fine, hpmg_vec *coarse) {
  return tensor(FQ(L), TR_RESTRICT, fine->data, coarse->data, 0);
}

static hpmg_error s_prolong(hpmg_level *L, const hpmg_vec *xc, int add) {
  return tensor(FQ(L), TR_PROLONG, xc->data, L->x.data, add);
}

/* FMG's step to this level: the coarse solution interpolated (cubic where the
 * level has it, else linear) */
static hpmg_error s_fmg_interp(hpmg_level *L, const hpmg_vec *xc) {
  fdb_level *q = FQ(L);
  return tensor(q, q->fmg_cubic ? TR_FMG : TR_PROLONG, xc->data, L->x.data, 0);
}

static hpmg_error s_coarse_solve(hpmg_level *L) {
  fdb_level *q = FQ(L);
  const int64_t n = q->g.N;
  double *x = L->x.data;
  memcpy(x, L->b.data, sizeof(double) * (size_t)n);
  if (q->singular) { /* the compatible part of b: (A + a 1 1^T) x = b gives sum x = 0 */
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i];
    for (int64_t i = 0; i < n; i++) x[i] -= s / (double)n;
  }
  const int bt = hpmg_blas_serial_begin();
  const lapack_int info = LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', (lapack_int)n, 1, q->chol, (lapack_int)n, x, (lapack_int)n);
  hpmg_blas_serial_end(bt);
  if (info != 0)
    return hpmg_error_set(HPMG_ERR_NUMERIC, "fd box: the coarse Cholesky solve failed");
  return HPMG_SUCCESS;
}

static hpmg_error coarse_factor(fdb_level *q) {
  const int64_t n = q->g.N;
  double *e, *col;
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)(n * n), &q->chol));
  HPMG_CALL(hpmg_calloc(sizeof(double) * (size_t)n, &e));
  hpmg_error err = hpmg_calloc(sizeof(double) * (size_t)n, &col);
  double dmean = 0;
  for (int64_t j = 0; j < n && !err; j++) {
    e[j] = 1;
    q->k->apply(&q->g, e, NULL, col);
    e[j] = 0;
    memcpy(q->chol + j * n, col, sizeof(double) * (size_t)n);
    dmean += col[j] / (double)n;
  }
  if (!err && q->singular)
    for (int64_t i = 0; i < n * n; i++) q->chol[i] += dmean / (double)n;
  const int bt = hpmg_blas_serial_begin();
  if (!err && LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (lapack_int)n, q->chol, (lapack_int)n) != 0)
    err = hpmg_error_set(HPMG_ERR_NUMERIC, "fd box: the coarsest matrix (%lld unknowns) is not positive definite",
                         (long long)n);
  hpmg_blas_serial_end(bt);
  hpmg_free(&e);
  hpmg_free(&col);
  return err;
}

static const hpmg_level_ops fdb_slots = {.smooth = s_smooth,
                                         .residual = s_residual,
                                         .restrict_to = s_restrict,
                                         .prolong = s_prolong,
                                         .fmg_interp = s_fmg_interp,
                                         .coarse_solve = s_coarse_solve};

/* ------------------------------------------------------------- solver */

struct fd_box_solver_s {
  hpmg_box box; /* copy of the caller's description (nodes not owned: the levels hold their own) */
  fd_box_config c;
  int nlev;
  fdb_level *lev; /* lev[0] coarsest */
  hpmg_mg mg;
  hpmg_mg_solver drv;
  hpmg_vec vb, vx;
  const hpmg_backend *be; /* the finest level's: the outer method's vectors */
  double *rhs_stage;      /* GPU: the host copy of b projected before it goes over */
  double *dcp;            /* GPU line smoothing: the recursion's scratch (fdb_cuda_line_cp_len of the finest) */
  int singular, line, ngpu;
  double sumw;
  hpmg_stats st;
  const fdb_kernels *k;
};

static double stretch_of(const double *x, int64_t cells) {
  double lo = INFINITY, hi = 0;
  for (int64_t i = 0; i < cells; i++) {
    const double h = x[i + 1] - x[i];
    if (h < lo) lo = h;
    if (h > hi) hi = h;
  }
  return hi / lo;
}

/* the most stretched direction whose widths vary by more than 1.5x; -1: none */
int fd_box_auto_line(const hpmg_box *b) {
  int best = -1;
  double bs = 1.5;
  for (int d = 0; d < b->dim; d++) {
    const double s = stretch_of(b->x[d], b->cells[d]);
    if (s > bs) {
      bs = s;
      best = d;
    }
  }
  return best;
}

static hpmg_error project_mean(void *ctx, hpmg_vec *v) {
  if (v->be->on_device) {
    fd_box_solver s = ctx;
    return fdb_cuda_mean_remove(v->n, v->data, s->lev[s->nlev - 1].red);
  }
  double *a = v->data, s = 0;
  const int64_t n = v->n;
#pragma omp parallel for reduction(+ : s) schedule(static)
  for (int64_t i = 0; i < n; i++) s += a[i];
  s /= (double)n;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) a[i] -= s;
  return HPMG_SUCCESS;
}

static hpmg_error op_apply(void *ctx, const hpmg_vec *x, hpmg_vec *y) {
  fd_box_solver s = ctx;
  const fdb_level *q = &s->lev[s->nlev - 1];
  if (q->dev) return fdb_cuda_apply(&q->dg, x->data, NULL, y->data);
  s->k->apply(&q->g, x->data, NULL, y->data);
  return HPMG_SUCCESS;
}
static hpmg_error op_residual(void *ctx, const hpmg_vec *b, const hpmg_vec *x, hpmg_vec *r) {
  fd_box_solver s = ctx;
  const fdb_level *q = &s->lev[s->nlev - 1];
  if (q->dev) return fdb_cuda_apply(&q->dg, x->data, b->data, r->data);
  s->k->apply(&q->g, x->data, b->data, r->data);
  return HPMG_SUCCESS;
}
static hpmg_error op_residual_norm(void *ctx, const hpmg_vec *b, const hpmg_vec *x, double *nrm) {
  fd_box_solver s = ctx;
  const fdb_level *q = &s->lev[s->nlev - 1];
  if (q->dev) return fdb_cuda_residual_norm(&q->dg, x->data, b->data, q->red, nrm);
  *nrm = s->k->residual_norm(&q->g, x->data, b->data);
  return HPMG_SUCCESS;
}

void fd_box_solver_destroy(fd_box_solver *sp) {
  fd_box_solver s = *sp;
  if (!s) return;
  hpmg_mg_solver_destroy(&s->drv);
  hpmg_mg_destroy(&s->mg);
  for (int i = 0; i < s->nlev && s->lev; i++) level_free(&s->lev[i]);
  hpmg_free(&s->lev);
  hpmg_vec_destroy(&s->vb);
  hpmg_vec_destroy(&s->vx);
  if (s->dcp) s->be->free((void **)&s->dcp);
  hpmg_free(&s->rhs_stage);
  hpmg_free(sp);
}

/* Which directions the next coarser grid coarsens: those with 4 cells or
 * more whose mean width is within sqrt 2 of the smallest mean width hmin of
 * the coarsenable directions that are not relaxed by lines (a direction much
 * coarser than the others waits until they catch up: the cells grow
 * towards isotropy, where point smoothing works). The line direction's
 * strong coupling is its smoother's, but where its cells are the widest (the
 * middle of a tanh channel, taller than wide) it is the weakly coupled
 * direction, which the lines do not smooth: it waits while its widest cell
 * hline exceeds sqrt 2 hmin (the channel 256x192x256, tanh 2.9: FMG 28 -> 7
 * cycles, CG 22 -> 11 iterations to 1e-9). Returns the number of directions. */
static int coarsen_flags(int dim, const double len[3], const int64_t cells[3], int line, double hline, int flags[3]) {
  double hmin = INFINITY;
  for (int d = 0; d < dim; d++)
    if (cells[d] >= 4 && d != line && len[d] / (double)cells[d] < hmin) hmin = len[d] / (double)cells[d];
  int any = 0;
  for (int d = 0; d < 3; d++) {
    const int lc = !(hline > 1.4143 * hmin);
    flags[d] = d < dim && cells[d] >= 4 && (d == line ? lc : !(len[d] / (double)cells[d] > 1.4143 * hmin));
    any += flags[d];
  }
  return any;
}

/* the next coarser grid of level f: per flagged direction every other node
 * plus the last (an odd count merges the last three cells) */
static hpmg_error level_coarsen(const fdb_level *f, const int flags[3], fdb_level *c) {
  c->dim = f->dim;
  for (int d = 0; d < 3; d++) {
    const int64_t cf = f->cells[d], cc = flags[d] ? cf / 2 : cf;
    c->cells[d] = cc;
    HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(cc + 1), &c->x[d]));
    if (cc == cf) memcpy(c->x[d], f->x[d], sizeof(double) * (size_t)(cf + 1));
    else {
      for (int64_t J = 0; J < cc; J++) c->x[d][J] = f->x[d][2 * J];
      c->x[d][cc] = f->x[d][cf];
    }
  }
  return HPMG_SUCCESS;
}

double fd_box_memory(const hpmg_box *b, const fd_box_config *c, double *device) {
  const double n = (double)hpmg_box_unknowns(b);
  if (device) *device = 0;
  if (c->device) {
    /* GPU: the finest r (its b and x are the outer method's), t1, t2 (at
     * most 3/4), the driver's 4 work vectors, the solve's b and x; with line
     * smoothing the line scratch, and the coarser levels' b, x, r after a
     * first coarsening that may halve only (about 1.75 of the finest; else
     * about 3/7); host: the caller's vectors and the coarse factor */
    const int line = c->line == -1 ? fd_box_auto_line(b) : c->line - 1;
    const double cp = line >= 0 ? (double)fdb_cuda_line_cp_len(1, hpmg_box_periodic(b, line)) : 0.0;
    if (device) *device = 8.0 * n * (1.0 + 0.75 + 4.0 + 2.0 + (line >= 0 ? cp + 1.75 : 0.43));
    return 8.0 * n * 2.0 + 8.0 * FDB_COARSE_MAX * FDB_COARSE_MAX;
  }
  /* b, x, r per level, about 8/7 (3D) of the finest; transfer temporaries;
   * the driver's 4 work vectors; the solve's b and x */
  return 8.0 * n * (3.0 * 8.0 / 7.0 + 2.0 + 4.0 + 2.0) + 8.0 * FDB_COARSE_MAX * FDB_COARSE_MAX;
}

int fd_box_gpu_levels(fd_box_solver s) { return s->ngpu; }

hpmg_error fd_box_solver_create(const hpmg_box *b, double lambda, const fd_box_config *c, fd_box_solver *out) {
  *out = NULL;
  HPMG_CHECK_ARG(c->solver == HPMG_SOLVER_CG || c->solver == HPMG_SOLVER_VCYCLE || c->solver == HPMG_SOLVER_FMG,
                 "fd box: solver must be cg, vcycle or fmg");
  HPMG_CHECK_ARG(c->line >= -1 && c->line <= b->dim, "fd box: line smoother direction out of range");
  HPMG_CHECK_ARG(c->device == 0 || c->device == 1, "fd box: device must be 0 (CPU) or 1 (CUDA)");
  HPMG_CHECK_ARG(c->gpu_min >= 0, "fd box: gpu_min must be >= 0");
  hpmg_par_init(); /* the CPU kernels' OpenMP threshold (core/par.h) */
  const hpmg_backend *gpu = NULL;
  if (c->device) HPMG_CALL(hpmg_backend_cuda(&gpu));
  const double t0 = hpmg_wtime();
  if (c->threads > 0) omp_set_num_threads(c->threads);
  fd_box_solver s;
  HPMG_CALL(hpmg_calloc(sizeof *s, &s));
  s->box = *b;
  s->c = *c;
  s->k = hpmg_fdb_kernels_select();
  s->singular = hpmg_box_neumann_like(b) && lambda == 0;
  s->line = c->line == -1 ? fd_box_auto_line(b) : c->line - 1;
  /* the levels' coarsening, finest first: flags[l][d] coarsens direction d
   * from the l-th finest level to the next */
  int64_t cells[3] = {b->cells[0], b->cells[1], b->cells[2]};
  int nlev = 1, flags[64][3];
  /* the line direction's nodes on the current level (every other one plus the last, per coarsening) */
  double *xl = NULL;
  if (s->line >= 0) {
    const int64_t cl = b->cells[s->line];
    const hpmg_error em = hpmg_malloc(sizeof(double) * (size_t)(cl + 1), &xl);
    if (em) {
      hpmg_free(&s);
      return em;
    }
    memcpy(xl, b->x[s->line], sizeof(double) * (size_t)(cl + 1));
  }
  for (; nlev < 64;) {
    double N = 1;
    for (int d = 0; d < b->dim; d++) N *= (double)n_of(b->layout, cells[d], b->bc[2 * d], b->bc[2 * d + 1]);
    double hline = 0;
    if (xl)
      for (int64_t i = 0; i < cells[s->line]; i++) hline = fmax(hline, xl[i + 1] - xl[i]);
    if (N <= FDB_COARSE_MAX || !coarsen_flags(b->dim, b->len, cells, s->line, hline, flags[nlev - 1])) break;
    for (int d = 0; d < b->dim; d++)
      if (flags[nlev - 1][d]) {
        if (d == s->line) {
          const int64_t cf = cells[d], cc = cf / 2;
          for (int64_t J = 0; J < cc; J++) xl[J] = xl[2 * J];
          xl[cc] = xl[cf];
        }
        cells[d] /= 2;
      }
    nlev++;
  }
  hpmg_free(&xl);
  hpmg_error e = HPMG_SUCCESS;
  s->nlev = nlev;
  e = hpmg_calloc(sizeof(fdb_level) * (size_t)nlev, &s->lev);
  for (int l = nlev - 1; l >= 0 && !e; l--) {
    fdb_level *q = &s->lev[l];
    q->k = s->k;
    if (l == nlev - 1) {
      q->dim = b->dim;
      for (int d = 0; d < 3 && !e; d++) {
        q->cells[d] = b->cells[d];
        e = hpmg_malloc(sizeof(double) * (size_t)(b->cells[d] + 1), &q->x[d]);
        if (!e) memcpy(q->x[d], b->x[d], sizeof(double) * (size_t)(b->cells[d] + 1));
      }
    } else e = level_coarsen(&s->lev[l + 1], flags[nlev - 2 - l], q);
    if (!e) e = geom_build(b->dim, q->x, q->cells, b->bc, b->layout, lambda, &q->g);
    if (e) break;
    for (int d = 0; d < 3; d++) q->per[d] = d < b->dim && hpmg_box_periodic(b, d);
    q->line = s->line;
    q->omega = c->sor;
    q->slots = fdb_slots;
  }
  /* the GPU levels: the finest, and the next ones down to gpu_min unknowns;
   * the coarsest (Cholesky) stays on the host */
  const int64_t gmin = c->gpu_min > 0 ? c->gpu_min : FDB_GPU_MIN;
  for (int l = nlev - 1; l >= 1 && gpu && !e; l--) {
    if (l < nlev - 1 && s->lev[l].g.N < gmin) break;
    s->lev[l].dev = 1;
    s->lev[l].be = gpu;
    s->ngpu++;
  }
  for (int l = 0; l < nlev && !e; l++) {
    fdb_level *q = &s->lev[l];
    if (!q->dev) q->be = hpmg_backend_host();
    q->checker = c->line_colours == 2 || (c->line_colours == 0 && q->dev);
    if (q->line >= 0 && !q->dev) /* a thread beyond the setup's allocates its own per sweep */
      e = hpmg_scratch_reserve(&q->scratch, sizeof(double) * (size_t)fd_box_line_scratch(q->line, q->g.n[q->line]));
  }
  s->be = s->lev[nlev - 1].be;
  if (!e && s->ngpu > 0 && s->line >= 0)
    e = gpu->alloc(sizeof(double) * (size_t)fdb_cuda_line_cp_len(s->lev[nlev - 1].g.N, hpmg_box_periodic(b, s->line)),
                   (void **)&s->dcp);
  /* transfers: level l from l-1 */
  for (int l = 1; l < nlev && !e; l++) {
    fdb_level *q = &s->lev[l], *qc = &s->lev[l - 1];
    for (int d = 0; d < 3; d++) q->nc[d] = qc->g.n[d];
    for (int d = 0; d < b->dim && !e; d++) {
      q->coarsened[d] = qc->cells[d] != q->cells[d];
      if (q->coarsened[d])
        e = build_p(q->x[d], q->cells[d], qc->x[d], qc->cells[d], b->bc[2 * d], b->bc[2 * d + 1], b->layout, &q->P[d],
                    &q->R[d]);
    }
    /* cubic FMG interpolation where every coarsened direction has 4 coarse unknowns */
    q->fmg_cubic = c->fmg_cubic;
    for (int d = 0; d < b->dim; d++) q->fmg_cubic &= !q->coarsened[d] || qc->g.n[d] >= 4;
    for (int d = 0; d < b->dim && !e && q->fmg_cubic; d++)
      if (q->coarsened[d])
        e = fd_box_fmg_interp_1d(q->x[d], q->cells[d], qc->x[d], qc->cells[d], b->bc[2 * d], b->bc[2 * d + 1], b->layout,
                                 &q->Pc[d]);
    if (q->dev) {
      int64_t m1, m2;
      tensor_tmp(q, &m1, &m2);
      if (!e) e = q->be->alloc(sizeof(double) * (size_t)m1, (void **)&q->t1);
      if (!e) e = q->be->alloc(sizeof(double) * (size_t)m2, (void **)&q->t2);
      for (int d = 0; d < b->dim && !e; d++)
        if (q->coarsened[d]) {
          e = dcsr_copy(q->be, &q->P[d], &q->dP[d]);
          if (!e) e = dcsr_copy(q->be, &q->R[d], &q->dR[d]);
          if (!e && q->fmg_cubic) e = dcsr_copy(q->be, &q->Pc[d], &q->dPc[d]);
        }
    } else {
      if (!e) e = hpmg_malloc(sizeof(double) * (size_t)q->g.N, &q->t1);
      if (!e) e = hpmg_malloc(sizeof(double) * (size_t)q->g.N, &q->t2);
    }
  }
  for (int l = 1; l < nlev && !e; l++) {
    fdb_level *q = &s->lev[l];
    if (!q->dev) continue;
    q->cp = s->dcp;
    e = fd_box_geom_to_device(&q->g, q->be, &q->dg);
    if (!e) e = q->be->alloc(sizeof(double) * (size_t)fdb_cuda_red_len(&q->g), (void **)&q->red);
    if (!e && q->line >= 0) { /* lines alike (a channel's uniform periodic x, z): one set of coefficients */
      const int64_t m = q->g.n[q->line];
      double *tab = NULL;
      e = hpmg_malloc(sizeof(double) * (size_t)(3 * m), &tab);
      if (!e && fd_box_line_table(&q->g, q->per, q->line, tab)) e = dev_copy(q->be, tab, sizeof(double) * (size_t)(3 * m), (void **)&q->ltab);
      hpmg_free(&tab);
    }
  }
  if (!e) {
    s->lev[0].singular = s->singular;
    e = coarse_factor(&s->lev[0]);
  }
  const hpmg_cycle_options co = {.pre = c->pre, .post = c->post, .add_residual = 0, .timing = 1};
  /* on the GPU the finest b and x are the outer method's (fine_aliases):
   * two vectors of the finest size fewer in device memory */
  if (!e) e = hpmg_mg_init(&s->mg, nlev, HPMG_REAL_DOUBLE, &co, s->ngpu > 0);
  for (int l = 0; l < nlev && !e; l++) {
    hpmg_level *L = &s->mg.lv[l];
    L->ops = &s->lev[l].slots;
    L->ctx = &s->lev[l];
    L->be = s->lev[l].be;
    L->n = s->lev[l].g.N;
  }
  if (!e) e = hpmg_mg_setup(&s->mg, NULL);
  const int64_t N = s->lev[nlev - 1].g.N;
  if (!e) {
    const hpmg_mg_solve_options so = {.solver = c->solver, .tol = c->tol, .maxit = c->maxit, .restart = 30,
                                      .verbose = c->verbose, .project = s->singular ? project_mean : NULL, .pctx = s};
    e = hpmg_mg_solver_create(&s->drv, &s->mg, (hpmg_linop){s, op_apply, op_residual, op_residual_norm}, s->be, N,
                              HPMG_REAL_DOUBLE, &so);
  }
  if (!e) e = hpmg_vec_create(s->be, HPMG_REAL_DOUBLE, N, &s->vb);
  if (!e && s->be->on_device) e = hpmg_vec_create(s->be, HPMG_REAL_DOUBLE, N, &s->vx);
  if (!e && s->be->on_device) e = hpmg_malloc(sizeof(double) * (size_t)N, &s->rhs_stage);
  if (e) {
    fd_box_solver_destroy(&s);
    return e;
  }
  const fdb_geom *g = &s->lev[nlev - 1].g;
  double sw[3] = {0, 0, 0};
  for (int d = 0; d < 3; d++)
    for (int64_t i = 0; i < g->n[d]; i++) sw[d] += g->w[d][i];
  s->sumw = sw[0] * sw[1] * sw[2];
  s->st.dofs = N;
  s->st.levels = nlev;
  s->st.bytes_host = fd_box_memory(b, c, &s->st.bytes_device);
  s->st.t_setup = hpmg_wtime() - t0;
  *out = s;
  return HPMG_SUCCESS;
}

int fd_box_line_dir(fd_box_solver s) { return s->line; }

hpmg_error fd_box_apply(fd_box_solver s, const double *x, double *y) {
  s->k->apply(&s->lev[s->nlev - 1].g, x, NULL, y);
  return HPMG_SUCCESS;
}

/* sum over the finest level of W_i v_i (weighted = 1) or v_i */
static double wsum(const fdb_geom *g, const double *v, int weighted) {
  const int64_t nx = g->n[0], ny = g->n[1], nz = g->n[2];
  double s = 0;
#pragma omp parallel for collapse(2) reduction(+ : s) schedule(static)
  for (int64_t k = 0; k < nz; k++)
    for (int64_t j = 0; j < ny; j++)
      for (int64_t i = 0; i < nx; i++)
        s += (weighted ? g->w[0][i] * g->w[1][j] * g->w[2][k] : 1.0) * v[(k * ny + j) * nx + i];
  return s;
}

hpmg_error fd_box_solve(fd_box_solver s, const double *rhs, double *x) {
  const fdb_geom *g = &s->lev[s->nlev - 1].g;
  const int64_t N = g->N;
  const int64_t bad = hpmg_vec_count_nonfinite(HPMG_REAL_DOUBLE, N, rhs);
  if (bad) return hpmg_error_set(HPMG_ERR_NUMERIC, "%lld non-finite entries (NaN/Inf) in the right-hand side", (long long)bad);
  const int dev = s->be->on_device;
  double *b = dev ? s->rhs_stage : s->vb.data;
  memcpy(b, rhs, sizeof(double) * (size_t)N);
  const double setup = s->st.t_setup, bytes = s->st.bytes_host, dbytes = s->st.bytes_device;
  const int levels = s->st.levels;
  memset(&s->st, 0, sizeof s->st);
  s->st.t_setup = setup;
  s->st.bytes_host = bytes;
  s->st.bytes_device = dbytes;
  s->st.levels = levels;
  s->st.dofs = N;
  if (s->singular) {
    /* the compatibility condition sum b = 0 (1 spans A's null space); the
     * projection subtracts a constant from f: b -= (sum b / sum W) W */
    double sb = 0, sa = 0;
#pragma omp parallel for reduction(+ : sb, sa) schedule(static)
    for (int64_t i = 0; i < N; i++) {
      sb += b[i];
      sa += fabs(b[i]);
    }
    const double c = sb / s->sumw;
    s->st.compat_defect = c;
    HPMG_CALL(fd_box_compat_check(sb, sa, s->sumw, s->c.project_rhs));
    const int64_t nx = g->n[0], ny = g->n[1], nz = g->n[2];
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t k = 0; k < nz; k++)
      for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++) b[(k * ny + j) * nx + i] -= c * g->w[0][i] * g->w[1][j] * g->w[2][k];
    hpmg_vec hb = hpmg_vec_wrap(hpmg_backend_host(), HPMG_REAL_DOUBLE, N, b);
    project_mean(s, &hb); /* round-off of the above */
  }
  hpmg_vec vx = hpmg_vec_wrap(hpmg_backend_host(), HPMG_REAL_DOUBLE, N, x);
  hpmg_error e = HPMG_SUCCESS;
  if (dev) { /* b to the GPU, x = 0 there */
    e = s->be->to_device(b, s->vb.data, sizeof(double) * (size_t)N);
    if (!e) e = hpmg_v_zero(&s->vx);
    if (!e) e = hpmg_mg_solver_solve(&s->drv, &s->vb, &s->vx, &s->st);
    if (e == HPMG_SUCCESS || e == HPMG_ERR_NOT_CONVERGED) {
      const hpmg_error e2 = s->be->to_host(s->vx.data, x, sizeof(double) * (size_t)N);
      if (e2) e = e2;
    }
  } else {
    memset(x, 0, sizeof(double) * (size_t)N);
    e = hpmg_mg_solver_solve(&s->drv, &s->vb, &vx, &s->st);
  }
  if ((e == HPMG_SUCCESS || e == HPMG_ERR_NOT_CONVERGED) && s->singular) {
    const double m = wsum(g, x, 1) / s->sumw;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N; i++) x[i] -= m;
  }
  s->st.dofs = N;
  return e;
}

void fd_box_get_stats(fd_box_solver s, hpmg_stats *st) { *st = s->st; }

int fd_box_history(fd_box_solver s, const double **h) {
  *h = s->drv.hist;
  return s->drv.nhist;
}

void fd_box_set_verbose(fd_box_solver s, int v) { s->drv.o.verbose = v; }

hpmg_error fd_box_compat_check(double sb, double sa, double sumw, int project_rhs) {
  if (project_rhs || !(fabs(sb) > 1e-11 * sa)) return HPMG_SUCCESS;
  return hpmg_error_set(HPMG_ERR_ARG,
                        "the right-hand side of this singular problem (no Dirichlet face, lambda = 0) violates the "
                        "compatibility condition: sum b = %.3e (relative %.3e; f has mean %.3e too much), and "
                        "projection is off (--no-project / project_rhs = 0)",
                        sb, sa > 0 ? sb / sa : 0.0, sb / sumw);
}

hpmg_error fd_box_sums(const hpmg_box *b, const double *rhs, double *sum, double *sumabs, double *sumw) {
  fdb_geom g;
  HPMG_CALL(fd_box_geom(b, 0.0, &g));
  double sb = 0, sa = 0;
#pragma omp parallel for reduction(+ : sb, sa) schedule(static)
  for (int64_t i = 0; i < g.N; i++) {
    sb += rhs[i];
    sa += fabs(rhs[i]);
  }
  double sw[3] = {0, 0, 0};
  for (int d = 0; d < 3; d++)
    for (int64_t i = 0; i < g.n[d]; i++) sw[d] += g.w[d][i];
  *sum = sb;
  *sumabs = sa;
  *sumw = sw[0] * sw[1] * sw[2];
  geom_free(&g);
  return HPMG_SUCCESS;
}

hpmg_error fd_box_residual_norm(const hpmg_box *b, double lambda, const double *x, const double *rhs, double *nrm) {
  fdb_geom g;
  HPMG_CALL(fd_box_geom(b, lambda, &g));
  if (x) *nrm = hpmg_fdb_kernels_select()->residual_norm(&g, x, rhs);
  else *nrm = hpmg_vec_norm(HPMG_REAL_DOUBLE, g.N, rhs);
  geom_free(&g);
  return HPMG_SUCCESS;
}

/* ------------------------------------------------------------- VTU output */

/* The VTU lattice of direction d: vertex layout, the box's nodes; cell
 * layout, the cell centres with the two faces of a non-periodic direction
 * (node 0 and node c) before and after them. A periodic direction is closed by
 * its first point again, one period on. pos[i]: the unknown of lattice point
 * i (before hpmg_box_first), or -1 / -2 for the cell layout's min / max face. */
typedef struct {
  int64_t cells, nlat;
  double *x;
  int64_t *pos;
} vtu_dir;

static hpmg_error vtu_dir_make(const hpmg_box *b, int d, vtu_dir *v) {
  const int64_t c = b->cells[d];
  const int per = hpmg_box_periodic(b, d), cell = b->layout == HPMG_FD_CELL;
  v->cells = cell && !per ? c + 1 : c;
  v->nlat = per ? v->cells : v->cells + 1;
  HPMG_CALL(hpmg_malloc(sizeof(double) * (size_t)(v->cells + 1), &v->x));
  HPMG_CALL(hpmg_malloc(sizeof(int64_t) * (size_t)(v->cells + 1), &v->pos));
  for (int64_t i = 0; i <= v->cells; i++) {
    if (!cell) {
      v->x[i] = b->x[d][i];
      v->pos[i] = per && i == c ? 0 : i;
    } else if (per) {
      const int64_t j = i < c ? i : 0;
      v->x[i] = 0.5 * (b->x[d][j] + b->x[d][j + 1]) + (i < c ? 0.0 : b->len[d]);
      v->pos[i] = j;
    } else {
      v->x[i] = i == 0 ? b->x[d][0] : i == c + 1 ? b->x[d][c] : 0.5 * (b->x[d][i - 1] + b->x[d][i]);
      v->pos[i] = i == 0 ? -1 : i == c + 1 ? -2 : i - 1;
    }
  }
  return HPMG_SUCCESS;
}

hpmg_error fd_box_write_vtu(const hpmg_problem_options *o, const hpmg_box *b, const double *x, int builtin,
                            const char *path) {
  const int cell = b->layout == HPMG_FD_CELL, manu = builtin && fd_box_rhs_manufactured(o->rhs);
  int64_t cells[3] = {1, 1, 1}, nlat[3] = {1, 1, 1}, nu[3];
  double *xl[3] = {0};
  vtu_dir dir[3] = {{0}};
  int64_t pos0 = 0; /* the one lattice point of a missing direction */
  for (int d = 0; d < 3; d++) {
    nu[d] = hpmg_box_n(b, d);
    dir[d].pos = d < b->dim ? NULL : &pos0;
  }
  hpmg_error e = HPMG_SUCCESS;
  for (int d = 0; d < b->dim && !e; d++) {
    e = vtu_dir_make(b, d, &dir[d]);
    cells[d] = dir[d].cells;
    nlat[d] = dir[d].nlat;
    xl[d] = dir[d].x;
  }
  double *U = NULL;
  if (!e) e = hpmg_malloc(sizeof(double) * (size_t)(nlat[0] * nlat[1] * nlat[2]), &U);
  int64_t bad = 0;
  if (!e) {
#pragma omp parallel for collapse(2) schedule(static) reduction(+ : bad)
    for (int64_t i2 = 0; i2 < nlat[2]; i2++)
      for (int64_t i1 = 0; i1 < nlat[1]; i1++)
        for (int64_t i0 = 0; i0 < nlat[0]; i0++) {
          const int64_t id[3] = {i0, i1, i2}, p[3] = {dir[0].pos[i0], dir[1].pos[b->dim > 1 ? i1 : 0],
                                                       dir[2].pos[b->dim > 2 ? i2 : 0]};
          const double xx[3] = {xl[0][i0], b->dim > 1 ? xl[1][i1] : 0.0, b->dim > 2 ? xl[2][i2] : 0.0};
          int64_t u[3] = {0, 0, 0};
          int fc = -1, nf = 0, faces[3]; /* the first Dirichlet face the point lies on; all its faces */
          for (int d = 0; d < b->dim; d++) {
            int f = -1;
            if (!cell && id[d] == 0 && b->bc[2 * d] == HPMG_BC_DIRICHLET) f = 2 * d;
            if (!cell && id[d] == b->cells[d] && b->bc[2 * d + 1] == HPMG_BC_DIRICHLET) f = 2 * d + 1;
            if (cell && p[d] < 0) f = 2 * d + (p[d] == -2);
            if (f >= 0) {
              faces[nf++] = f;
              if (fc < 0 && b->bc[f] == HPMG_BC_DIRICHLET) fc = f;
            }
            u[d] = cell ? (p[d] == -1 ? 0 : p[d] == -2 ? nu[d] - 1 : p[d]) : p[d] - hpmg_box_first(b, d);
          }
          double *v = &U[i0 + nlat[0] * (i1 + nlat[1] * i2)];
          if (fc >= 0) { /* a Dirichlet face: its data */
            const int dd = fc / 2;
            *v = face_point_value(o, b, manu, fc, xx, p[dd == 0 ? 1 : 0], p[dd == 2 ? 1 : 2]);
            bad += !isfinite(*v);
            continue;
          }
          *v = x[u[0] + nu[0] * (u[1] + nu[1] * u[2])];
          for (int q = 0; q < nf; q++) { /* cell layout, Neumann faces: u_face = u_centre + h/2 du/dn */
            const int f = faces[q], dd = f / 2;
            const int64_t c = b->cells[dd];
            const double h = (f & 1) ? b->x[dd][c] - b->x[dd][c - 1] : b->x[dd][1] - b->x[dd][0];
            const double g = face_point_value(o, b, manu, f, xx, p[dd == 0 ? 1 : 0], p[dd == 2 ? 1 : 2]);
            bad += !isfinite(g);
            *v += 0.5 * h * g;
          }
        }
    if (bad) e = hpmg_error_set(HPMG_ERR_NUMERIC, "write_vtu: %lld non-finite boundary values", (long long)bad);
  }
  if (!e) e = hpmg_vtu_write_lattice(path, b->dim, 1, cells, xl, nlat, U, "u");
  for (int d = 0; d < b->dim; d++) {
    hpmg_free(&dir[d].x);
    hpmg_free(&dir[d].pos);
  }
  hpmg_free(&U);
  return e;
}
