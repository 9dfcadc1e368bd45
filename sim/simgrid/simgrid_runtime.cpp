#include "sim/simgrid/simgrid_runtime.hpp"

#include "sim/core/child_process.hpp"
#include "sim/simgrid/internal/actor_simulation.hpp"
#include "sim/simgrid/internal/byte_codec.hpp"

#include <chrono>
#include <stdexcept>

namespace exasim::sg {

namespace {

using runtime::Rank;

std::string serialise(const runtime::RunResult& result, const std::vector<ObservedOp>& observed) {
  ByteWriter out;
  out.put_string(result.backend);
  out.put(result.iteration_s);
  out.put<std::uint64_t>(result.ranks.size());
  for (const auto& r : result.ranks) {
    out.put(r.finish_s);
    out.put(r.compute_s);
    out.put(r.slowed_s);
    out.put_vector(r.exposed_s);
  }
  out.put_vector(result.rank0_wire_bytes);
  out.put_vector(result.rank0_collectives);
  out.put(result.events);
  out.put(result.flows);
  out.put_vector(result.link_bytes);
  out.put_vector(result.link_busy_s);
  out.put<std::uint64_t>(result.link_bytes_by_dim.size());
  for (const auto& dim : result.link_bytes_by_dim) out.put_vector(dim);
  out.put_vector(observed);
  return std::move(out.bytes());
}

runtime::RunResult deserialise(const std::string& bytes, std::vector<ObservedOp>& observed) {
  ByteReader in(bytes);
  runtime::RunResult result;
  result.backend = in.get_string();
  result.iteration_s = in.get<double>();
  result.ranks.resize(in.get<std::uint64_t>());
  for (auto& r : result.ranks) {
    r.finish_s = in.get<double>();
    r.compute_s = in.get<double>();
    r.slowed_s = in.get<double>();
    r.exposed_s = in.get_vector<double>();
  }
  result.rank0_wire_bytes = in.get_vector<double>();
  result.rank0_collectives = in.get_vector<std::uint64_t>();
  result.events = in.get<std::uint64_t>();
  result.flows = in.get<std::uint64_t>();
  result.link_bytes = in.get_vector<double>();
  result.link_busy_s = in.get_vector<double>();
  result.link_bytes_by_dim.resize(in.get<std::uint64_t>());
  for (auto& dim : result.link_bytes_by_dim) dim = in.get_vector<double>();
  observed = in.get_vector<ObservedOp>();
  return result;
}

class SimgridRuntime final : public runtime::Runtime {
 public:
  SimgridRuntime(const topo::Topology& topology, const SimgridOptions& options)
      : topology_(topology), options_(options) {}

  [[nodiscard]] std::string name() const override { return "simgrid"; }

  [[nodiscard]] runtime::RunResult run(const runtime::Job& job, const std::function<bool(Rank)>& observe,
                                       const runtime::OpObserver& observer) override {
    if (job.plan == nullptr) throw std::invalid_argument("SimGrid runtime: job without a plan");
    if (job.plan->grid.world_size() > topology_.gpu_count())
      throw std::invalid_argument("plan needs " + std::to_string(job.plan->grid.world_size()) +
                                  " GPUs, the machine has " + std::to_string(topology_.gpu_count()));
    const auto start = std::chrono::steady_clock::now();
    // Record only what someone will look at: without an observer, no rank is observed.
    std::function<bool(Rank)> watched;
    if (observer && observe) watched = observe;
    std::vector<ObservedOp> observed;
    runtime::RunResult result;
    if (options_.fork) {
      ChildProcess child([&] {
        std::vector<ObservedOp> ops;
        auto r =
            simulate_in_this_process(topology_, job, watched, ops, options_.verbose, router(), options_.meter_links);
        return serialise(r, ops);
      });
      const std::string bytes = child.get();
      result = deserialise(bytes, observed);
    } else {
      result =
          simulate_in_this_process(topology_, job, watched, observed, options_.verbose, router(), options_.meter_links);
    }
    for (const auto& op : observed) observer(op.rank, op.op_index, op.t_start_s, op.t_end_s);
    result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  }

 private:
  [[nodiscard]] const exec::StageRouter& router() const {
    return options_.router ? *options_.router : exec::default_router();
  }

  const topo::Topology& topology_;
  SimgridOptions options_;
};

}  // namespace

std::unique_ptr<runtime::Runtime> make_simgrid_runtime(const topo::Topology& topology, const SimgridOptions& options) {
  return std::make_unique<SimgridRuntime>(topology, options);
}

}  // namespace exasim::sg
