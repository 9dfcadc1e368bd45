#include "sim/simgrid/internal/byte_codec.hpp"

#include <cstring>
#include <stdexcept>

namespace exasim::sg {

void ByteReader::take(void* out, std::size_t n) {
  if (at_ + n > bytes_.size()) throw std::runtime_error("SimGrid child: truncated result");
  if (n > 0) std::memcpy(out, bytes_.data() + at_, n);
  at_ += n;
}

}  // namespace exasim::sg
