#pragma once
// The predicted ends of the active flows, one entry per flow, moved in place when a re-solve changes
// a flow's rate.
//
// The event queue (internal/event_queue.hpp) kept every prediction ever made and skipped the
// superseded ones when they came up: under minimal routing with spread placement 97 % of the flow
// ends it handed out were superseded (gpt-80b on 4,096 GCDs: 2.44 M of 2.52 M), each an instant of its own with a heap
// pop, a hash removal and a bucket. Here a flow has at most one entry, so only live ends come out.
//
// Order: by time, then by slot. The order of events within an instant never changes an answer (the
// execution core sorts what they make ready), so ties need only be deterministic.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace exasim::flow {

class PredictionHeap {
 public:
  /// Predicts slot's end at `t` (replacing its earlier prediction); t = infinity removes it.
  void set(std::uint32_t slot, double t) {
    if (slot >= pos_.size()) pos_.resize(std::max<std::size_t>(slot + 1, pos_.size() * 2), kAbsent);
    const std::uint32_t at = pos_[slot];
    if (t == std::numeric_limits<double>::infinity()) {
      if (at != kAbsent) remove_at(at);
      return;
    }
    if (at == kAbsent) {
      heap_.push_back({t, slot});
      pos_[slot] = static_cast<std::uint32_t>(heap_.size() - 1);
      sift_up(heap_.size() - 1);
      return;
    }
    const bool earlier = t < heap_[at].t;
    heap_[at].t = t;
    if (earlier)
      sift_up(at);
    else
      sift_down(at);
  }
  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] double next_time() const { return heap_.front().t; }
  /// Removes the earliest prediction and returns its slot.
  std::uint32_t pop() {
    const std::uint32_t slot = heap_.front().slot;
    remove_at(0);
    return slot;
  }
  [[nodiscard]] std::size_t size() const { return heap_.size(); }

 private:
  static constexpr std::uint32_t kAbsent = 0xffffffff;
  struct Entry {
    double t;
    std::uint32_t slot;
    [[nodiscard]] bool before(const Entry& o) const { return t < o.t || (t == o.t && slot < o.slot); }
  };

  void place(std::size_t i, const Entry& e) {
    heap_[i] = e;
    pos_[e.slot] = static_cast<std::uint32_t>(i);
  }
  void sift_up(std::size_t i) {
    const Entry e = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!e.before(heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, e);
  }
  void sift_down(std::size_t i) {
    const Entry e = heap_[i];
    const std::size_t n = heap_.size();
    while (true) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && heap_[child + 1].before(heap_[child])) ++child;
      if (!heap_[child].before(e)) break;
      place(i, heap_[child]);
      i = child;
    }
    place(i, e);
  }
  void remove_at(std::size_t i) {
    pos_[heap_[i].slot] = kAbsent;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (i == heap_.size()) return;
    place(i, last);
    if (i > 0 && last.before(heap_[(i - 1) / 2]))
      sift_up(i);
    else
      sift_down(i);
  }

  std::vector<Entry> heap_;
  std::vector<std::uint32_t> pos_;  ///< per slot: its index in heap_, or kAbsent
};

}  // namespace exasim::flow
