#pragma once
// A monotone priority queue (a radix heap) for progressive filling, whose level only rises.
//
// Items carry a non-negative double key; pop() hands out an item of least key, and that key, as long
// as no key pushed lies below the last key popped (one below, by rounding, comes out next, as if equal
// to it, with its own value). Keys are
// bucketed by the highest bit in which they differ from the last key popped, so a push is O(1) and
// an item moves down at most 64 buckets in its lifetime. Progressive filling pushes many keys that
// die before their level comes (links whose variables froze elsewhere): a caller's `dead` predicate
// drops them when their bucket is spread, without a sift for each as a binary heap needs (under
// minimal routing most keys of a re-solve died that way: docs/performance.md, "The local solver").
//
// Items of equal keys come out last in, first out: deterministic, not ordered by anything else.

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

namespace exasim::flow {

template <class Item>
class RadixQueue {
 public:
  /// Empties the queue and starts again from level 0.
  void clear() {
    for (std::uint64_t m = mask_; m != 0; m &= m - 1) buckets_[std::countr_zero(m)].clear();
    mask_ = 0;
    last_ = 0;
    size_ = 0;
  }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  /// Items pushed and not yet popped or dropped.
  [[nodiscard]] std::size_t size() const { return size_; }

  void push(double key, const Item& item) {
    const std::uint64_t k = bits(key);
    const unsigned b = k <= last_ ? 0 : bucket(k);  // bucket 0 is never spread: its keys need no order
    buckets_[b].push_back({k, item});
    mask_ |= std::uint64_t{1} << b;
    ++size_;
  }

  /// Takes an item of least key into `out` and its key into `key`; items for which dead(item) holds
  /// when their bucket is spread are dropped on the way. False once nothing live is left.
  template <class Dead>
  bool pop(double& key, Item& out, const Dead& dead) {
    if (buckets_[0].empty() && !refill(dead)) return false;
    std::memcpy(&key, &buckets_[0].back().key, sizeof key);
    out = buckets_[0].back().item;
    buckets_[0].pop_back();
    if (buckets_[0].empty()) mask_ &= ~std::uint64_t{1};
    --size_;
    return true;
  }

 private:
  struct Entry {
    std::uint64_t key;  ///< the key's bits (no copy of it in the item: refills move entries, 16 bytes
                        ///< for the local solver's, not 24)
    Item item;
  };
  static constexpr unsigned kBuckets = 65;

  static std::uint64_t bits(double key) {
    std::uint64_t b;
    std::memcpy(&b, &key, sizeof b);
    return b;  // non-negative doubles order as their bit patterns
  }
  [[nodiscard]] unsigned bucket(std::uint64_t k) const {
    return k == last_ ? 0 : 64 - static_cast<unsigned>(std::countl_zero(k ^ last_));
  }

  /// Moves the live items of the lowest non-empty bucket down, the least of them into bucket 0.
  template <class Dead>
  bool refill(const Dead& dead) {
    while (true) {
      const std::uint64_t higher = mask_ & ~std::uint64_t{1};
      if (higher == 0) return false;
      const unsigned i = static_cast<unsigned>(std::countr_zero(higher));
      std::vector<Entry>& from = buckets_[i];
      mask_ &= ~(std::uint64_t{1} << i);
      // Keep the live ones in place and find their least key.
      std::size_t live = 0;
      std::uint64_t least = ~std::uint64_t{0};
      for (const Entry& e : from) {
        if (dead(e.item)) continue;
        least = std::min(least, e.key);
        from[live++] = e;
      }
      size_ -= from.size() - live;
      from.resize(live);
      if (live == 0) continue;
      last_ = least;
      spill_.swap(from);  // `from` may be refilled below only by keys of lower buckets: never itself
      for (const Entry& e : spill_) {
        const unsigned b = bucket(e.key);
        buckets_[b].push_back(e);
        mask_ |= std::uint64_t{1} << b;
      }
      spill_.clear();
      return true;
    }
  }

  std::array<std::vector<Entry>, kBuckets> buckets_;
  std::vector<Entry> spill_;  ///< scratch of refill(), kept for its storage
  std::uint64_t mask_ = 0;    ///< bit b set: bucket b is not empty
  std::uint64_t last_ = 0;    ///< bits of the last key popped (the level)
  std::size_t size_ = 0;
};

}  // namespace exasim::flow
