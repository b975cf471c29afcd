/* Mesh reading and RCM throughput (docs/p1.md, "Mesh files").
 *
 * usage: mesh_read_bench [TETS [DIR [REPEAT]]]   (default 1e7 tetrahedra, /tmp, 3)
 *
 * Writes the structured mesh of n^3 cubes cut into 6 tetrahedra each (n the
 * nearest to TETS/6 cubed) as binary and as ASCII Gmsh MSH 4.1 into DIR,
 * then times hpmg_p1_mesh_read on each (best of REPEAT, the file in the page
 * cache after writing it) and hpmg_p1_mesh_renumber (RCM) once, and prints
 * tetrahedra per second. Node tags are 1..N, written in a shuffled order in
 * 16 blocks, so the reader's tag map is exercised. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "disc/p1/mesh.h"

static FILE *open_out(const char *path) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    perror(path);
    exit(1);
  }
  setvbuf(f, NULL, _IOFBF, 1 << 22);
  return f;
}

static void put(FILE *f, const void *p, size_t n) {
  if (fwrite(p, 1, n, f) != n) {
    perror("write");
    exit(1);
  }
}

/* Node tag of grid node i: a fixed bijection of 0..N-1 onto 1..N that is not
 * the identity (blocks of 1024 reversed). */
static int64_t tag_of(int64_t i, int64_t N) {
  int64_t b = i / 1024, r = i % 1024, first = b * 1024, len = N - first < 1024 ? N - first : 1024;
  return first + (len - 1 - r) + 1;
}

static void cell_nodes(int64_t n, int64_t c, int64_t v[4]) {
  static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  int64_t t = c % 6, q = c / 6, i = q % n, j = q / n % n, k = q / n / n, m = n + 1;
  int off[3] = {0, 0, 0};
  v[0] = i + m * (j + m * k);
  for (int s = 0; s < 3; s++) {
    off[perm[t][s]] = 1;
    v[s + 1] = (i + off[0]) + m * ((j + off[1]) + m * (k + off[2]));
  }
  if (t == 1 || t == 2 || t == 5) { /* odd permutations: the reader refuses mixed orientations */
    int64_t w = v[2];
    v[2] = v[3];
    v[3] = w;
  }
}

