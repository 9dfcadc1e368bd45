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
#include <cstring>
#include <functional>
#include <queue>
#include <vector>

namespace exasim::flow {

/// Time -> bucket, open addressing with linear probing over one flat array (a node-based map costs a
/// cache miss per lookup in large runs). Keys are exact event times, compared bit for bit.
class TimeIndex {
 public:
  /// The value stored for t, inserted as `absent` if t is not there.
  std::uint32_t& find_or_add(double t, std::uint32_t absent) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    const std::uint64_t key = bits(t);
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.full) {
        s = {key, absent, true};
        ++used_;
        return s.value;
      }
      if (s.key == key) return s.value;
    }
  }
  /// Removes t (which must be present) and returns its value.
  std::uint32_t take(double t) {
    const std::uint64_t key = bits(t);
    std::size_t i = home(key);
    while (slots_[i].key != key || !slots_[i].full) i = (i + 1) & mask_;
    const std::uint32_t value = slots_[i].value;
    // Backward-shift deletion: later entries of the probe run move up, so no tombstones accumulate.
    for (std::size_t j = (i + 1) & mask_; slots_[j].full; j = (j + 1) & mask_) {
      const std::size_t h = home(slots_[j].key);
      // Entry j may fill the hole at i only if its home is not cyclically in (i, j].
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i].full = false;
    --used_;
    return value;
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t value = 0;
    bool full = false;
  };
  static std::uint64_t bits(double t) {
    std::uint64_t b;
    std::memcpy(&b, &t, sizeof b);
    return b;
  }
  [[nodiscard]] std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    used_ = 0;
    for (const Slot& s : old)
      if (s.full) {
        std::size_t i = home(s.key);
        while (slots_[i].full) i = (i + 1) & mask_;
        slots_[i] = s;
        ++used_;
      }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t used_ = 0;
};

template <typename Event>
class EventQueue {
 public:
  /// `e` by value: a small Event travels in a register. Built field by field in memory and read back
  /// whole, it waited for its narrow stores to retire (32,768 GCDs packed: 0.969 of the wall time).
  void push(double t, Event e) {
    // Lockstep ranks push runs of events at one time: remember the last instant's bucket.
    if (last_ != kNoBucket && t == last_time_) {
      buckets_[last_].push_back(e);
      return;
    }
    std::uint32_t& b = index_.find_or_add(t, kNoBucket);
    if (b == kNoBucket) {
      b = take_bucket();
      times_.push(t);
    }
    last_time_ = t;
    last_ = b;
    buckets_[last_].push_back(e);
  }
  [[nodiscard]] bool empty() const { return times_.empty(); }
  [[nodiscard]] double next_time() const { return times_.top(); }
  /// Moves the events of the earliest instant into `out` (cleared first) and forgets the instant; events
  /// pushed at that same time afterwards form a new instant, popped next.
  double pop_instant(std::vector<Event>& out) {
    const double t = times_.top();
    times_.pop();
    const std::uint32_t b = index_.take(t);
    if (last_ == b) last_ = kNoBucket;
    // Copied out rather than swapped: the bucket keeps its storage, and the most recently freed bucket
    // (reused first) is the one whose storage was just read.
    out.assign(buckets_[b].begin(), buckets_[b].end());
    buckets_[b].clear();
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
  TimeIndex index_;  ///< time -> bucket; exact times, never NaN
  std::vector<std::vector<Event>> buckets_;
  std::vector<std::uint32_t> free_;
  double last_time_ = 0;
  std::uint32_t last_ = kNoBucket;  ///< bucket of last_time_, while that instant is still queued
};

}  // namespace exasim::flow
