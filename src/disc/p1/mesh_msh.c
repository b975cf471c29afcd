/* Gmsh MSH reader: format 4.1 (ASCII and binary) and 2.2 (ASCII).
 *
 * The file is mapped and parsed in place. Sections are processed in file
 * order ($MeshFormat, $PhysicalNames, $Entities, $Nodes, $Elements; others
 * are skipped). Elements are read in two passes: the first counts them by
 * dimension, which fixes the mesh's dimension (3 if there are tetrahedra, 2
 * if only triangles) and the array sizes; the second maps node tags to
 * indices, stores the cells and counts them by orientation (all negative:
 * reversed after reading; both orientations: refused). Binary element blocks are
 * converted in parallel straight from the mapped bytes. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disc/p1/mesh_internal.h"

typedef struct {
  int64_t tag;
  int phys;
} ent_phys;

typedef struct {
  p1_file *f;
  hpmg_p1_mesh *m;
  int version; /* 2 or 4 */
  int binary;
  ent_phys *ent[4]; /* $Entities: first physical tag of each entity, sorted by tag */
  int64_t nent[4];
  int have_nodes, have_elements;
  p1_tagmap map;
  p1_orient_tally tally;
} msh_reader;

#define FAIL(pos, ...) p1_file_error(r->f, (pos), HPMG_ERR_IO, __VA_ARGS__)

/* ------------------------------------------------------------ binary access */

