// `exasim topo MACHINE`: what a machine's network looks like (filled in with the topology summary).

#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"

#include <memory>
#include <ostream>

namespace exasim::cli {

Command add_topo_command(CLI::App& app) {
  auto machine = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("topo", "Describe a machine's network: nodes, switches, links, routes, taper");
  cmd->add_option("machine", *machine, "Machine preset name or JSON file")->required();
  return {cmd, [machine](std::ostream&, std::ostream&) -> int {
            throw InputError("topo", *machine, "not implemented yet");
          }};
}

}  // namespace exasim::cli
