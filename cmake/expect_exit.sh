#!/bin/sh
# Test helper: expect_exit.sh CODE TEXT COMMAND...; passes when COMMAND exits with CODE and its output
# (stdout and stderr) contains TEXT.
code=$1 text=$2
shift 2
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne "$code" ]; then echo "expect_exit: exit code $rc, expected $code"; exit 1; fi
case $out in
  *"$text"*) exit 0 ;;
  *) echo "expect_exit: output lacks: $text"; exit 1 ;;
esac
