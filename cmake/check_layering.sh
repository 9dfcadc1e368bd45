#!/bin/sh
# Layering check, run by ctest (layering:includes, label unit): check_layering.sh [ROOT]
# The engine (sim/core, sim/schedule, sim/gpu, sim/collectives, sim/exec, sim/flow, sim/runtime,
# sim/scenario, sim/report, traces, topologies) must build without SimGrid, MPI or Boost.Graph in its
# includes:
#  - no SimGrid (<simgrid/...>, <xbt/...>, <smpi/...>) or MPI (<mpi.h>, <mpi_*>) header, and none of the
#    runtimes' own headers (sim/simgrid/, emu/) that would bring them in;
#  - Boost (Boost.Graph) only in topologies/*.cpp, never in a header: no Boost type is public.
# validate/, sim/api and sim/cli link no MPI and reach SimGrid only through sim/simgrid's public header,
# so they include neither directly.
# Every library folder keeps its public headers at its top and its internals in DIR/internal/: a header
# under DIR/internal/ is included only from DIR/ itself (its sources, tests and other internals). Prints FILE:LINE: the include and the rule, and exits 1 on any violation.
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
engine="sim/core sim/job sim/schedule sim/gpu sim/collectives sim/exec sim/flow sim/runtime sim/scenario sim/tune sim/report traces topologies"
inc='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]'
runtimes="${inc}(simgrid/|xbt/|xbt\.h|smpi/|mpi\.h|mpi_|mpio\.h)"
scan() {  # scan RULE PATTERN DIR...: prints FILE:LINE:TEXT  <- RULE for each matching include
  rule=$1 pattern=$2
  shift 2
  grep -rnHE --include='*.cpp' --include='*.hpp' --include='*.h' "$pattern" "$@" 2>/dev/null | sed "s|\$|    <- $rule|"
}
found=$(
  scan "the engine includes no SimGrid or MPI header" "$runtimes" $engine
  scan "the engine includes no runtime (sim/simgrid, emu) header" "${inc}(sim/simgrid|emu)/" $engine
  scan "Boost (Boost.Graph) only in topologies/*.cpp" "${inc}boost/" $engine | grep -v '^topologies/[^/:]*\.cpp:'
  scan "validate/, sim/api and sim/cli include no SimGrid or MPI header" "$runtimes" validate sim/api sim/cli
  # FILE:LINE:#include "DIR/internal/X.hpp" where FILE is not under DIR/
  grep -rnHE --include='*.cpp' --include='*.hpp' --include='*.h' --exclude-dir='build*' --exclude-dir=testdata "${inc}[^\">]*/internal/" . 2>/dev/null |
    sed 's|^\./||' |
    awk -F: '{ match($0, /[<"][^">]*\/internal\//); dir = substr($0, RSTART + 1, RLENGTH - 11);
               if (index($1, dir "/") != 1) print $0 "    <- DIR/internal/ headers are included only from DIR/" }'
)
if [ -n "$found" ]; then
  printf 'check_layering: includes that break the layering:\n%s\n' "$found"
  exit 1
fi
echo "check_layering: engine, validate/, sim/api and sim/cli include no SimGrid, MPI or (outside topologies/*.cpp) Boost; internal/ headers stay in their folder"
