#pragma once
// x / d and x % d for 32-bit x by a divisor fixed at construction, with multiplications instead of a
// division (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019): exact for every
// 32-bit x and every d >= 1. Adaptive routing builds up to eight candidate paths per hop of every
// collective, and the dragonfly's wiring arithmetic divides by the group and row sizes several times
// per path: a hardware division costs 10-40 cycles, these two or three. mod64() does the same for the
// 64-bit flow hashes that pick parallel links and intermediate groups (four to six per candidate pair).
// The process grid divides by its dimensions' sizes and strides for every collective a rank posts.

#include <cstdint>

namespace exasim {

class FastDivisor {
  __extension__ using Wide = unsigned __int128;  // GCC and Clang; __extension__ keeps -Wpedantic quiet

 public:
  FastDivisor() = default;
  explicit FastDivisor(std::uint32_t d) : d_(d), m_(~std::uint64_t{0} / d + 1), m128_(~Wide{0} / d + 1) {}
  [[nodiscard]] std::uint32_t divisor() const { return d_; }
  [[nodiscard]] std::uint32_t div(std::uint32_t x) const {
    if (d_ == 1) return x;  // m_ wrapped to 0
    return static_cast<std::uint32_t>((static_cast<Wide>(m_) * x) >> 64);
  }
  [[nodiscard]] std::uint32_t mod(std::uint32_t x) const {
    const std::uint64_t low = m_ * x;
    return static_cast<std::uint32_t>((static_cast<Wide>(low) * d_) >> 64);
  }
  /// x % d for a 64-bit x: the same computation with 128 fractional bits (exact for 64-bit x and
  /// 32-bit d, Lemire et al.'s theorem 1), the product with d taken in two 64-bit halves.
  [[nodiscard]] std::uint32_t mod64(std::uint64_t x) const {
    // Parallel links come in powers of two on the machines we model (Frontier: 4 per group pair).
    if ((d_ & (d_ - 1)) == 0) return static_cast<std::uint32_t>(x & (d_ - 1));
    const Wide low = m128_ * x;
    const Wide high_half = static_cast<Wide>(static_cast<std::uint64_t>(low >> 64)) * d_;
    const Wide low_half = (static_cast<Wide>(static_cast<std::uint64_t>(low)) * d_) >> 64;
    return static_cast<std::uint32_t>((high_half + low_half) >> 64);
  }

 private:
  std::uint32_t d_ = 1;
  std::uint64_t m_ = 0;
  Wide m128_ = 0;
};

}  // namespace exasim
