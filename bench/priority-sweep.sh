#!/usr/bin/env bash
# Where completion-first pays: `doubleface experiment priority` (doubleface-cf vs doubleface-fifo,
# interleaved) over a grid of per-reply work and load, and the curve of the fifo/cf p99 ratio
# against the replies the I/O loop's tail task held per batch (docs/experiments.md, "priority").
#
#   bench/priority-sweep.sh [--reply-work 50,200] [--fractions 0.5,0.75,0.9] [--repeats 2]
#                           [--duration 25s] [--out DIR]
#
# One experiment per (work, fraction) point, each measuring doubleface-fifo's closed-loop capacity
# with each mix (Lfan/Sfan 5/3 and 7/1) and then running the two configurations open loop at the
# fraction of it, --repeats times interleaved. --duration must give a run 10,000 answers at the
# lowest fraction (a p99 per repeat). Writes DIR (default docs/results/priority-sweep-<UTC>):
# the experiments' own directories under runs/, then bench/priority_sweep.py's sweep.csv and
# report.md. Bounded: every run stops by itself.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
WORKS=50,200; FRACTIONS=0.5,0.75,0.9; REPEATS=2; DURATION=25s; OUT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --reply-work) WORKS=$2; shift 2;;
    --fractions) FRACTIONS=$2; shift 2;;
    --repeats) REPEATS=$2; shift 2;;
    --duration) DURATION=$2; shift 2;;
    --out) OUT=$2; shift 2;;
    -h|--help) sed -n '2,14p' "$0"; exit 0;;
    *) echo "priority-sweep.sh: unknown option $1 (see --help)" >&2; exit 2;;
  esac
done
OUT=${OUT:-docs/results/priority-sweep-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT/runs"
IFS=, read -r -a W <<< "$WORKS"
IFS=, read -r -a F <<< "$FRACTIONS"
n=0; total=$(( ${#W[@]} * ${#F[@]} ))
for w in "${W[@]}"; do
  for f in "${F[@]}"; do
    n=$((n + 1))
    printf '[%s] priority-sweep.sh: point %d/%d: %s us per reply, %s of capacity\n' "$(date -u +%H:%M:%S)" "$n" "$total" "$w" "$f" >&2
    ./doubleface experiment priority --configs doubleface-cf,doubleface-fifo --reply-work-us "$w" \
      --load-fraction "$f" --repeats "$REPEATS" --duration "$DURATION" --out "$OUT/runs"
  done
done
python3 bench/priority_sweep.py "$OUT"
