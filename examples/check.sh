#!/usr/bin/env bash
# Runs the worked examples of README.md and of docs/tour.md and compares what exasim prints with the
# expected output kept in examples/NAME/example.txt (or examples/NAME/SUB/example.txt), so that neither
# the pages nor the code can drift from the other.
#
#   examples/check.sh [--exasim PATH] [NAME...]   run the examples (all by default) and check them
#   examples/check.sh --update [NAME...]          rewrite the expected outputs from what exasim prints
#   examples/check.sh --readme                    check README.md against examples/ only (runs nothing)
#   examples/check.sh --tour                      check docs/tour.md against examples/ only (runs nothing)
#   examples/check.sh --slow [...]                also run the examples marked slow (skipped by default)
#
# Per example: the command runs in a scratch directory that links the repository's top-level entries
# (configs/, validate/, ...), the example folder's other files (e.g. bad.json) and build/exasim (the
# binary under test), so the command is exactly the README's. Its stdout (and stderr, for an example
# that expects a non-zero exit) must equal the expected output line for line: numbers within a relative
# tolerance (EXAMPLES_RTOL, default 1e-6), the rest as text (trailing blanks ignored).
# Against its page (README.md unless the example says `# doc: docs/tour.md`): every `build/exasim ...`
# command of the page's code blocks (README.md: indented blocks; docs/tour.md: ``` fenced blocks, where
# every `$ ` line must be an exasim command) must be an example's command (and every example's command
# on its page); where the page quotes the output (`$ build/exasim ...` followed by lines), each quoted
# line must match a line of the expected output, in order, consecutive quoted lines consecutive, a `...`
# line standing for omitted lines; the quote starts at the output's first line unless it opens with
# `...`, and may stop before its last.
#
# example.txt: `# ` header lines (free text, and the directives `# exit: N`, `# creates: FILE...`,
# `# skip: WHY` (never run), `# slow: WHY` (run with --slow only), `# doc: PAGE` (the page that shows
# it, default README.md)), then `$ COMMAND` (continued over lines ending in `\`), then the expected
# output.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
exasim="$root/build/exasim"
update=0 readme_only=0 only_doc="" slow=${EXAMPLES_SLOW:-0}
names=()
while [ $# -gt 0 ]; do
  case $1 in
    --update) update=1 ;;
    --readme) readme_only=1 only_doc=README.md ;;
    --tour) readme_only=1 only_doc=docs/tour.md ;;
    --slow) slow=1 ;;
    --exasim) exasim=$2; shift ;;
    --exasim=*) exasim=${1#--exasim=} ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check.sh: unknown option $1" >&2; exit 2 ;;
    *) names+=("$1") ;;
  esac
  shift
done
rtol=${EXAMPLES_RTOL:-1e-6}
# The pages whose commands are examples: README.md (indented blocks) and the tour (fenced blocks).
docs=(README.md docs/tour.md)

scratch=$(mktemp -d "${TMPDIR:-/tmp}/exasim-examples.XXXXXX") || exit 2
trap 'rm -rf "$scratch"' EXIT

# --- awk pieces -----------------------------------------------------------------------------------

