/* The box description of a problem's options (box.h): cells, node
 * coordinates from the spacing, validation of the geometry and the BC data. */
#include "grid/box.h"
#include <math.h>
#include <string.h>

static const char *const face_names[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};
static const char *const dir_names[3] = {"x", "y", "z"};

/* Node coordinates of direction d from its spacing; checks the result. */
static hpmg_error make_nodes(const hpmg_spacing *sp, int d, int64_t n, double len, double *x) {
  const char *dn = dir_names[d];
  switch (sp->kind) {
  case HPMG_SPACING_UNIFORM:
    for (int64_t i = 0; i <= n; i++) x[i] = len * (double)i / (double)n;
    break;
  case HPMG_SPACING_GEOMETRIC: {
    const double a = sp->param;
    HPMG_CHECK_ARG(a > 0 && isfinite(a), "grid %s: the geometric ratio must be positive and finite (got %g)", dn, a);
    /* widths w a^i, i = 0..n-1, summing to len; relative to the first width */
    double s = 0, w = 1;
    x[0] = 0;
    for (int64_t i = 0; i < n; i++) {
      s += w;
      x[i + 1] = s;
      w *= a;
    }
    HPMG_CHECK_ARG(isfinite(s) && s > 0, "grid %s: geometric ratio %g over %lld cells overflows (a cell vanishes)", dn,
                   a, (long long)n);
    for (int64_t i = 1; i <= n; i++) x[i] = len * x[i] / s;
    x[n] = len;
  } break;
  case HPMG_SPACING_TANH: {
    const double be = sp->param;
    HPMG_CHECK_ARG(be > 0 && isfinite(be), "grid %s: the tanh parameter must be positive and finite (got %g)", dn, be);
    const double t = tanh(be);
    for (int64_t i = 0; i <= n; i++) x[i] = 0.5 * len * (1.0 + tanh(be * (2.0 * (double)i / (double)n - 1.0)) / t);
    x[0] = 0;
    x[n] = len;
  } break;
  case HPMG_SPACING_NODES: {
    HPMG_CHECK_ARG(sp->nodes, "grid %s: node spacing needs the array of %lld node coordinates", dn, (long long)(n + 1));
    for (int64_t i = 0; i <= n; i++) {
      HPMG_CHECK_ARG(isfinite(sp->nodes[i]), "grid %s: node coordinate %lld is not finite (%g)", dn, (long long)i,
                     sp->nodes[i]);
      x[i] = sp->nodes[i];
    }
    HPMG_CHECK_ARG(x[0] == 0.0, "grid %s: the node coordinates must start at 0 (got %g)", dn, x[0]);
    HPMG_CHECK_ARG(fabs(x[n] - len) <= 1e-12 * len, "grid %s: the node coordinates must end at the box length %g (got %g)",
                   dn, len, x[n]);
    x[n] = len;
    for (int64_t i = 0; i < n; i++)
      HPMG_CHECK_ARG(x[i + 1] > x[i], "grid %s: the node coordinates must increase (node %lld: %g, node %lld: %g)", dn,
                     (long long)i, x[i], (long long)(i + 1), x[i + 1]);
  } break;
  default: return hpmg_error_set(HPMG_ERR_ARG, "grid %s: unknown spacing kind %d", dn, (int)sp->kind);
  }
  for (int64_t i = 0; i < n; i++) {
    const double w = x[i + 1] - x[i];
    HPMG_CHECK_ARG(isfinite(w) && w >= 1e-12 * len,
                   "grid %s: cell %lld has width %g, below 1e-12 of the box length %g (the stretching makes a cell vanish)",
                   dn, (long long)i, w, len);
  }
  return HPMG_SUCCESS;
}

void hpmg_box_destroy(hpmg_box *b) {
  for (int d = 0; d < 3; d++) hpmg_free(&b->x[d]);
}

