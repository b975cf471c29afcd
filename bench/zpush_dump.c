/* Prints the z-direction 1D stiffness/mass (diagonal storage) and exact row
 * sums of a 3D Q_k level for bench/zpush_model.py:  zpush_dump K CELLS */
#include <stdio.h>
#include <stdlib.h>
#include "disc/qk/laplace.h"
int main(int argc, char **argv) {
  int k = atoi(argv[1]); int64_t c = atoll(argv[2]);
  hpmg_grid g; hpmg_laplace op;
  int64_t cells[3] = {c, c, c}; double box[3] = {1, 1, 1.3};
  hpmg_grid_init(3, k, cells, box, &g);
  hpmg_laplace_create(&g, 0.0, &op);
  int64_t n = g.n[2]; int bw = op.K[2].bw;
  printf("%lld %d\n", (long long)n, bw);
  for (int o = 0; o < 2 * bw + 1; o++) for (int64_t i = 0; i < n; i++) printf("%.17g %.17g\n", op.K[2].dia[o * n + i], op.M[2].dia[o*n+i]);
  for (int64_t i = 0; i < n; i++) printf("%.17g\n", op.sK[2][i]);
  return 0;
}
