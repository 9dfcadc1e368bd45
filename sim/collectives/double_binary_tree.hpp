#pragma once
// NCCL's double binary tree over p members (0 .. p-1), as pure index arithmetic, shared by the router
// (sim/collectives/router.cpp) and the MPI emulation (emu/) so that both run the same trees.
//
// Tree 0 is a binary tree laid out in order: member r's level is its lowest set bit; its parent is
// found by clearing that bit and setting the next one up (or only clearing it, past the end), and its
// children sit half that bit below and above it. Member 0 is the root, with one child. Tree 1 is
// tree 0 mirrored (r -> p-1-r) when p is even and shifted by one (r -> r+1 mod p) when p is odd, so
// that the leaves of one tree (half of the members) are the inner members of the other: every member
// sends and receives about the same bytes over the two trees. Each tree carries half the buffer.
//
// LIMITATIONS: trees span the group's members in group order; NCCL builds them over nodes, with a
// chain inside each node (docs/collectives.md says how exasim's hierarchical algorithm covers that).

#include <array>
#include <cstdint>

namespace exasim::collectives {

constexpr std::int64_t kNoMember = -1;

/// A member's neighbours in one tree: its parent (kNoMember at the root) and up to two children.
struct TreeLinks {
  std::int64_t parent = kNoMember;
  std::array<std::int64_t, 2> children{kNoMember, kNoMember};
};

/// Member r's links in tree 0 (the in-order binary tree) of p members.
[[nodiscard]] constexpr TreeLinks binary_tree_links(std::uint32_t p, std::uint32_t r) {
  TreeLinks links;
  if (p <= 1) return links;
  std::uint32_t bit = 1;
  while (bit < p && (bit & r) == 0) bit <<= 1;
  if (r == 0) {
    links.children[0] = bit >> 1;  // the root's only child: the top of the tree
    return links;
  }
  std::uint32_t up = (r ^ bit) | (bit << 1);
  if (up >= p) up = r ^ bit;
  links.parent = up;
  std::uint32_t low = bit >> 1;
  if (low == 0) return links;  // a leaf
  links.children[0] = static_cast<std::int64_t>(r) - low;
  while (low != 0 && r + low >= p) low >>= 1;  // the upper child, where it fits
  if (low != 0) links.children[1] = r + low;
  return links;
}

/// Member r's links in tree `tree` (0 or 1) of the double binary tree of p members.
[[nodiscard]] constexpr TreeLinks double_binary_tree_links(std::uint32_t p, std::uint32_t r, int tree) {
  if (tree == 0 || p <= 1) return binary_tree_links(p, r);
  const bool mirror = p % 2 == 0;
  auto to_tree = [&](std::int64_t m) -> std::int64_t {  // member -> its index in tree 0's layout
    return mirror ? static_cast<std::int64_t>(p) - 1 - m : (m + p - 1) % p;
  };
  auto from_tree = [&](std::int64_t i) -> std::int64_t {
    if (i == kNoMember) return kNoMember;
    return mirror ? static_cast<std::int64_t>(p) - 1 - i : (i + 1) % p;
  };
  const TreeLinks inner = binary_tree_links(p, static_cast<std::uint32_t>(to_tree(r)));
  return {from_tree(inner.parent), {from_tree(inner.children[0]), from_tree(inner.children[1])}};
}

/// Depth of tree 0 (edges from the root to the deepest leaf); tree 1 has the same depth.
[[nodiscard]] constexpr std::uint32_t binary_tree_depth(std::uint32_t p) {
  std::uint32_t depth = 0;
  for (std::uint32_t r = 0; r < p; ++r) {
    std::uint32_t d = 0;
    for (std::int64_t m = r; binary_tree_links(p, static_cast<std::uint32_t>(m)).parent != kNoMember;
         m = binary_tree_links(p, static_cast<std::uint32_t>(m)).parent)
      ++d;
    if (d > depth) depth = d;
  }
  return depth;
}

}  // namespace exasim::collectives
