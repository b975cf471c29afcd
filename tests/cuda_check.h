/* Shared by the GPU kernel tests (test_cuda_ops, test_cuda_patch). */
#ifndef HPMG_TESTS_CUDA_CHECK_H
#define HPMG_TESTS_CUDA_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "disc/qk/cuda/hpmg_cuda.h"

/* a failing library call ends the test with its message */
#define CK(call)                                                                    \
  do {                                                                              \
    hpmg_error e_ = (call);                                                         \
    if (e_) {                                                                       \
      printf("FAIL %s: %s (%s:%d)\n", #call, hpmg_last_error(), __FILE__, __LINE__); \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

#ifdef HPMG_HAVE_CUDA /* the kernel entry points exist only in a CUDA build */
/* device buffer poisoned with NaN */
static inline void poison(void *dev, size_t bytes) {
  void *h = malloc(bytes);
  memset(h, 0xff, bytes); /* all-ones: NaN in both precisions */
  CK(hpmg_cuda_upload(dev, h, bytes));
  free(h);
}
#endif

#endif
