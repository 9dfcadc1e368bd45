#!/usr/bin/env bash
# A cached calibration that no longer describes the host is measured again, and the result says so:
# validate once into an empty cache (measured now), then make the cached fit claim 10x the bandwidth
# the host has (as a calibration taken on another host, or one whose measurement went wrong, would),
# and validate again: the probe must find it stale (both --unpaired: one simulation); mark it as taken
# while the hypervisor disturbed every run, and validate again: stale without a probe. Then a validation
# with the default pairing simulates each repeat on the host as probed just before it.
#
#   validate/stale_calibration_test.sh EXASIM CASE WORK_DIR
set -euo pipefail
exasim=$1 case=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
export EXASIM_CACHE_DIR=$work
# --max-steal-pct 100: a calibration taken while the hypervisor is busy must not be found stale for that
# before the probe is tested.
run() {
  "$exasim" validate "$case" --ranks 4 --repeats 1 --iterations 1 --quick-calibration --unpaired --max-steal-pct 100 \
    --json 2>/dev/null
}
status() { sed -n 's/.*"calibration_status":"\([^"]*\)".*/\1/p'; }
first=$(run | status)
echo "first: $first"
[[ $first == "measured now (none cached)" ]] || { echo "expected a calibration measured now" >&2; exit 1; }
cache=$(ls "$work"/calibration-v4-*-4ranks.json)
sed -i 's/"collectives_bandwidth_Bps": \([0-9.e+-]*\)/"collectives_bandwidth_Bps": 1e12/' "$cache"
second_json=$(run)
[[ $second_json == *'"paired":false'* ]] || { echo "expected --unpaired to simulate once" >&2; exit 1; }
second=$(status <<<"$second_json")
echo "second: $second"
[[ $second == "cached but stale, measured again: a probe measured bandwidth -"* ]] ||
  { echo "expected the probe to find the cached calibration stale" >&2; exit 1; }
grep -q '"collectives_bandwidth_Bps": 1e12' "$cache" && { echo "the stale calibration was kept" >&2; exit 1; }
# A calibration whose every fitted run the hypervisor disturbed is stale whatever a probe says.
grep -q '"calibration_disturbed": false' "$cache" || { echo "expected calibration_disturbed in $cache" >&2; exit 1; }
sed -i 's/"calibration_disturbed": false/"calibration_disturbed": true/' "$cache"
third=$(run | status)
echo "third: $third"
[[ $third == "cached but stale, measured again: the hypervisor disturbed every run it fitted"* ]] ||
  { echo "expected a disturbed calibration to be measured again without a probe" >&2; exit 1; }
# Paired by default: every repeat is simulated on the host as probed just before it.
paired=$("$exasim" validate "$case" --ranks 4 --repeats 2 --iterations 1 --json 2>/dev/null)
echo "paired: $paired" | cut -c1-200
[[ $paired == *'"paired":true'* ]] || { echo "expected a paired result" >&2; exit 1; }
runs=$(sed -n 's/.*"simulated_runs_s":\[\([^]]*\)\].*/\1/p' <<<"$paired")
[[ $(tr ',' '\n' <<<"$runs" | grep -c .) == 2 ]] || { echo "expected 2 simulated runs, got [$runs]" >&2; exit 1; }
echo "ok"
