/* The spectral-element tests' mesh description and its construction through
 * the problem options and hpmg_box (test_sem_mesh, test_sem_smoother,
 * test_sem_mg): box lengths 1, 1.5, 2 per direction, the given cells, end
 * conditions and spacing. */
#ifndef HPMG_TESTS_SEM_TEST_MESH_H
#define HPMG_TESTS_SEM_TEST_MESH_H

#include "disc/sem/sem_mesh.h"
#include "grid/box.h"
#include "hpmg.h"

typedef struct {
  int dim, p;
  int64_t cells[3];
  hpmg_bc_kind bc[3][2];
  hpmg_spacing_kind sp[3];
  double param[3], lambda;
} config;

static inline void sem_test_options(const config *c, hpmg_problem_options *o) {
  hpmg_problem_options_default(o);
  o->disc = HPMG_DISC_SEM;
  o->dim = c->dim;
  for (int d = 0; d < c->dim; d++) {
    o->cells[d] = c->cells[d];
    o->box[d] = 1.0 + 0.5 * d;
    o->bc[2 * d].kind = c->bc[d][0];
    o->bc[2 * d + 1].kind = c->bc[d][1];
    o->spacing[d].kind = c->sp[d];
    o->spacing[d].param = c->param[d];
  }
}

/* the box and the mesh of degree c->p with c->lambda (the box destroyed on failure) */
static inline hpmg_error make_mesh(const config *c, hpmg_box *box, hpmg_sem_mesh *m) {
  hpmg_problem_options o;
  sem_test_options(c, &o);
  HPMG_CALL(hpmg_box_init(&o, box));
  hpmg_error e = hpmg_sem_mesh_create(box, c->p, c->lambda, m);
  if (e) hpmg_box_destroy(box);
  return e;
}

#endif
