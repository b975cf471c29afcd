/* VTK XML unstructured grid with Lagrange cells, binary appended raw data.
 *
 * The file is streamed: points, field and connectivity are generated in
 * chunks, so writing needs O(chunk) memory beyond u whatever the mesh size. */
#include "io/vtu.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fem/fem.h"

#define VTU_MAX_DEGREE 10
#define VTK_LAGRANGE_QUADRILATERAL 70
#define VTK_LAGRANGE_HEXAHEDRON 72
#define VTU_CHUNK_BYTES ((size_t)1 << 20)

/* Position of the 2D corner (i,j) in {0,k}^2, counter-clockwise from (0,0). */
static int corner2d(int k, int i, int j) { return i ? (j ? 2 : 1) : (j ? 3 : 0); }

int hpmg_vtu_lagrange_index(int dim, int k, int i, int j, int l) {
  const int e = k - 1; /* nodes inside one edge */
  const int ib = (i == 0 || i == k), jb = (j == 0 || j == k);
  if (dim == 2) {
    if (ib && jb) return corner2d(k, i, j);
    /* edges run along +x or +y (not around the cell): bottom, right, top, left */
    if (jb) return 4 + (j ? 2 * e : 0) + (i - 1);
    if (ib) return 4 + (i ? e : 3 * e) + (j - 1);
    return 4 + 4 * e + (i - 1) + e * (j - 1);
  }
  const int lb = (l == 0 || l == k);
  const int nb = ib + jb + lb;
  if (nb == 3) return corner2d(k, i, j) + (l ? 4 : 0);
  if (nb == 2) {
    /* edges 0-3: bottom quad, 4-7: top quad (same layout), 8-11: vertical
     * edges at corners 0,1,2,3 of the bottom quad */
    if (!ib) return 8 + (l ? 4 * e : 0) + (j ? 2 * e : 0) + (i - 1);
    if (!jb) return 8 + (l ? 4 * e : 0) + (i ? e : 3 * e) + (j - 1);
    return 8 + 8 * e + e * corner2d(k, i, j) + (l - 1);
  }
  const int f = e * e, faces = 8 + 12 * e;
  if (nb == 1) {
    /* faces x=0, x=1, y=0, y=1, z=0, z=1; each lexicographic in its two
     * varying directions, lower axis fastest */
    if (ib) return faces + (i ? f : 0) + (j - 1) + e * (l - 1);
    if (jb) return faces + 2 * f + (j ? f : 0) + (i - 1) + e * (l - 1);
    return faces + 4 * f + (l ? f : 0) + (i - 1) + e * (j - 1);
  }
  return faces + 6 * f + (i - 1) + e * ((j - 1) + e * (l - 1));
}

hpmg_error hpmg_vtu_file_open(hpmg_vtu_file *s, const char *path) {
  size_t plen = strlen(path);
  s->f = NULL;
  s->err = 0;
  HPMG_CALL(hpmg_malloc(plen + 5, &s->tmp));
  memcpy(s->tmp, path, plen);
  memcpy(s->tmp + plen, ".tmp", 5);
  s->f = fopen(s->tmp, "wb");
  if (!s->f) {
    hpmg_error err = hpmg_error_set(HPMG_ERR_IO, "vtu: cannot create '%s': %s", s->tmp, strerror(errno));
    hpmg_free(&s->tmp);
    return err;
  }
  return HPMG_SUCCESS;
}

void hpmg_vtu_file_write(hpmg_vtu_file *s, const void *data, size_t bytes) {
  if (s->err || bytes == 0) return;
  errno = 0;
  if (fwrite(data, 1, bytes, s->f) != bytes) s->err = errno ? errno : EIO;
}

void hpmg_vtu_file_block(hpmg_vtu_file *s, uint64_t bytes) { hpmg_vtu_file_write(s, &bytes, sizeof bytes); }

void hpmg_vtu_file_printf(hpmg_vtu_file *s, const char *fmt, ...) {
  if (s->err) return;
  va_list ap;
  va_start(ap, fmt);
  errno = 0;
  int r = vfprintf(s->f, fmt, ap);
  va_end(ap);
  if (r < 0) s->err = errno ? errno : EIO;
}

