#include "emu/emulated_gpu.hpp"

#include <sys/prctl.h>  // PR_SET_TIMERSLACK
#include <time.h>       // clock_nanosleep

#include <algorithm>
#include <cmath>

namespace exasim::emu {

namespace {
constexpr int kTile = 64;  // 64^3 single-precision tile: ~0.5 MFLOP, tens of microseconds on one core

timespec to_timespec(double s) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(s);
  ts.tv_nsec = static_cast<long>((s - static_cast<double>(ts.tv_sec)) * 1e9);
  return ts;
}
}  // namespace

double monotonic_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

EmulatedGpu::EmulatedGpu(ComputeMode mode, double poll_interval_s) : mode_(mode), poll_s_(poll_interval_s) {
  // Linux rounds sleeps of normal threads up by 50 us of "timer slack"; 1 ns makes them end on time.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  if (mode_ == ComputeMode::Cpu) {
    a_.assign(kTile * kTile, 1.0f);
    b_.assign(kTile * kTile, 0.5f);
    c_.assign(kTile * kTile, 0.0f);
  }
}

void EmulatedGpu::sleep_until(double deadline_s) const {
  timespec ts = to_timespec(deadline_s);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {}
}

void EmulatedGpu::pause() const { sleep_until(monotonic_s() + poll_s_); }

void EmulatedGpu::gemm_tile() {
  for (int i = 0; i < kTile; ++i)
    for (int k = 0; k < kTile; ++k) {
      const float a = a_[i * kTile + k];
      for (int j = 0; j < kTile; ++j) c_[i * kTile + j] += a * b_[k * kTile + j];
    }
}

void EmulatedGpu::run(double seconds, const std::function<bool()>& progress) {
  const double start = monotonic_s();
  const double pay = std::min(debt_s_, seconds);
  debt_s_ -= pay;
  const double end = start + seconds - pay;
  bool outstanding = progress();
  switch (mode_) {
    case ComputeMode::Sleep: {
      for (double now = monotonic_s(); now < end; now = monotonic_s()) {
        const double target = outstanding ? std::min(end, now + poll_s_) : end;
        if (target == end) {
          // The last sleep of the op: end early by the learned overshoot, spin off what is left.
          sleep_until(end - overshoot_s_);
          const double late = monotonic_s() - (end - overshoot_s_);
          overshoot_s_ = 0.9 * overshoot_s_ + 0.1 * std::clamp(late, 0.0, 1e-3);
          while (monotonic_s() < end) {}
          break;
        }
        sleep_until(target);
        outstanding = progress();
      }
      break;
    }
    case ComputeMode::Spin:
    case ComputeMode::Cpu: {
      double next_poll = start + poll_s_;
      for (double now = monotonic_s(); now < end; now = monotonic_s()) {
        if (mode_ == ComputeMode::Cpu) gemm_tile();
        if (now >= next_poll) {
          progress();
          next_poll = now + poll_s_;
        }
      }
      break;
    }
  }
  progress();
  debt_s_ += std::max(0.0, monotonic_s() - end);
}

}  // namespace exasim::emu
