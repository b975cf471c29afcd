/* The box options of the command line, shared by both parsers: --bc, --grid,
 * --grid-file, --cells, --fd-layout, --no-project (docs/bc.md). Each is
 * parsed into the problem options after every option is read (so that --dim
 * may come later); any error is a message and exit code 2 before any work. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "hpmg: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n(see docs/bc.md)\n");
  va_end(ap);
  return 2;
}

static const char *const face_names[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};
static const char *const dir_names[3] = {"x", "y", "z"};

/* a finite number filling all of s */
static int number(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return *s && !*end && !errno && isfinite(*v);
}

/* KIND[:VALUE] into bc */
static int parse_bc_spec(const char *key, char *spec, hpmg_bc *bc) {
  char *colon = strchr(spec, ':');
  if (colon) *colon = 0;
  if (!strcmp(spec, "periodic")) bc->kind = HPMG_BC_PERIODIC;
  else if (!strcmp(spec, "neumann")) bc->kind = HPMG_BC_NEUMANN;
  else if (!strcmp(spec, "dirichlet")) bc->kind = HPMG_BC_DIRICHLET;
  else return fail("--bc %s=%s: unknown condition (dirichlet[:g], neumann[:g] or periodic)", key, spec);
  if (colon) {
    if (bc->kind == HPMG_BC_PERIODIC) return fail("--bc %s: periodic takes no value", key);
    if (!number(colon + 1, &bc->value)) return fail("--bc %s: '%s' is not a finite number", key, colon + 1);
  }
  return 0;
}

static int parse_bc(const char *arg, hpmg_problem_options *po) {
  char *dup = strdup(arg), *save = NULL;
  int rc = 0;
  for (char *item = strtok_r(dup, ",", &save); item && !rc; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    if (!eq) {
      rc = fail("--bc: '%s' is not KEY=CONDITION (e.g. x=periodic or ymin=dirichlet:0)", item);
      break;
    }
    *eq = 0;
    int face = -1, dir = -1;
    for (int f = 0; f < 6; f++)
      if (!strcmp(item, face_names[f])) face = f;
    for (int d = 0; d < 3; d++)
      if (!strcmp(item, dir_names[d])) dir = d;
    if (face < 0 && dir < 0) {
      rc = fail("--bc: unknown face or direction '%s' (x, y, z, xmin, xmax, ymin, ymax, zmin, zmax)", item);
      break;
    }
    if ((face >= 0 ? face / 2 : dir) >= po->dim) {
      rc = fail("--bc: %s is not a face of a %dD box", item, po->dim);
      break;
    }
    hpmg_bc bc = {0};
    rc = parse_bc_spec(item, eq + 1, &bc);
    if (rc) break;
    if (face >= 0) po->bc[face] = bc;
    else po->bc[2 * dir] = po->bc[2 * dir + 1] = bc;
  }
  free(dup);
  return rc;
}

static int parse_grid(const char *arg, hpmg_problem_options *po) {
  char *dup = strdup(arg), *save = NULL;
  int rc = 0;
  for (char *item = strtok_r(dup, ",", &save); item && !rc; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    int d = -1;
    if (eq) {
      *eq = 0;
      for (int e = 0; e < 3; e++)
        if (!strcmp(item, dir_names[e])) d = e;
    }
    if (d < 0 || d >= po->dim) {
      rc = fail("--grid: '%s' is not DIR=SPACING with DIR one of the %dD box's directions (e.g. y=tanh:2.0)", item, po->dim);
      break;
    }
    char *spec = eq + 1, *colon = strchr(spec, ':');
    if (colon) *colon = 0;
    hpmg_spacing sp = {HPMG_SPACING_UNIFORM, 0, NULL};
    if (!strcmp(spec, "uniform") && !colon) sp.kind = HPMG_SPACING_UNIFORM;
    else if (!strcmp(spec, "geometric") || !strcmp(spec, "tanh")) {
      sp.kind = spec[0] == 'g' ? HPMG_SPACING_GEOMETRIC : HPMG_SPACING_TANH;
      if (!colon || !number(colon + 1, &sp.param) || !(sp.param > 0)) {
        rc = fail("--grid %s=%s needs a positive parameter (%s:%s)", item, spec, spec, spec[0] == 'g' ? "1.05" : "2.0");
        break;
      }
    } else {
      rc = fail("--grid %s: unknown spacing '%s' (uniform, geometric:ALPHA, tanh:BETA; node lists: --grid-file)", item, spec);
      break;
    }
    po->spacing[d] = sp;
  }
  free(dup);
  return rc;
}