static void write_msh(const char *path, int64_t n, int binary) {
  FILE *f = open_out(path);
  const int64_t m = n + 1, N = m * m * m, C = 6 * n * n * n, nb = 16;
  fprintf(f, "$MeshFormat\n4.1 %d 8\n", binary);
  if (binary) {
    int32_t one = 1;
    put(f, &one, 4);
    fputc('\n', f);
  }
  fprintf(f, "$EndMeshFormat\n$PhysicalNames\n1\n3 1 \"domain\"\n$EndPhysicalNames\n$Entities\n");
  if (binary) {
    uint64_t cnt[4] = {0, 0, 0, 1}, one = 1, zero = 0;
    int32_t tag = 1, phys = 1;
    double box[6] = {0, 0, 0, (double)n, (double)n, (double)n};
    put(f, cnt, 32);
    put(f, &tag, 4);
    put(f, box, 48);
    put(f, &one, 8);
    put(f, &phys, 4);
    put(f, &zero, 8);
    fputc('\n', f);
  } else {
    fprintf(f, "0 0 0 1\n1 0 0 0 %" PRId64 " %" PRId64 " %" PRId64 " 1 1 0\n", n, n, n);
  }
  fprintf(f, "$EndEntities\n$Nodes\n");
  /* nodes in nb blocks of consecutive grid nodes; tags per tag_of */
  uint64_t hdr[4] = {(uint64_t)nb, (uint64_t)N, 1, (uint64_t)N};
  if (binary) put(f, hdr, 32);
  else fprintf(f, "%" PRId64 " %" PRId64 " 1 %" PRId64 "\n", nb, N, N);
  for (int64_t b = 0; b < nb; b++) {
    int64_t lo = N * b / nb, hi = N * (b + 1) / nb;
    if (binary) {
      int32_t h3[3] = {3, 1, 0};
      uint64_t cnt = (uint64_t)(hi - lo);
      put(f, h3, 12);
      put(f, &cnt, 8);
      for (int64_t i = lo; i < hi; i++) {
        uint64_t t = (uint64_t)tag_of(i, N);
        put(f, &t, 8);
      }
      for (int64_t i = lo; i < hi; i++) {
        double x[3] = {(double)(i % m), (double)(i / m % m), (double)(i / m / m)};
        put(f, x, 24);
      }
    } else {
      fprintf(f, "3 1 0 %" PRId64 "\n", hi - lo);
      for (int64_t i = lo; i < hi; i++) fprintf(f, "%" PRId64 "\n", tag_of(i, N));
      for (int64_t i = lo; i < hi; i++)
        fprintf(f, "%" PRId64 " %" PRId64 " %" PRId64 "\n", i % m, i / m % m, i / m / m);
    }
  }
  fprintf(f, "%s$EndNodes\n$Elements\n", binary ? "\n" : "");
  uint64_t ehdr[4] = {1, (uint64_t)C, 1, (uint64_t)C};
  if (binary) {
    int32_t h3[3] = {3, 1, 4};
    uint64_t cnt = (uint64_t)C;
    put(f, ehdr, 32);
    put(f, h3, 12);
    put(f, &cnt, 8);
    uint64_t buf[5 * 4096];
    int64_t k = 0;
    for (int64_t c = 0; c < C; c++) {
      int64_t v[4];
      cell_nodes(n, c, v);
      buf[5 * k] = (uint64_t)c + 1;
      for (int j = 0; j < 4; j++) buf[5 * k + 1 + j] = (uint64_t)tag_of(v[j], N);
      if (++k == 4096) {
        put(f, buf, sizeof buf);
        k = 0;
      }
    }
    put(f, buf, (size_t)k * 40);
    fputc('\n', f);
  } else {
    fprintf(f, "1 %" PRId64 " 1 %" PRId64 "\n3 1 4 %" PRId64 "\n", C, C, C);
    for (int64_t c = 0; c < C; c++) {
      int64_t v[4];
      cell_nodes(n, c, v);
      fprintf(f, "%" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 "\n", c + 1,
              tag_of(v[0], N), tag_of(v[1], N), tag_of(v[2], N), tag_of(v[3], N));
    }
  }
  fprintf(f, "$EndElements\n");
  if (fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

static double time_read(const char *path, int repeat, int64_t want_cells, hpmg_p1_mesh *keep,
                        double *first) {
  double best = 1e30;
  for (int r = 0; r < repeat; r++) {
    hpmg_p1_mesh m;
    double t = hpmg_wtime();
    hpmg_error e = hpmg_p1_mesh_read(path, &m);
    t = hpmg_wtime() - t;
    if (e || m.num_cells != want_cells) {
      fprintf(stderr, "read %s: %s (%" PRId64 " cells)\n", path, e ? hpmg_last_error() : "ok",
              e ? 0 : m.num_cells);
      exit(1);
    }
    if (r == 0) *first = t;
    if (t < best) best = t;
    if (keep && r == repeat - 1) *keep = m;
    else hpmg_p1_mesh_destroy(&m);
  }
  return best;
}

int main(int argc, char **argv) {
  double tets = argc > 1 ? atof(argv[1]) : 1e7;
  const char *dir = argc > 2 ? argv[2] : "/tmp";
  int repeat = argc > 3 ? atoi(argv[3]) : 3;
  int64_t n = (int64_t)llround(cbrt(tets / 6.0));
  if (n < 1) n = 1;
  const int64_t C = 6 * n * n * n, N = (n + 1) * (n + 1) * (n + 1);
  char pb[4096], pa[4096];
  snprintf(pb, sizeof pb, "%s/hpmg_mesh_bench_bin.msh", dir);
  snprintf(pa, sizeof pa, "%s/hpmg_mesh_bench_ascii.msh", dir);
  printf("mesh: %" PRId64 "^3 cubes x 6 = %" PRId64 " tetrahedra, %" PRId64 " nodes\n", n, C, N);
  double t = hpmg_wtime();
  write_msh(pb, n, 1);
  printf("wrote %s (%.2f s)\n", pb, hpmg_wtime() - t);
  t = hpmg_wtime();
  write_msh(pa, n, 0);
  printf("wrote %s (%.2f s)\n", pa, hpmg_wtime() - t);

  /* the first read of a process also pays for the first touch of its memory
   * (huge-page compaction, thread start): printed apart from the best */
  hpmg_p1_mesh m;
  double fb, fa;
  double tb = time_read(pb, repeat, C, &m, &fb);
  printf("read MSH 4.1 binary: %.3f s  %.3g tets/s  (best of %d; first %.3f s  %.3g tets/s)\n", tb,
         (double)C / tb, repeat, fb, (double)C / fb);
  double ta = time_read(pa, repeat, C, NULL, &fa);
  printf("read MSH 4.1 ASCII:  %.3f s  %.3g tets/s  (best of %d; first %.3f s)\n", ta, (double)C / ta,
         repeat, fa);

  int64_t bw0 = 0;
  for (int64_t c = 0; c < C; c++)
    for (int a = 0; a < 4; a++)
      for (int b = 0; b < 4; b++) {
        int64_t d = m.cell_nodes[4 * c + a] - m.cell_nodes[4 * c + b];
        if (d > bw0) bw0 = d;
      }
  t = hpmg_wtime();
  if (hpmg_p1_mesh_renumber(&m, NULL) != HPMG_SUCCESS) {
    fprintf(stderr, "renumber: %s\n", hpmg_last_error());
    return 1;
  }
  double tr = hpmg_wtime() - t;
  int64_t bw = 0;
  for (int64_t c = 0; c < C; c++)
    for (int a = 0; a < 4; a++)
      for (int b = 0; b < 4; b++) {
        int64_t d = m.cell_nodes[4 * c + a] - m.cell_nodes[4 * c + b];
        if (d > bw) bw = d;
      }
  printf("RCM renumbering:     %.3f s  %.3g tets/s  (bandwidth %" PRId64 " -> %" PRId64 ")\n", tr,
         (double)C / tr, bw0, bw);
  hpmg_p1_mesh_destroy(&m);
  if (!getenv("HPMG_BENCH_KEEP")) remove(pb);
  if (!getenv("HPMG_BENCH_KEEP")) remove(pa);
  return 0;
}
