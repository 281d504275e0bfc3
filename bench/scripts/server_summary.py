"""Summary of bench/scripts/server.sh's CSV as markdown tables.

    python3 bench/scripts/server_summary.py server.csv

For each placement and pipeline: per server and command, the median over
the rounds of rps, p50 and p99 (ms), and the ratio to redis: the same
command for PING/SET/GET/PFADD, redis's PFADD for BF.*/CF.* (RedisBloom is
not loaded). Each round's ratio is that round's rps over the median of the
round's redis runs of the reference command; shown as median (min-max).
Then GOMAXPROCS=1 against the default for probly, unpinned.
"""
import csv
import statistics as st
import sys
from collections import defaultdict

rows = list(csv.DictReader(open(sys.argv[1])))
d = defaultdict(list)
cpu = defaultdict(list)  # server CPU µs per request (newer CSVs)
for r in rows:
    d[(r['round'], r['placement'], r['pipeline'], r['server'], r['command'])].append(
        (float(r['rps']), float(r['p50_ms']), float(r['p99_ms'])))
    if r.get('cpu_us_per_req'):
        cpu[(r['placement'], r['pipeline'], r['server'], r['command'])].append(float(r['cpu_us_per_req']))
rounds = sorted({r['round'] for r in rows}, key=int)
order = ['PING', 'SET', 'GET', 'PFADD', 'BF.ADD', 'BF.EXISTS', 'CF.ADD', 'CF.EXISTS']
servers = ['redis', 'probly', 'probly-gmp1']


def f(r):
    return f"{st.median(r):.2f} ({min(r):.2f}–{max(r):.2f})" if r else "–"


def rps_of(rd, pl, p, s, c):
    v = d.get((rd, pl, p, s, c))
    return st.median(a for a, _, _ in v) if v else None


for pl in ('pinned', 'unpinned'):
    for p in sorted({r['pipeline'] for r in rows}, key=int):
        print(f"\n**{pl}, -P {p}**\n")
        print("| server | command | rps (median) | p50 ms | p99 ms | ÷ redis |")
        print("|---|---|---|---|---|---|")
        for s in servers:
            for c in order:
                rps, p50, p99, ratio = [], [], [], []
                for rd in rounds:
                    v = d.get((rd, pl, p, s, c))
                    if not v:
                        continue
                    x = st.median(a for a, _, _ in v)
                    rps.append(x)
                    p50 += [b for _, b, _ in v]
                    p99 += [e for _, _, e in v]
                    ref = rps_of(rd, pl, p, 'redis', c if c in order[:4] else 'PFADD')
                    if ref and s != 'redis':
                        ratio.append(x / ref)
                if not rps:
                    continue
                ref = '' if c in order[:4] else ' (÷ PFADD)'
                print(f"| {s} | {c} | {st.median(rps):,.0f} | {st.median(p50):.3f} | {st.median(p99):.3f} | "
                      f"{f(ratio) if s != 'redis' else '1'}{ref if s != 'redis' else ''} |")

print("\n**GOMAXPROCS=1 ÷ default (unpinned), median (min–max) over rounds**\n")
print("| command | -P 1 | -P 16 |")
print("|---|---|---|")
for c in order:
    cells = []
    for p in ('1', '16'):
        r = []
        for rd in rounds:
            a, b = rps_of(rd, 'unpinned', p, 'probly-gmp1', c), rps_of(rd, 'unpinned', p, 'probly', c)
            if a and b:
                r.append(a / b)
        cells.append(f(r))
    print(f"| {c} | {cells[0]} | {cells[1]} |")

if cpu:
    print("\n**Server CPU per request (µs, user + system, median over the rounds; probly ÷ redis: same command, "
          "PFADD for BF/CF, lower is better)**\n")
    print("| placement | -P | command | redis | probly | probly ÷ redis | probly-gmp1 |")
    print("|---|---|---|---|---|---|---|")
    for pl in ('pinned', 'unpinned'):
        for p in sorted({r['pipeline'] for r in rows}, key=int):
            for c in order:
                def m(s, c=c):
                    v = cpu.get((pl, p, s, c))
                    return st.median(v) if v else None
                ref = m('redis', c if c in order[:4] else 'PFADD')
                pr, g1 = m('probly'), m('probly-gmp1')
                if pr is None:
                    continue
                rd = m('redis')
                num = lambda x: f"{x:.2f}" if x is not None else "–"
                ratio = f"{pr / ref:.2f}" if ref else "–"
                print(f"| {pl} | {p} | {c} | {num(rd)} | {pr:.2f} | {ratio} | {num(g1)} |")
