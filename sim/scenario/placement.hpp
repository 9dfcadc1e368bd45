#pragma once
// Placement: which GPU of the machine each rank runs on. A policy of the scenario, because on a
// dragonfly it decides which collectives cross global links and how many jobs' worth of groups a run
// spreads over:
//
//   "placement": "packed"                      ranks fill nodes, nodes fill groups, in order (default)
//   "placement": "spread"                      the job's nodes taken round-robin over the groups
//   "placement": {"policy": "random", "seed": 7}  the job's nodes drawn at random (scheduler-like)
//   "placement": {"policy": "file", "file": "ranks.txt"}  one GPU id per line, line i = rank i
//
// Every policy but "file" keeps the ranks of a node together (rank r on local GPU r mod gpus_per_node
// of the job's (r / gpus_per_node)-th node), as Slurm does with one task per GPU. GPU ids are global:
// node * gpus_per_node + local GPU. A placement file may hold '#' comments and blank lines.
//
// LIMITATIONS: no partially free machine (other jobs' nodes are neither excluded nor simulated as
// background traffic); "random" draws whole nodes uniformly, not the contiguous-ish blocks real
// schedulers tend to hand out.

#include "topologies/topology.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace exasim {
class JsonView;
}

namespace exasim::scenario {

enum class PlacementPolicy : std::uint8_t { Packed, Spread, Random, File };

struct PlacementSpec {
  PlacementPolicy policy = PlacementPolicy::Packed;
  std::uint64_t seed = 1;
  std::string file;    ///< resolved path, File policy only
  std::string source;  ///< scenario file, for errors
};

[[nodiscard]] std::string to_string(PlacementPolicy policy);

/// Reads `parent.placement` (absent: packed). `default_seed` is the scenario's seed. A relative file is
/// resolved against the scenario file's directory, then the current directory.
[[nodiscard]] PlacementSpec load_placement(const JsonView& parent, std::uint64_t default_seed);

/// `needed` of `nodes` drawn at random, in draw order: the random policy's partial Fisher-Yates with
/// SplitMix64 (the same seed gives the same draw everywhere). `exasim place` draws within an allocation.
[[nodiscard]] std::vector<std::uint32_t> draw_nodes(std::vector<std::uint32_t> nodes, std::uint32_t needed,
                                                    std::uint64_t seed);

/// GPU of every rank (empty for Packed: rank r on GPU r). InputError when the machine is too small or
/// a placement file is malformed, repeats a GPU, or names one the machine lacks.
[[nodiscard]] std::vector<std::uint32_t> place_ranks(const PlacementSpec& spec, const topo::Topology& topology,
                                                     std::uint32_t ranks);

}  // namespace exasim::scenario
