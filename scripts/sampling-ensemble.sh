#!/bin/bash
# Measures the error of layer sampling (simulation.sample_layers, sim/api/layer_sampling.hpp) on an
# ensemble of scenarios that differ only by their seed (adaptive routing's hashes, and a random
# placement's draw): under adaptive routing single layers differ by percents, so one pair of runs says
# little about the error to expect. For each seed it simulates every layer and the layer-sampled
# approximations, and prints both iterations and the relative error; then, per K, the mean error, the
# largest one, and the error of the ensemble means.
#
# usage: scripts/sampling-ensemble.sh SCENARIO [N=5] [K=2[,K2...]] [-- exasim simulate options]
# e.g.:  scripts/sampling-ensemble.sh configs/scenarios/frontier-gpt-40b-4096.json 5 1,2,4 -- --set placement=spread
#
# Seeds 1 .. N (`--set seed=k`). A perturbation of one latency (scripts/solver-ensemble.sh) moves the full
# run but not the short samples, so it says nothing about sampling.
set -euo pipefail
if [ $# -lt 1 ]; then sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
scenario=$1; shift
n=5 ks=2
if [ $# -gt 0 ] && [ "$1" != "--" ]; then n=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" != "--" ]; then ks=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
exasim=${EXASIM:-build/exasim}
[ -x "$exasim" ] || { echo "sampling-ensemble.sh: $exasim is not built (scripts/build.sh)" >&2; exit 2; }
iteration() {
  "$exasim" simulate "$scenario" --json --ignore-memory -q "$@" | grep -o '"iteration_time_s":[0-9.e+-]*' | cut -d: -f2
}
for ((k = 1; k <= n; k++)); do
  full=$(iteration --set seed="$k" "$@")
  for K in ${ks//,/ }; do
    sampled=$(iteration --set seed="$k" --sample-layers "$K" "$@")
    echo "k=$k full=$full K=$K sampled=$sampled"
  done
done | awk '
  { print; fflush()
    split($2, f, "="); split($3, kk, "="); split($4, s, "="); K = kk[2]
    err = 100 * (s[2] / f[2] - 1); sum[K] += err; n[K]++; sf[K] += f[2]; ss[K] += s[2]
    if (!(K in worst) || (err < 0 ? -err : err) > (worst[K] < 0 ? -worst[K] : worst[K])) worst[K] = err }
  END { for (K in sum) printf "K=%s: mean error %+.2f %%, largest %+.2f %%, error of the means %+.2f %% over %d runs\n",
                              K, sum[K] / n[K], worst[K], 100 * (ss[K] / sf[K] - 1), n[K] }'
