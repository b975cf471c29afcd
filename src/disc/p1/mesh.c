/* P1 simplex meshes: reading (format dispatch), checking, groups, teardown,
 * and the helpers the readers share (mesh_internal.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "disc/p1/mesh_internal.h"

/* ---------------------------------------------------------------- input file */

hpmg_error p1_file_open(const char *path, p1_file *f) {
  memset(f, 0, sizeof *f);
  f->path = path;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return hpmg_error_set(HPMG_ERR_IO, "mesh '%s': cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return hpmg_error_set(HPMG_ERR_IO, "mesh '%s': not a regular file", path);
  }
  if (st.st_size == 0) {
    close(fd);
    return hpmg_error_set(HPMG_ERR_IO, "mesh '%s', line 1: empty file", path);
  }
  /* MAP_POPULATE: the whole file is read anyway; faulting it in up front is
   * several times cheaper than page by page */
  void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  int e = errno;
  close(fd);
  if (p == MAP_FAILED)
    return hpmg_error_set(HPMG_ERR_IO, "mesh '%s': cannot map: %s", path, strerror(e));
  f->map = p;
  f->data = p;
  f->size = (size_t)st.st_size;
  return HPMG_SUCCESS;
}

void p1_file_close(p1_file *f) {
  if (f->map) munmap(f->map, f->size);
  f->map = NULL;
  f->data = NULL;
}

hpmg_error p1_file_error(const p1_file *f, const char *pos, hpmg_error code, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!pos || !f->data) return hpmg_error_set(code, "mesh '%s': %s", f->path, msg);
  if (pos > f->data + f->size) pos = f->data + f->size;
  if (f->binary)
    return hpmg_error_set(code, "mesh '%s', byte offset %" PRId64 ": %s", f->path,
                          (int64_t)(pos - f->data), msg);
  int64_t line = 1;
  for (const char *q = f->data; q < pos;) {
    const char *nl = memchr(q, '\n', (size_t)(pos - q));
    if (!nl) break;
    line++;
    q = nl + 1;
  }
  return hpmg_error_set(code, "mesh '%s', line %" PRId64 ": %s", f->path, line, msg);
}

/* ------------------------------------------------------------- ASCII numbers */

int p1_parse_i64(p1_cursor *c, int64_t *v) {
  p1_skip_space(c);
  const char *p = c->p, *e = c->end;
  int neg = 0;
  if (p < e && (*p == '-' || *p == '+')) neg = *p++ == '-';
  if (p >= e || *p < '0' || *p > '9') return -1;
  uint64_t r = 0;
  for (; p < e && *p >= '0' && *p <= '9'; p++) {
    if (r > (UINT64_C(1) << 62) / 5) return -1; /* r*10 would exceed 2^63 */
    r = r * 10 + (uint64_t)(*p - '0');
  }
  if (r > (uint64_t)INT64_MAX) return -1;
  if (p < e && !p1_is_space(*p)) return -1;
  *v = neg ? -(int64_t)r : (int64_t)r;
  c->p = p;
  return 0;
}

