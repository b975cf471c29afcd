/* Helpers shared by the P1 mesh readers (mesh_msh.c, mesh_tetgen.c) and
 * mesh.c: the mapped input file with error positions, a small ASCII number
 * parser over the mapped bytes, the file-tag -> index map, and the cell
 * orientation test. Not part of the library's interface. */
#ifndef HPMG_P1_MESH_INTERNAL_H
#define HPMG_P1_MESH_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "disc/p1/mesh.h"

/* A cell whose |6V| (|2A| in 2D) is at most this times its longest edge^3
 * (edge^2) is degenerate. */
#define P1_DEGENERATE_TOL 1e-14

/* Input file mapped read-only into memory. Error positions are reported as
 * line numbers (ASCII) or byte offsets (binary). */
typedef struct {
  const char *path;
  const char *data; /* the file's bytes (size of them, no terminator) */
  size_t size;
  void *map;        /* mmap'ed region (NULL for an empty file) */
  int binary;       /* report byte offsets instead of line numbers */
} p1_file;

/* Map the file; HPMG_ERR_IO naming it if it cannot be opened or is empty. */
hpmg_error p1_file_open(const char *path, p1_file *f);
void p1_file_close(p1_file *f);

/* Set an error naming the file and the line (ASCII) or byte offset (binary)
 * of position pos (NULL: the file only) and return code. */
hpmg_error p1_file_error(const p1_file *f, const char *pos, hpmg_error code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ASCII cursor over [p, end). */
typedef struct {
  const char *p, *end;
} p1_cursor;

static inline int p1_is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* Skip blanks (spaces, tabs, CR) but not newlines. */
static inline void p1_skip_blank(p1_cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r')) c->p++;
}
static inline void p1_skip_space(p1_cursor *c) {
  while (c->p < c->end && p1_is_space(*c->p)) c->p++;
}
/* Move past the next newline (or to the end). */
static inline void p1_next_line(p1_cursor *c) {
  const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
  c->p = nl ? nl + 1 : c->end;
}

/* Parse a decimal integer after optional whitespace (newlines included);
 * 0 on success, -1 if there is none or it overflows int64. */
int p1_parse_i64(p1_cursor *c, int64_t *v);
/* Same for a floating-point number (finite or not: callers check). */
int p1_parse_f64(p1_cursor *c, double *v);
/* A whitespace-delimited word; 0 on success with [*s, *s + *len). */
int p1_parse_word(p1_cursor *c, const char **s, size_t *len);

/* File node tag -> node index: a dense table when the tags fill most of
 * [min, max], an open-addressing hash otherwise. */
typedef struct {
  int64_t min, max;
  int64_t *dense;   /* max-min+1 entries, -1 where no node has the tag */
  int64_t *keys;    /* hash: tag per slot (INT64_MIN empty) */
  int64_t *vals;
  uint64_t mask;
} p1_tagmap;

/* Build the map of tags[0..n-1]; on a repeated tag returns HPMG_ERR_ARG with
 * *dup the index of its second occurrence (no message set, nothing kept). */
hpmg_error p1_tagmap_build(p1_tagmap *t, const int64_t *tags, int64_t n, int64_t *dup);
void p1_tagmap_free(p1_tagmap *t);

static inline uint64_t p1_hash64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k;
}

/* Index of tag, -1 if no node has it. */
static inline int64_t p1_tagmap_find(const p1_tagmap *t, int64_t tag) {
  if (tag < t->min || tag > t->max) return -1;
  if (t->dense) return t->dense[tag - t->min];
  for (uint64_t s = p1_hash64((uint64_t)tag) & t->mask;; s = (s + 1) & t->mask) {
    if (t->keys[s] == tag) return t->vals[s];
    if (t->keys[s] == INT64_MIN) return -1;
  }
}

static inline double p1_max(double a, double b) { return a > b ? a : b; }

/* A tetrahedron's 6 V (the determinant of its edge vectors from node 0) and
 * its longest squared edge length. */
static inline void p1_tet_det_l2(double *const x[3], const int64_t *v, double *det, double *l2) {
  double e[3][3];
  for (int k = 0; k < 3; k++)
    for (int d = 0; d < 3; d++) e[k][d] = x[d][v[k + 1]] - x[d][v[0]];
  *det = e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) - e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
         e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
  double m = 0;
  for (int k = 0; k < 3; k++) m = p1_max(m, e[k][0] * e[k][0] + e[k][1] * e[k][1] + e[k][2] * e[k][2]);
  for (int a = 0; a < 3; a++)
    for (int b = a + 1; b < 3; b++) {
      double q = 0;
      for (int d = 0; d < 3; d++) q += (e[a][d] - e[b][d]) * (e[a][d] - e[b][d]);
      m = p1_max(m, q);
    }
  *l2 = m;
}

