#pragma once
// The predicted ends of the active flows, one entry per flow, moved in place when a re-solve changes
// a flow's rate.
//
// The event queue (internal/event_queue.hpp) kept every prediction ever made and skipped the
// superseded ones when they came up: under minimal routing with spread placement 97 % of the flow
// ends it handed out were superseded (gpt-80b on 4,096 GCDs: 2.44 M of 2.52 M), each an instant of its own with a heap
// pop, a hash removal and a bucket. Here a flow has at most one entry, so only live ends come out.
//
// Flows predicted to end at the same time share one bucket, one heap node for all of them: lockstep
// ranks of a packed job start thousands of equal rings together, and a re-solve gives them the same
// end one after another (in flow id order). A node per flow cost those runs log2(n) sift steps per
// prediction and per end (32,768 GCDs packed: 10 % of the samples; with buckets 4 %, 0.958x the wall
// time, about 4 predictions a bucket). Only consecutive predictions of one time are grouped (no
// lookup by time), which is how they arrive.
//
// Order: by time, then by bucket; inside a bucket, last in first out. The order of events within an
// instant never changes an answer (the execution core sorts what they make ready), so ties need only
// be deterministic.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace exasim::flow {

class PredictionHeap {
 public:
  /// Predicts slot's end at `t` (replacing its earlier prediction); t = infinity removes it.
  void set(std::uint32_t slot, double t) {
    if (slot >= where_.size()) where_.resize(std::max<std::size_t>(slot + 1, where_.size() * 2));
    const Where w = where_[slot];
    if (w.bucket != kNone) {
      Node& node = heap_[buckets_[w.bucket].node];
      if (node.t == t) return;
      const bool joins_last = last_ != kNone && last_ != w.bucket && heap_[buckets_[last_].node].t == t;
      if (buckets_[w.bucket].slots.size() == 1 && !joins_last && t != kNever) {
        // Alone in its bucket: move the bucket.
        const bool earlier = t < node.t;
        node.t = t;
        if (earlier)
          sift_up(buckets_[w.bucket].node);
        else
          sift_down(buckets_[w.bucket].node);
        last_ = w.bucket;
        return;
      }
      take_out(slot);
    }
    if (t == kNever) return;
    if (last_ == kNone || heap_[buckets_[last_].node].t != t) last_ = new_bucket(t);
    Bucket& b = buckets_[last_];
    where_[slot] = {last_, static_cast<std::uint32_t>(b.slots.size())};
    b.slots.push_back(slot);
    ++size_;
  }
  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] double next_time() const { return heap_.front().t; }
  /// Removes a prediction of the earliest time and returns its slot.
  std::uint32_t pop() {
    const std::uint32_t slot = buckets_[heap_.front().bucket].slots.back();
    take_out(slot);
    return slot;
  }
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  static constexpr std::uint32_t kNone = 0xffffffff;
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  struct Node {
    double t;
    std::uint32_t bucket;
    [[nodiscard]] bool before(const Node& o) const { return t < o.t || (t == o.t && bucket < o.bucket); }
  };
  struct Bucket {
    std::vector<std::uint32_t> slots;
    std::uint32_t node = kNone;  ///< its index in heap_
  };
  struct Where {
    std::uint32_t bucket = kNone;
    std::uint32_t index = 0;  ///< in the bucket's slots
  };

  std::uint32_t new_bucket(double t) {
    std::uint32_t b;
    if (!free_.empty()) {
      b = free_.back();
      free_.pop_back();
    } else {
      b = static_cast<std::uint32_t>(buckets_.size());
      buckets_.emplace_back();
    }
    heap_.push_back({t, b});
    buckets_[b].node = static_cast<std::uint32_t>(heap_.size() - 1);
    sift_up(heap_.size() - 1);
    return b;
  }
  /// Removes slot from its bucket (swap with the last), and an emptied bucket from the heap.
  void take_out(std::uint32_t slot) {
    const Where w = where_[slot];
    where_[slot].bucket = kNone;
    --size_;
    Bucket& b = buckets_[w.bucket];
    const std::uint32_t moved = b.slots.back();
    b.slots[w.index] = moved;
    where_[moved].index = w.index;
    b.slots.pop_back();
    if (!b.slots.empty()) return;
    remove_node(b.node);
    free_.push_back(w.bucket);
    if (last_ == w.bucket) last_ = kNone;
  }

  void place(std::size_t i, const Node& n) {
    heap_[i] = n;
    buckets_[n.bucket].node = static_cast<std::uint32_t>(i);
  }
  void sift_up(std::size_t i) {
    const Node n = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!n.before(heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, n);
  }
  void sift_down(std::size_t i) {
    const Node n = heap_[i];
    const std::size_t count = heap_.size();
    while (true) {
      std::size_t child = 2 * i + 1;
      if (child >= count) break;
      if (child + 1 < count && heap_[child + 1].before(heap_[child])) ++child;
      if (!heap_[child].before(n)) break;
      place(i, heap_[child]);
      i = child;
    }
    place(i, n);
  }
  void remove_node(std::size_t i) {
    const Node last = heap_.back();
    heap_.pop_back();
    if (i == heap_.size()) return;
    place(i, last);
    if (i > 0 && last.before(heap_[(i - 1) / 2]))
      sift_up(i);
    else
      sift_down(i);
  }

  std::vector<Node> heap_;
  std::vector<Bucket> buckets_;
  std::vector<std::uint32_t> free_;  ///< buckets not in the heap
  std::vector<Where> where_;         ///< per slot
  std::uint32_t last_ = kNone;       ///< the bucket the last prediction went to, while it is in the heap
  std::size_t size_ = 0;
};

}  // namespace exasim::flow
