#!/bin/sh
# Test helper: same_rows.sh EXASIM SCENARIO COMMAND ARGS...; runs `EXASIM COMMAND SCENARIO ARGS --json`
# with --jobs 1 and with --ranks 2 (mpirun) and prints "same rows" when the two outputs match byte for
# byte, once tune's analytic_configs_per_s (a wall-clock rate) is taken out; else both, and exits 1.
exasim=$1 scenario=$2 command=$3
shift 3
strip() { sed 's/"analytic_configs_per_s":[^,]*,//'; }
one=$("$exasim" "$command" "$scenario" "$@" --json --jobs 1 | strip) || exit 1
two=$("$exasim" "$command" "$scenario" "$@" --json --ranks 2 | strip) || exit 1
if [ -n "$one" ] && [ "$one" = "$two" ]; then
  printf '%s\n' "$one"
  echo "same rows with --jobs 1 and --ranks 2"
  exit 0
fi
printf -- '--jobs 1:\n%s\n--ranks 2:\n%s\n' "$one" "$two"
exit 1
