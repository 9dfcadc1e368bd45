// Fixture for ctest layering:check-finds-violations: Boost.Graph in a public topologies header.
#include <boost/graph/adjacency_list.hpp>
