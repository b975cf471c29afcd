/* VTU writer: writes Q_k fields on small anisotropic meshes and has VTK's own
 * XML reader (tests/check_vtu.py, python3-vtk9) read them back and check point
 * count, cell types, field values and the Lagrange point ordering inside cells.
 * Also checks argument refusal and I/O failure handling.
 *
 * usage: test_vtu OUTPUT_DIR CHECKER_SCRIPT
 * Exits 77 (skip) if /usr/bin/python3 or its vtk module is missing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "fem/fem.h"
#include "io/vtu.h"

static int failures = 0;
#define EXPECT(cond, ...)                                                                  \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      failures++;                                                                          \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                 \
      fprintf(stderr, __VA_ARGS__);                                                        \
      fprintf(stderr, "\n");                                                               \
    }                                                                                      \
  } while (0)

static int file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

/* u = prod_d x_d (b_d - x_d) at the interior nodes. */
static double *make_field(int dim, int k, const int cells[3], const double box[3]) {
  int64_t n[3] = {1, 1, 1}, total = 1;
  double *x[3] = {NULL, NULL, NULL};
  for (int d = 0; d < dim; d++) {
    n[d] = (int64_t)k * cells[d] - 1;
    total *= n[d];
    x[d] = malloc((size_t)(n[d] > 0 ? n[d] : 1) * sizeof(double));
    hpmg_node_positions_1d(k, cells[d], box[d] / cells[d], x[d]);
  }
  double *u = malloc((size_t)(total > 0 ? total : 1) * sizeof(double));
  for (int64_t i2 = 0; i2 < n[2]; i2++)
    for (int64_t i1 = 0; i1 < n[1]; i1++)
      for (int64_t i0 = 0; i0 < n[0]; i0++) {
        double v = x[0][i0] * (box[0] - x[0][i0]) * x[1][i1] * (box[1] - x[1][i1]);
        if (dim == 3) v *= x[2][i2] * (box[2] - x[2][i2]);
        u[i0 + n[0] * (i1 + n[1] * i2)] = v;
      }
  for (int d = 0; d < dim; d++) free(x[d]);
  return u;
}

/* Every node of a degree-k cell gets a distinct VTK index in 0..(k+1)^dim-1. */
static void test_index_bijective(void) {
  for (int dim = 2; dim <= 3; dim++)
    for (int k = 1; k <= 10; k++) {
      int npc = dim == 2 ? (k + 1) * (k + 1) : (k + 1) * (k + 1) * (k + 1);
      char *seen = calloc((size_t)npc, 1);
      int ok = 1;
      for (int l = 0; l < (dim == 3 ? k + 1 : 1); l++)
        for (int j = 0; j <= k; j++)
          for (int i = 0; i <= k; i++) {
            int p = hpmg_vtu_lagrange_index(dim, k, i, j, l);
            if (p < 0 || p >= npc || seen[p]) ok = 0;
            else seen[p] = 1;
          }
      EXPECT(ok, "lagrange index not a bijection for dim %d k %d", dim, k);
      free(seen);
    }
}

static void test_bad_arguments(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/vtu_bad.vtu", dir);
  remove(path);
  int c[3] = {2, 2, 2};
  double b[3] = {1, 1, 1}, u[64] = {0};
  struct {
    const char *what;
    const char *path;
    int dim, k, c0;
    double b1;
    const double *u;
    const char *name;
  } cases[] = {
      {"dim 4", path, 4, 2, 2, 1, u, "u"},
      {"dim 1", path, 1, 2, 2, 1, u, "u"},
      {"degree 0", path, 2, 0, 2, 1, u, "u"},
      {"degree 11", path, 2, 11, 2, 1, u, "u"},
      {"cells 0", path, 2, 2, 0, 1, u, "u"},
      {"box -1", path, 2, 2, 2, -1, u, "u"},
      {"box nan", path, 2, 2, 2, 0.0 / 0.0, u, "u"},
      {"null u", path, 2, 2, 2, 1, NULL, "u"},
      {"null name", path, 2, 2, 2, 1, u, NULL},
      {"xml name", path, 2, 2, 2, 1, u, "a\"b"},
      {"empty name", path, 2, 2, 2, 1, u, ""},
      {"null path", NULL, 2, 2, 2, 1, u, "u"},
      {"empty path", "", 2, 2, 2, 1, u, "u"},
  };
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
    c[0] = cases[t].c0;
    b[1] = cases[t].b1;
    hpmg_error e = hpmg_vtu_write(cases[t].path, cases[t].dim, cases[t].k, c, b, cases[t].u,
                                  cases[t].name);
    EXPECT(e == HPMG_ERR_ARG, "%s: expected HPMG_ERR_ARG, got %d", cases[t].what, (int)e);
    EXPECT(strlen(hpmg_last_error()) > 0, "%s: no error message", cases[t].what);
  }
  EXPECT(!file_exists(path), "a refused call created %s", path);
  /* no interior nodes (k = 1, one cell): u may be NULL */
  int c1[3] = {1, 1, 1};
  EXPECT(hpmg_vtu_write(path, 2, 1, c1, b, NULL, "u") == HPMG_SUCCESS, "1-cell Q1 mesh: %s",
         hpmg_last_error());
  remove(path);
}

