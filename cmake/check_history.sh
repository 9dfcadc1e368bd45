#!/bin/sh
# History check, run by ctest (history:no-work-log, label unit; self-tests history:check-*): check_history.sh [ROOT]
# Code, comments, docs, configs, tests and scripts say what the code does, why, and what it costs;
# the history of the work lives in commit messages. Fails, printing FILE:LINE:TEXT, on any line that
# cites a work session or round, an issue number, a commit id or a work branch: the word followed by
# a number or an id, as the patterns below spell out (check_history_selftest.sh plants examples).
# Citations of other projects' issues are sources, not our history: a line that names NCCL, RCCL,
# nccl-tests, github.com or gitlab is allowed. "session" as a conference session, "rounds" of a
# measurement ("10 alternating rounds") and "round-robin" do not match.
# Scans the files git tracks or would track (outside a git checkout: every file but build*/), text
# only, except this script.
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
patterns='\bsessions?[- ][0-9]+|\bround [0-9]+\b|\bissues?[ #-]*[0-9]+\b|\bthe issue (asks|asked|says|wants)\b|\bcommit [0-9a-f]{7,40}\b|\bwt-[a-z]+-?[a-z]*\b'
allowed='nccl|rccl|github\.com|gitlab'
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files -co --exclude-standard . | grep -v -e '^cmake/check_history\.sh$')
else
  files=$(find . -type f ! -path './build*' ! -path './.git/*' ! -path './cmake/check_history.sh' | sed 's|^\./||')
fi
found=$(
  for f in $files; do
    [ -f "$f" ] && printf '%s\n' "$f"
  done | tr '\n' '\0' | xargs -0 -r grep -nHIiE "$patterns" 2>/dev/null | grep -viE "$allowed"
)
if [ -n "$found" ]; then
  echo "check_history: lines that cite work sessions, rounds, issue numbers, commits or branches"
  echo "(say what the code does and why; history belongs in commit messages):"
  printf '%s\n' "$found"
  exit 1
fi
echo "check_history: $(printf '%s\n' $files | wc -l) files, no references to past work"