static int parse_cells(const char *arg, hpmg_problem_options *po) {
  int64_t c[4];
  int n = 0;
  const char *s = arg;
  while (n < 4) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno || v < 1) return fail("--cells: '%s' is not a list of positive cell counts like 384,256,192", arg);
    c[n++] = v;
    if (*end == ',') s = end + 1;
    else if (!*end) break;
    else return fail("--cells: '%s' is not a list of positive cell counts like 384,256,192", arg);
  }
  if (n != 1 && n != po->dim) return fail("--cells needs 1 or %d counts for --dim %d (got %d)", po->dim, po->dim, n);
  for (int d = 0; d < po->dim; d++) po->cells[d] = c[n == 1 ? 0 : d];
  return 0;
}

/* --grid-file: per direction, a label "x:", "y:" or "z:" followed by that
 * direction's node coordinates (whitespace or newlines between numbers,
 * "#" to the end of a line a comment); cells = nodes - 1, box length = the
 * last node. */
static int parse_grid_file(const char *path, hpmg_problem_options *po, int box_given, double *nodes[3]) {
  FILE *f = fopen(path, "r");
  if (!f) return fail("--grid-file %s: cannot open (%s)", path, strerror(errno));
  int d = -1, rc = 0;
  int64_t cnt[3] = {0, 0, 0}, cap[3] = {0, 0, 0};
  char tok[256];
  int c;
  while (!rc) {
    /* next token */
    int len = 0;
    while ((c = fgetc(f)) != EOF) {
      if (c == '#') {
        while ((c = fgetc(f)) != EOF && c != '\n') {}
        continue;
      }
      if (!isspace(c)) break;
    }
    if (c == EOF) break;
    do {
      if (len < (int)sizeof tok - 1) tok[len++] = (char)c;
    } while ((c = fgetc(f)) != EOF && !isspace(c) && c != '#');
    if (c == '#') ungetc(c, f);
    tok[len] = 0;
    if (len == 2 && tok[1] == ':' && (tok[0] == 'x' || tok[0] == 'y' || tok[0] == 'z')) {
      d = tok[0] - 'x';
      if (d >= po->dim) rc = fail("--grid-file %s: direction %s in a %dD problem", path, tok, po->dim);
      else if (cnt[d]) rc = fail("--grid-file %s: direction %c given twice", path, tok[0]);
      continue;
    }
    double v;
    if (d < 0) rc = fail("--grid-file %s: '%s' before the first direction label (x:, y:, z:)", path, tok);
    else if (!number(tok, &v)) rc = fail("--grid-file %s: '%s' is not a finite number", path, tok);
    else {
      if (cnt[d] == cap[d]) {
        cap[d] = cap[d] ? 2 * cap[d] : 256;
        double *t = realloc(nodes[d], sizeof(double) * (size_t)cap[d]);
        if (!t) rc = fail("--grid-file %s: out of memory", path);
        else nodes[d] = t;
      }
      if (!rc) nodes[d][cnt[d]++] = v;
    }
  }
  fclose(f);
  for (int e = 0; e < po->dim && !rc; e++) {
    if (!cnt[e]) continue;
    if (cnt[e] < 2) {
      rc = fail("--grid-file %s: direction %s needs 2 nodes or more (got %lld)", path, dir_names[e], (long long)cnt[e]);
      break;
    }
    if (po->cells[e] && po->cells[e] != cnt[e] - 1) {
      rc = fail("--grid-file %s: %lld nodes in %s make %lld cells, but --cells gives %lld", path, (long long)cnt[e],
                dir_names[e], (long long)(cnt[e] - 1), (long long)po->cells[e]);
      break;
    }
    po->cells[e] = cnt[e] - 1;
    po->spacing[e] = (hpmg_spacing){HPMG_SPACING_NODES, 0, nodes[e]};
    if (!box_given) po->box[e] = nodes[e][cnt[e] - 1];
  }
  return rc;
}

int hpmg_cli_box_apply(const hpmg_cli_box_args *a, hpmg_problem_options *po, double *nodes[3]) {
  if (a->layout) {
    if (!strcmp(a->layout, "vertex")) po->fd_layout = HPMG_FD_VERTEX;
    else if (!strcmp(a->layout, "cell")) po->fd_layout = HPMG_FD_CELL;
    else return fail("--fd-layout: invalid value '%s' (allowed: vertex, cell)", a->layout);
  }
  if (a->no_project) po->project_rhs = 0;
  int rc = 0;
  if (a->cells) rc = parse_cells(a->cells, po);
  if (!rc && a->bc) rc = parse_bc(a->bc, po);
  if (!rc && a->grid) rc = parse_grid(a->grid, po);
  if (!rc && a->grid_file) rc = parse_grid_file(a->grid_file, po, a->box_given, nodes);
  return rc;
}
