#pragma once
// Test helper: collects the predictions a flow solver hands out, the latest per flow.

#include "sim/flow/flow_network.hpp"

#include <map>

namespace exasim::flow::testing {

struct Predictions {
  std::map<FlowId, double> finish;  ///< latest predicted finish per flow
  FlowNetwork::Scheduler scheduler() {
    return [this](double t, FlowId f) { finish[f] = t; };
  }
};

}  // namespace exasim::flow::testing
