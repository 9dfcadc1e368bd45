#!/usr/bin/env bash
# The emulation runs the compute its plan asks for: on every shipped validation case (pipelines
# included), each rank's compute in an emulated iteration (summary.json: emulation.compute_per_rank_s)
# equals the plan's, the sum of its compute ops' kernel times (emulation.plan_compute_per_rank_s), and
# the iteration's compute class (measured_op_classes) is the plan's mean over ranks within 0.5%.
#
#   validate/emulated_compute_test.sh EXASIM CASES_DIR WORK_DIR [TOLERANCE_PCT] [ATTEMPTS]
#
# A host delay inside a compute op (a late wake-up, a poll that copies) is paid back by the next ops,
# so a rank's sum stays the plan's while single ops move: on a quiet host every rank lands within a
# few hundredths of a percent. What a blocking wait absorbs (the GPU idled through it) and what the
# last ops of an iteration owe stay unpaid: the emulated GPU measures it
# (emulation.unpaid_delay_per_rank_s) and the host's compute time includes it. With 6 or 8 ranks on
# 2 cores that is 2-14% of a rank's plan, and the next run shows it on other ranks. So the two
# directions differ:
#  - less compute than the plan beyond the tolerance (default 5%) fails at once: no host delay makes an
#    emulated GPU finish early; an emulation that skips compute does;
#  - more is judged net of the unpaid delay the emulated GPU measured, and fails only if every one of
#    ATTEMPTS runs (default 3) shows it: what is left is compute the plan does not ask for (an op run
#    twice, a kernel that is not the plan's), or delay outside the GPU's reach, which does not repeat.
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
    # The compute class (the trace's compute ops, on the emulated GPU's timeline: emu/README.md) is the
    # plan's mean over ranks whatever the host did; host time there would be 0.2-14% above it.
    class=$(tr -d ' \n' <"$summary" | sed -n 's/.*"measured_op_classes":\[{[^}]*"compute":\([-0-9.eE+]*\).*/\1/p')
    off=$(array plan_compute_per_rank_s "$summary" | awk -v c="${class:-0}" '{ s += $1 } END {
      if (NR == 0 || s == 0) print 1e9; else printf "%.3f\n", 100 * (c - s / NR) / (s / NR) }')
    echo "$name: compute class ${off}% from the plan's mean over ranks"
    if awk -v e="$off" 'BEGIN { exit !(e < -0.5 || e > 0.5) }'; then
      echo "$name: the compute class is ${off}% off the plan's (the trace's compute ops are not on the GPU's timeline)" >&2
      status=1
      break
    fi
    # The worst rank below the plan, and the worst above it net of the unpaid delay: signed error in
    # percent, rank; then the raw excess of that rank and its unpaid delay in ms, for the message.
    read -r low low_rank high high_rank high_raw high_unpaid_ms < <(paste <(array compute_per_rank_s "$summary") \
      <(array plan_compute_per_rank_s "$summary") <(array unpaid_delay_per_rank_s "$summary") |
      awk '{ e = 100 * ($1 - $2) / $2; n = 100 * ($1 - $3 - $2) / $2
             if (NR == 1 || e < lo) { lo = e; lr = NR - 1 }
             if (NR == 1 || n > hi) { hi = n; hr = NR - 1; hx = e; hu = 1000 * $3 } }
           END { if (NR == 0) { lo = hi = hx = 1e9 }; printf "%.2f %d %.2f %d %.2f %.1f\n", lo, lr, hi, hr, hx, hu }')
    echo "$name: emulated compute per rank from ${low}% (rank $low_rank) of the plan's;" \
      "at most ${high}% above it net of unpaid delay (rank $high_rank: ${high_raw}% with ${high_unpaid_ms} ms unpaid)"
    if awk -v e="$low" -v t="$tolerance" 'BEGIN { exit !(e < -t) }'; then
      echo "$name: rank $low_rank computed ${low#-}% less than its plan (tolerance ${tolerance}%)" >&2
      status=1
      break
    fi
    awk -v e="$high" -v t="$tolerance" 'BEGIN { exit !(e > t) }' || break
    if [ "$attempt" = "$attempts" ]; then
      echo "$name: rank $high_rank computed ${high}% more than its plan net of unpaid delay in all $attempts runs" \
        "(tolerance ${tolerance}%)" >&2
      status=1
    else
      echo "$name: rank $high_rank computed ${high}% more than its plan net of unpaid delay; running it again"
    fi
  done
done
exit $status