int p1_parse_f64(p1_cursor *c, double *v) {
  static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  p1_skip_space(c);
  const char *p = c->p, *e = c->end, *start = p;
  int neg = 0;
  if (p < e && (*p == '-' || *p == '+')) neg = *p++ == '-';
  uint64_t mant = 0;
  int digits = 0, frac = 0, any = 0;
  for (; p < e && *p >= '0' && *p <= '9'; p++, any = 1) {
    if (mant == 0 && *p == '0') continue;
    if (digits < 19) mant = mant * 10 + (uint64_t)(*p - '0');
    else frac--; /* digit beyond what mant holds: scale instead */
    digits++;
  }
  if (p < e && *p == '.') {
    for (p++; p < e && *p >= '0' && *p <= '9'; p++, any = 1) {
      if (mant == 0 && *p == '0') {
        frac++;
        continue;
      }
      if (digits < 19) {
        mant = mant * 10 + (uint64_t)(*p - '0');
        frac++;
      }
      digits++;
    }
  }
  int ok_fast = any;
  int64_t ex = 0;
  if (any && p < e && (*p == 'e' || *p == 'E')) {
    const char *q = p + 1;
    int eneg = 0;
    if (q < e && (*q == '-' || *q == '+')) eneg = *q++ == '-';
    if (q >= e || *q < '0' || *q > '9') return -1;
    for (; q < e && *q >= '0' && *q <= '9'; q++)
      if (ex < 100000) ex = ex * 10 + (*q - '0');
    ex = eneg ? -ex : ex;
    p = q;
  }
  if (!any) ok_fast = 0;
  if (p < e && !p1_is_space(*p)) ok_fast = 0;
  int64_t scale = ex - frac;
  if (ok_fast && digits <= 15 && scale >= -22 && scale <= 22) {
    /* mant < 2^53 and 10^|scale| are exact: one correctly rounded operation */
    double d = (double)mant;
    d = scale < 0 ? d / pow10[-scale] : d * pow10[scale];
    *v = neg ? -d : d;
    c->p = p;
    return 0;
  }
  /* long mantissas, large exponents, inf/nan: strtod on a terminated copy */
  const char *t = start;
  while (t < e && !p1_is_space(*t)) t++;
  size_t len = (size_t)(t - start);
  if (len == 0 || len > 127) return -1;
  char buf[128], *endp;
  memcpy(buf, start, len);
  buf[len] = 0;
  *v = strtod(buf, &endp);
  if (endp != buf + len) return -1;
  c->p = t;
  return 0;
}

int p1_parse_word(p1_cursor *c, const char **s, size_t *len) {
  p1_skip_space(c);
  const char *p = c->p;
  while (p < c->end && !p1_is_space(*p)) p++;
  if (p == c->p) return -1;
  *s = c->p;
  *len = (size_t)(p - c->p);
  c->p = p;
  return 0;
}

/* ---------------------------------------------------------------- tag map */

void p1_tagmap_free(p1_tagmap *t) {
  hpmg_free(&t->dense);
  hpmg_free(&t->keys);
  hpmg_free(&t->vals);
}

hpmg_error p1_tagmap_build(p1_tagmap *t, const int64_t *tags, int64_t n, int64_t *dup) {
  memset(t, 0, sizeof *t);
  t->min = INT64_MAX;
  t->max = INT64_MIN;
  for (int64_t i = 0; i < n; i++) {
    if (tags[i] < t->min) t->min = tags[i];
    if (tags[i] > t->max) t->max = tags[i];
  }
  if (n == 0) return HPMG_SUCCESS;
  uint64_t range = (uint64_t)t->max - (uint64_t)t->min + 1;
  if (range <= 2 * (uint64_t)n + 1024) {
    HPMG_CALL(hpmg_malloc(range * sizeof(int64_t), &t->dense));
    memset(t->dense, 0xff, range * sizeof(int64_t)); /* -1 */
    for (int64_t i = 0; i < n; i++) {
      int64_t *slot = &t->dense[tags[i] - t->min];
      if (*slot >= 0) {
        *dup = i;
        p1_tagmap_free(t);
        return HPMG_ERR_ARG;
      }
      *slot = i;
    }
    return HPMG_SUCCESS;
  }
  uint64_t cap = 16;
  while (cap < 2 * (uint64_t)n) cap *= 2;
  t->mask = cap - 1;
  hpmg_error e = hpmg_malloc(cap * sizeof(int64_t), &t->keys);
  if (!e) e = hpmg_malloc(cap * sizeof(int64_t), &t->vals);
  if (e) {
    p1_tagmap_free(t);
    return e;
  }
  for (uint64_t s = 0; s < cap; s++) t->keys[s] = INT64_MIN;
  for (int64_t i = 0; i < n; i++) {
    uint64_t s = p1_hash64((uint64_t)tags[i]) & t->mask;
    while (t->keys[s] != INT64_MIN && t->keys[s] != tags[i]) s = (s + 1) & t->mask;
    if (t->keys[s] == tags[i]) {
      *dup = i;
      p1_tagmap_free(t);
      return HPMG_ERR_ARG;
    }
    t->keys[s] = tags[i];
    t->vals[s] = i;
  }
  return HPMG_SUCCESS;
}

/* ------------------------------------------------------------- Gmsh types */