static inline int32_t rd_i32(const char *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}
static inline uint64_t rd_u64(const char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
static inline double rd_f64(const char *p) {
  double v;
  memcpy(&v, p, 8);
  return v;
}

/* Bytes left from p must be at least n (a size from the file: no overflow). */
static hpmg_error need(msh_reader *r, const char *p, uint64_t n, const char *what) {
  uint64_t left = (uint64_t)(r->f->data + r->f->size - p);
  if (p > r->f->data + r->f->size || n > left)
    return FAIL(p, "truncated file: %s needs %" PRIu64 " bytes, %" PRIu64 " left", what, n,
                p > r->f->data + r->f->size ? 0 : left);
  return HPMG_SUCCESS;
}

/* One ASCII integer, with an error naming what was expected. */
static hpmg_error get_i64(msh_reader *r, p1_cursor *c, int64_t *v, const char *what) {
  if (p1_parse_i64(c, v) == 0) return HPMG_SUCCESS;
  p1_skip_space(c);
  if (c->p >= c->end) return FAIL(c->p, "truncated file: expected %s", what);
  return FAIL(c->p, "expected %s (an integer)", what);
}

/* An integer on the current line (for element lines). */
static hpmg_error get_i64_inline(msh_reader *r, p1_cursor *c, int64_t *v, const char *what) {
  p1_skip_blank(c);
  if (c->p < c->end && *c->p == '\n') return FAIL(c->p, "line ends early: expected %s", what);
  return get_i64(r, c, v, what);
}

static hpmg_error get_f64(msh_reader *r, p1_cursor *c, double *v, const char *what) {
  if (p1_parse_f64(c, v) == 0) {
    if (!isfinite(*v)) return FAIL(c->p, "%s is not finite", what);
    return HPMG_SUCCESS;
  }
  p1_skip_space(c);
  if (c->p >= c->end) return FAIL(c->p, "truncated file: expected %s", what);
  return FAIL(c->p, "expected %s (a number)", what);
}

/* A count from the file: 0 <= v <= limit. */
static hpmg_error get_count(msh_reader *r, p1_cursor *c, int64_t *v, int64_t limit,
                            const char *what) {
  const char *at = c->p;
  if (r->binary) {
    HPMG_CALL(need(r, c->p, 8, what));
    uint64_t u = rd_u64(c->p);
    if (u > (uint64_t)limit) return FAIL(at, "%s %" PRIu64 " is out of range", what, u);
    *v = (int64_t)u;
    c->p += 8;
    return HPMG_SUCCESS;
  }
  HPMG_CALL(get_i64(r, c, v, what));
  if (*v < 0 || *v > limit) return FAIL(at, "%s %" PRId64 " is out of range", what, *v);
  return HPMG_SUCCESS;
}

static hpmg_error get_int(msh_reader *r, p1_cursor *c, int64_t *v, const char *what) {
  if (r->binary) {
    HPMG_CALL(need(r, c->p, 4, what));
    *v = rd_i32(c->p);
    c->p += 4;
    return HPMG_SUCCESS;
  }
  return get_i64(r, c, v, what);
}

/* ------------------------------------------------------------ sections */

static hpmg_error read_format(msh_reader *r, p1_cursor *c) {
  const char *at;
  size_t len;
  p1_skip_space(c);
  at = c->p;
  if (p1_parse_word(c, &at, &len) != 0) return FAIL(c->p, "truncated file: expected the MSH version");
  int64_t type, size;
  if (len == 3 && memcmp(at, "4.1", 3) == 0)
    r->version = 4;
  else if (len >= 2 && at[0] == '2' && at[1] == '.')
    r->version = 2;
  else
    return FAIL(at, "MSH version %.*s is not read (hpmg reads 4.1 and 2.2: gmsh -format msh41)",
                (int)(len < 16 ? len : 16), at);
  HPMG_CALL(get_i64(r, c, &type, "the file type (0 ASCII, 1 binary)"));
  HPMG_CALL(get_i64(r, c, &size, "the data size"));
  if (type != 0 && type != 1) return FAIL(c->p, "file type %" PRId64 " is neither 0 nor 1", type);
  if (type == 1 && r->version == 2)
    return FAIL(at, "binary MSH 2 files are not read (use ASCII 2.2 or MSH 4.1)");
  if (type == 1 && size != 8)
    return FAIL(at, "binary data size %" PRId64 " is not read (only 8-byte size_t)", size);
  p1_next_line(c);
  if (type == 1) {
    r->binary = 1;
    r->f->binary = 1;
    HPMG_CALL(need(r, c->p, 4, "the byte-order mark"));
    if (rd_i32(c->p) != 1)
      return FAIL(c->p, "byte-order mark is not 1: the file's endianness differs from this machine's");
    c->p += 4;
  }
  return HPMG_SUCCESS;
}

static hpmg_error read_physical_names(msh_reader *r, p1_cursor *c) {
  int64_t n;
  /* $PhysicalNames is ASCII in binary files too */
  int bin = r->binary;
  r->binary = 0;
  hpmg_error e = get_count(r, c, &n, 1 << 20, "the number of physical names");
  r->binary = bin;
  HPMG_CALL(e);
  hpmg_p1_mesh *m = r->m;
  HPMG_CALL(hpmg_calloc((size_t)(n > 0 ? n : 1) * sizeof(hpmg_p1_group), &m->groups));
  for (int64_t g = 0; g < n; g++) {
    int64_t dim, tag;
    HPMG_CALL(get_i64(r, c, &dim, "a physical group's dimension"));
    const char *at = c->p;
    HPMG_CALL(get_i64(r, c, &tag, "a physical tag"));
    if (dim < 0 || dim > 3) return FAIL(at, "physical group dimension %" PRId64 " is not 0..3", dim);
    if (tag < INT32_MIN || tag > INT32_MAX) return FAIL(at, "physical tag %" PRId64 " is out of range", tag);
    p1_skip_blank(c);
    if (c->p >= c->end || *c->p != '"') return FAIL(c->p, "expected a quoted physical name");
    const char *s = ++c->p;
    while (c->p < c->end && *c->p != '"' && *c->p != '\n') c->p++;
    if (c->p >= c->end || *c->p != '"') return FAIL(s, "physical name has no closing quote");
    p1_group_set_name(&m->groups[g], s, (size_t)(c->p - s));
    m->groups[g].dim = (int)dim;
    m->groups[g].tag = (int)tag;
    m->num_groups = (int)(g + 1);
    p1_next_line(c);
  }
  return HPMG_SUCCESS;
}

static int ent_cmp(const void *a, const void *b) {
  int64_t x = ((const ent_phys *)a)->tag, y = ((const ent_phys *)b)->tag;
  return x < y ? -1 : x > y;
}

static int entity_phys(const msh_reader *r, int64_t dim, int64_t tag) {
  if (dim < 0 || dim > 3 || !r->ent[dim]) return 0;
  ent_phys key = {tag, 0};
  const ent_phys *e = bsearch(&key, r->ent[dim], (size_t)r->nent[dim], sizeof key, ent_cmp);
  return e ? e->phys : 0;
}

static hpmg_error skip_doubles(msh_reader *r, p1_cursor *c, int n) {
  for (int k = 0; k < n; k++) {
    if (r->binary) {
      HPMG_CALL(need(r, c->p, 8, "an entity's coordinates"));
      c->p += 8;
    } else {
      double v;
      HPMG_CALL(get_f64(r, c, &v, "an entity's coordinates"));
    }
  }
  return HPMG_SUCCESS;
}

static hpmg_error read_entities(msh_reader *r, p1_cursor *c) {
  int64_t n[4];
  /* an entity takes at least 2 bytes (ASCII) or 36 (binary): counts beyond
   * what the file can hold are malformed, not an allocation to attempt */
  const int64_t room = (int64_t)(r->f->data + r->f->size - c->p) / (r->binary ? 36 : 2);
  for (int d = 0; d < 4; d++) {
    const char *at = c->p;
    HPMG_CALL(get_count(r, c, &n[d], INT32_MAX, "the number of entities"));
    if (n[d] > room) return FAIL(at, "%" PRId64 " entities do not fit in the rest of the file", n[d]);
  }
  for (int d = 0; d < 4; d++) {
    HPMG_CALL(hpmg_malloc((size_t)(n[d] > 0 ? n[d] : 1) * sizeof(ent_phys), &r->ent[d]));
    r->nent[d] = n[d];
    for (int64_t i = 0; i < n[d]; i++) {
      int64_t tag, np, nb, v;
      HPMG_CALL(get_int(r, c, &tag, "an entity tag"));
      HPMG_CALL(skip_doubles(r, c, d == 0 ? 3 : 6));
      HPMG_CALL(get_count(r, c, &np, INT32_MAX, "the number of physical tags"));
      r->ent[d][i] = (ent_phys){tag, 0};
      for (int64_t k = 0; k < np; k++) {
        HPMG_CALL(get_int(r, c, &v, "a physical tag"));
        /* an entity in several physical groups takes the first one's tag */
        if (k == 0) r->ent[d][i].phys = (int)(v < 0 ? -v : v);
      }
      if (d > 0) {
        HPMG_CALL(get_count(r, c, &nb, INT32_MAX, "the number of bounding entities"));
        for (int64_t k = 0; k < nb; k++) HPMG_CALL(get_int(r, c, &v, "a bounding entity"));
      }
    }
    qsort(r->ent[d], (size_t)n[d], sizeof(ent_phys), ent_cmp);
  }
  return HPMG_SUCCESS;
}

static hpmg_error alloc_nodes(msh_reader *r, int64_t n) {
  hpmg_p1_mesh *m = r->m;
  size_t bytes = (size_t)(n > 0 ? n : 1) * 8;
  HPMG_CALL(hpmg_malloc(bytes, &m->node_tag));
  for (int d = 0; d < 3; d++) HPMG_CALL(hpmg_malloc(bytes, &m->x[d]));
  m->num_nodes = n;
  return HPMG_SUCCESS;
}

/* Most nodes the rest of the file can hold (32 bytes each in binary, at
 * least 8 in ASCII): a larger count is malformed, not an allocation to try. */
static int64_t node_room(const msh_reader *r, const p1_cursor *c) {
  return (int64_t)(r->f->data + r->f->size - c->p) / (r->binary ? 32 : 8);
}

static hpmg_error build_map(msh_reader *r, const char *section) {
  int64_t dup = -1;
  hpmg_error e = p1_tagmap_build(&r->map, r->m->node_tag, r->m->num_nodes, &dup);
  if (e == HPMG_ERR_ARG)
    return FAIL(section, "node tag %" PRId64 " is defined twice in $Nodes", r->m->node_tag[dup]);
  return e;
}

static hpmg_error read_nodes4(msh_reader *r, p1_cursor *c) {
  const char *sec = c->p;
  int64_t nblocks, n, mn, mx;
  HPMG_CALL(get_count(r, c, &nblocks, INT64_MAX / 2, "the number of node blocks"));
  HPMG_CALL(get_count(r, c, &n, node_room(r, c), "the number of nodes"));
  HPMG_CALL(get_count(r, c, &mn, INT64_MAX, "the minimum node tag"));
  HPMG_CALL(get_count(r, c, &mx, INT64_MAX, "the maximum node tag"));
  if (r->binary) HPMG_CALL(need(r, c->p, (uint64_t)n * 32, "the nodes"));
  HPMG_CALL(alloc_nodes(r, n));
  hpmg_p1_mesh *m = r->m;
  int64_t k = 0;
  for (int64_t b = 0; b < nblocks; b++) {
    int64_t edim, etag, param, nb;
    const char *hdr = c->p;
    HPMG_CALL(get_int(r, c, &edim, "a node block's entity dimension"));
    HPMG_CALL(get_int(r, c, &etag, "a node block's entity tag"));
    HPMG_CALL(get_int(r, c, &param, "a node block's parametric flag"));
    HPMG_CALL(get_count(r, c, &nb, n - k, "the node block's size"));
    if (edim < 0 || edim > 3 || (param != 0 && param != 1))
      return FAIL(hdr, "node block header (dimension %" PRId64 ", parametric %" PRId64 ") is invalid",
                  edim, param);
    const int stride = 3 + (param ? (int)edim : 0);
    if (r->binary) {
      HPMG_CALL(need(r, c->p, (uint64_t)nb * (8 + 8 * (uint64_t)stride), "a node block"));
      const char *t = c->p, *xs = c->p + 8 * nb;
      for (int64_t i = 0; i < nb; i++) {
        uint64_t tag = rd_u64(t + 8 * i);
        if (tag > INT64_MAX) return FAIL(t + 8 * i, "node tag %" PRIu64 " is out of range", tag);
        m->node_tag[k + i] = (int64_t)tag;
        const char *p = xs + 8 * stride * i;
        for (int d = 0; d < 3; d++) {
          double v = rd_f64(p + 8 * d);
          if (!isfinite(v)) return FAIL(p + 8 * d, "node coordinate is not finite");
          m->x[d][k + i] = v;
        }
      }
      c->p = xs + 8 * stride * nb;
    } else {
      for (int64_t i = 0; i < nb; i++) {
        const char *at = c->p;
        HPMG_CALL(get_i64(r, c, &m->node_tag[k + i], "a node tag"));
        if (m->node_tag[k + i] < 0) return FAIL(at, "node tag %" PRId64 " is negative", m->node_tag[k + i]);
      }
      for (int64_t i = 0; i < nb; i++) {
        for (int d = 0; d < 3; d++) HPMG_CALL(get_f64(r, c, &m->x[d][k + i], "a node coordinate"));
        for (int d = 3; d < stride; d++) {
          double v;
          HPMG_CALL(get_f64(r, c, &v, "a parametric coordinate"));
        }
      }
    }
    k += nb;
  }
  if (k != n) return FAIL(c->p, "the node blocks hold %" PRId64 " nodes, the header says %" PRId64, k, n);
  r->have_nodes = 1;
  return build_map(r, sec);
}

static hpmg_error read_nodes2(msh_reader *r, p1_cursor *c) {
  const char *sec = c->p;
  int64_t n;
  HPMG_CALL(get_count(r, c, &n, node_room(r, c), "the number of nodes"));
  HPMG_CALL(alloc_nodes(r, n));
  hpmg_p1_mesh *m = r->m;
  for (int64_t i = 0; i < n; i++) {
    const char *at = c->p;
    HPMG_CALL(get_i64(r, c, &m->node_tag[i], "a node tag"));
    if (m->node_tag[i] < 0) return FAIL(at, "node tag %" PRId64 " is negative", m->node_tag[i]);
    for (int d = 0; d < 3; d++) HPMG_CALL(get_f64(r, c, &m->x[d][i], "a node coordinate"));
  }
  r->have_nodes = 1;
  return build_map(r, sec);
}

/* ------------------------------------------------------------ elements */

/* What the mesh keeps of elements of type info: 2 cell, 1 facet, 0 ignored,
 * -1 refused. */
static int elem_role(int mesh_dim, p1_elem_type t, int64_t type) {
  if (t.dim == mesh_dim) return (mesh_dim == 3 ? type == 4 : type == 2) ? 2 : -1;
  if (t.dim == mesh_dim - 1) return (mesh_dim == 3 ? type == 2 : type == 1) ? 1 : -1;
  return 0;
}

static hpmg_error refuse_type(msh_reader *r, const char *at, int mesh_dim, p1_elem_type t,
                              int64_t type) {
  if (t.nodes == 0) return FAIL(at, "unknown element type %" PRId64, type);
  return FAIL(at,
              "element type %" PRId64 " (%s) is not read: a %dD mesh holds linear %s, with "
              "%s boundary facets",
              type, t.name, mesh_dim, mesh_dim == 3 ? "tetrahedra (type 4)" : "triangles (type 2)",
              mesh_dim == 3 ? "triangle (type 2)" : "line (type 1)");
}

/* Counts from the first pass over the elements. */
typedef struct {
  int64_t count[4]; /* elements of known types per dimension */
  int64_t cells, facets;
} elem_counts;

static hpmg_error alloc_elements(msh_reader *r, int dim, const elem_counts *ec) {
  hpmg_p1_mesh *m = r->m;
  m->dim = dim;
  int64_t nc = ec->count[dim], nf = ec->count[dim - 1];
  HPMG_CALL(hpmg_malloc((size_t)(nc > 0 ? nc : 1) * (size_t)(dim + 1) * 8, &m->cell_nodes));
  HPMG_CALL(hpmg_malloc((size_t)(nc > 0 ? nc : 1) * sizeof(int), &m->cell_region));
  HPMG_CALL(hpmg_malloc((size_t)(nf > 0 ? nf : 1) * (size_t)dim * 8, &m->facet_nodes));
  HPMG_CALL(hpmg_malloc((size_t)(nf > 0 ? nf : 1) * sizeof(int), &m->facet_region));
  p1_prefault(m->cell_nodes, (size_t)nc * (size_t)(dim + 1) * 8);
  p1_prefault(m->cell_region, (size_t)nc * sizeof(int));
  return HPMG_SUCCESS;
}

static int mesh_dim_of(const elem_counts *ec) { return ec->count[3] > 0 ? 3 : ec->count[2] > 0 ? 2 : 0; }

/* Map nv tags to indices into out; returns -1 or the position of the first
 * unknown tag. */
static inline int map_tags(const p1_tagmap *map, const int64_t *tags, int nv, int64_t *out) {
  for (int k = 0; k < nv; k++) {
    out[k] = p1_tagmap_find(map, tags[k]);
    if (out[k] < 0) return k;
  }
  return -1;
}

/* Store one ASCII-parsed element of role 1 or 2. */
static hpmg_error store_element(msh_reader *r, const char *at, int role, const int64_t *tags,
                                int phys) {
  hpmg_p1_mesh *m = r->m;
  const int nv = role == 2 ? m->dim + 1 : m->dim;
  int64_t *dst = role == 2 ? m->cell_nodes + nv * m->num_cells : m->facet_nodes + nv * m->num_facets;
  int k = map_tags(&r->map, tags, nv, dst);
  if (k >= 0) return FAIL(at, "node tag %" PRId64 " is not in $Nodes", tags[k]);
  if (role == 2) {
    int o = p1_cell_orientation(m->dim, m->x, dst);
    if (!o)
      return FAIL(at, "degenerate %s (zero %s)", m->dim == 3 ? "tetrahedron" : "triangle",
                  m->dim == 3 ? "volume" : "area");
    p1_tally_add(&r->tally, o, m->num_cells, at);
    m->cell_region[m->num_cells++] = phys;
  } else {
    m->facet_region[m->num_facets++] = phys;
  }
  return HPMG_SUCCESS;
}

/* Binary block of n elements of role 1 or 2, nv nodes each, at p. */
static hpmg_error store_block_binary(msh_reader *r, const char *p, int64_t n, int role, int phys) {
  hpmg_p1_mesh *m = r->m;
  const int nv = role == 2 ? m->dim + 1 : m->dim;
  const int64_t stride = 8 * (1 + nv);
  int64_t *dst0 = role == 2 ? m->cell_nodes + nv * m->num_cells : m->facet_nodes + nv * m->num_facets;
  int *reg = role == 2 ? m->cell_region + m->num_cells : m->facet_region + m->num_facets;
  int64_t bad = INT64_MAX;
  /* per orientation (0 negative, 1 positive): count and first element */
  int64_t nneg = 0, npos = 0, fneg = INT64_MAX, fpos = INT64_MAX;
  const p1_tagmap *map = &r->map;
  const int dim = m->dim;
  double *const *x = m->x;
#pragma omp parallel for schedule(static) reduction(min : bad, fneg, fpos) \
    reduction(+ : nneg, npos) if (n > 20000)
  for (int64_t i = 0; i < n; i++) {
    const char *q = p + stride * i + 8;
    int64_t *dst = dst0 + nv * i;
    int ok = 1;
    for (int k = 0; k < nv; k++) {
      int64_t idx = p1_tagmap_find(map, (int64_t)rd_u64(q + 8 * k));
      ok &= idx >= 0;
      dst[k] = idx;
    }
    if (ok && role == 2) {
      int o = p1_cell_orientation(dim, x, dst);
      ok = o != 0;
      if (o > 0) {
        npos++;
        if (i < fpos) fpos = i;
      } else if (o < 0) {
        nneg++;
        if (i < fneg) fneg = i;
      }
    }
    reg[i] = phys;
    if (!ok && i < bad) bad = i;
  }
  if (bad != INT64_MAX) {
    const char *q = p + stride * bad + 8;
    for (int k = 0; k < nv; k++) {
      int64_t tag = (int64_t)rd_u64(q + 8 * k);
      if (p1_tagmap_find(map, tag) < 0)
        return FAIL(q + 8 * k, "node tag %" PRId64 " is not in $Nodes", tag);
    }
    return FAIL(p + stride * bad, "degenerate %s (zero %s)", dim == 3 ? "tetrahedron" : "triangle",
                dim == 3 ? "volume" : "area");
  }
  if (role == 2) {
    if (nneg) p1_tally_add(&r->tally, -1, m->num_cells + fneg, p + stride * fneg);
    if (npos) p1_tally_add(&r->tally, 1, m->num_cells + fpos, p + stride * fpos);
    r->tally.count[0] += nneg > 0 ? nneg - 1 : 0;
    r->tally.count[1] += npos > 0 ? npos - 1 : 0;
    m->num_cells += n;
  } else {
    m->num_facets += n;
  }
  return HPMG_SUCCESS;
}

static hpmg_error read_elements4(msh_reader *r, p1_cursor *c) {
  if (!r->have_nodes) return FAIL(c->p, "$Elements comes before $Nodes");
  int64_t nblocks, n, mn, mx;
  HPMG_CALL(get_count(r, c, &nblocks, INT64_MAX / 2, "the number of element blocks"));
  HPMG_CALL(get_count(r, c, &n, INT64_MAX / 64, "the number of elements"));
  HPMG_CALL(get_count(r, c, &mn, INT64_MAX, "the minimum element tag"));
  HPMG_CALL(get_count(r, c, &mx, INT64_MAX, "the maximum element tag"));
  const p1_cursor body = *c;
  elem_counts ec = {{0}, 0, 0};
  int64_t total = 0;
  for (int pass = 0; pass < 2; pass++) {
    *c = body;
    int dim = pass ? r->m->dim : 0;
    for (int64_t b = 0; b < nblocks; b++) {
      int64_t edim, etag, type, nb;
      const char *hdr = c->p;
      HPMG_CALL(get_int(r, c, &edim, "an element block's entity dimension"));
      HPMG_CALL(get_int(r, c, &etag, "an element block's entity tag"));
      HPMG_CALL(get_int(r, c, &type, "an element block's element type"));
      HPMG_CALL(get_count(r, c, &nb, n, "the element block's size"));
      p1_elem_type t = p1_gmsh_type(type);
      if (t.nodes == 0) return refuse_type(r, hdr, 3, t, type);
      if (pass == 0) {
        ec.count[t.dim] += nb;
        total += nb;
        if (total > n) return FAIL(hdr, "the element blocks hold more than the %" PRId64 " elements the header says", n);
      }
      int role = pass ? elem_role(dim, t, type) : 0;
      if (role < 0) return refuse_type(r, hdr, dim, t, type);
      int phys = pass ? entity_phys(r, edim, etag) : 0;
      if (r->binary) {
        uint64_t bytes = (uint64_t)nb * 8 * (1 + (uint64_t)t.nodes);
        HPMG_CALL(need(r, c->p, bytes, "an element block"));
        if (role > 0) HPMG_CALL(store_block_binary(r, c->p, nb, role, phys));
        c->p += bytes;
        continue;
      }
      for (int64_t i = 0; i < nb; i++) {
        p1_skip_space(c);
        const char *line = c->p;
        if (c->p >= c->end) return FAIL(c->p, "truncated file: expected an element");
        if (role > 0) {
          int64_t tags[4], etg;
          HPMG_CALL(get_i64_inline(r, c, &etg, "an element tag"));
          for (int k = 0; k < t.nodes; k++) HPMG_CALL(get_i64_inline(r, c, &tags[k], "a node tag"));
          HPMG_CALL(store_element(r, line, role, tags, phys));
        }
        p1_next_line(c);
      }
    }
    if (pass == 0) {
      if (total != n) return FAIL(c->p, "the element blocks hold %" PRId64 " elements, the header says %" PRId64, total, n);
      int d = mesh_dim_of(&ec);
      if (d == 0) return FAIL(body.p, "no tetrahedra or triangles in $Elements");
      HPMG_CALL(alloc_elements(r, d, &ec));
    }
  }
  r->have_elements = 1;
  return p1_orient_finish(r->f, r->m, &r->tally);
}

static hpmg_error read_elements2(msh_reader *r, p1_cursor *c) {
  if (!r->have_nodes) return FAIL(c->p, "$Elements comes before $Nodes");
  int64_t n;
  HPMG_CALL(get_count(r, c, &n, INT64_MAX / 64, "the number of elements"));
  const p1_cursor body = *c;
  elem_counts ec = {{0}, 0, 0};
  for (int pass = 0; pass < 2; pass++) {
    *c = body;
    const int dim = r->m->dim;
    for (int64_t i = 0; i < n; i++) {
      int64_t num, type, ntags, v;
      p1_skip_space(c);
      const char *line = c->p;
      if (c->p >= c->end) return FAIL(c->p, "truncated file: expected an element");
      HPMG_CALL(get_i64_inline(r, c, &num, "an element number"));
      HPMG_CALL(get_i64_inline(r, c, &type, "an element type"));
      p1_elem_type t = p1_gmsh_type(type);
      if (t.nodes == 0) return refuse_type(r, line, 3, t, type);
      if (pass == 0) {
        ec.count[t.dim]++;
        p1_next_line(c);
        continue;
      }
      int role = elem_role(dim, t, type);
      if (role < 0) return refuse_type(r, line, dim, t, type);
      if (role > 0) {
        int64_t tags[4];
        int phys = 0;
        HPMG_CALL(get_i64_inline(r, c, &ntags, "the number of element tags"));
        if (ntags < 0 || ntags > 1000) return FAIL(line, "%" PRId64 " element tags", ntags);
        for (int64_t k = 0; k < ntags; k++) {
          HPMG_CALL(get_i64_inline(r, c, &v, "an element tag"));
          if (k == 0) phys = (int)(v < 0 ? -v : v);
        }
        for (int k = 0; k < t.nodes; k++) HPMG_CALL(get_i64_inline(r, c, &tags[k], "a node tag"));
        HPMG_CALL(store_element(r, line, role, tags, phys));
      }
      p1_next_line(c);
    }
    if (pass == 0) {
      int d = mesh_dim_of(&ec);
      if (d == 0) return FAIL(body.p, "no tetrahedra or triangles in $Elements");
      HPMG_CALL(alloc_elements(r, d, &ec));
    }
  }
  r->have_elements = 1;
  return p1_orient_finish(r->f, r->m, &r->tally);
}

/* ------------------------------------------------------------ driver */

static hpmg_error read_sections(msh_reader *r) {
  p1_cursor c = {r->f->data, r->f->data + r->f->size};
  int first = 1;
  for (;;) {
    p1_skip_space(&c);
    if (c.p >= c.end) break;
    const char *name;
    size_t len;
    const char *at = c.p;
    if (*c.p != '$') return FAIL(at, "expected a section header ($Name)");
    p1_parse_word(&c, &name, &len);
    if (len > 64) return FAIL(at, "section name too long");
    char sec[72];
    memcpy(sec, name, len);
    sec[len] = 0;
    p1_next_line(&c);
    if (first != (strcmp(sec, "$MeshFormat") == 0))
      return FAIL(at, first ? "the file does not start with $MeshFormat" : "a second $MeshFormat");
    first = 0;
    if (r->have_elements && strcmp(sec, "$Entities") == 0)
      return FAIL(at, "$Entities after $Elements");
    hpmg_error e = HPMG_SUCCESS;
    if (strcmp(sec, "$MeshFormat") == 0) e = read_format(r, &c);
    else if (strcmp(sec, "$PhysicalNames") == 0) e = read_physical_names(r, &c);
    else if (strcmp(sec, "$Entities") == 0 && r->version == 4) e = read_entities(r, &c);
    else if (strcmp(sec, "$PartitionedEntities") == 0)
      e = FAIL(at, "partitioned meshes are not read (write the mesh unpartitioned)");
    else if (strcmp(sec, "$Nodes") == 0 || strcmp(sec, "$Elements") == 0) {
      if ((sec[1] == 'N' && r->have_nodes) || (sec[1] == 'E' && r->have_elements))
        e = FAIL(at, "a second %s section", sec);
      else if (sec[1] == 'N') e = r->version == 4 ? read_nodes4(r, &c) : read_nodes2(r, &c);
      else e = r->version == 4 ? read_elements4(r, &c) : read_elements2(r, &c);
    } else {
      /* a section hpmg does not use: find its end marker */
      char end[80];
      snprintf(end, sizeof end, "\n$End%s", sec + 1);
      const char *q = NULL;
      size_t k = strlen(end);
      for (const char *s = c.p - 1; s && s + k <= c.end;) {
        s = memchr(s, '\n', (size_t)(c.end - s));
        if (!s || s + k > c.end) break;
        if (memcmp(s, end, k) == 0) {
          q = s + 1;
          break;
        }
        s++;
      }
      if (!q) return FAIL(at, "truncated file: section %s has no $End%s", sec, sec + 1);
      c.p = q;
    }
    HPMG_CALL(e);
    p1_skip_space(&c);
    const char *endname;
    size_t elen;
    at = c.p;
    if (p1_parse_word(&c, &endname, &elen) != 0)
      return FAIL(at, "truncated file: expected $End%s", sec + 1);
    if (elen != len + 3 || memcmp(endname, "$End", 4) != 0 || memcmp(endname + 4, sec + 1, len - 1) != 0)
      return FAIL(at, "expected $End%s, found '%.*s'", sec + 1, (int)(elen < 40 ? elen : 40), endname);
  }
  if (first) return FAIL(c.p, "no $MeshFormat");
  if (!r->have_nodes) return FAIL(c.p, "truncated file: no $Nodes section");
  if (!r->have_elements) return FAIL(c.p, "truncated file: no $Elements section");
  return HPMG_SUCCESS;
}

hpmg_error p1_read_msh(p1_file *f, hpmg_p1_mesh *m) {
  msh_reader rd = {0}, *r = &rd;
  r->f = f;
  r->m = m;
  hpmg_error e = read_sections(r);
  if (!e) e = p1_mesh_drop_unused(m, f->path);
  if (!e && m->dim == 2) hpmg_free(&m->x[2]);
  for (int d = 0; d < 4; d++) hpmg_free(&r->ent[d]);
  p1_tagmap_free(&r->map);
  return e;
}
