#!/bin/bash
# Compares the wall time of two scale_bench binaries on a shared, noisy machine: alternating solo runs
# (A then B, then B then A, ...), so that slow drifts of the host (neighbours, memory contention) hit
# both alike. Prints both sums and the median, min and max of the per-round ratio B/A, and checks that
# both binaries give the same simulated iteration time (an optimisation must not change the answer).
#
# usage: scripts/ab-scale.sh BIN_A BIN_B [GPUS=32768] [LAYERS=8] [ROUNDS=10]
# e.g.:  cp build/bench/scale_bench /tmp/before; (change, rebuild); scripts/ab-scale.sh /tmp/before build/bench/scale_bench
# More scale_bench arguments (one case only) go in SCALE_ARGS, e.g.
#        SCALE_ARGS="--model gpt-40b --grid 2,4,8 --batch 2048 --placement spread" scripts/ab-scale.sh A B 4096 2
#
# Single runs on these machines swing by 25-30 %; one round is no evidence, and a median ratio within
# 0.95-1.05 over 10 rounds is no difference.
set -euo pipefail
if [ $# -lt 2 ]; then sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
A=$1 B=$2 GPUS=${3:-32768} LAYERS=${4:-8} ROUNDS=${5:-10}
for bin in "$A" "$B"; do
  [ -x "$bin" ] || { echo "ab-scale.sh: $bin is not an executable scale_bench" >&2; exit 2; }
done
field() { grep -o "\"$1\":[0-9.e+-]*" | cut -d: -f2; }
run() {
  local line
  # shellcheck disable=SC2086  # SCALE_ARGS is a list of arguments
  line=$("$1" --gpus "$GPUS" --layers "$LAYERS" --repeats 1 ${SCALE_ARGS:-} | tail -1)
  grep -q '"wall_s"' <<<"$line" || { echo "ab-scale.sh: $1 printed no wall_s: $line" >&2; exit 1; }
  echo "$line"
}
ratios=() sum_a=0 sum_b=0 sim_a="" sim_b=""
for ((i = 1; i <= ROUNDS; i++)); do
  if ((i % 2)); then la=$(run "$A"); lb=$(run "$B"); else lb=$(run "$B"); la=$(run "$A"); fi
  wa=$(field wall_s <<<"$la") wb=$(field wall_s <<<"$lb")
  sim_a=$(field simulated_iteration_s <<<"$la") sim_b=$(field simulated_iteration_s <<<"$lb")
  ratios+=("$(awk -v a="$wa" -v b="$wb" 'BEGIN {printf "%.3f", b / a}')")
  sum_a=$(awk -v s="$sum_a" -v w="$wa" 'BEGIN {print s + w}') sum_b=$(awk -v s="$sum_b" -v w="$wb" 'BEGIN {print s + w}')
done
printf '%s\n' "${ratios[@]}" | sort -n | awk -v sa="$sum_a" -v sb="$sum_b" -v g="$GPUS" -v l="$LAYERS" \
  '{r[NR] = $1} END {printf "gpus %d, layers %d, %d rounds: A %.2f s, B %.2f s in all; B/A median %.3f (min %.3f, max %.3f)\n", g, l, NR, sa, sb, r[int((NR + 1) / 2)], r[1], r[NR]}'
if [ "$sim_a" != "$sim_b" ]; then echo "simulated iteration differs: A $sim_a s, B $sim_b s" >&2; exit 1; fi
echo "same simulated iteration: $sim_a s"
