#!/bin/bash
# Compares the default (local) max-min solver with the component solver on an ensemble of scenarios
# that differ only by a tiny perturbation of one latency, for cases whose answer is ill-conditioned
# (adaptive routing picks a route from the load at the moment a flow starts, so a reordering of two
# nearly simultaneous events can move a long flow to another path and the iteration by percent).
# Prints one line per perturbation and solver, then each solver's mean, min and max.
#
# usage: scripts/solver-ensemble.sh SCENARIO [N=5] [-- exasim simulate options, e.g. --set placement=spread]
# e.g.:  scripts/solver-ensemble.sh configs/scenarios/frontier-gpt-40b-4096.json 5 -- --set placement=spread
#
# The perturbation: machine.network.local_latency_s = 1e-8 * (1 + k * 1e-6), k = 0 .. N-1 (k = 0 is the
# preset's 10 ns, a change of at most 4e-14 s). Slow for big spread cases: the component solver takes
# minutes per run there.
set -euo pipefail
if [ $# -lt 1 ]; then sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
scenario=$1; shift
n=5
if [ $# -gt 0 ] && [ "$1" != "--" ]; then n=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
exasim=${EXASIM:-build/exasim}
for solver in local components; do
  for ((k = 0; k < n; k++)); do
    latency=$(awk -v k="$k" 'BEGIN {printf "%.17g", 1e-8 * (1 + k * 1e-6)}')
    t=$("$exasim" simulate "$scenario" --json --ignore-memory --solver "$solver" \
          --set machine.network.local_latency_s="$latency" "$@" |
        grep -o '"iteration_time_s":[0-9.e+-]*' | cut -d: -f2)
    echo "$solver k=$k iteration_s=$t"
  done
done | awk '
  { print; fflush(); split($3, a, "="); s = $1; v = a[2]; sum[s] += v; n[s]++
    if (!(s in lo) || v < lo[s]) lo[s] = v; if (!(s in hi) || v > hi[s]) hi[s] = v }
  END { for (s in sum) printf "%s: mean %.6f s, min %.6f, max %.6f over %d runs\n", s, sum[s] / n[s], lo[s], hi[s], n[s] }'
