#!/usr/bin/env bash
# The emulation runs the compute its plan asks for: on every shipped validation case (pipelines
# included), each rank's compute in an emulated iteration (summary.json: emulation.compute_per_rank_s)
# equals the plan's, the sum of its compute ops' kernel times (emulation.plan_compute_per_rank_s).
#
#   validate/emulated_compute_test.sh EXASIM CASES_DIR WORK_DIR [TOLERANCE_PCT] [ATTEMPTS]
#
# A host delay inside a compute op (a late wake-up, a poll that copies) is paid back by the next ops,
# so a rank's sum stays the plan's while single ops move: on a quiet host every rank lands within a
# few hundredths of a percent. What the last ops of an iteration owe stays unpaid
# (emulation.unpaid_delay_per_rank_s) and is counted as compute. So the two directions differ:
#  - less compute than the plan beyond the tolerance (default 5%) fails at once: no host delay makes an
#    emulated GPU finish early; an emulation that skips compute does;
#  - more fails only if every one of ATTEMPTS runs (default 3) shows it: a rank descheduled during its
#    last compute ops on a loaded host does not repeat; a bug that adds compute does.
set -euo pipefail
exasim=$1 cases=$2 work=$3 tolerance=${4:-5} attempts=${5:-3}
mkdir -p "$work"
status=0
# The numbers of the JSON array FIELD in FILE, one per line.
array() { tr -d ' \n' <"$2" | sed -n "s/.*\"$1\":\[\([^]]*\)\].*/\1/p" | tr , '\n'; }
for case in "$cases"/*.json; do
  name=$(basename "$case" .json)
  gpus=$("$exasim" simulate "$case" --json -q | sed -n 's/.*"gpus":\([0-9]*\).*/\1/p')
  for attempt in $(seq "$attempts"); do
    if ! "$exasim" emulate "$case" --ranks "$gpus" --iterations 1 --warmup 1 --out "$work/$name" >/dev/null 2>&1; then
      echo "$name: the emulation failed" >&2
      status=1
      break
    fi
    summary="$work/$name/summary.json"
    # The worst rank below and above its plan: signed error in percent, rank, unpaid delay in ms.
    read -r low low_rank high high_rank high_unpaid_ms < <(paste <(array compute_per_rank_s "$summary") \
      <(array plan_compute_per_rank_s "$summary") <(array unpaid_delay_per_rank_s "$summary") |
      awk '{ e = 100 * ($1 - $2) / $2
             if (NR == 1 || e < lo) { lo = e; lr = NR - 1 }
             if (NR == 1 || e > hi) { hi = e; hr = NR - 1; hu = 1000 * $3 } }
           END { if (NR == 0) { lo = hi = 1e9 }; printf "%.2f %d %.2f %d %.1f\n", lo, lr, hi, hr, hu }')
    echo "$name: emulated compute per rank from ${low}% (rank $low_rank) to ${high}% (rank $high_rank) of the plan's"
    if awk -v e="$low" -v t="$tolerance" 'BEGIN { exit !(e < -t) }'; then
      echo "$name: rank $low_rank computed ${low#-}% less than its plan (tolerance ${tolerance}%)" >&2
      status=1
      break
    fi
    awk -v e="$high" -v t="$tolerance" 'BEGIN { exit !(e > t) }' || break
    if [ "$attempt" = "$attempts" ]; then
      echo "$name: rank $high_rank computed ${high}% more than its plan in all $attempts runs (tolerance ${tolerance}%)" >&2
      status=1
    else
      echo "$name: rank $high_rank computed ${high}% more than its plan, ${high_unpaid_ms} ms of it host delay" \
        "unpaid at the iteration's end; running it again"
    fi
  done
done
exit $status
