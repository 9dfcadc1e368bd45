#include "sim/collectives/double_binary_tree.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace exasim::collectives;

namespace {

/// Checks that tree `t` of p members is one tree: parent and child links agree, one root, every member
/// reaches it. Returns each member's child count.
std::vector<int> check_tree(std::uint32_t p, int t) {
  std::vector<int> children(p, 0);
  int roots = 0;
  for (std::uint32_t r = 0; r < p; ++r) {
    const auto links = double_binary_tree_links(p, r, t);
    if (links.parent == kNoMember)
      ++roots;
    else {
      const auto up = double_binary_tree_links(p, static_cast<std::uint32_t>(links.parent), t);
      CHECK((up.children[0] == r || up.children[1] == r));
    }
    for (auto c : links.children) {
      if (c == kNoMember) continue;
      REQUIRE(c >= 0);
      REQUIRE(c < static_cast<std::int64_t>(p));
      CHECK(double_binary_tree_links(p, static_cast<std::uint32_t>(c), t).parent == r);
      ++children[r];
    }
    std::uint32_t hops = 0;
    for (auto m = static_cast<std::int64_t>(r); m != kNoMember && hops <= p; ++hops)
      m = double_binary_tree_links(p, static_cast<std::uint32_t>(m), t).parent;
    CHECK(hops <= p);  // reached the root without a cycle
  }
  CHECK(roots == 1);
  return children;
}

}  // namespace

TEST_CASE("binary tree of 8 members matches NCCL's layout", "[unit]") {
  CHECK(binary_tree_links(8, 0).children[0] == 4);
  CHECK(binary_tree_links(8, 4).parent == 0);
  CHECK(binary_tree_links(8, 4).children[0] == 2);
  CHECK(binary_tree_links(8, 4).children[1] == 6);
  CHECK(binary_tree_links(8, 6).children[1] == 7);
  CHECK(binary_tree_links(8, 7).parent == 6);
  CHECK(binary_tree_links(8, 1).children[0] == kNoMember);
  CHECK(binary_tree_depth(8) == 3);
  CHECK(binary_tree_depth(2) == 1);
  CHECK(binary_tree_depth(1) == 0);
}

TEST_CASE("both trees are trees, and a leaf of one is inner in the other", "[unit]") {
  for (std::uint32_t p : {2u, 3u, 4u, 5u, 6u, 7u, 8u, 12u, 16u, 31u, 64u, 100u}) {
    CAPTURE(p);
    const auto c0 = check_tree(p, 0), c1 = check_tree(p, 1);
    int leaves_in_both = 0;
    for (std::uint32_t r = 0; r < p; ++r) leaves_in_both += c0[r] == 0 && c1[r] == 0;
    // p even: mirroring puts every leaf of tree 0 inside tree 1; p odd: one member may stay a leaf.
    CHECK(leaves_in_both <= (p % 2 == 0 ? 0 : 1) + (p <= 3 ? 1 : 0));
  }
}
