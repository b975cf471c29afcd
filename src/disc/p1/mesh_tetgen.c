/* TetGen (and Triangle) mesh files: STEM.node, STEM.ele and, when present,
 * STEM.face (3D) / STEM.edge (2D) with the boundary facets.
 *
 *   .node  <#points> <dim 2|3> <#attributes> <boundary markers 0|1>
 *          <point#> <x> <y> [<z>] [attributes] [marker]
 *   .ele   <#cells> <nodes per cell: dim+1> <#attributes>
 *          <cell#> <n1> ... <n(dim+1)> [attributes]     first attribute -> region
 *   .face  <#facets> <boundary markers 0|1>
 *          <facet#> <n1> ... <n(dim)> [marker]          marker -> facet region
 *
 * '#' starts a comment. Cells and facets name points by their numbers in the
 * .node file, so 0- and 1-based files (and any other numbering) read alike;
 * the numbers are kept as node tags. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "disc/p1/mesh_internal.h"

#define FAIL(f, pos, ...) p1_file_error((f), (pos), HPMG_ERR_IO, __VA_ARGS__)

/* Move to the start of the next line with data (skipping blank and comment
 * lines); 0 at the end of the file. */
static int data_line(p1_cursor *c) {
  for (;;) {
    p1_skip_space(c);
    if (c->p >= c->end) return 0;
    if (*c->p != '#') return 1;
    p1_next_line(c);
  }
}

static hpmg_error get_i64(const p1_file *f, p1_cursor *c, int64_t *v, const char *what) {
  p1_skip_blank(c);
  if (c->p >= c->end) return FAIL(f, c->p, "truncated file: expected %s", what);
  if (*c->p == '\n' || *c->p == '#') return FAIL(f, c->p, "line ends early: expected %s", what);
  if (p1_parse_i64(c, v) != 0) return FAIL(f, c->p, "expected %s (an integer)", what);
  return HPMG_SUCCESS;
}

static hpmg_error get_f64(const p1_file *f, p1_cursor *c, double *v, const char *what) {
  p1_skip_blank(c);
  if (c->p >= c->end) return FAIL(f, c->p, "truncated file: expected %s", what);
  if (*c->p == '\n' || *c->p == '#') return FAIL(f, c->p, "line ends early: expected %s", what);
  if (p1_parse_f64(c, v) != 0) return FAIL(f, c->p, "expected %s (a number)", what);
  if (!isfinite(*v)) return FAIL(f, c->p, "%s is not finite", what);
  return HPMG_SUCCESS;
}

static hpmg_error get_header(const p1_file *f, p1_cursor *c, int n, int64_t *v, const char *what) {
  if (!data_line(c)) return FAIL(f, c->p, "truncated file: no header line");
  const char *at = c->p;
  for (int k = 0; k < n; k++) {
    HPMG_CALL(get_i64(f, c, &v[k], what));
    if (v[k] < 0) return FAIL(f, at, "negative value %" PRId64 " in the header", v[k]);
  }
  p1_next_line(c);
  return HPMG_SUCCESS;
}

static hpmg_error open_with(const char *stem, const char *ext, p1_file *f, char **path) {
  size_t len = strlen(stem);
  HPMG_CALL(hpmg_malloc(len + strlen(ext) + 1, path));
  memcpy(*path, stem, len);
  strcpy(*path + len, ext);
  return p1_file_open(*path, f);
}