hpmg_error hpmg_box_init(const hpmg_problem_options *o, hpmg_box *b) {
  memset(b, 0, sizeof *b);
  HPMG_CHECK_ARG(o->dim == 2 || o->dim == 3, "--dim must be 2 or 3 (got %d)", o->dim);
  HPMG_CHECK_ARG(o->fd_layout == HPMG_FD_VERTEX || o->fd_layout == HPMG_FD_CELL, "unknown FD layout %d", (int)o->fd_layout);
  HPMG_CHECK_ARG(o->project_rhs == 0 || o->project_rhs == 1, "project_rhs must be 0 or 1 (got %d)", o->project_rhs);
  b->dim = o->dim;
  b->layout = o->fd_layout;
  double total = 1;
  for (int d = 0; d < 3; d++) {
    if (d >= o->dim) {
      HPMG_CHECK_ARG(o->cells[d] == 0 || o->cells[d] == 1, "cells in z must be unset (0) in 2D (got %lld)",
                     (long long)o->cells[d]);
      HPMG_CHECK_ARG(o->spacing[d].kind == HPMG_SPACING_UNIFORM, "a spacing in z needs --dim 3");
      b->cells[d] = 1;
      b->len[d] = 1;
      b->uniform[d] = 1;
      continue;
    }
    HPMG_CHECK_ARG(o->box[d] > 0 && isfinite(o->box[d]), "--box length in %s must be positive and finite (got %g)",
                   dir_names[d], o->box[d]);
    int64_t c = o->cells[d];
    if (c == 0) {
      HPMG_CHECK_ARG(o->coarse >= 1 && o->refine >= 0 && o->refine <= 30, "--coarse/--refine out of range");
      c = (int64_t)o->coarse << o->refine;
    }
    HPMG_CHECK_ARG(c >= 1, "cells in %s must be at least 1 (got %lld)", dir_names[d], (long long)c);
    HPMG_CHECK_ARG(c <= 2147483646, "cells in %s must be below 2^31 - 1 (got %lld)", dir_names[d], (long long)c);
    b->cells[d] = c;
    b->len[d] = o->box[d];
    total *= (double)(c + 1);
  }
  HPMG_CHECK_ARG(total < 4.6e18, "%.3g grid points overflow 64-bit indices", total);
  for (int d = 0; d < o->dim; d++) {
    const hpmg_bc *lo = &o->bc[2 * d], *hi = &o->bc[2 * d + 1];
    for (int f = 2 * d; f <= 2 * d + 1; f++)
      HPMG_CHECK_ARG(o->bc[f].kind == HPMG_BC_DIRICHLET || o->bc[f].kind == HPMG_BC_NEUMANN ||
                         o->bc[f].kind == HPMG_BC_PERIODIC,
                     "bc %s: unknown kind %d", face_names[f], (int)o->bc[f].kind);
    HPMG_CHECK_ARG((lo->kind == HPMG_BC_PERIODIC) == (hi->kind == HPMG_BC_PERIODIC),
                   "bc: periodic on %s only; a periodic direction needs both faces periodic (--bc %s=periodic)",
                   face_names[lo->kind == HPMG_BC_PERIODIC ? 2 * d : 2 * d + 1], dir_names[d]);
  }
  for (int f = 2 * o->dim; f < 6; f++)
    HPMG_CHECK_ARG(o->bc[f].kind == HPMG_BC_DIRICHLET && o->bc[f].value == 0 && !o->bc[f].fn && !o->bc[f].values,
                   "bc %s: a 2D problem has no z faces", face_names[f]);
  for (int f = 0; f < 2 * o->dim; f++) {
    const hpmg_bc *bc = &o->bc[f];
    const int d = f / 2;
    b->bc[f] = bc->kind;
    if (bc->kind == HPMG_BC_PERIODIC)
      HPMG_CHECK_ARG(bc->value == 0 && !bc->fn && !bc->values, "bc %s: a periodic face takes no value, function or array",
                     face_names[f]);
    HPMG_CHECK_ARG(isfinite(bc->value), "bc %s: the constant is not finite (%g)", face_names[f], bc->value);
    HPMG_CHECK_ARG(!bc->values || bc->kind == HPMG_BC_DIRICHLET,
                   "bc %s: an array of boundary values is for Dirichlet faces only", face_names[f]);
    if (bc->values) {
      int64_t m = 1;
      for (int e = 0; e < o->dim; e++)
        if (e != d) m *= b->cells[e] + 1;
      for (int64_t i = 0; i < m; i++)
        HPMG_CHECK_ARG(isfinite(bc->values[i]), "bc %s: boundary value %lld of the array is not finite (%g)",
                       face_names[f], (long long)i, bc->values[i]);
    }
  }
  for (int d = 2; d >= o->dim; d--) b->bc[2 * d] = b->bc[2 * d + 1] = HPMG_BC_DIRICHLET;
  for (int d = 0; d < o->dim; d++) {
    /* a periodic direction needs two unknowns at least, so that no unknown is its own neighbour */
    HPMG_CHECK_ARG(!hpmg_box_periodic(b, d) || b->cells[d] >= 2, "cells in periodic direction %s must be at least 2",
                   dir_names[d]);
    /* (spectral elements have interior nodes in one element) */
    HPMG_CHECK_ARG(o->disc == HPMG_DISC_SEM || hpmg_box_n(b, d) >= 1, "direction %s has no unknowns (1 cell between two Dirichlet faces in the "
                   "vertex layout): use 2 cells or more", dir_names[d]);
  }
  for (int d = 0; d < 3; d++) {
    hpmg_error e = hpmg_malloc(sizeof(double) * (size_t)(b->cells[d] + 1), &b->x[d]);
    if (!e && d >= o->dim) {
      b->x[d][0] = 0;
      b->x[d][1] = 1;
    } else if (!e)
      e = make_nodes(&o->spacing[d], d, b->cells[d], b->len[d], b->x[d]);
    if (e) {
      hpmg_box_destroy(b);
      return e;
    }
    if (d < o->dim) {
      const double h = b->len[d] / (double)b->cells[d];
      int u = 1;
      for (int64_t i = 0; i < b->cells[d] && u; i++) u = fabs(b->x[d][i + 1] - b->x[d][i] - h) <= 1e-12 * h;
      b->uniform[d] = u;
    }
  }
  return HPMG_SUCCESS;
}