hpmg_error hpmg_vtu_file_close(hpmg_vtu_file *s, const char *path) {
  hpmg_error err = HPMG_SUCCESS;
  errno = 0;
  if (fclose(s->f) != 0 && !s->err) s->err = errno ? errno : EIO;
  s->f = NULL;
  if (!s->err && rename(s->tmp, path) != 0) s->err = errno ? errno : EIO;
  if (s->err) {
    remove(s->tmp);
    err = hpmg_error_set(HPMG_ERR_IO, "vtu: cannot write '%s': %s", path, strerror(s->err));
  }
  hpmg_free(&s->tmp);
  return err;
}

int hpmg_vtu_name_ok(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n > 255) return 0;
  for (size_t c = 0; c < n; c++) {
    char ch = name[c];
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '_' || ch == '-' || ch == '.';
    if (!ok) return 0;
  }
  return 1;
}

const char *hpmg_vtu_byte_order(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 1 ? "LittleEndian" : "BigEndian";
}

typedef struct {
  int dim, k;
  int64_t m[3];     /* nodes per direction including the boundary (m[2] = 1 in 2D) */
  int64_t n[3];     /* interior nodes per direction */
  int64_t nc[3];    /* cells per direction (nc[2] = 1 in 2D) */
  int64_t npoints, ncells, npc;
  double *x[3];     /* node coordinates per direction */
  int64_t *local;   /* local node (VTK order) -> offset of its global index from the cell's first */
  unsigned char *buf;
} vtu_mesh;

static void write_field(hpmg_vtu_file *s, const vtu_mesh *M, const double *u) {
  double *b = (double *)M->buf;
  const size_t cap = VTU_CHUNK_BYTES / sizeof(double);
  size_t nb = 0;
  hpmg_vtu_file_block(s, (uint64_t)M->npoints * sizeof(double));
  for (int64_t g2 = 0; g2 < M->m[2]; g2++) {
    int in2 = M->dim == 2 || (g2 > 0 && g2 < M->m[2] - 1);
    for (int64_t g1 = 0; g1 < M->m[1]; g1++) {
      int in1 = in2 && g1 > 0 && g1 < M->m[1] - 1;
      int64_t row = in1 ? M->n[0] * ((g1 - 1) + M->n[1] * (M->dim == 3 ? g2 - 1 : 0)) - 1 : 0;
      for (int64_t g0 = 0; g0 < M->m[0]; g0++) {
        b[nb++] = (in1 && g0 > 0 && g0 < M->m[0] - 1) ? u[row + g0] : 0.0;
        if (nb == cap) { hpmg_vtu_file_write(s, b, nb * sizeof(double)); nb = 0; }
      }
    }
  }
  hpmg_vtu_file_write(s, b, nb * sizeof(double));
}

static void write_points(hpmg_vtu_file *s, const vtu_mesh *M) {
  double *b = (double *)M->buf;
  const size_t cap = VTU_CHUNK_BYTES / (3 * sizeof(double));
  size_t nb = 0;
  hpmg_vtu_file_block(s, (uint64_t)M->npoints * 3 * sizeof(double));
  for (int64_t g2 = 0; g2 < M->m[2]; g2++)
    for (int64_t g1 = 0; g1 < M->m[1]; g1++)
      for (int64_t g0 = 0; g0 < M->m[0]; g0++) {
        b[3 * nb + 0] = M->x[0][g0];
        b[3 * nb + 1] = M->x[1][g1];
        b[3 * nb + 2] = M->dim == 3 ? M->x[2][g2] : 0.0;
        if (++nb == cap) { hpmg_vtu_file_write(s, b, nb * 3 * sizeof(double)); nb = 0; }
      }
  hpmg_vtu_file_write(s, b, nb * 3 * sizeof(double));
}

