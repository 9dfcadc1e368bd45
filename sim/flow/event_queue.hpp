#pragma once
// The fast core's event queue: events in time order, and in insertion order at equal times.
//
// Ranks of a 4D plan run in near lockstep (same op stream, same kernel times), so thousands of events
// fall on exactly the same instant. Events are kept in one bucket per distinct time (a vector, appended
// in insertion order) and only the distinct times sit in a binary heap: pushing an event at an
// existing time is a hash lookup and an append, not a heap sift, and an instant is handed out as one
// contiguous batch. Order is exactly (time, insertion), as a heap of (time, sequence) would give, so
// results do not depend on the queue.

#include <cstdint>
#include <functional>
#include <queue>
#include <unordered_map>
#include <vector>

namespace exasim::flow {

template <typename Event>
class EventQueue {
 public:
  void push(double t, const Event& e) {
    // Lockstep ranks push runs of events at one time: remember the last instant's bucket.
    if (last_ != kNoBucket && t == last_time_) {
      buckets_[last_].push_back(e);
      return;
    }
    auto [it, inserted] = index_.try_emplace(t, 0);
    if (inserted) {
      it->second = take_bucket();
      times_.push(t);
    }
    last_time_ = t;
    last_ = it->second;
    buckets_[last_].push_back(e);
  }
  [[nodiscard]] bool empty() const { return times_.empty(); }
  [[nodiscard]] double next_time() const { return times_.top(); }
  /// Moves the events of the earliest instant into `out` (cleared first) and forgets the instant; events
  /// pushed at that same time afterwards form a new instant, popped next.
  double pop_instant(std::vector<Event>& out) {
    const double t = times_.top();
    times_.pop();
    auto it = index_.find(t);
    const std::uint32_t b = it->second;
    index_.erase(it);
    if (last_ == b) last_ = kNoBucket;
    out.clear();
    out.swap(buckets_[b]);  // `out`'s old storage becomes the bucket's: no allocation in steady state
    free_.push_back(b);
    return t;
  }

 private:
  static constexpr std::uint32_t kNoBucket = 0xffffffff;

  std::uint32_t take_bucket() {
    if (!free_.empty()) {
      std::uint32_t b = free_.back();
      free_.pop_back();
      return b;
    }
    buckets_.emplace_back();
    return static_cast<std::uint32_t>(buckets_.size() - 1);
  }

  std::priority_queue<double, std::vector<double>, std::greater<>> times_;
  std::unordered_map<double, std::uint32_t> index_;  ///< time -> bucket; exact times, never NaN
  std::vector<std::vector<Event>> buckets_;
  std::vector<std::uint32_t> free_;
  double last_time_ = 0;
  std::uint32_t last_ = kNoBucket;  ///< bucket of last_time_, while that instant is still queued
};

}  // namespace exasim::flow