/* Signed size of a cell relative to its longest edge: 6V / L^3 (3D) or
 * 2A / L^2 (2D), with L the longest edge (0 for coincident nodes). */
static inline double p1_cell_quality(int dim, double *const x[3], const int64_t *v) {
  if (dim == 2) {
    double ax = x[0][v[1]] - x[0][v[0]], ay = x[1][v[1]] - x[1][v[0]];
    double bx = x[0][v[2]] - x[0][v[0]], by = x[1][v[2]] - x[1][v[0]];
    double cx = bx - ax, cy = by - ay;
    double l2 = p1_max(ax * ax + ay * ay, p1_max(bx * bx + by * by, cx * cx + cy * cy));
    double det = ax * by - ay * bx;
    return l2 > 0 ? det / l2 : 0.0;
  }
  double det, l2;
  p1_tet_det_l2(x, v, &det, &l2);
  return l2 > 0 ? det / (l2 * sqrt(l2)) : 0.0;
}

/* Orientation of the cell: 1 positive, -1 negative, 0 degenerate
 * (|quality| <= P1_DEGENERATE_TOL). The nodes are not touched: whether a
 * negative cell is a file's convention or an inverted element is known only
 * once all cells are read (p1_orient_finish). The common 3D case compares
 * det^2 with tol^2 L^6, free of the square root and division, where L^2 is in
 * a range whose cube neither underflows nor overflows. */
static inline int p1_cell_orientation(int dim, double *const x[3], const int64_t *nodes) {
  if (dim == 3) {
    double det, l2;
    p1_tet_det_l2(x, nodes, &det, &l2);
    if (l2 > 1e-90 && l2 < 1e90) {
      if (!(det * det > P1_DEGENERATE_TOL * P1_DEGENERATE_TOL * (l2 * l2 * l2))) return 0;
      return det < 0 ? -1 : 1;
    }
  }
  const double q = p1_cell_quality(dim, x, nodes);
  if (!(q > P1_DEGENERATE_TOL || q < -P1_DEGENERATE_TOL)) return 0;
  return q < 0 ? -1 : 1;
}

/* Cells of each orientation seen by a reader, [0] negative, [1] positive,
 * with the first of each: a file wholly in one orientation follows a
 * convention, a file with both holds inverted (tangled) cells. */
typedef struct {
  int64_t count[2];
  int64_t first[2]; /* cell index of the first of each orientation */
  const char *at[2]; /* its position in the file (line or byte offset) */
} p1_orient_tally;

static inline void p1_tally_add(p1_orient_tally *t, int orientation, int64_t cell, const char *at) {
  const int k = orientation > 0;
  if (t->count[k]++ == 0) {
    t->first[k] = cell;
    t->at[k] = at;
  }
}

/* After reading m's cells with tally t from file f (still mapped): all
 * negative -> reverse every cell (swap its last two nodes); both orientations
 * -> HPMG_ERR_IO naming the file and the position of the first cell of the
 * minority orientation (the negative one on a tie). */
hpmg_error p1_orient_finish(const p1_file *f, hpmg_p1_mesh *m, const p1_orient_tally *t);

/* Gmsh element types: dimension and node count, 0 nodes for an unknown type. */
typedef struct {
  int dim, nodes;
  const char *name;
} p1_elem_type;
p1_elem_type p1_gmsh_type(int64_t type);

/* Drop the nodes no cell uses (renumbering the rest in order); HPMG_ERR_IO
 * with a message naming the file if a facet uses a dropped node. */
hpmg_error p1_mesh_drop_unused(hpmg_p1_mesh *m, const char *path);

/* Fault in a large buffer about to be filled, both threads' halves in
 * parallel, with one system call per page-aligned slice instead of one page
 * fault per 4 KiB page. No effect where the kernel lacks MADV_POPULATE_WRITE. */
void p1_prefault(void *p, size_t bytes);

/* Set name of group g from [s, s+len), truncated to the buffer. */
void p1_group_set_name(hpmg_p1_group *g, const char *s, size_t len);

/* The readers; m is zeroed by the caller and destroyed by it on failure. */
hpmg_error p1_read_msh(p1_file *f, hpmg_p1_mesh *m);
hpmg_error p1_read_tetgen(const char *stem, hpmg_p1_mesh *m);

#endif
