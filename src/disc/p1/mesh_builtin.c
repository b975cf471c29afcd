/* Built-in meshes: paper 003's "Regular" series on the cube [0,4]^3 and a
 * perturbed ("irregular") variant; squares [0,4]^2 cut into triangles in 2D.
 *
 * regular:L has 8*2^L cells per direction, each cube cut into the 6
 * tetrahedra of Kuhn's (Freudenthal's) split along its main diagonal
 * (x0 -> x0+e_p0 -> x0+e_p0+e_p1 -> x0+(1,1,1) for the 6 permutations p).
 * Red refinement of a Kuhn tetrahedron that cuts the inner octahedron along
 * the diagonal parallel to the cube's main diagonal (Freudenthal 1942, Bey
 * 1995) gives the Kuhn tetrahedra of the cubes of half the size, so this
 * direct generation at 2^L times the resolution is the 8-cube mesh refined L
 * times 1 -> 8: (8*2^L+1)^3 nodes, 6 (8*2^L)^3 tetrahedra (L = 0: 729 / 3,072;
 * L = 3: 274,625 / 1,572,864). 2D: squares cut along the diagonal (0,0)-(1,1).
 *
 * irregular:L moves every interior node by a pseudo-random vector (a hash of
 * its index: deterministic, independent of threads) of at most 0.15 h per
 * direction; the generator checks that every cell keeps a positive volume.
 *
 * Groups: region tag 1 "domain"; boundary facets tagged 1..2*dim on the faces
 * xmin, xmax, ymin, ymax, zmin, zmax (named so), oriented with the outward
 * normal (right-hand rule). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "disc/p1/mesh.h"

#define BUILTIN_LENGTH 4.0
#define BUILTIN_MAX_CELLS 4.0e9 /* beyond any memory; the estimate below refuses earlier */

static uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
/* uniform in [-1, 1) */
static double hash_unit(uint64_t node, int d) {
  return 2.0 * (double)(splitmix64(node * 3 + (uint64_t)d + 0x1234567ull) >> 11) / 9007199254740992.0 - 1.0;
}

static const char *const face_names[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};

static hpmg_error parse_spec(const char *spec, int *irregular, int *level) {
  HPMG_CHECK_ARG(spec, "built-in mesh: spec is NULL");
  const char *num;
  if (!strncmp(spec, "regular:", 8)) *irregular = 0, num = spec + 8;
  else if (!strncmp(spec, "irregular:", 10)) *irregular = 1, num = spec + 10;
  else return hpmg_error_set(HPMG_ERR_ARG, "built-in mesh '%s': expected regular:L or irregular:L", spec);
  char *end;
  long l = strtol(num, &end, 10);
  HPMG_CHECK_ARG(end != num && !*end && l >= 0 && l <= 20, "built-in mesh '%s': L must be an integer in 0..20", spec);
  *level = (int)l;
  return HPMG_SUCCESS;
}

static void free_partial(hpmg_p1_mesh *m) {
  for (int d = 0; d < 3; d++) hpmg_free(&m->x[d]);
  hpmg_free(&m->cell_nodes);
  hpmg_free(&m->cell_region);
  hpmg_free(&m->facet_nodes);
  hpmg_free(&m->facet_region);
  hpmg_free(&m->groups);
  memset(m, 0, sizeof *m);
}

/* signed volume (3D: 6x, 2D: 2x) of cell c */
static double cell_measure(const hpmg_p1_mesh *m, int64_t c) {
  const int64_t *v = m->cell_nodes + (int64_t)(m->dim + 1) * c;
  if (m->dim == 2) {
    double ax = m->x[0][v[1]] - m->x[0][v[0]], ay = m->x[1][v[1]] - m->x[1][v[0]];
    double bx = m->x[0][v[2]] - m->x[0][v[0]], by = m->x[1][v[2]] - m->x[1][v[0]];
    return ax * by - ay * bx;
  }
  double a[3][3];
  for (int k = 0; k < 3; k++)
    for (int d = 0; d < 3; d++) a[k][d] = m->x[d][v[k + 1]] - m->x[d][v[0]];
  return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
         a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
}

