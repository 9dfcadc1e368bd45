// Fixture for ctest layering:check-finds-violations: another library reaching into sim/flow/internal/.
#include "sim/flow/internal/solver.hpp"
