#include "emu/collectives/group_layout.hpp"

#include "sim/collectives/group_layout.hpp"

#include <stdexcept>
#include <string>

namespace exasim::emu {

using collectives::Algorithm;

MemberPlace member_place(const topo::Topology& topology, const collectives::GroupCall& call, std::uint32_t member) {
  const auto layout = collectives::group_layout(topology, call);
  MemberPlace place;
  place.hierarchical = layout.hierarchical();
  place.node = topology.node_of(call.gpu(call.member(member)));
  // by_node lists the members by (node, member index): the members of this node before this one are
  // its local index.
  for (const std::uint32_t k : layout.by_node) {
    if (k == member) break;
    if (topology.node_of(call.gpu(call.member(k))) == place.node) ++place.local_index;
  }
  return place;
}

Algorithm emulated_algorithm(Algorithm requested, const topo::Topology& topology, const collectives::GroupCall& call,
                             bool hierarchical_ready) {
  // The registry says whose MPI class runs the resolved algorithm (nccl: the ring's).
  const Algorithm chosen = collectives::emulated_by(collectives::resolve_algorithm(requested, topology, call));
  const bool runnable = chosen != Algorithm::Auto &&
                        (chosen != Algorithm::Tree || call.kind == schedule::CollKind::AllReduce) &&
                        (!collectives::may_split_by_node(chosen) || hierarchical_ready);
  if (!runnable)
    throw std::logic_error("the emulation cannot run collective algorithm " +
                           std::string(collectives::to_string(chosen)) + " (collectives.algorithm " +
                           std::string(collectives::to_string(requested)) +
                           ") on this collective: emu/collectives/group_layout.hpp and resolve_algorithm disagree");
  return chosen;
}

}  // namespace exasim::emu