hpmg_error hpmg_p1_mesh_builtin(const char *spec, int dim, hpmg_p1_mesh *m) {
  HPMG_CHECK_ARG(m, "built-in mesh: output is NULL");
  memset(m, 0, sizeof *m);
  int irregular = 0, L = 0;
  HPMG_CALL(parse_spec(spec, &irregular, &L));
  HPMG_CHECK_ARG(dim == 2 || dim == 3, "built-in mesh: dim must be 2 or 3 (got %d)", dim);
  const int64_t n = (int64_t)8 << L, n1 = n + 1;
  const double cells = dim == 3 ? 6.0 * (double)n * (double)n * (double)n : 2.0 * (double)n * (double)n;
  const double nodes = pow((double)n1, dim);
  HPMG_CHECK_ARG(cells < BUILTIN_MAX_CELLS, "built-in mesh '%s': %.3g cells in %dD are too many", spec, cells, dim);
  /* coordinates, cell nodes and regions, facets */
  const double bytes = nodes * 8.0 * dim + cells * (8.0 * (dim + 1) + 4.0) + 2.0 * dim * (double)n * (dim == 3 ? n : 1) * (8.0 * dim + 4.0);
  const uint64_t avail = hpmg_memory_available();
  if (avail > 0 && bytes > 0.9 * (double)avail) {
    char b1[32], b2[32];
    return hpmg_error_set(HPMG_ERR_MEMORY, "built-in mesh '%s' in %dD needs about %s; %s is available", spec, dim,
                          hpmg_format_bytes(bytes, b1, sizeof b1), hpmg_format_bytes((double)avail, b2, sizeof b2));
  }
  const double h = BUILTIN_LENGTH / (double)n;
  m->dim = dim;
  m->num_nodes = (int64_t)nodes;
  m->num_cells = (int64_t)cells;
  const int nv = dim + 1;
  m->num_facets = dim == 3 ? 6 * 2 * n * n : 4 * n;
  m->num_groups = 1 + 2 * dim;
  hpmg_error e = HPMG_SUCCESS;
  for (int d = 0; d < dim && !e; d++) e = hpmg_malloc(sizeof(double) * (size_t)m->num_nodes, &m->x[d]);
  if (!e) e = hpmg_malloc(sizeof(int64_t) * (size_t)(nv * m->num_cells), &m->cell_nodes);
  if (!e) e = hpmg_malloc(sizeof(int) * (size_t)m->num_cells, &m->cell_region);
  if (!e) e = hpmg_malloc(sizeof(int64_t) * (size_t)(dim * m->num_facets), &m->facet_nodes);
  if (!e) e = hpmg_malloc(sizeof(int) * (size_t)m->num_facets, &m->facet_region);
  if (!e) e = hpmg_calloc(sizeof(hpmg_p1_group) * (size_t)m->num_groups, &m->groups);
  if (e) {
    free_partial(m);
    return e;
  }
  /* nodes */
  const int64_t nz = dim == 3 ? n1 : 1;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t k = 0; k < nz; k++)
    for (int64_t j = 0; j < n1; j++)
      for (int64_t i = 0; i < n1; i++) {
        const int64_t id = i + n1 * (j + n1 * k);
        const int64_t ijk[3] = {i, j, k};
        const int interior = i > 0 && i < n && j > 0 && j < n && (dim == 2 || (k > 0 && k < n));
        for (int d = 0; d < dim; d++) {
          double x = (double)ijk[d] * h;
          if (irregular && interior) x += 0.15 * h * hash_unit((uint64_t)id, d);
          m->x[d][id] = x;
        }
      }
  /* cells */
  const int64_t cz = dim == 3 ? n : 1;
  static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  static const int perm_odd[6] = {0, 1, 1, 0, 0, 1};
  const int64_t stride[3] = {1, n1, n1 * n1};
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t k = 0; k < cz; k++)
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < n; i++) {
        const int64_t base = i + n1 * (j + n1 * k), cube = i + n * (j + n * k);
        if (dim == 3) {
          for (int t = 0; t < 6; t++) {
            int64_t *v = m->cell_nodes + 4 * (6 * cube + t);
            v[0] = base;
            v[1] = v[0] + stride[perms[t][0]];
            v[2] = v[1] + stride[perms[t][1]];
            v[3] = v[2] + stride[perms[t][2]];
            if (perm_odd[t]) { /* odd permutation: negative orientation, swap two nodes */
              int64_t s = v[2];
              v[2] = v[3];
              v[3] = s;
            }
            m->cell_region[6 * cube + t] = 1;
          }
        } else {
          int64_t *v = m->cell_nodes + 3 * (2 * cube);
          v[0] = base, v[1] = base + 1, v[2] = base + 1 + n1;
          v[3] = base, v[4] = base + 1 + n1, v[5] = base + n1;
          m->cell_region[2 * cube] = m->cell_region[2 * cube + 1] = 1;
        }
      }
  /* boundary facets: face f = 2*d + side; squares of the face cut along the
   * diagonal from their lowest to their highest corner, as the cells are */
  int64_t fct = 0;
  for (int f = 0; f < 2 * dim; f++) {
    const int d = f / 2, side = f % 2;
    if (dim == 2) {
      const int a = 1 - d; /* direction along the edge */
      for (int64_t s = 0; s < n; s++) {
        int64_t p0 = (side ? n : 0) * stride[d] + s * stride[a], p1 = p0 + stride[a];
        /* outward normal of segment p0->p1 (right-hand rule: (dy, -dx)) */
        const int flip = (d == 0) ? side == 0 : side == 1; /* along +y: normal +x; along +x: normal -y */
        m->facet_nodes[2 * fct] = flip ? p1 : p0;
        m->facet_nodes[2 * fct + 1] = flip ? p0 : p1;
        m->facet_region[fct++] = f + 1;
      }
      continue;
    }
    const int a = (d + 1) % 3, b = (d + 2) % 3; /* (a, b, d) is a cyclic order: a x b = +e_d */
    for (int64_t t = 0; t < n; t++)
      for (int64_t s = 0; s < n; s++) {
        const int64_t p = (side ? n : 0) * stride[d] + s * stride[a] + t * stride[b];
        const int64_t q00 = p, q10 = p + stride[a], q11 = p + stride[a] + stride[b], q01 = p + stride[b];
        /* (q00, q10, q11) has normal +e_d; outward is +e_d on the max side */
        int64_t tri[2][3] = {{q00, q10, q11}, {q00, q11, q01}};
        for (int r = 0; r < 2; r++) {
          int64_t *v = m->facet_nodes + 3 * fct;
          v[0] = tri[r][0];
          v[1] = side ? tri[r][1] : tri[r][2];
          v[2] = side ? tri[r][2] : tri[r][1];
          m->facet_region[fct++] = f + 1;
        }
      }
  }
  m->groups[0].dim = dim;
  m->groups[0].tag = 1;
  snprintf(m->groups[0].name, HPMG_P1_GROUP_NAME_MAX, "domain");
  for (int f = 0; f < 2 * dim; f++) {
    m->groups[1 + f].dim = dim - 1;
    m->groups[1 + f].tag = f + 1;
    snprintf(m->groups[1 + f].name, HPMG_P1_GROUP_NAME_MAX, "%s", face_names[f]);
  }
  if (irregular) {
    int64_t bad = -1;
#pragma omp parallel for schedule(static) reduction(max : bad)
    for (int64_t c = 0; c < m->num_cells; c++)
      if (!(cell_measure(m, c) > 0)) bad = c > bad ? c : bad;
    if (bad >= 0) {
      free_partial(m);
      return hpmg_error_set(HPMG_ERR_NUMERIC, "built-in mesh '%s': the perturbation inverted cell %lld", spec, (long long)bad);
    }
  }
  return HPMG_SUCCESS;
}
