#include "topologies/node_links.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace exasim::topo {

namespace {
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
}

NodeLinks::NodeLinks(const NodeSpec& node, GpuLinkMatrix matrix) : node_(node), matrix_(std::move(matrix)) {
  if (node_.gpus == 0 || node_.nics == 0) throw std::invalid_argument("node: needs at least one GPU and one NIC");
  per_gpus_ = FastDivisor(node_.gpus);
  if (node_.nics > node_.gpus) throw std::invalid_argument("node: at most one NIC per GPU is supported");
  if (switched()) {
    if (matrix_.gpus != 0) throw std::invalid_argument("node: an NVSwitch node takes no GPU link matrix");
    pair_slots_ = 2 * node_.gpus;
    per_node_ = pair_slots_ + 2 * node_.nics;
    return;
  }
  if (matrix_.gpus == 0) matrix_ = gpu_link_matrix(node_);
  if (matrix_.gpus != node_.gpus) {
    throw std::invalid_argument("node: GPU link matrix is for " + std::to_string(matrix_.gpus) + " GPUs, node has " +
                                std::to_string(node_.gpus));
  }
  matrix_.validate();
  const std::uint32_t g = node_.gpus;
  pair_slot_.assign(std::size_t{g} * g, kNone);
  via_.assign(std::size_t{g} * g, kNone);
  for (std::uint32_t a = 0; a < g; ++a) {
    for (std::uint32_t b = 0; b < g; ++b) {
      if (matrix_.linked(a, b)) {
        pair_slot_[a * g + b] = pair_slots_++;
        slot_pair_.push_back(a * g + b);
      } else if (a != b) {
        via_[a * g + b] = *matrix_.via(a, b);  // validate() guaranteed it exists
      }
    }
  }
  per_node_ = pair_slots_ + 2 * node_.nics;
}

std::vector<Link> NodeLinks::node_template(double switch_latency_s) const {
  std::vector<Link> links;
  links.reserve(per_node_);
  if (switched()) {
    // Half the GPU-to-GPU latency on each of the two links a route inside the node crosses (exact in
    // binary floating point, so the two halves add up to gpu_gpu_latency_s).
    const Link half{node_.gpu_switch_bandwidth_Bps, node_.gpu_gpu_latency_s / 2, LinkClass::GpuGpu};
    links.insert(links.end(), pair_slots_, half);
  }
  for (std::uint32_t pair : slot_pair_) {
    links.push_back({matrix_.bandwidth_Bps[pair], node_.gpu_gpu_latency_s, LinkClass::GpuGpu});
  }
  for (std::uint32_t nic = 0; nic < node_.nics; ++nic) {
    links.push_back({node_.nic_bandwidth_Bps, node_.nic_latency_s + switch_latency_s, LinkClass::NicUp});
    links.push_back({node_.nic_bandwidth_Bps, node_.nic_latency_s, LinkClass::NicDown});
  }
  return links;
}

LinkId NodeLinks::gpu_link(std::uint32_t node, std::uint32_t from, std::uint32_t to) const {
  const std::uint32_t slot = switched() ? kNone : pair_slot_[from * node_.gpus + to];
  if (slot == kNone) throw std::invalid_argument("NodeLinks::gpu_link: GPUs not directly linked");
  return node * per_node_ + slot;
}

LinkId NodeLinks::switch_link(std::uint32_t node, std::uint32_t gpu, bool up) const {
  if (!switched()) throw std::invalid_argument("NodeLinks::switch_link: the node has no NVSwitch");
  return node * per_node_ + 2 * gpu + (up ? 0 : 1);
}

LinkId NodeLinks::nic_link(std::uint32_t node, std::uint32_t nic, bool up) const {
  return node * per_node_ + pair_slots_ + 2 * nic + (up ? 0 : 1);
}

void NodeLinks::route_inside(GpuId src, GpuId dst, std::vector<LinkId>& out) const {
  const std::uint32_t node = node_of_gpu(src), a = src - node * node_.gpus, b = per_gpus_.mod(dst);
  if (switched()) {
    out.push_back(switch_link(node, a, true));
    out.push_back(switch_link(node, b, false));
    return;
  }
  const std::uint32_t mid = via_[a * node_.gpus + b];
  if (mid == kNone) {
    out.push_back(gpu_link(node, a, b));
  } else {
    out.push_back(gpu_link(node, a, mid));
    out.push_back(gpu_link(node, mid, b));
  }
}

NodeLinks::Decoded NodeLinks::decode(LinkId link) const {
  Decoded d;
  d.node = link / per_node_;
  const std::uint32_t slot = link % per_node_;
  if (slot < pair_slots_ && switched()) {
    d.is_switch = true;
    d.from_gpu = d.to_gpu = slot / 2;
    d.up = slot % 2 == 0;
  } else if (slot < pair_slots_) {
    d.from_gpu = slot_pair_[slot] / node_.gpus;
    d.to_gpu = slot_pair_[slot] % node_.gpus;
  } else {
    d.is_nic = true;
    d.nic = (slot - pair_slots_) / 2;
    d.up = (slot - pair_slots_) % 2 == 0;
  }
  return d;
}

LinkEnds NodeLinks::ends(const Decoded& d, std::uint32_t nic_switch) const {
  if (d.is_switch) {
    const Vertex gpu{VertexKind::Gpu, d.node * node_.gpus + d.from_gpu}, fabric{VertexKind::NodeSwitch, d.node};
    return d.up ? LinkEnds{gpu, fabric} : LinkEnds{fabric, gpu};
  }
  if (!d.is_nic) {
    return {{VertexKind::Gpu, d.node * node_.gpus + d.from_gpu}, {VertexKind::Gpu, d.node * node_.gpus + d.to_gpu}};
  }
  const Vertex nic{VertexKind::Nic, d.node * node_.nics + d.nic}, sw{VertexKind::Switch, nic_switch};
  return d.up ? LinkEnds{nic, sw} : LinkEnds{sw, nic};
}

}  // namespace exasim::topo
