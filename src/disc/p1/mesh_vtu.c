/* P1 mesh output: VTK XML unstructured grid (VTK_TETRA / VTK_TRIANGLE),
 * binary appended raw data with UInt64 headers, through io/vtu.h's file
 * helpers (path.tmp renamed once complete). Point data: the node values;
 * cell data: the region tags (Int32). Arrays are streamed in 1 MiB chunks. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "disc/p1/mesh.h"
#include "io/vtu.h"

#define VTK_TRIANGLE 5
#define VTK_TETRA 10
#define CHUNK_BYTES ((size_t)1 << 20)

hpmg_error hpmg_p1_mesh_write_vtu(const hpmg_p1_mesh *m, const double *u, const char *field_name,
                                  const char *path) {
  HPMG_CHECK_ARG(m && (m->dim == 2 || m->dim == 3), "p1 vtu: mesh is NULL or has dim %d",
                 m ? m->dim : 0);
  HPMG_CHECK_ARG(path && path[0], "p1 vtu: output path is NULL or empty");
  HPMG_CHECK_ARG(!u || (field_name && hpmg_vtu_name_ok(field_name)),
                 "p1 vtu: field name must be 1..255 characters from [A-Za-z0-9_.-] (got \"%s\")",
                 field_name ? field_name : "(null)");
  const int nv = m->dim + 1;
  const int64_t np = m->num_nodes, nc = m->num_cells;
  for (int64_t i = 0; i < nc * nv; i++)
    HPMG_CHECK_ARG(m->cell_nodes[i] >= 0 && m->cell_nodes[i] < np,
                   "p1 vtu: cell %" PRId64 " uses node %" PRId64 ", outside 0..%" PRId64, i / nv,
                   m->cell_nodes[i], np - 1);

  const uint64_t hdr = 8;
  uint64_t off = 0, off_u = 0, off_pts, off_conn, off_offs, off_types, off_reg;
  if (u) off += hdr + (uint64_t)np * 8;
  off_pts = off;
  off += hdr + (uint64_t)np * 24;
  off_conn = off;
  off += hdr + (uint64_t)(nc * nv) * 8;
  off_offs = off;
  off += hdr + (uint64_t)nc * 8;
  off_types = off;
  off += hdr + (uint64_t)nc;
  off_reg = off;

  unsigned char *buf = NULL;
  HPMG_CALL(hpmg_malloc(CHUNK_BYTES, &buf));
  hpmg_vtu_file s;
  hpmg_error err = hpmg_vtu_file_open(&s, path);
  if (err) {
    hpmg_free(&buf);
    return err;
  }
  hpmg_vtu_file_xml_header(&s, "1.0", np, nc, u ? field_name : NULL, off_u, "region", off_reg, off_pts, off_conn,
                           off_offs, off_types);

  if (u) {
    hpmg_vtu_file_block(&s, (uint64_t)np * 8);
    hpmg_vtu_file_write(&s, u, (size_t)np * 8);
  }
  /* points, padded to 3 components */
  double *b = (double *)buf;
  const int64_t pcap = (int64_t)(CHUNK_BYTES / 24);
  hpmg_vtu_file_block(&s, (uint64_t)np * 24);
  for (int64_t i0 = 0; i0 < np; i0 += pcap) {
    int64_t cnt = np - i0 < pcap ? np - i0 : pcap;
    for (int64_t i = 0; i < cnt; i++)
      for (int d = 0; d < 3; d++) b[3 * i + d] = m->x[d] && d < m->dim ? m->x[d][i0 + i] : 0.0;
    hpmg_vtu_file_write(&s, b, (size_t)cnt * 24);
  }
  hpmg_vtu_file_block(&s, (uint64_t)(nc * nv) * 8);
  hpmg_vtu_file_write(&s, m->cell_nodes, (size_t)(nc * nv) * 8);
  int64_t *ib = (int64_t *)buf;
  const int64_t icap = (int64_t)(CHUNK_BYTES / 8);
  hpmg_vtu_file_block(&s, (uint64_t)nc * 8);
  for (int64_t c0 = 0; c0 < nc; c0 += icap) {
    int64_t cnt = nc - c0 < icap ? nc - c0 : icap;
    for (int64_t c = 0; c < cnt; c++) ib[c] = (c0 + c + 1) * nv;
    hpmg_vtu_file_write(&s, ib, (size_t)cnt * 8);
  }
  memset(buf, m->dim == 3 ? VTK_TETRA : VTK_TRIANGLE, CHUNK_BYTES);
  hpmg_vtu_file_block(&s, (uint64_t)nc);
  for (int64_t left = nc; left > 0;) {
    size_t now = left < (int64_t)CHUNK_BYTES ? (size_t)left : CHUNK_BYTES;
    hpmg_vtu_file_write(&s, buf, now);
    left -= (int64_t)now;
  }
  hpmg_vtu_file_block(&s, (uint64_t)nc * 4);
  hpmg_vtu_file_write(&s, m->cell_region, (size_t)nc * 4);
  static const char tail[] = "\n  </AppendedData>\n</VTKFile>\n";
  hpmg_vtu_file_write(&s, tail, sizeof tail - 1);
  err = hpmg_vtu_file_close(&s, path);
  hpmg_free(&buf);
  return err;
}