static void write_cells(hpmg_vtu_file *s, const vtu_mesh *M) {
  int64_t *b = (int64_t *)M->buf;
  const size_t cap = VTU_CHUNK_BYTES / sizeof(int64_t); /* >= npc (11^3) */
  size_t nb = 0;
  const int k = M->k;
  hpmg_vtu_file_block(s, (uint64_t)(M->ncells * M->npc) * sizeof(int64_t));
  for (int64_t c2 = 0; c2 < M->nc[2]; c2++)
    for (int64_t c1 = 0; c1 < M->nc[1]; c1++)
      for (int64_t c0 = 0; c0 < M->nc[0]; c0++) {
        int64_t first = c0 * k + M->m[0] * (c1 * k + M->m[1] * (c2 * k));
        if (nb + (size_t)M->npc > cap) { hpmg_vtu_file_write(s, b, nb * sizeof(int64_t)); nb = 0; }
        for (int64_t p = 0; p < M->npc; p++) b[nb++] = first + M->local[p];
      }
  hpmg_vtu_file_write(s, b, nb * sizeof(int64_t));

  nb = 0;
  hpmg_vtu_file_block(s, (uint64_t)M->ncells * sizeof(int64_t));
  for (int64_t c = 0; c < M->ncells; c++) {
    b[nb++] = (c + 1) * M->npc;
    if (nb == cap) { hpmg_vtu_file_write(s, b, nb * sizeof(int64_t)); nb = 0; }
  }
  hpmg_vtu_file_write(s, b, nb * sizeof(int64_t));

  unsigned char type = M->dim == 2 ? VTK_LAGRANGE_QUADRILATERAL : VTK_LAGRANGE_HEXAHEDRON;
  memset(M->buf, type, VTU_CHUNK_BYTES);
  hpmg_vtu_file_block(s, (uint64_t)M->ncells);
  for (int64_t left = M->ncells; left > 0;) {
    size_t now = left < (int64_t)VTU_CHUNK_BYTES ? (size_t)left : VTU_CHUNK_BYTES;
    hpmg_vtu_file_write(s, M->buf, now);
    left -= (int64_t)now;
  }
}

static void write_xml_header(hpmg_vtu_file *s, const vtu_mesh *M, const char *name) {
  const uint64_t hdr = sizeof(uint64_t);
  uint64_t off_field = 0;
  uint64_t off_points = off_field + hdr + (uint64_t)M->npoints * 8;
  uint64_t off_conn = off_points + hdr + (uint64_t)M->npoints * 24;
  uint64_t off_offs = off_conn + hdr + (uint64_t)(M->ncells * M->npc) * 8;
  uint64_t off_types = off_offs + hdr + (uint64_t)M->ncells * 8;
  /* version 2.2: hexahedron edge nodes in VTK >= 9 order (older versions make
   * readers permute the vertical edges) */
  hpmg_vtu_file_xml_header(s, "2.2", M->npoints, M->ncells, name, off_field, NULL, 0, off_points, off_conn, off_offs,
                           off_types);
}

void hpmg_vtu_file_xml_header(hpmg_vtu_file *s, const char *version, int64_t np, int64_t nc, const char *point_field,
                              uint64_t off_point, const char *cell_field, uint64_t off_cell, uint64_t off_pts,
                              uint64_t off_conn, uint64_t off_offs, uint64_t off_types) {
  hpmg_vtu_file_printf(s,
                       "<?xml version=\"1.0\"?>\n"
                       "<VTKFile type=\"UnstructuredGrid\" version=\"%s\" byte_order=\"%s\" "
                       "header_type=\"UInt64\">\n"
                       "  <UnstructuredGrid>\n"
                       "    <Piece NumberOfPoints=\"%" PRId64 "\" NumberOfCells=\"%" PRId64 "\">\n",
                       version, hpmg_vtu_byte_order(), np, nc);
  if (point_field)
    hpmg_vtu_file_printf(s,
                         "      <PointData Scalars=\"%s\">\n"
                         "        <DataArray type=\"Float64\" Name=\"%s\" format=\"appended\" "
                         "offset=\"%" PRIu64 "\"/>\n"
                         "      </PointData>\n",
                         point_field, point_field, off_point);
  if (cell_field)
    hpmg_vtu_file_printf(s,
                         "      <CellData Scalars=\"%s\">\n"
                         "        <DataArray type=\"Int32\" Name=\"%s\" format=\"appended\" "
                         "offset=\"%" PRIu64 "\"/>\n"
                         "      </CellData>\n",
                         cell_field, cell_field, off_cell);
  hpmg_vtu_file_printf(
      s,
      "      <Points>\n"
      "        <DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"appended\" "
      "offset=\"%" PRIu64 "\"/>\n"
      "      </Points>\n"
      "      <Cells>\n"
      "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"appended\" offset=\"%" PRIu64
      "\"/>\n"
      "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"appended\" offset=\"%" PRIu64
      "\"/>\n"
      "        <DataArray type=\"UInt8\" Name=\"types\" format=\"appended\" offset=\"%" PRIu64
      "\"/>\n"
      "      </Cells>\n"
      "    </Piece>\n"
      "  </UnstructuredGrid>\n"
      "  <AppendedData encoding=\"raw\">\n"
      "   _",
      off_pts, off_conn, off_offs, off_types);
}

