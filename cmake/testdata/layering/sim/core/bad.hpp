// Fixture for ctest layering:check-finds-violations: an engine header that includes MPI.
#include <mpi.h>