# Line comparison: numbers within rtol, everything else as text. Shared by the programs below.
awk_compare='
function tokens(s, t,   n, pre) {
  n = 0
  sub(/[ \t]+$/, "", s)
  while (match(s, /[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?/)) {
    pre = substr(s, 1, RSTART - 1)
    t[++n] = "T" pre
    t[++n] = "N" substr(s, RSTART, RLENGTH)
    s = substr(s, RSTART + RLENGTH)
  }
  t[++n] = "T" s
  return n
}
function same(a, b,   ta, tb, na, nb, i, x, y, d, m) {
  sub(/[ \t]+$/, "", a); sub(/[ \t]+$/, "", b)
  if (a == b) return 1
  na = tokens(a, ta); nb = tokens(b, tb)
  if (na != nb) return 0
  for (i = 1; i <= na; i++) {
    if (ta[i] == tb[i]) continue
    if (substr(ta[i], 1, 1) != "N" || substr(tb[i], 1, 1) != "N") return 0
    x = substr(ta[i], 2) + 0; y = substr(tb[i], 2) + 0
    d = x - y; if (d < 0) d = -d
    m = x < 0 ? -x : x; if ((y < 0 ? -y : y) > m) m = (y < 0 ? -y : y)
    if (d > RTOL * m) return 0
  }
  return 1
}'

# The command as compared: continuation lines joined, a trailing shell comment dropped, blanks squeezed.
awk_normalize='
function normalize(c) {
  gsub(/\\\n/, " ", c); sub(/^\$ /, "", c); sub(/[ \t]+#.*$/, "", c)
  gsub(/[ \t]+/, " ", c); sub(/^ /, "", c); sub(/ $/, "", c)
  return c
}'

# A page -> one record per command of a code block: indented blocks (fenced ones skipped), or, with
# -v fenced=1, ``` fenced blocks only:
#   C <tab> line <tab> quoted(0/1) <tab> normalized command
#   Q <tab> line <tab> quoted output line (README.md: 4-space indent removed)
#   X <tab> line <tab> a `$ ` line of a fenced block that is not an exasim command (the page's fault)
awk_doc="$awk_normalize"'
function flush_blanks() { while (blanks > 0) { if (quoting) print "Q\t" (NR - blanks) "\t"; blanks-- } }
function end_block() { block = 0; quoting = 0; cont = 0; blanks = 0 }
function content(line) {
  if (cont) {
    cmd = cmd "\n" line
    if (line !~ /\\$/) { cont = 0; print "C\t" cmdline "\t" quoting "\t" normalize(cmd) }
    return
  }
  if (line ~ /^(\$ )?build\/exasim( |$)/) {
    blanks = 0; quoting = (line ~ /^\$ /); cmd = line; cmdline = NR
    if (line ~ /\\$/) cont = 1; else print "C\t" cmdline "\t" quoting "\t" normalize(cmd)
    return
  }
  if (fenced && line ~ /^\$ /) { print "X\t" NR "\t" line; return }
  flush_blanks()
  if (quoting) print "Q\t" NR "\t" line
}
/^[ \t]*```/ { fence = !fence; end_block(); next }
fenced && fence && /^[ \t]*$/ { blanks++; next }
fenced && fence { content($0); next }
fenced || fence { next }
/^[ \t]*$/ { if (block) blanks++; prev_blank = 1; next }
/^    / {
  if (!block && !prev_blank) next
  block = 1; prev_blank = 0
  content(substr($0, 5))
  next
}
{ end_block(); prev_blank = 0 }'

# example.txt -> header directives, normalized command, expected output (files under $2's prefix).
parse_example() {  # FILE OUTPREFIX: writes OUTPREFIX.{cmd,raw,expected,exit,creates,skip,slow,doc}
  : >"$2.expected"
  awk -v out="$2" "$awk_normalize"'
    BEGIN { state = "header"; code = 0; creates = ""; skip = "" }
    state == "header" && /^# exit: / { code = $3 + 0; next }
    state == "header" && /^# creates: / { sub(/^# creates: /, ""); creates = $0; next }
    state == "header" && /^# skip: / { sub(/^# skip: /, ""); skip = $0; next }
    state == "header" && /^# slow: / { sub(/^# slow: /, ""); slow = $0; next }
    state == "header" && /^# doc: / { sub(/^# doc: /, ""); doc = $0; next }
    state == "header" && /^#/ { next }
    state == "header" && /^\$ / { cmd = $0; state = ($0 ~ /\\$/) ? "cont" : "output"; next }
    state == "header" { print "example.txt: line " NR ": expected a # header or the $ command" > "/dev/stderr"; bad = 1; exit }
    state == "cont" { cmd = cmd "\n" $0; if ($0 !~ /\\$/) state = "output"; next }
    { print >> (out ".expected") }
    END {
      if (bad) exit 1
      if (cmd == "") { print "example.txt: no $ command" > "/dev/stderr"; exit 1 }
      print normalize(cmd) > (out ".cmd")
      raw = cmd; sub(/^\$ /, "", raw); print raw > (out ".raw")
      print code > (out ".exit"); print creates > (out ".creates"); print skip > (out ".skip")
      print slow > (out ".slow"); print (doc == "" ? "README.md" : doc) > (out ".doc")
    }' "$1"
}

# --- the pages' commands ----------------------------------------------------------------------------

doc_tsv() { local d=$1; echo "$scratch/doc.${d//\//_}.tsv"; }  # PAGE -> its records
for d in "${docs[@]}"; do
  fenced=1; [ "$d" = README.md ] && fenced=0
  awk -v fenced=$fenced "$awk_doc" "$root/$d" >"$(doc_tsv "$d")" || { echo "check.sh: cannot read $root/$d" >&2; exit 2; }
done

# The page records of one normalized command: its quoted lines (line<TAB>text) into FILE; prints
# the page line of the command, or nothing when the page lacks it.
readme_quote() {  # CMD FILE PAGE
  : >"$2"
  awk -F '\t' -v want="$1" -v out="$2" '
    $1 == "C" { on = ($4 == want && !found); if (on) { found = $2; quoted = $3 } next }
    $1 == "Q" && on { sub(/^Q\t/, ""); print >> out }
    END { if (found) print found "\t" quoted }' "$(doc_tsv "$3")"
}

# Checks the quoted lines (QUOTE, line<TAB>text) against the expected output; prints the mismatch.
check_quote() {  # NAME QUOTE EXPECTED PAGE
  awk -F '\t' -v RTOL="$rtol" -v name="$1" -v exp_file="$3" -v doc="$4" "$awk_compare"'
    function fail(msg) { print "examples: " name ": " doc " does not match examples/" name "/example.txt"; print msg; bad = 1; exit 1 }
    BEGIN { while ((getline l < exp_file) > 0) e[++n] = l }
    { ln = $1; sub(/^[^\t]*\t/, ""); m++; q[m] = $0; qline[m] = ln }
    END {
      if (bad) exit 1
      # Split the quote into segments at "..." lines.
      s = 0; open_start = 0
      for (i = 1; i <= m; i++) {
        t = q[i]; gsub(/^[ \t]+|[ \t]+$/, "", t)
        if (t == "...") { if (i == 1) open_start = 1; cur = 0; continue }
        if (!cur) { s++; first[s] = i; len[s] = 0; cur = 1 }
        len[s]++
      }
      pos = 1
      for (k = 1; k <= s; k++) {
        lo = pos; hi = n - len[k] + 1
        if (k == 1 && !open_start) hi = 1
        at = 0; best = -1; bestp = lo
        for (p = lo; p <= hi && !at; p++) {
          for (j = 0; j < len[k] && same(q[first[k] + j], e[p + j]); j++) ;
          if (j == len[k]) at = p; else if (j > best) { best = j; bestp = p }
        }
        if (!at) {
          if (best < 0) { best = 0 }
          i = first[k] + best
          msg = sprintf("  %s:%d quotes:    %s\n", doc, qline[i], q[i])
          if (bestp + best <= n) msg = msg sprintf("  expected output line %d: %s", bestp + best, e[bestp + best])
          else msg = msg "  (past the end of the expected output)"
          fail(msg)
        }
        pos = at + len[k]
      }
    }' "$2"
}

# Compares expected and actual output; prints a readable diff naming the example.
check_output() {  # NAME EXPECTED ACTUAL
  if awk -v RTOL="$rtol" -v act_file="$3" "$awk_compare"'
      BEGIN { while ((getline l < act_file) > 0) a[++na] = l }
      { e[++ne] = $0 }
      END {
        if (ne != na) exit 1
        for (i = 1; i <= ne; i++) if (!same(e[i], a[i])) exit 1
      }' "$2"; then
    return 0
  fi
  echo "examples: $1: exasim's output differs from examples/$1/example.txt (numbers compared within $rtol):"
  diff -u --label "expected (examples/$1/example.txt)" --label "exasim prints" "$2" "$3" | sed 's/^/  /'
  return 1
}

# --- the examples -----------------------------------------------------------------------------------

all=()  # NAME, or NAME/SUB for a folder of examples (examples/23-tour/01-data-parallel)
for f in "$here"/*/example.txt "$here"/*/*/example.txt; do
  [ -f "$f" ] || continue
  d=${f%/example.txt}; all+=("${d#"$here"/}")
done
if [ ${#names[@]} -eq 0 ]; then names=("${all[@]}"); whole=1; else whole=0; fi

if [ "$readme_only" -eq 0 ] && [ ! -x "$exasim" ]; then
  echo "check.sh: no exasim binary at $exasim (build first, or pass --exasim PATH)" >&2
  exit 2
fi
export EXASIM_DATA_DIR="${EXASIM_DATA_DIR:-$root}"

failed=0
declare -A example_cmds=()
for name in "${names[@]}"; do
  file="$here/$name/example.txt"
  if [ ! -f "$file" ]; then echo "examples: $name: no examples/$name/example.txt"; failed=1; continue; fi
  p="$scratch/${name//\//_}"
  parse_example "$file" "$p" || { echo "examples: $name: cannot parse examples/$name/example.txt"; failed=1; continue; }
  doc=$(cat "$p.doc")
  if [ -n "$only_doc" ] && [ "$doc" != "$only_doc" ]; then continue; fi
  case " ${docs[*]} " in *" $doc "*) ;; *) echo "examples: $name: # doc: $doc is none of ${docs[*]}"; failed=1; continue ;; esac
  cmd=$(cat "$p.cmd"); example_cmds["$doc"$'\t'"$cmd"]=$name
  skip=$(cat "$p.skip")
  [ -n "$(cat "$p.slow")" ] && [ "$slow" != 1 ] && skip="slow: $(cat "$p.slow"); run with --slow"

  if [ "$readme_only" -eq 0 ] && [ -z "$skip" ]; then
    # A scratch directory in which the README's command runs as written.
    run="$p.run"
    mkdir -p "$run/build"
    for entry in "$root"/*; do
      case $(basename "$entry") in build|out) ;; *) ln -s "$entry" "$run/" ;; esac
    done
    for extra in "$here/$name"/*; do
      [ "$(basename "$extra")" = example.txt ] || ln -sf "$extra" "$run/"
    done
    ln -s "$(cd "$(dirname "$exasim")" && pwd)/$(basename "$exasim")" "$run/build/exasim"
    want_exit=$(cat "$p.exit")
    start=$(date +%s.%N)
    if [ "$want_exit" -eq 0 ]; then
      (cd "$run" && bash -c "$(cat "$p.raw")") >"$p.actual" 2>"$p.stderr"
    else
      (cd "$run" && bash -c "$(cat "$p.raw")") >"$p.actual" 2>&1
    fi
    rc=$?
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    ok=1
    if [ "$rc" -ne "$want_exit" ]; then
      echo "examples: $name: exit code $rc, expected $want_exit"
      [ -s "$p.stderr" ] && sed 's/^/  stderr: /' "$p.stderr"
      ok=0
    fi
    read -r -a created <"$p.creates"
    for f in "${created[@]}"; do
      [ -s "$run/$f" ] || { echo "examples: $name: the command did not create $f"; ok=0; }
    done
    if [ "$update" -eq 1 ] && [ "$ok" -eq 1 ]; then
      # Keep the header and the command, replace the expected output.
      awk '/^\$ / { cmd = 1 } { print } cmd && !/\\$/ { exit }' "$file" >"$p.new"
      cat "$p.actual" >>"$p.new"
      if ! cmp -s "$p.new" "$file"; then cp "$p.new" "$file"; echo "examples: $name: updated (${secs} s)"; fi
      parse_example "$file" "$p"
    elif [ "$ok" -eq 1 ]; then
      check_output "$name" "$p.expected" "$p.actual" || ok=0
    fi
    [ "$ok" -eq 1 ] && echo "examples: $name: ok (${secs} s)" || failed=1
  elif [ -n "$skip" ] && [ "$readme_only" -eq 0 ]; then
    echo "examples: $name: not run ($skip)"
  fi

  # The page quotes this example's command and, where it shows the output, the expected lines.
  where=$(readme_quote "$cmd" "$p.quote" "$doc")
  if [ -z "$where" ]; then
    echo "examples: $name: $doc has no code block with the command: $cmd"
    failed=1
  elif [ "${where#*$'\t'}" = 1 ]; then
    if [ -n "$(cat "$p.skip")" ]; then
      echo "examples: $name: $doc quotes the output of a command the examples do not run"
      failed=1
    else
      check_quote "$name" "$p.quote" "$p.expected" "$doc" || failed=1
    fi
  fi
done

# Every command of the pages' code blocks is an example of that page.
if [ "$whole" -eq 1 ]; then
  for d in "${docs[@]}"; do
    if [ -n "$only_doc" ] && [ "$d" != "$only_doc" ]; then continue; fi
    while IFS=$'\t' read -r kind line text cmd; do
      if [ "$kind" = X ]; then
        echo "examples: $d:$line: a command block line that is not a build/exasim command (only those are run and checked): $text"
        failed=1
      elif [ "$kind" = C ] && [ -z "${example_cmds["$d"$'\t'"$cmd"]+x}" ]; then
        echo "examples: $d:$line: the command is in no examples/*/example.txt with # doc: $d: $cmd"
        failed=1
      fi
    done <"$(doc_tsv "$d")"
  done
fi

if [ "$failed" -ne 0 ]; then
  echo "examples: FAILED (regenerate the expected outputs with examples/check.sh --update; README.md and docs/tour.md are edited by hand)"
  exit 1
fi
exit 0
