# Switches that cut one stage out of the operator kernel, for stages.sh
# (timing only: the results are wrong).
import sys
p = sys.argv[1]
s = open(p).read()
def rep(old, new):
    global s
    assert old in s, old
    s = s.replace(old, new)
rep("""        if (has_z) { /* t1 = Mz x""", """#ifdef CUT_Z
        if (has_z) { T1 = t1 - h0 * nx; T2 = t2 - h0 * nx; } else
#endif
        if (has_z) { /* t1 = Mz x""")
rep("""          for (int l = 0; l < nl; l++) {
            const int64_t i2 = g0 + l, j0 = Ry->j0[i2];""", """#ifdef CUT_Y
          for (int l = 0; l < 0; l++) {
#else
          for (int l = 0; l < nl; l++) {
#endif
            const int64_t i2 = g0 + l, j0 = Ry->j0[i2];""")
rep("""          SFX(to_rows)(nx, nv, la, AT);
          SFX(to_rows)(nx, nv, lb, BT);""", """#ifndef CUT_TOROWS
          SFX(to_rows)(nx, nv, la, AT);
          SFX(to_rows)(nx, nv, lb, BT);
#endif""")
rep("""          if (nv >= XV) SFX(contract_xt)""", """#ifdef CUT_X
          if (0)
#endif
          if (nv >= XV) SFX(contract_xt)""")
rep("""          SFX(from_rows)(nx, nl, OT,""", """#ifdef CUT_FROMROWS
          if (0)
#endif
          SFX(from_rows)(nx, nl, OT,""")
# zeroed scratch: a cut stage leaves finite values, not garbage, to the next
rep("""    REAL *t1 = malloc(sizeof(REAL) * tlen), *t2 = malloc(sizeof(REAL) * tlen);""",
    """    REAL *t1 = calloc(tlen, sizeof(REAL)), *t2 = calloc(tlen, sizeof(REAL));""")
open(p, "w").write(s)
