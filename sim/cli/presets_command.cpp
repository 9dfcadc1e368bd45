// `exasim presets`: what ships with exasim, by name.

#include "sim/cli/command.hpp"
#include "sim/core/data_dir.hpp"
#include "sim/gpu/devices.hpp"

#include <ostream>

namespace exasim::cli {

Command add_presets_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("presets", "List the shipped machine and model presets and the GPU devices");
  return {cmd, [](std::ostream& out, std::ostream&) {
            out << "machines (topologies/presets):";
            for (const auto& n : preset_names("topologies/presets")) out << " " << n;
            out << "\nmodels (configs/models):";
            for (const auto& n : preset_names("configs/models")) out << " " << n;
            out << "\ngpus (roofline --gpu):";
            for (const auto& n : gpu::device_names()) out << " " << n;
            out << "\n";
            return 0;
          }};
}

}  // namespace exasim::cli