static void test_io_failure(const char *dir) {
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/no_such_dir_vtu/out.vtu", dir);
  int c[3] = {2, 2, 2};
  double b[3] = {1, 1, 1}, u[64] = {0};
  hpmg_error e = hpmg_vtu_write(path, 2, 2, c, b, u, "u");
  EXPECT(e == HPMG_ERR_IO, "missing directory: expected HPMG_ERR_IO, got %d", (int)e);
  EXPECT(strstr(hpmg_last_error(), "no_such_dir_vtu/out.vtu") != NULL,
         "I/O message does not name the path: %s", hpmg_last_error());
  /* rename onto a directory fails after the data was written: tmp must go */
  snprintf(path, sizeof path, "%s/vtu_is_a_dir", dir);
  mkdir(path, 0755);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  e = hpmg_vtu_write(path, 2, 2, c, b, u, "u");
  EXPECT(e == HPMG_ERR_IO, "rename onto a directory: expected HPMG_ERR_IO, got %d", (int)e);
  EXPECT(strstr(hpmg_last_error(), "vtu_is_a_dir") != NULL, "message: %s", hpmg_last_error());
  EXPECT(!file_exists(tmp), "failed write left %s behind", tmp);
  rmdir(path);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s OUTPUT_DIR CHECKER_SCRIPT\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1], *checker = argv[2];
  test_index_bijective();
  test_bad_arguments(dir);
  test_io_failure(dir);

  struct {
    int dim, k;
  } cases[] = {{2, 1}, {2, 2}, {2, 3}, {2, 5}, {3, 1}, {3, 2}, {3, 4}};
  const int cells[3] = {3, 2, 2};
  const double box[3] = {1.0, 2.0, 0.5};
  char cmd[16384];
  int len = snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s'", checker);
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
    int dim = cases[t].dim, k = cases[t].k;
    char path[4096];
    snprintf(path, sizeof path, "%s/vtu_d%d_k%d.vtu", dir, dim, k);
    double *u = make_field(dim, k, cells, box);
    hpmg_error e = hpmg_vtu_write(path, dim, k, cells, box, u, "u");
    free(u);
    EXPECT(e == HPMG_SUCCESS, "write %s: %s", path, hpmg_last_error());
    len += snprintf(cmd + len, sizeof cmd - (size_t)len, " '%s:%d:%d:%d,%d,%d:%.17g,%.17g,%.17g'",
                    path, dim, k, cells[0], cells[1], cells[2], box[0], box[1], box[2]);
  }
  if (failures) {
    fprintf(stderr, "%d failure(s) before reading back\n", failures);
    return 1;
  }
  if (access("/usr/bin/python3", X_OK) != 0) {
    printf("SKIP: /usr/bin/python3 not found (install python3 and python3-vtk9)\n");
    return 77;
  }
  fflush(stdout);
  int st = system(cmd);
  if (st == -1 || !WIFEXITED(st)) {
    fprintf(stderr, "FAIL: could not run %s\n", cmd);
    return 1;
  }
  int rc = WEXITSTATUS(st);
  if (rc == 77) return 77;
  if (rc != 0) {
    fprintf(stderr, "FAIL: checker exited %d\n", rc);
    return 1;
  }
  printf("test_vtu: all checks passed\n");
  return 0;
}
