#include "sim/exec/executor_impl.hpp"

namespace exasim::exec {

template class BasicExecutor<NetworkBackend>;

}  // namespace exasim::exec
