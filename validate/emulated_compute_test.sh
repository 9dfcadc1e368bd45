#!/usr/bin/env bash
# The emulation runs the compute its plan asks for: on every shipped validation case (pipelines
# included), each rank's compute in an emulated iteration (summary.json: emulation.compute_per_rank_s)
# equals the plan's, the sum of its compute ops' kernel times (emulation.plan_compute_per_rank_s).
#
#   validate/emulated_compute_test.sh EXASIM CASES_DIR WORK_DIR [TOLERANCE_PCT]
#
# A host delay inside a compute op (a late wake-up, a poll that copies) is paid back by the next ops,
# so a rank's sum stays the plan's while single ops move: on a quiet host every rank lands within a
# few hundredths of a percent. The tolerance (default 5%) covers the delays a loaded host leaves unpaid
# at an iteration's end.
set -euo pipefail
exasim=$1 cases=$2 work=$3 tolerance=${4:-5}
mkdir -p "$work"
status=0
# The numbers of the JSON array FIELD in FILE, one per line.
array() { tr -d ' \n' <"$2" | sed -n "s/.*\"$1\":\[\([^]]*\)\].*/\1/p" | tr , '\n'; }
for case in "$cases"/*.json; do
  name=$(basename "$case" .json)
  gpus=$("$exasim" simulate "$case" --json -q | sed -n 's/.*"gpus":\([0-9]*\).*/\1/p')
  if ! "$exasim" emulate "$case" --ranks "$gpus" --iterations 1 --warmup 1 --out "$work/$name" >/dev/null 2>&1; then
    echo "$name: the emulation failed" >&2
    status=1
    continue
  fi
  summary="$work/$name/summary.json"
  read -r pct rank over < <(paste <(array compute_per_rank_s "$summary") <(array plan_compute_per_rank_s "$summary") |
    awk -v t="$tolerance" '{ e = 100 * ($1 - $2) / $2; if (e < 0) e = -e; if (NR == 1 || e > w) { w = e; r = NR - 1 } }
      END { printf "%.2f %d %d\n", w, r, (NR == 0 || w > t) }')
  echo "$name: emulated compute per rank within ${pct}% of the plan's (worst: rank $rank)"
  if [ "$over" = 1 ]; then
    echo "$name: rank $rank's emulated compute is ${pct}% off the plan's (tolerance ${tolerance}%)" >&2
    status=1
  fi
done
exit $status
