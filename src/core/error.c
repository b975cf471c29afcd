#include <stdarg.h>
#include <stdio.h>
#include "core.h"

static _Thread_local char last_message[1024];

hpmg_error hpmg_error_set(hpmg_error code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_message, sizeof last_message, fmt, ap);
  va_end(ap);
  return code;
}

const char *hpmg_last_error(void) { return last_message; }

const char *hpmg_error_name(hpmg_error code) {
  switch (code) {
  case HPMG_SUCCESS: return "success";
  case HPMG_ERR_ARG: return "invalid argument";
  case HPMG_ERR_MEMORY: return "out of memory";
  case HPMG_ERR_NOT_CONVERGED: return "not converged";
  case HPMG_ERR_BACKEND: return "backend unavailable";
  case HPMG_ERR_IO: return "I/O error";
  case HPMG_ERR_NUMERIC: return "numerical failure";
  }
  return "unknown error";
}
