#!/bin/sh
# Style check, run by ctest (format:clang-format, label unit): check_format.sh [ROOT]
# Fails, listing the files, when clang-format (style: ROOT/.clang-format) would change any tracked C++
# file; scripts/format.sh rewrites them. Outside a git checkout (a source tarball) every *.cpp/*.hpp
# under the source folders is checked.
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
command -v clang-format >/dev/null || { echo "check_format: clang-format is not installed (scripts/install-deps.sh)"; exit 1; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files '*.cpp' '*.hpp' | grep -v '^cmake/testdata/')
else
  files=$(find sim emu topologies traces validate bench examples python -name '*.cpp' -o -name '*.hpp' 2>/dev/null)
fi
existing=""
for f in $files; do
  [ -f "$f" ] && existing="$existing $f"
done
# One clang-format for every file (its start-up is most of the time per file: 3 s for the tree instead
# of 55 s file by file); only when it finds something are the files checked one by one, to name them.
bad=""
# shellcheck disable=SC2086 # the file names are split on purpose (tracked names have no spaces)
if ! clang-format --dry-run --Werror $existing >/dev/null 2>&1; then
  for f in $existing; do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad="$bad $f"
  done
  if [ -z "$bad" ]; then
    echo "check_format: clang-format failed on the whole list but on no file alone"
    exit 1
  fi
fi
if [ -n "$bad" ]; then
  echo "check_format: clang-format would change (run scripts/format.sh):"
  for f in $bad; do echo "  $f"; done
  exit 1
fi
echo "check_format: $(echo $files | wc -w) files match .clang-format"