static hpmg_error read_node(p1_file *f, hpmg_p1_mesh *m) {
  p1_cursor c = {f->data, f->data + f->size};
  int64_t h[4];
  if (!data_line(&c)) return FAIL(f, c.p, "truncated file: no header line");
  const char *hdr = c.p;
  HPMG_CALL(get_i64(f, &c, &h[0], "the number of points"));
  HPMG_CALL(get_i64(f, &c, &h[1], "the dimension"));
  HPMG_CALL(get_i64(f, &c, &h[2], "the number of attributes"));
  HPMG_CALL(get_i64(f, &c, &h[3], "the boundary-marker flag"));
  p1_next_line(&c);
  if (h[1] != 2 && h[1] != 3) return FAIL(f, hdr, "dimension %" PRId64 " is not 2 or 3", h[1]);
  if (h[0] < 0 || h[2] < 0 || h[3] < 0 || h[3] > 1 || h[0] > (int64_t)f->size / 2)
    return FAIL(f, hdr, "invalid header");
  const int64_t n = h[0];
  m->dim = (int)h[1];
  size_t bytes = (size_t)(n > 0 ? n : 1) * 8;
  HPMG_CALL(hpmg_malloc(bytes, &m->node_tag));
  for (int d = 0; d < m->dim; d++) HPMG_CALL(hpmg_malloc(bytes, &m->x[d]));
  m->num_nodes = n;
  for (int64_t i = 0; i < n; i++) {
    if (!data_line(&c)) return FAIL(f, c.p, "truncated file: %" PRId64 " of %" PRId64 " points", i, n);
    HPMG_CALL(get_i64(f, &c, &m->node_tag[i], "a point number"));
    for (int d = 0; d < m->dim; d++) HPMG_CALL(get_f64(f, &c, &m->x[d][i], "a coordinate"));
    p1_next_line(&c);
  }
  return HPMG_SUCCESS;
}

static hpmg_error read_ele(p1_file *f, hpmg_p1_mesh *m, const p1_tagmap *map) {
  p1_cursor c = {f->data, f->data + f->size};
  int64_t h[3];
  if (!data_line(&c)) return FAIL(f, c.p, "truncated file: no header line");
  const char *hdr = c.p;
  HPMG_CALL(get_header(f, &c, 3, h, "a header field"));
  const int nv = m->dim + 1;
  if (h[1] != nv)
    return FAIL(f, hdr,
                "%" PRId64 " nodes per cell: hpmg reads linear %s (%d nodes)%s", h[1],
                m->dim == 3 ? "tetrahedra" : "triangles", nv,
                h[1] > nv ? "; second-order cells are not read" : "");
  if (h[0] > (int64_t)f->size / 2) return FAIL(f, hdr, "%" PRId64 " cells do not fit in the file", h[0]);
  const int64_t n = h[0];
  HPMG_CALL(hpmg_malloc((size_t)(n > 0 ? n : 1) * (size_t)nv * 8, &m->cell_nodes));
  HPMG_CALL(hpmg_malloc((size_t)(n > 0 ? n : 1) * sizeof(int), &m->cell_region));
  p1_orient_tally tally = {{0, 0}, {0, 0}, {NULL, NULL}};
  for (int64_t i = 0; i < n; i++) {
    if (!data_line(&c)) return FAIL(f, c.p, "truncated file: %" PRId64 " of %" PRId64 " cells", i, n);
    const char *line = c.p;
    int64_t num, tag[4], *v = m->cell_nodes + nv * i;
    HPMG_CALL(get_i64(f, &c, &num, "a cell number"));
    for (int k = 0; k < nv; k++) {
      HPMG_CALL(get_i64(f, &c, &tag[k], "a point number"));
      v[k] = p1_tagmap_find(map, tag[k]);
      if (v[k] < 0) return FAIL(f, line, "point %" PRId64 " is not in the .node file", tag[k]);
    }
    m->cell_region[i] = 0;
    if (h[2] > 0) {
      double a;
      HPMG_CALL(get_f64(f, &c, &a, "the region attribute"));
      if (a != floor(a) || fabs(a) > INT32_MAX)
        return FAIL(f, line, "region attribute %g is not an integer", a);
      m->cell_region[i] = (int)a;
    }
    int o = p1_cell_orientation(m->dim, m->x, v);
    if (!o)
      return FAIL(f, line, "degenerate %s (zero %s)", m->dim == 3 ? "tetrahedron" : "triangle",
                  m->dim == 3 ? "volume" : "area");
    p1_tally_add(&tally, o, i, line);
    m->num_cells = i + 1;
    p1_next_line(&c);
  }
  return p1_orient_finish(f, m, &tally);
}

