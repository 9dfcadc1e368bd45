#!/bin/bash
# Test helper: placements_test.sh SCALE_BENCH; prints "placements table ok" when
#  - bench/scale/placements.sh turns scale_bench's median lines into its table, with the route
#    entries and ns/entry columns ("-" where a line has no counters, as sampled runs print none);
#  - a real scale_bench run (4,096 GCDs spread, one layer) prints the solver's counters, non-zero.
set -euo pipefail
bench=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A stand-in for scale_bench: one median line with counters, one without, whatever the arguments.
cat >"$tmp/fake" <<'FAKE'
#!/bin/sh
echo '{"gpus":4096,"model":"gpt-40b","layers":38,"placement":"spread","routing":"adaptive","grid":[2,4,8,64],"wall_s":0.5,"events_per_s":2000000,"simulated_iteration_s":7.25,"route_entries":2500000,"median":true}'
echo '{"gpus":4096,"model":"gpt-40b","layers":38,"placement":"spread","routing":"adaptive","grid":[2,4,8,64],"wall_s":0.5,"events_per_s":2000000,"simulated_iteration_s":7.25,"median":true}'
FAKE
chmod +x "$tmp/fake"
table=$("$here/placements.sh" "$tmp/fake")
printf '%s\n' "$table"
# Here-strings, not pipes: under pipefail, grep -q or head leaving early would kill printf with SIGPIPE.
header=$(head -1 <<<"$table")
for column in wall_s events/s entries ns/entry iteration_s; do
  case $header in *"$column"*) ;; *) echo "no $column column"; exit 1 ;; esac
done
# Five scale_bench calls, two lines each: ten rows.
[ "$(grep -c 'spread    adaptive' <<<"$table")" -eq 10 ] || { echo "expected 10 rows"; exit 1; }
grep -q ' 2x4x8x64 .* 0\.50  *2\.00M  *2\.5M  *200  *7\.25$' <<<"$table" || { echo "row with counters wrong"; exit 1; }
grep -q ' 2x4x8x64 .* 0\.50  *2\.00M  *0\.0M  *-  *7\.25$' <<<"$table" || { echo "row without counters wrong"; exit 1; }
line=$("$bench" --gpus 4096 --layers 1 --placement spread --repeats 1 | tail -1)
printf '%s\n' "$line"
for field in resolves paths_filled paths_released route_entries rate_changes; do
  value=$(sed -n "s/.*\"$field\":\([0-9]*\).*/\1/p" <<<"$line")
  if [ -z "$value" ] || [ "$value" -eq 0 ]; then
    echo "$field missing or zero"
    exit 1
  fi
done
echo "placements table ok"
