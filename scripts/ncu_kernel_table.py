#!/usr/bin/env python3
"""Summary of an `ncu --csv --page raw` run with the metrics gpu__time_duration.sum,
dram__bytes_read.sum and dram__bytes_write.sum: per kernel and launch grid the
launches, total time, DRAM bytes and bandwidth, largest total time first.
  python3 scripts/ncu_kernel_table.py ncu.csv"""
import csv, sys, collections

rows = list(csv.reader(open(sys.argv[1])))
hdr = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
h = rows[hdr]
col = {n: h.index(n) for n in h}
unit = rows[hdr + 1]  # ncu's units row


def val(r, name):
    v = float(r[col[name]].replace(",", ""))
    u = unit[col[name]]
    scale = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1,
             "byte": 1, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}.get(u, 1)
    return v * scale


agg = collections.OrderedDict()
for r in rows[hdr + 2:]:
    if len(r) < len(h):
        continue
    name = r[col["Kernel Name"]].split("(")[0].replace("(anonymous namespace)::", "")
    key = (name, r[col["Grid Size"]] if "Grid Size" in col else "")
    a = agg.setdefault(key, [0, 0.0, 0.0])
    a[0] += 1
    a[1] += val(r, "gpu__time_duration.sum")
    a[2] += val(r, "dram__bytes_read.sum") + val(r, "dram__bytes_write.sum")
tot = sum(a[1] for a in agg.values())
print("%-22s %-18s %7s %10s %6s %10s %8s" % ("kernel", "grid", "calls", "time ms", "%", "DRAM GB", "GB/s"))
for (n, g), a in sorted(agg.items(), key=lambda kv: -kv[1][1]):
    if a[1] < 0.002 * tot:
        continue
    print("%-22s %-18s %7d %10.3f %6.1f %10.3f %8.0f" % (n[:22], g[:18], a[0], a[1] * 1e3, 100 * a[1] / tot, a[2] / 1e9,
                                                   a[2] / a[1] / 1e9 if a[1] > 0 else 0))
print("total kernel time %.3f ms over %d launches" % (tot * 1e3, sum(a[0] for a in agg.values())))