p1_elem_type p1_gmsh_type(int64_t type) {
  static const p1_elem_type t[] = {
      {0, 0, "unknown"},
      {1, 2, "2-node line"},          {2, 3, "3-node triangle"},   {2, 4, "4-node quadrangle"},
      {3, 4, "4-node tetrahedron"},   {3, 8, "8-node hexahedron"}, {3, 6, "6-node prism"},
      {3, 5, "5-node pyramid"},       {1, 3, "3-node line"},       {2, 6, "6-node triangle"},
      {2, 9, "9-node quadrangle"},    {3, 10, "10-node tetrahedron"},
      {3, 27, "27-node hexahedron"},  {3, 18, "18-node prism"},    {3, 14, "14-node pyramid"},
      {0, 1, "point"},                {2, 8, "8-node quadrangle"}, {3, 20, "20-node hexahedron"},
      {3, 15, "15-node prism"},       {3, 13, "13-node pyramid"},  {2, 9, "9-node triangle"},
      {2, 10, "10-node triangle"},    {2, 12, "12-node triangle"}, {2, 15, "15-node triangle"},
      {2, 15, "15-node triangle"},    {2, 21, "21-node triangle"}, {1, 4, "4-node line"},
      {1, 5, "5-node line"},          {1, 6, "6-node line"},       {3, 20, "20-node tetrahedron"},
      {3, 35, "35-node tetrahedron"}, {3, 56, "56-node tetrahedron"}};
  if (type > 0 && type < (int64_t)(sizeof t / sizeof t[0])) return t[type];
  if (type == 92) return (p1_elem_type){3, 64, "64-node hexahedron"};
  if (type == 93) return (p1_elem_type){3, 125, "125-node hexahedron"};
  return t[0];
}

/* ------------------------------------------------------------ mesh helpers */

void p1_prefault(void *p, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  const uintptr_t page = 4096;
  if (bytes < ((size_t)4 << 20)) return;
  uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + bytes) & ~(page - 1);
  const int64_t slices = 64;
  const uintptr_t step = ((hi - lo) / (uintptr_t)slices + page - 1) & ~(page - 1);
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t k = 0; k < slices; k++) {
    uintptr_t a = lo + (uintptr_t)k * step, b = a + step < hi ? a + step : hi;
    if (a < b) madvise((void *)a, b - a, MADV_POPULATE_WRITE);
  }
#else
  (void)p;
  (void)bytes;
#endif
}

void p1_group_set_name(hpmg_p1_group *g, const char *s, size_t len) {
  if (len >= HPMG_P1_GROUP_NAME_MAX) len = HPMG_P1_GROUP_NAME_MAX - 1;
  memcpy(g->name, s, len);
  g->name[len] = 0;
}

hpmg_error p1_mesh_drop_unused(hpmg_p1_mesh *m, const char *path) {
  const int nv = m->dim + 1;
  int64_t *map = NULL;
  HPMG_CALL(hpmg_calloc((size_t)(m->num_nodes > 0 ? m->num_nodes : 1) * sizeof(int64_t), &map));
  const int64_t nidx = m->num_cells * nv;
  unsigned char *used_by = (unsigned char *)map; /* num_nodes bytes fit in map */
#pragma omp parallel for schedule(static) if (nidx > 100000)
  for (int64_t i = 0; i < nidx; i++) {
#pragma omp atomic write
    used_by[m->cell_nodes[i]] = 1;
  }
  int64_t used = 0;
  for (int64_t i = 0; i < m->num_nodes; i++) used += used_by[i];
  if (used == m->num_nodes) {
    hpmg_free(&map);
    return HPMG_SUCCESS;
  }
  /* spread the flags to int64 (backwards: the bytes sit in the first words) */
  for (int64_t i = m->num_nodes - 1; i >= 0; i--) map[i] = used_by[i];
  for (int64_t f = 0; f < m->num_facets * m->dim; f++)
    if (!map[m->facet_nodes[f]]) {
      int64_t tag = m->node_tag ? m->node_tag[m->facet_nodes[f]] : m->facet_nodes[f];
      hpmg_free(&map);
      return hpmg_error_set(HPMG_ERR_IO,
                            "mesh '%s': boundary facet %" PRId64 " uses node %" PRId64
                            ", which no cell uses",
                            path, f / m->dim, tag);
    }
  int64_t k = 0;
  for (int64_t i = 0; i < m->num_nodes; i++) {
    if (!map[i]) {
      map[i] = -1;
      continue;
    }
    map[i] = k;
    for (int d = 0; d < 3; d++)
      if (m->x[d]) m->x[d][k] = m->x[d][i];
    if (m->node_tag) m->node_tag[k] = m->node_tag[i];
    k++;
  }
  m->num_nodes = k;
  for (int64_t i = 0; i < nidx; i++) m->cell_nodes[i] = map[m->cell_nodes[i]];
  for (int64_t f = 0; f < m->num_facets * m->dim; f++) m->facet_nodes[f] = map[m->facet_nodes[f]];
  hpmg_free(&map);
  return HPMG_SUCCESS;
}

