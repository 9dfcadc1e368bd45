#!/usr/bin/env bash
# Tests examples/check.sh itself (ctest examples:check-sh): in a scratch tree with a README.md, a
# docs/tour.md, one example of each and a stand-in exasim, check.sh must pass when pages, examples and
# outputs agree, and fail, naming the page line, when the tour quotes a number the example does not
# record, shows a command no example runs, holds a `$ ` line that is not exasim, or when exasim's output
# drifts from an example of the tour.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d "${TMPDIR:-/tmp}/exasim-check-test.XXXXXX") || exit 2
trap 'rm -rf "$t"' EXIT
failures=0

mkdir -p "$t/examples/01-readme" "$t/examples/23-tour/01-tour" "$t/docs" "$t/build"
cp "$here/check.sh" "$t/examples/"
# The stand-in exasim prints its arguments and one number (FAKE_VALUE, to make its output drift).
cat >"$t/build/exasim" <<'EOF'
#!/bin/sh
echo "fake $*"
echo "  value   ${FAKE_VALUE:-1.2345} s"
echo "  other   7"
EOF
chmod +x "$t/build/exasim"
printf '%s\n' '# a README example' '$ build/exasim simulate a.json' 'fake simulate a.json' \
  '  value   1.2345 s' '  other   7' >"$t/examples/01-readme/example.txt"
printf '%s\n' '# a tour example' '# doc: docs/tour.md' '$ build/exasim simulate b.json --set x=1' \
  'fake simulate b.json --set x=1' '  value   1.2345 s' '  other   7' >"$t/examples/23-tour/01-tour/example.txt"
printf '%s\n' '# README' '' '    $ build/exasim simulate a.json' '    fake simulate a.json' '    ...' '' >"$t/README.md"
write_tour() {  # the tour page, with the value it quotes ($1) and extra lines ($2)
  printf '%s\n' '# tour' '' '```console' '$ build/exasim simulate b.json --set x=1' '...' "  value   $1 s" \
    '...' '```' '' "${2:-}" >"$t/docs/tour.md"
}

expect() {  # WHAT WANT_RC PATTERN -- COMMAND...: the command exits WANT_RC and prints PATTERN
  local what=$1 want=$2 pattern=$3 out rc
  shift 4
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -q -- "$pattern" <<<"$out"; then
    echo "FAIL: $what: exit $rc (want $want), output (want /$pattern/):"
    sed 's/^/  | /' <<<"$out"
    failures=$((failures + 1))
  else
    echo "ok: $what"
  fi
}

write_tour 1.2345
expect "pages and examples agree" 0 "23-tour/01-tour: ok" -- bash "$t/examples/check.sh"
expect "--tour alone" 0 "" -- bash "$t/examples/check.sh" --tour

write_tour 1.2346
expect "the tour quotes a number the example does not record" 1 \
  "docs/tour.md:6 quotes:      value   1.2346 s" -- bash "$t/examples/check.sh" --tour
expect "--readme ignores the tour" 0 "" -- bash "$t/examples/check.sh" --readme

write_tour 1.2345 "$(printf '%s\n' '```' '$ build/exasim simulate c.json' '```')"
expect "a tour command that no example runs" 1 \
  "docs/tour.md:11: the command is in no examples/\*/example.txt with # doc: docs/tour.md: build/exasim simulate c.json" \
  -- bash "$t/examples/check.sh" --tour

write_tour 1.2345 "$(printf '%s\n' '```' '$ ls out/' '```')"
expect "a tour command that is not exasim" 1 "docs/tour.md:11: a command block line that is not a build/exasim command" \
  -- bash "$t/examples/check.sh" --tour

write_tour 1.2345
expect "exasim's output drifts from a tour example" 1 \
  "examples: 23-tour/01-tour: exasim's output differs from examples/23-tour/01-tour/example.txt" \
  -- env FAKE_VALUE=1.3 bash "$t/examples/check.sh" 23-tour/01-tour

[ "$failures" -eq 0 ] && echo "check.sh: all cases pass" || echo "check.sh: $failures case(s) failed"
[ "$failures" -eq 0 ]
