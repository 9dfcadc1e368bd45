// Fixture: sim/flow may include its own internals.
#include "sim/flow/internal/solver.hpp"