static hpmg_error check_args(const char *path, int dim, int degree, const int cells[3],
                             const double box[3], const double *u, const char *field_name) {
  HPMG_CHECK_ARG(path && path[0], "vtu: output path is NULL or empty");
  HPMG_CHECK_ARG(dim == 2 || dim == 3, "vtu: dim must be 2 or 3 (got %d)", dim);
  HPMG_CHECK_ARG(degree >= 1 && degree <= VTU_MAX_DEGREE, "vtu: degree must be 1..%d (got %d)",
                 VTU_MAX_DEGREE, degree);
  HPMG_CHECK_ARG(cells && box, "vtu: cells and box must not be NULL");
  double points = 1.0, entries = 1.0, interior = 1.0;
  for (int d = 0; d < dim; d++) {
    HPMG_CHECK_ARG(cells[d] >= 1, "vtu: cells[%d] must be >= 1 (got %d)", d, cells[d]);
    HPMG_CHECK_ARG(isfinite(box[d]) && box[d] > 0.0,
                   "vtu: box[%d] must be a finite length > 0 (got %g)", d, box[d]);
    points *= (double)degree * cells[d] + 1.0;
    entries *= (double)cells[d] * (degree + 1);
    interior *= (double)degree * cells[d] - 1.0;
  }
  /* all byte counts and offsets must fit in int64 */
  HPMG_CHECK_ARG(32.0 * points + 9.0 * entries < 0x1p62,
                 "vtu: mesh too large to index (%.3g points)", points);
  HPMG_CHECK_ARG(u || interior == 0.0, "vtu: u is NULL but the mesh has %.0f interior nodes",
                 interior);
  HPMG_CHECK_ARG(field_name && hpmg_vtu_name_ok(field_name),
                 "vtu: field name must be 1..255 characters from [A-Za-z0-9_.-] (got \"%s\")",
                 field_name ? field_name : "(null)");
  return HPMG_SUCCESS;
}

static void mesh_free(vtu_mesh *M) {
  for (int d = 0; d < 3; d++) hpmg_free(&M->x[d]);
  hpmg_free(&M->local);
  hpmg_free(&M->buf);
}

static hpmg_error mesh_setup(int dim, int k, const int cells[3], const double box[3],
                             vtu_mesh *M) {
  double gll[VTU_MAX_DEGREE + 1], w[VTU_MAX_DEGREE + 1];
  hpmg_gauss_lobatto(k + 1, gll, w);
  M->dim = dim;
  M->k = k;
  M->npoints = 1;
  M->ncells = 1;
  for (int d = 0; d < 3; d++) {
    M->nc[d] = d < dim ? cells[d] : 1;
    M->m[d] = d < dim ? (int64_t)k * cells[d] + 1 : 1;
    M->n[d] = d < dim ? (int64_t)k * cells[d] - 1 : 1;
    M->npoints *= M->m[d];
    M->ncells *= M->nc[d];
  }
  M->npc = dim == 2 ? (int64_t)(k + 1) * (k + 1) : (int64_t)(k + 1) * (k + 1) * (k + 1);
  for (int d = 0; d < dim; d++) {
    HPMG_CALL(hpmg_malloc((size_t)M->m[d] * sizeof(double), &M->x[d]));
    /* same formula as hpmg_node_positions_1d, so coordinates match bit for bit */
    double h = box[d] / cells[d];
    for (int64_t g = 0; g < M->m[d]; g++) M->x[d][g] = (double)(g / k + gll[g % k]) * h;
    M->x[d][0] = 0.0;
    M->x[d][M->m[d] - 1] = box[d];
  }
  HPMG_CALL(hpmg_malloc((size_t)M->npc * sizeof(int64_t), &M->local));
  for (int l = 0; l < (dim == 3 ? k + 1 : 1); l++)
    for (int j = 0; j <= k; j++)
      for (int i = 0; i <= k; i++)
        M->local[hpmg_vtu_lagrange_index(dim, k, i, j, l)] = i + M->m[0] * (j + M->m[1] * l);
  HPMG_CALL(hpmg_malloc(VTU_CHUNK_BYTES, &M->buf));
  return HPMG_SUCCESS;
}