hpmg_error p1_orient_finish(const p1_file *f, hpmg_p1_mesh *m, const p1_orient_tally *t) {
  const int nv = m->dim + 1;
  if (t->count[0] == 0) return HPMG_SUCCESS;
  if (t->count[1] == 0) {
    /* the whole file in the opposite orientation: a convention, not an error */
    int64_t *cn = m->cell_nodes;
    const int64_t n = m->num_cells;
#pragma omp parallel for schedule(static) if (n > 100000)
    for (int64_t c = 0; c < n; c++) {
      int64_t w = cn[nv * c + nv - 1];
      cn[nv * c + nv - 1] = cn[nv * c + nv - 2];
      cn[nv * c + nv - 2] = w;
    }
    return HPMG_SUCCESS;
  }
  const char *vol = m->dim == 3 ? "volume" : "area";
  if (t->count[0] <= t->count[1])
    return p1_file_error(f, t->at[0], HPMG_ERR_IO,
                         "cell %" PRId64 " is inverted (negative %s) while %" PRId64
                         " cells are positively oriented (%" PRId64 " inverted in all)",
                         t->first[0], vol, t->count[1], t->count[0]);
  return p1_file_error(f, t->at[1], HPMG_ERR_IO,
                       "cell %" PRId64 " is positively oriented while %" PRId64
                       " cells are inverted (negative %s): mixed orientations (%" PRId64
                       " positive in all)",
                       t->first[1], t->count[0], vol, t->count[1]);
}

/* ------------------------------------------------------------ public entry */

static int file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static hpmg_error read_any(const char *path, hpmg_p1_mesh *m) {
  static const char *const tetgen_ext[] = {".node", ".ele", ".face", ".edge"};
  size_t len = strlen(path);
  for (int k = 0; k < 4; k++)
    if (has_suffix(path, tetgen_ext[k])) {
      char *stem = NULL;
      HPMG_CALL(hpmg_malloc(len + 1, &stem));
      memcpy(stem, path, len + 1);
      stem[len - strlen(tetgen_ext[k])] = 0;
      hpmg_error e = p1_read_tetgen(stem, m);
      hpmg_free(&stem);
      return e;
    }
  if (!file_exists(path)) {
    /* a TetGen stem: path.node (and path.ele) next to each other */
    char *node = NULL;
    HPMG_CALL(hpmg_malloc(len + 6, &node));
    memcpy(node, path, len);
    memcpy(node + len, ".node", 6);
    int tetgen = file_exists(node);
    hpmg_free(&node);
    if (tetgen) return p1_read_tetgen(path, m);
  }
  p1_file f;
  HPMG_CALL(p1_file_open(path, &f));
  p1_cursor c = {f.data, f.data + f.size};
  p1_skip_space(&c);
  hpmg_error e;
  if ((size_t)(c.end - c.p) >= 11 && memcmp(c.p, "$MeshFormat", 11) == 0)
    e = p1_read_msh(&f, m);
  else
    e = p1_file_error(&f, c.p, HPMG_ERR_IO,
                      "not a mesh file: expected a Gmsh file ($MeshFormat) or TetGen "
                      "files (.node/.ele)");
  p1_file_close(&f);
  return e;
}

hpmg_error hpmg_p1_mesh_read(const char *path, hpmg_p1_mesh *m) {
  HPMG_CHECK_ARG(m, "hpmg_p1_mesh_read: mesh is NULL");
  memset(m, 0, sizeof *m);
  HPMG_CHECK_ARG(path && path[0], "hpmg_p1_mesh_read: path is NULL or empty");
  hpmg_error e = read_any(path, m);
  if (!e && m->num_cells == 0)
    e = hpmg_error_set(HPMG_ERR_IO, "mesh '%s': no cells (tetrahedra or triangles)", path);
  if (e) {
    hpmg_p1_mesh_destroy(m);
    memset(m, 0, sizeof *m);
  }
  return e;
}

