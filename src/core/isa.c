/* Choice of the CPU kernel variant (core/isa.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/isa.h"

HPMG_ISA_TABLE(hpmg_isa_info, hpmg_isa_info)

static int isa_current = -1;
static char isa_env_error[256];

/* Whether this processor runs code built for instruction-set level `level`. */
static int level_runs(const char *level) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (!strcmp(level, "avx512")) return __builtin_cpu_supports("x86-64-v4");
  if (!strcmp(level, "avx2")) return __builtin_cpu_supports("x86-64-v3");
  if (!strcmp(level, "avx")) return __builtin_cpu_supports("avx");
#endif
  (void)level;
  return 1; /* sse2 on x86-64, neon on aarch64 and generic are the architectures' baselines */
}

const hpmg_isa_info *hpmg_isa_get(int i) { return i >= 0 && i < HPMG_ISA_COUNT ? hpmg_isa_info_of(i) : NULL; }

int hpmg_isa_runs(int i) { return i >= 0 && i < HPMG_ISA_COUNT && level_runs(hpmg_isa_info_of(i)->level); }

static int isa_auto(void) {
  for (int i = 0; i < HPMG_ISA_COUNT; i++)
    if (hpmg_isa_runs(i)) return i;
  return HPMG_ISA_COUNT - 1; /* the last is the architecture's baseline */
}

static void names(char *buf, size_t len, int runnable_only) {
  buf[0] = 0;
  for (int i = 0; i < HPMG_ISA_COUNT; i++) {
    if (runnable_only && !hpmg_isa_runs(i)) continue;
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s%s", used ? ", " : "", hpmg_isa_info_of(i)->name);
  }
}

static hpmg_error isa_find(const char *name, int *out) {
  if (!strcmp(name, "auto")) {
    *out = isa_auto();
    return HPMG_SUCCESS;
  }
  char list[128];
  for (int i = 0; i < HPMG_ISA_COUNT; i++) {
    if (strcmp(name, hpmg_isa_info_of(i)->name)) continue;
    if (!hpmg_isa_runs(i)) {
      names(list, sizeof list, 1);
      return hpmg_error_set(HPMG_ERR_ARG, "CPU kernels '%s' need %s, which this processor lacks (it runs: auto, %s)",
                            name, hpmg_isa_info_of(i)->level, list);
    }
    *out = i;
    return HPMG_SUCCESS;
  }
  names(list, sizeof list, 1);
  return hpmg_error_set(HPMG_ERR_ARG, "unknown CPU kernel variant '%s' (this build and processor run: auto, %s)", name,
                        list);
}

__attribute__((constructor)) static void isa_init(void) {
  if (isa_current >= 0) return;
  isa_current = isa_auto();
  const char *env = getenv("HPMG_ISA");
  if (env && *env) {
    int i = 0;
    if (isa_find(env, &i) == HPMG_SUCCESS) isa_current = i;
    else snprintf(isa_env_error, sizeof isa_env_error, "HPMG_ISA=%s: %s", env, hpmg_last_error());
  }
}

int hpmg_isa_index(void) {
  if (isa_current < 0) isa_init();
  return isa_current;
}

hpmg_error hpmg_isa_select(const char *name) {
  HPMG_CHECK_ARG(name, "CPU kernel variant name is NULL");
  int i = 0;
  HPMG_CALL(isa_find(name, &i));
  isa_current = i;
  isa_env_error[0] = 0;
  return HPMG_SUCCESS;
}

hpmg_error hpmg_isa_check_env(void) {
  hpmg_isa_index();
  if (isa_env_error[0]) return hpmg_error_set(HPMG_ERR_ARG, "%s", isa_env_error);
  return HPMG_SUCCESS;
}

/* public API (hpmg.h) */
const char *hpmg_cpu_isa(void) { return hpmg_isa_info_of(hpmg_isa_index())->name; }

int hpmg_cpu_simd_bytes(void) { return hpmg_isa_info_of(hpmg_isa_index())->vbytes; }

const char *hpmg_cpu_isa_level(void) { return hpmg_isa_info_of(hpmg_isa_index())->level; }

hpmg_error hpmg_set_cpu_isa(const char *name) { return hpmg_isa_select(name); }

const char *hpmg_cpu_isa_available(void) {
  static char buf[128];
  names(buf, sizeof buf, 1);
  return buf;
}
