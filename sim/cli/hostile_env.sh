#!/bin/sh
# Test: hostile_env.sh EXASIM SOURCE_DIR. The real binary against hostile inputs and environments: each
# case must end in a one-line error and its documented exit code (docs/reliability.md), never a hang, a
# crash or exit 0 with output lost.
exasim=$1 src=$2
scenario=$src/configs/scenarios/default.json
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
# expect CODE TEXT COMMAND...: runs COMMAND (at most 60 s), checks its exit code and that stderr has TEXT.
expect() {
  code=$1 text=$2
  shift 2
  timeout 60 "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  got=$?
  if [ "$got" -ne "$code" ] || ! grep -qF -- "$text" "$tmp/err"; then
    echo "FAIL: $* -> exit $got (want $code), stderr:"
    cat "$tmp/err"
    fails=$((fails + 1))
  fi
}

# Reads: a FIFO with no writer is refused, not waited on.
mkfifo "$tmp/fifo.json" "$tmp/fifo.csv"
expect 2 "is a FIFO (named pipe), not a regular file" "$exasim" simulate "$tmp/fifo.json"
expect 2 "is a FIFO (named pipe), not a regular file" "$exasim" trace summarize "$tmp/fifo.json"
expect 2 "is a FIFO (named pipe), not a regular file" "$exasim" trace summarize "$tmp/fifo.csv"

# Memory: a sweep past its point cap is refused before it allocates the points.
values=$(seq -s, 1 400)
expect 2 "--vary: " "$exasim" sweep "$scenario" --vary "gpus=$values" --vary "model.layers=$values"

# Memory: std::bad_alloc under ulimit -v is exit 3 with a message, not an internal error or SIGABRT.
# (ulimit in a subshell: only that command is limited.)
(
  ulimit -v 80000
  "$exasim" simulate "$scenario" --set gpus=65536 --set parallel.gdata=8192 --set training.global_batch=16384
) >"$tmp/out" 2>"$tmp/err"
got=$?
if [ "$got" -ne 3 ] || ! grep -qF "exasim: error: out of memory" "$tmp/err"; then
  echo "FAIL: simulate under ulimit -v -> exit $got (want 3), stderr:"
  cat "$tmp/err"
  fails=$((fails + 1))
fi

# Outputs: a file past ulimit -f fails its write (EFBIG), reported; no file is left behind.
(
  ulimit -f 8
  "$exasim" simulate "$scenario" --out "$tmp/fsize"
) >"$tmp/out" 2>"$tmp/err"
got=$?
if [ "$got" -ne 2 ] || ! grep -qF "File too large" "$tmp/err" || [ -e "$tmp/fsize" ]; then
  echo "FAIL: simulate --out under ulimit -f -> exit $got (want 2), stderr:"
  cat "$tmp/err"
  fails=$((fails + 1))
fi
# TMPDIR that is a file or relative: refused before any worker starts.
TMPDIR=$scenario expect 2 "TMPDIR: " "$exasim" sweep "$scenario" --vary seed=1,2 --jobs 2
TMPDIR=relative expect 2 "must be an absolute path" "$exasim" sweep "$scenario" --vary seed=1,2 --jobs 2
TMPDIR=$scenario expect 2 "TMPDIR: " "$exasim" place "$scenario" --top 1
# compare --out into a read-only place, and onto a device: refused by name.
expect 2 "/dev/null: is a device or special file" "$exasim" compare "$src/traces/testdata/a100-2rank-nccl.json.gz" \
  --scenario "$src/configs/scenarios/a100-2gpu-dp.json" --out /dev/null

# stdout: output lost to a full device is an error, not exit 0.
if [ -w /dev/full ]; then
  for command in "presets" "simulate $scenario" "topo simple-a100" \
    "trace summarize $src/traces/testdata/a100-2rank-nccl.json.gz"; do
    # shellcheck disable=SC2086
    timeout 60 "$exasim" $command >/dev/full 2>"$tmp/err"
    got=$?
    if [ "$got" -ne 3 ] || ! grep -qF "exasim: cannot write standard output: No space left on device" "$tmp/err"; then
      echo "FAIL: exasim $command >/dev/full -> exit $got (want 3), stderr:"
      cat "$tmp/err"
      fails=$((fails + 1))
    fi
  done
fi

[ "$fails" -eq 0 ] && echo "hostile environment: all cases refused as documented"
exit "$fails"
