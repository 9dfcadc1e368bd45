#!/bin/sh
# Build step after each Catch2 test binary is linked: check_test_names.sh BINARY. Fails the build on a
# test case that ctest would never run:
#  - a name with ';': catch_discover_tests splits it into two CTest entries that each match no test case,
#    print "No tests ran" and pass;
#  - a name that starts with '-': ctest passes it to the binary, which reads it as an option and fails;
#  - a test case with none of the tags [unit], [integration], [slow]: exasim_tests discovers only those.
bin=$1
status=0
# --list-test-names-only exits with the number of test cases, not 0.
bad=$("$bin" --list-test-names-only | grep ';')
if [ -n "$bad" ]; then
  printf '%s: test case names must not contain ";" (ctest would split them and run nothing):\n%s\n' "$bin" "$bad" >&2
  status=1
fi
dash=$("$bin" --list-test-names-only | grep '^-')
if [ -n "$dash" ]; then
  printf '%s: test case names must not start with "-" (the binary would read them as options):\n%s\n' "$bin" "$dash" >&2
  status=1
fi
untagged=$("$bin" '~[unit]~[integration]~[slow]' --list-test-names-only | grep -v '^$')
if [ -n "$untagged" ]; then
  printf '%s: test cases need a [unit], [integration] or [slow] tag (ctest runs no other):\n%s\n' "$bin" "$untagged" >&2
  status=1
fi
exit $status