void hpmg_p1_mesh_destroy(hpmg_p1_mesh *m) {
  if (!m) return;
  for (int d = 0; d < 3; d++) hpmg_free(&m->x[d]);
  hpmg_free(&m->node_tag);
  hpmg_free(&m->cell_nodes);
  hpmg_free(&m->cell_region);
  hpmg_free(&m->facet_nodes);
  hpmg_free(&m->facet_region);
  hpmg_free(&m->groups);
  m->num_nodes = m->num_cells = m->num_facets = 0;
  m->num_groups = 0;
}

hpmg_error hpmg_p1_mesh_check(const hpmg_p1_mesh *m) {
  HPMG_CHECK_ARG(m, "p1 mesh check: mesh is NULL");
  HPMG_CHECK_ARG(m->dim == 2 || m->dim == 3, "p1 mesh check: dim must be 2 or 3 (got %d)", m->dim);
  HPMG_CHECK_ARG(m->num_nodes >= 0 && m->num_cells >= 0 && m->num_facets >= 0,
                 "p1 mesh check: negative counts");
  for (int d = 0; d < m->dim; d++)
    HPMG_CHECK_ARG(m->x[d] || m->num_nodes == 0, "p1 mesh check: coordinate array %d is NULL", d);
  HPMG_CHECK_ARG(m->num_cells == 0 || (m->cell_nodes && m->cell_region),
                 "p1 mesh check: cell arrays are NULL");
  HPMG_CHECK_ARG(m->num_facets == 0 || (m->facet_nodes && m->facet_region),
                 "p1 mesh check: facet arrays are NULL");
  for (int64_t i = 0; i < m->num_nodes; i++)
    for (int d = 0; d < m->dim; d++)
      HPMG_CHECK_ARG(isfinite(m->x[d][i]), "p1 mesh check: node %" PRId64 " has coordinate %g",
                     i, m->x[d][i]);
  const int nv = m->dim + 1;
  int64_t bad = INT64_MAX;
#pragma omp parallel for reduction(min : bad) schedule(static) if (m->num_cells > 100000)
  for (int64_t c = 0; c < m->num_cells; c++) {
    const int64_t *v = m->cell_nodes + nv * c;
    int ok = 1;
    for (int k = 0; k < nv; k++) ok &= v[k] >= 0 && v[k] < m->num_nodes;
    if (ok && !(p1_cell_quality(m->dim, m->x, v) > P1_DEGENERATE_TOL)) ok = 0;
    if (!ok && c < bad) bad = c;
  }
  if (bad != INT64_MAX) {
    const int64_t *v = m->cell_nodes + nv * bad;
    for (int k = 0; k < nv; k++)
      HPMG_CHECK_ARG(v[k] >= 0 && v[k] < m->num_nodes,
                     "p1 mesh check: cell %" PRId64 " node %d is %" PRId64 ", outside 0..%" PRId64,
                     bad, k, v[k], m->num_nodes - 1);
    return hpmg_error_set(HPMG_ERR_ARG,
                          "p1 mesh check: cell %" PRId64 " is degenerate or negatively oriented "
                          "(signed %s / longest edge^%d = %.3g)",
                          bad, m->dim == 3 ? "6*volume" : "2*area", m->dim,
                          p1_cell_quality(m->dim, m->x, v));
  }
  for (int64_t f = 0; f < m->num_facets * m->dim; f++)
    HPMG_CHECK_ARG(m->facet_nodes[f] >= 0 && m->facet_nodes[f] < m->num_nodes,
                   "p1 mesh check: facet %" PRId64 " uses node %" PRId64 ", outside 0..%" PRId64,
                   f / m->dim, m->facet_nodes[f], m->num_nodes - 1);
  return HPMG_SUCCESS;
}

int hpmg_p1_mesh_group_tag(const hpmg_p1_mesh *m, int dim, const char *name) {
  if (!m || !name) return -1;
  for (int g = 0; g < m->num_groups; g++)
    if (m->groups[g].dim == dim && strcmp(m->groups[g].name, name) == 0) return m->groups[g].tag;
  return -1;
}
