#!/bin/sh
# Self-test of check_history.sh (ctest history:check-finds-references, history:check-allows-citations):
#   check_history_selftest.sh finds|allows
# Writes its examples into a temporary folder at run time, so that the tree itself holds none of the
# references the check forbids: each is assembled from a word and a number here.
mode=$1
checker=$(dirname "$0")/check_history.sh
dir=$(mktemp -d) || exit 2
trap 'rm -rf "$dir"' EXIT
s=session i=issue c=commit
if [ "$mode" = finds ]; then
  {
    echo "Planted references that check_history.sh must report."
    echo "The local solver made spread runs 30x faster (docs/performance.md, $s 21)."
    echo "This test holds what $i 20 asked for."
    echo "Measured before the change ($c 608c13a)."
    echo "The $i asks for 1%. See $i #7 and $i-3."
  } >"$dir/planted.md"
  exec "$(dirname "$0")/expect_exit.sh" 1 "planted.md:3:This test holds what" "$checker" "$dir"
fi
{
  echo "Lines that check_history.sh must let through."
  echo "- NCCL $i 812: DGX A100 with 8 HDR NICs."
  echo "- nccl-tests $i 100: 8 x A100 on NVSwitch run 24 channels."
  echo "- github.com/ROCm/rccl/issues/1490: all-gather busBw on Slingshot 11."
  echo "The SC24 programme lists the $s and affiliations; ab-scale.sh alternates 10 rounds; nodes round-robin."
} >"$dir/citations.md"
exec "$(dirname "$0")/expect_exit.sh" 0 "no references to past work" "$checker" "$dir"
