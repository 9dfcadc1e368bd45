#!/bin/sh
# Test helper: place_resimulates.sh EXASIM DIR SCENARIO ARGS...; runs `EXASIM place SCENARIO ARGS --json
# --out DIR`, then `EXASIM simulate DIR/scenario.json --json`, and prints "re-simulates to the claimed
# time" when the written placement file gives exactly the planned_iteration_s that place printed.
exasim=$1 dir=$2 scenario=$3
shift 3
rm -rf "$dir"
planned=$("$exasim" place "$scenario" "$@" --json --out "$dir") || exit 1
claimed=$(printf '%s\n' "$planned" | sed -n 's/.*"planned_iteration_s":\([^,}]*\).*/\1/p')
simulated=$("$exasim" simulate "$dir/scenario.json" --json | sed -n 's/.*"iteration_time_s":\([^,}]*\).*/\1/p')
echo "place claimed $claimed s, $dir/scenario.json simulates to $simulated s"
if [ -z "$claimed" ] || [ "$claimed" != "$simulated" ]; then echo "placement does not re-simulate"; exit 1; fi
lines=$(grep -vc '^#' "$dir/placement.txt")
echo "placement.txt holds $lines GPUs, $(grep -v '^#' "$dir/placement.txt" | sort -u | wc -l) distinct"
echo "re-simulates to the claimed time"
