#!/usr/bin/env bash
# A calibration of several microbenchmark runs is one fit over every kept run's points: two quick runs
# must leave a samples file holding each ring point twice (once per run), a machine file whose
# collectives fit names that many points and records both runs' own fits and their spread, and a log
# that says so.
#
#   validate/pooled_calibration_test.sh EXASIM WORK_DIR
set -euo pipefail
exasim=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
log=$("$exasim" calibrate --ranks 2 --quick --repeats 2 --max-steal-pct 100 --out "$work/machine.json" 2>&1)
echo "$log" | grep '^exasim: calibrated'
[[ $log =~ one\ fit\ over\ 2\ runs,\ each\ fitted\ alone:\ bandwidth\ [0-9.e+-]+-[0-9.e+-]+\ GB/s\ \(spread ]] ||
  { echo "expected the log to name one fit over 2 runs and their spread" >&2; exit 1; }
python3 - "$work/machine.json" "$work/machine.json.samples.json" <<'PY'
import collections, json, re, sys
machine, samples = (json.load(open(p)) for p in sys.argv[1:3])
ranks = samples["ranks"]
ring = [s for s in samples["samples"] if s["kind"] in ("all_reduce", "all_gather", "reduce_scatter")
        and s["group"] * s["groups"] == ranks]
counts = collections.Counter((s["kind"], s["group"], s["bytes"]) for s in ring)
assert ring and set(counts.values()) == {2}, f"each ring point once per run expected: {counts}"
fitted = int(re.search(r"fit of (\d+) ring", machine["node"]["sources"]["nic_bandwidth_Bps"]).group(1))
assert fitted == len(ring), f"the collectives fit names {fitted} points, the samples hold {len(ring)}"
src = machine["sources"]
assert src["calibration_runs"] == 2 and len(src["collectives_bandwidth_runs_Bps"]) == 2, src
assert src["conditions"]["collectives_bandwidth_Bps"] > 0
print(f"{len(ring)} ring points, each from both runs, in one fit")
PY