hpmg_error hpmg_vtu_write(const char *path, int dim, int degree, const int cells[3],
                          const double box[3], const double *u, const char *field_name) {
  HPMG_CALL(check_args(path, dim, degree, cells, box, u, field_name));

  vtu_mesh M = {0};
  hpmg_error err = mesh_setup(dim, degree, cells, box, &M);
  hpmg_vtu_file s = {0};
  if (!err) err = hpmg_vtu_file_open(&s, path);
  if (err) {
    mesh_free(&M);
    return err;
  }
  write_xml_header(&s, &M, field_name);
  write_field(&s, &M, u);
  write_points(&s, &M);
  write_cells(&s, &M);
  static const char tail[] = "\n  </AppendedData>\n</VTKFile>\n";
  hpmg_vtu_file_write(&s, tail, sizeof tail - 1);
  err = hpmg_vtu_file_close(&s, path);
  mesh_free(&M);
  return err;
}

#define VTU_LATTICE_CHUNK ((size_t)1 << 20)

hpmg_error hpmg_vtu_write_lattice(const char *path, int dim, int k, const int64_t cells[3], double *const xl[3],
                                 const int64_t nlat[3], const double *u, const char *name) {
  HPMG_CHECK_ARG(path && path[0], "vtu: output path is NULL or empty");
  HPMG_CHECK_ARG(name && hpmg_vtu_name_ok(name), "vtu: field name must be 1..255 characters from [A-Za-z0-9_.-]");
  HPMG_CHECK_ARG((dim == 2 || dim == 3) && k >= 1 && k <= 32, "vtu: dimension %d or degree %d out of range", dim, k);
  const int p = k;
  int64_t mu[3] = {1, 1, 1}, np = 1, nc = 1, npc = 1;
  for (int d = 0; d < dim; d++) {
    HPMG_CHECK_ARG(cells[d] >= 1 && (nlat[d] == cells[d] * p || nlat[d] == cells[d] * p + 1),
                   "vtu: direction %d: %lld cells of degree %d need %lld or %lld lattice nodes (got %lld)", d,
                   (long long)cells[d], p, (long long)(cells[d] * p), (long long)(cells[d] * p + 1), (long long)nlat[d]);
    np *= (mu[d] = cells[d] * p + 1);
    nc *= cells[d];
    npc *= p + 1;
  }
  const int64_t nl1 = nlat[1], nl2 = dim == 3 ? nlat[2] : 1;
  HPMG_CHECK_ARG(32.0 * (double)np + 9.0 * (double)nc * (double)npc < 0x1p62, "vtu: mesh too large to index (%.3g points)",
                 (double)np);
  int64_t *local = NULL;
  unsigned char *buf = NULL;
  hpmg_error e = hpmg_malloc(sizeof(int64_t) * (size_t)npc, &local);
  if (!e) e = hpmg_malloc(VTU_LATTICE_CHUNK + sizeof(int64_t) * (size_t)npc, &buf);
  hpmg_vtu_file s = {0};
  if (!e) e = hpmg_vtu_file_open(&s, path);
  if (e) {
    hpmg_free(&local);
    hpmg_free(&buf);
    return e;
  }
  for (int l = 0; l < (dim == 3 ? p + 1 : 1); l++)
    for (int j = 0; j <= p; j++)
      for (int i = 0; i <= p; i++) local[hpmg_vtu_lagrange_index(dim, p, i, j, l)] = i + mu[0] * (j + mu[1] * l);
  const uint64_t hdr = sizeof(uint64_t);
  const uint64_t off_pts = hdr + (uint64_t)np * 8, off_conn = off_pts + hdr + (uint64_t)np * 24;
  const uint64_t off_offs = off_conn + hdr + (uint64_t)(nc * npc) * 8, off_types = off_offs + hdr + (uint64_t)nc * 8;
  hpmg_vtu_file_xml_header(&s, "2.2", np, nc, name, 0, NULL, 0, off_pts, off_conn, off_offs, off_types);
  /* field and points, streamed over the unwrapped lattice */
  double *b = (double *)buf;
  size_t nb = 0;
  const size_t cap = VTU_LATTICE_CHUNK / (3 * sizeof(double));
  for (int pass = 0; pass < 2; pass++) {
    const int w = pass ? 3 : 1;
    hpmg_vtu_file_block(&s, (uint64_t)np * (uint64_t)w * sizeof(double));
    for (int64_t g2 = 0; g2 < mu[2]; g2++)
      for (int64_t g1 = 0; g1 < mu[1]; g1++)
        for (int64_t g0 = 0; g0 < mu[0]; g0++) {
          if (pass) {
            b[3 * nb] = xl[0][g0], b[3 * nb + 1] = xl[1][g1], b[3 * nb + 2] = dim == 3 ? xl[2][g2] : 0.0;
          } else {
            b[nb] = u[g0 % nlat[0] + nlat[0] * (g1 % nl1 + nl1 * (g2 % nl2))];
          }
          if (++nb == cap) {
            hpmg_vtu_file_write(&s, b, nb * (size_t)w * sizeof(double));
            nb = 0;
          }
        }
    hpmg_vtu_file_write(&s, b, nb * (size_t)w * sizeof(double));
    nb = 0;
  }
  /* connectivity, offsets, types */
  int64_t *c64 = (int64_t *)buf;
  const size_t cap64 = VTU_LATTICE_CHUNK / sizeof(int64_t);
  hpmg_vtu_file_block(&s, (uint64_t)(nc * npc) * sizeof(int64_t));
  for (int64_t e2 = 0; e2 < nc; e2++) {
    const int64_t c[3] = {e2 % cells[0], (e2 / cells[0]) % cells[1], e2 / (cells[0] * cells[1])};
    const int64_t first = c[0] * p + mu[0] * (c[1] * p + mu[1] * (c[2] * p));
    if (nb + (size_t)npc > cap64) {
      hpmg_vtu_file_write(&s, c64, nb * sizeof(int64_t));
      nb = 0;
    }
    for (int64_t q = 0; q < npc; q++) c64[nb++] = first + local[q];
  }
  hpmg_vtu_file_write(&s, c64, nb * sizeof(int64_t));
  nb = 0;
  hpmg_vtu_file_block(&s, (uint64_t)nc * sizeof(int64_t));
  for (int64_t q = 0; q < nc; q++) {
    c64[nb++] = (q + 1) * npc;
    if (nb == cap64) {
      hpmg_vtu_file_write(&s, c64, nb * sizeof(int64_t));
      nb = 0;
    }
  }
  hpmg_vtu_file_write(&s, c64, nb * sizeof(int64_t));
  memset(buf, dim == 2 ? 70 : 72, VTU_LATTICE_CHUNK);
  hpmg_vtu_file_block(&s, (uint64_t)nc);
  for (int64_t left = nc; left > 0;) {
    const size_t now = left < (int64_t)VTU_LATTICE_CHUNK ? (size_t)left : VTU_LATTICE_CHUNK;
    hpmg_vtu_file_write(&s, buf, now);
    left -= (int64_t)now;
  }
  static const char tail[] = "\n  </AppendedData>\n</VTKFile>\n";
  hpmg_vtu_file_write(&s, tail, sizeof tail - 1);
  e = hpmg_vtu_file_close(&s, path);
  hpmg_free(&local);
  hpmg_free(&buf);
  return e;
}