static hpmg_error read_face(p1_file *f, hpmg_p1_mesh *m, const p1_tagmap *map) {
  p1_cursor c = {f->data, f->data + f->size};
  int64_t h[2];
  if (!data_line(&c)) return FAIL(f, c.p, "truncated file: no header line");
  const char *hdr = c.p;
  HPMG_CALL(get_header(f, &c, 2, h, "a header field"));
  if (h[1] > 1 || h[0] > (int64_t)f->size / 2) return FAIL(f, hdr, "invalid header");
  const int nv = m->dim;
  const int64_t n = h[0];
  HPMG_CALL(hpmg_malloc((size_t)(n > 0 ? n : 1) * (size_t)nv * 8, &m->facet_nodes));
  HPMG_CALL(hpmg_malloc((size_t)(n > 0 ? n : 1) * sizeof(int), &m->facet_region));
  for (int64_t i = 0; i < n; i++) {
    if (!data_line(&c)) return FAIL(f, c.p, "truncated file: %" PRId64 " of %" PRId64 " facets", i, n);
    const char *line = c.p;
    int64_t num, tag, *v = m->facet_nodes + nv * i;
    HPMG_CALL(get_i64(f, &c, &num, "a facet number"));
    for (int k = 0; k < nv; k++) {
      HPMG_CALL(get_i64(f, &c, &tag, "a point number"));
      v[k] = p1_tagmap_find(map, tag);
      if (v[k] < 0) return FAIL(f, line, "point %" PRId64 " is not in the .node file", tag);
    }
    int64_t marker = 0;
    if (h[1]) HPMG_CALL(get_i64(f, &c, &marker, "the boundary marker"));
    if (marker < INT32_MIN || marker > INT32_MAX)
      return FAIL(f, line, "boundary marker %" PRId64 " is out of range", marker);
    m->facet_region[i] = (int)marker;
    m->num_facets = i + 1;
    p1_next_line(&c);
  }
  return HPMG_SUCCESS;
}

hpmg_error p1_read_tetgen(const char *stem, hpmg_p1_mesh *m) {
  p1_file f = {0};
  char *path = NULL;
  p1_tagmap map = {0};
  hpmg_error e = open_with(stem, ".node", &f, &path);
  if (!e) e = read_node(&f, m);
  if (!e) {
    int64_t dup = -1;
    e = p1_tagmap_build(&map, m->node_tag, m->num_nodes, &dup);
    if (e == HPMG_ERR_ARG)
      e = FAIL(&f, NULL, "point number %" PRId64 " appears twice", m->node_tag[dup]);
  }
  p1_file_close(&f);
  hpmg_free(&path);
  if (!e) e = open_with(stem, ".ele", &f, &path);
  if (!e) e = read_ele(&f, m, &map);
  p1_file_close(&f);
  hpmg_free(&path);
  if (!e) {
    const char *ext = m->dim == 3 ? ".face" : ".edge";
    size_t len = strlen(stem);
    e = hpmg_malloc(len + 6, &path);
    struct stat st;
    if (!e) {
      memcpy(path, stem, len);
      strcpy(path + len, ext);
    }
    if (!e && stat(path, &st) == 0) {
      e = p1_file_open(path, &f);
      if (!e) e = read_face(&f, m, &map);
      p1_file_close(&f);
    } else if (!e) {
      /* no facet file: an empty facet list */
      e = hpmg_malloc(8, &m->facet_nodes);
      if (!e) e = hpmg_malloc(8, &m->facet_region);
    }
    hpmg_free(&path);
  }
  p1_tagmap_free(&map);
  if (!e) e = p1_mesh_drop_unused(m, stem);
  return e;
}
