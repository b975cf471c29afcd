/* VTU output of a spectral-element field: one VTK Lagrange cell (types
 * 70/72) of degree p per element on the unwrapped GLL lattice (a periodic
 * direction writes its last plane again, with the first plane's values), so
 * that ParaView interpolates the element polynomials (sem_system.h). */
#include <string.h>
#include "disc/sem/sem_system.h"
#include "io/vtu.h"

#define SEM_VTU_CHUNK ((size_t)1 << 20)

hpmg_error hpmg_sem_write_vtu(const hpmg_sem_mesh *m, double *const xl[3], const double *u, const char *path,
                              const char *name) {
  HPMG_CHECK_ARG(path && path[0], "vtu: output path is NULL or empty");
  HPMG_CHECK_ARG(name && hpmg_vtu_name_ok(name), "vtu: field name must be 1..255 characters from [A-Za-z0-9_.-]");
  const int dim = m->dim, p = m->p;
  int64_t mu[3] = {1, 1, 1}, np = 1;
  for (int d = 0; d < dim; d++) np *= (mu[d] = m->cells[d] * p + 1);
  const int64_t nc = m->ne, npc = m->el.nloc;
  HPMG_CHECK_ARG(32.0 * (double)np + 9.0 * (double)nc * (double)npc < 0x1p62, "vtu: mesh too large to index (%.3g points)",
                 (double)np);
  int64_t *local = NULL;
  unsigned char *buf = NULL;
  hpmg_error e = hpmg_malloc(sizeof(int64_t) * (size_t)npc, &local);
  if (!e) e = hpmg_malloc(SEM_VTU_CHUNK + sizeof(int64_t) * (size_t)npc, &buf);
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
  const size_t cap = SEM_VTU_CHUNK / (3 * sizeof(double));
  for (int pass = 0; pass < 2; pass++) {
    const int w = pass ? 3 : 1;
    hpmg_vtu_file_block(&s, (uint64_t)np * (uint64_t)w * sizeof(double));
    for (int64_t g2 = 0; g2 < mu[2]; g2++)
      for (int64_t g1 = 0; g1 < mu[1]; g1++)
        for (int64_t g0 = 0; g0 < mu[0]; g0++) {
          if (pass) {
            b[3 * nb] = xl[0][g0], b[3 * nb + 1] = xl[1][g1], b[3 * nb + 2] = dim == 3 ? xl[2][g2] : 0.0;
          } else {
            const int64_t w0 = g0 % m->nlat[0], w1 = g1 % m->nlat[1], w2 = g2 % m->nlat[2];
            b[nb] = u[w0 + m->nlat[0] * (w1 + m->nlat[1] * w2)];
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
  const size_t cap64 = SEM_VTU_CHUNK / sizeof(int64_t);
  hpmg_vtu_file_block(&s, (uint64_t)(nc * npc) * sizeof(int64_t));
  for (int64_t e2 = 0; e2 < nc; e2++) {
    int64_t c[3];
    hpmg_sem_element_coords(m, e2, c);
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
  memset(buf, dim == 2 ? 70 : 72, SEM_VTU_CHUNK);
  hpmg_vtu_file_block(&s, (uint64_t)nc);
  for (int64_t left = nc; left > 0;) {
    const size_t now = left < (int64_t)SEM_VTU_CHUNK ? (size_t)left : SEM_VTU_CHUNK;
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
