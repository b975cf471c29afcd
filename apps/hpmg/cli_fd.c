/* `hpmg solve --disc fd ...`: finite-difference multigrid and FFT Poisson solvers. */
#include <stdio.h>
int hpmg_cli_fd(int argc, char **argv) {
  (void)argc; (void)argv;
  fprintf(stderr, "hpmg: --disc fd is not available in this build\n");
  return 2;
}
