#include "emu/mpi_runtime.hpp"

#include "emu/collectives/group_layout.hpp"
#include "emu/emulated_gpu.hpp"
#include "emu/mpi_progress.hpp"
#include "sim/report/trace_collector.hpp"
#include "traces/op_classes.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

namespace exasim::emu {

namespace {

using collectives::Algorithm;
using schedule::CollKind;
using schedule::Op;
using schedule::OpType;

/// One handle slot: the communication it holds and the buffers reused by every collective posted into it.
struct Slot {
  PendingComm comm;
  bool active = false;  ///< posted, not yet waited for
  bool done = false;    ///< completion seen by a test
  std::uint32_t op = 0;
  double posted_s = 0;
  double done_s = 0;
  double ring_wire_bytes = 0;  ///< what a ring would send: the count of MPI library requests
  std::vector<float> send, recv;
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;  ///< an all-to-all's, per member

  void reserve(std::size_t send_n, std::size_t recv_n) {
    // Filled with ones once: reductions of uninitialised memory could hit slow denormals or NaNs.
    if (send.size() < send_n) send.assign(send_n, 1.0f);
    if (recv.size() < recv_n) recv.assign(recv_n, 1.0f);
  }
};

/// The measured iteration of one rank.
struct IterationRecord {
  runtime::RankTimes times;
  std::vector<double> wire_bytes;  ///< per dimension, bytes this rank sent (counted where exasim's collectives ran)
  std::map<std::string, std::uint64_t> by_algorithm;  ///< collectives this rank ran, per algorithm
  std::vector<OpRecord> ops;
  double host_compute_s = 0;      ///< host time in compute ops and in posting overlapped collectives
  double unpaid_delay_s = 0;      ///< host delay no compute op paid back: absorbed by waits, or owed at the end
  double origin_monotonic_s = 0;  ///< the iteration's start on the host's monotonic clock (one per host)
};

/// Whether every rank runs on this rank's host (then all share one monotonic clock). Collective.
bool all_on_one_host() {
  std::array<char, MPI_MAX_PROCESSOR_NAME> mine{}, first{};
  int length = 0;
  MPI_Get_processor_name(mine.data(), &length);
  first = mine;
  MPI_Bcast(first.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
  int same = first == mine ? 1 : 0, all_same = 0;
  MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all_same == 1;
}

}  // namespace

struct MpiRuntime::Impl {
  Impl(const EmulationOptions& options, const runtime::Job& job, const topo::Topology& topology)
      : options_(options),
        job_(job),
        plan_(*job.plan),
        topology_(topology),
        gpu_(options.compute, options.poll_interval_s),
        poller_(gpu_, options.timeout_s) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    int world = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (static_cast<std::uint32_t>(world) != plan_.grid.world_size())
      throw std::logic_error("MpiRuntime: world size differs from the plan's");
    const auto me = static_cast<schedule::Rank>(rank_);
    for (std::size_t d = 0; d < plan_.grid.dims().size(); ++d) {
      MPI_Comm comm = MPI_COMM_NULL;
      MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(plan_.grid.group_id(me, d)),
                     static_cast<int>(plan_.grid.coord(me, d)), &comm);
      comms_.push_back(comm);
      // Sub-communicators made once per group, and only where hierarchical collectives may run
      // (MPI_Comm_split is collective over the group: every member decides alike from the same layout).
      const auto dim = static_cast<std::uint8_t>(d);
      const auto place = member_place(topology, group_call(dim, 0, CollKind::AllReduce, 0), plan_.grid.coord(me, d));
      if (collectives::may_split_by_node(job.collective_algorithm) && place.hierarchical &&
          options.collectives != CollectiveAlgorithm::Mpi)
        hierarchical_.emplace_back(comm, static_cast<int>(place.node), static_cast<int>(place.local_index),
                                   static_cast<int>(plan_.grid.coord(me, d)));
      else
        hierarchical_.emplace_back();
    }
    sequence_.assign(comms_.size(), 0);
    slots_.resize(plan_.stream_of(me).slots);
  }

  ~Impl() {
    hierarchical_.clear();  // before the group communicators they were split from
    for (auto& c : comms_) MPI_Comm_free(&c);
  }

  /// Tests every outstanding request; returns whether any is still in flight.
  bool progress() {
    bool outstanding = false;
    for (auto& s : slots_) {
      if (!s.active || s.done) continue;
      if (s.comm.test()) {
        s.done = true;
        s.done_s = MPI_Wtime() - origin_;
      } else {
        outstanding = true;
      }
    }
    return outstanding;
  }

  void post(std::uint32_t index, const Op& op) {
    Slot& s = slots_[op.slot];
    if (s.active) throw std::logic_error("plan reuses a slot before its Wait: " + plan_.names[op.name]);
    const std::uint32_t p = plan_.grid.dim(op.dim).size;
    MPI_Comm comm = comms_[op.dim];
    const std::size_t n = emulated_elements(op.bytes, schedule::is_p2p(op.coll) ? 1 : p);
    s.posted_s = MPI_Wtime() - origin_;
    s.ring_wire_bytes = schedule::ring_wire_bytes(op.coll, p, 4.0 * static_cast<double>(n));
    switch (op.coll) {
      case CollKind::AllReduce:
      case CollKind::AllGather:
      case CollKind::ReduceScatter: ++by_algorithm_[start_collective(s, op, n)]; break;
      case CollKind::AllToAll:
      case CollKind::AllToAllReverse:
        start_all_to_all(s, op, n);
        ++by_algorithm_["mpi"];
        break;
      case CollKind::Send:
      case CollKind::Recv: {
        const auto own = plan_.grid.coord(static_cast<schedule::Rank>(rank_), op.dim);
        const auto peer = static_cast<int>(schedule::p2p_partner_coord(own, op.peer, p));
        if (op.coll == CollKind::Send) {
          s.reserve(n, 0);
          MPI_Isend(s.send.data(), static_cast<int>(n), MPI_FLOAT, peer, 0, comm, s.comm.request());
        } else {
          s.reserve(0, n);
          MPI_Irecv(s.recv.data(), static_cast<int>(n), MPI_FLOAT, peer, 0, comm, s.comm.request());
        }
        break;
      }
    }
    s.active = true;
    s.done = false;
    s.op = index;
  }

  /// What the collectives router knows of this rank's group's `sequence`-th collective along `dim`.
  [[nodiscard]] collectives::GroupCall group_call(std::uint8_t dim, std::uint32_t sequence, CollKind kind,
                                                  double bytes) const {
    const auto me = static_cast<schedule::Rank>(rank_);
    return runtime::group_call(job_, plan_.grid.group_member(me, dim, 0), dim, plan_.grid.group_id(me, dim), sequence,
                               kind, bytes);
  }

  /// Posts a collective of `n` floats with the algorithm the job asks for it (group_layout.hpp); returns
  /// the algorithm's name ("mpi" for the MPI library's own).
  std::string start_collective(Slot& s, const Op& op, std::size_t n) {
    const std::uint32_t p = plan_.grid.dim(op.dim).size;
    MPI_Comm comm = comms_[op.dim];
    const std::uint64_t sequence = sequence_[op.dim]++;
    const int block = static_cast<int>(n / p);
    if (op.coll == CollKind::AllGather)
      s.reserve(n / p, n);
    else
      s.reserve(n, n);
    if (options_.collectives == CollectiveAlgorithm::Mpi) {  // the MPI library's own algorithms, to compare
      if (op.coll == CollKind::AllReduce)
        MPI_Iallreduce(s.send.data(), s.recv.data(), static_cast<int>(n), MPI_FLOAT, gpu_side_reduction(), comm,
                       s.comm.request());
      else if (op.coll == CollKind::AllGather)
        MPI_Iallgather(s.send.data(), block, MPI_FLOAT, s.recv.data(), block, MPI_FLOAT, comm, s.comm.request());
      else
        MPI_Ireduce_scatter_block(s.send.data(), s.recv.data(), block, MPI_FLOAT, gpu_side_reduction(), comm,
                                  s.comm.request());
      return "mpi";
    }
    const Algorithm algorithm = emulated_algorithm(
        job_.collective_algorithm, topology_,
        group_call(op.dim, static_cast<std::uint32_t>(sequence), op.coll, op.bytes), hierarchical_[op.dim].valid());
    CollectiveArgs args;
    args.kind = op.coll;
    args.send = s.send.data();
    args.recv = s.recv.data();
    args.n = n;
    args.comm = comm;
    args.node_comms = &hierarchical_[op.dim];
    args.reduction = gpu_side_reduction();
    args.tag = collective_tag(sequence);
    s.comm.start(algorithm, args);
    return std::string(collectives::to_string(algorithm));
  }

  /// An all-to-all of `n` floats (the buffer S) as the MPI library's MPI_Ialltoallv, each pair's count
  /// from the plan's shares (schedule::all_to_all_pair_bytes): the direct exchange's pattern.
  void start_all_to_all(Slot& s, const Op& op, std::size_t n) {
    const std::uint32_t p = plan_.grid.dim(op.dim).size;
    const auto me = plan_.grid.coord(static_cast<schedule::Rank>(rank_), op.dim);
    const double* shares = plan_.shares_of(op.dim);
    const auto floats = [&](std::uint32_t from, std::uint32_t to) {
      if (from == to) return 0;
      return static_cast<int>(
          std::llround(schedule::all_to_all_pair_bytes(op.coll, p, static_cast<double>(n), shares, from, to)));
    };
    s.send_counts.assign(p, 0);
    s.recv_counts.assign(p, 0);
    for (std::uint32_t j = 0; j < p; ++j) {
      s.send_counts[j] = floats(me, j);
      s.recv_counts[j] = floats(j, me);
    }
    s.send_displs.assign(p, 0);
    s.recv_displs.assign(p, 0);
    std::exclusive_scan(s.send_counts.begin(), s.send_counts.end(), s.send_displs.begin(), 0);
    std::exclusive_scan(s.recv_counts.begin(), s.recv_counts.end(), s.recv_displs.begin(), 0);
    const int sent = std::accumulate(s.send_counts.begin(), s.send_counts.end(), 0);
    s.reserve(static_cast<std::size_t>(sent),
              static_cast<std::size_t>(std::accumulate(s.recv_counts.begin(), s.recv_counts.end(), 0)));
    s.ring_wire_bytes = 4.0 * sent;
    MPI_Ialltoallv(s.send.data(), s.send_counts.data(), s.send_displs.data(), MPI_FLOAT, s.recv.data(),
                   s.recv_counts.data(), s.recv_displs.data(), MPI_FLOAT, comms_[op.dim], s.comm.request());
  }

  /// Whether the plan runs a compute op between the CollStart at `i` and its Wait.
  static bool computes_before_wait(const std::vector<Op>& ops, std::uint32_t i) {
    for (std::size_t j = i + 1; j < ops.size(); ++j) {
      if (ops[j].type == OpType::Wait && ops[j].slot == ops[i].slot) return false;
      if (ops[j].type == OpType::Compute) return true;
    }
    return false;
  }

  IterationRecord iterate() {
    const auto me = static_cast<schedule::Rank>(rank_);
    const auto& ops = plan_.stream_of(me).ops;
    IterationRecord it;
    by_algorithm_.clear();
    it.times.exposed_s.assign(plan_.grid.dims().size(), 0.0);
    it.wire_bytes.assign(plan_.grid.dims().size(), 0.0);
    it.ops.reserve(ops.size());
    poller_.barrier(MPI_COMM_WORLD, "the barrier that starts an iteration");
    // Each iteration starts on time: lateness of the last one is not paid back from this one's compute.
    gpu_.clear_debt();
    origin_ = MPI_Wtime();
    it.origin_monotonic_s = monotonic_s();
    auto now = [&] { return MPI_Wtime() - origin_; };
    auto progress = [this] { return this->progress(); };
    for (std::uint32_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      switch (op.type) {
        case OpType::Compute: {
          // Recorded on the emulated GPU's timeline (host time less its debt): the op runs for its
          // modelled time there, however late the host wakes up (emulated_gpu.hpp).
          const double d0 = gpu_.debt_s();
          const double t0 = now();
          gpu_.run(job_.kernel_time_s[op.kernel], progress);
          const double t1 = now();
          const double gpu_t0 = t0 - d0, gpu_t1 = t1 - gpu_.debt_s();
          it.host_compute_s += t1 - t0;
          it.times.compute_s += gpu_t1 - gpu_t0;
          it.ops.push_back({me, i, gpu_t0, gpu_t1});
          break;
        }
        case OpType::CollStart: {
          const double t0 = now();
          post(i, op);
          // Posting can take milliseconds (the rank is descheduled while others copy, or Open MPI moves
          // the data inside the call). Where the plan computes before the collective's Wait, a GPU
          // stream would have kept computing while its host posted: that time is carried as debt like a
          // compute op's lateness (emulated_gpu.hpp), and counted as compute, the GPU's timeline.
          // Where no compute comes before the Wait (a pipeline exchange posted with its partner, then
          // waited for), the GPU would have idled: the posting time is the collective's own, exposed.
          if (computes_before_wait(ops, i)) {
            const double posting = now() - t0;
            gpu_.add_debt(posting);
            it.host_compute_s += posting;
          }
          break;
        }
        case OpType::Wait: {
          Slot& s = slots_[op.slot];
          const double debt = gpu_.debt_s();
          const double t0 = now();
          const double since = MPI_Wtime();
          while (!s.done) {
            progress();
            if (s.done) break;
            poller_.check_timeout(since, plan_.names[op.name]);
            gpu_.pause();
          }
          const double t1 = now();
          // The emulated GPU reached the wait `debt` before its host did, and leaves it when the host saw
          // the collective complete (or at once, when that was before it arrived). A wait that blocks
          // absorbs the debt: the GPU would have idled for the data all the same, and paying the debt
          // back from the compute after it would run that compute short.
          const double arrived = t0 - debt;
          const double left = std::clamp(s.done_s, arrived, t1);
          const double owed = t1 - left;
          it.unpaid_delay_s += debt - owed;
          gpu_.clear_debt();
          gpu_.add_debt(owed);
          it.times.exposed_s[op.dim] += left - arrived;
          const auto counted = s.comm.bytes_sent();
          it.wire_bytes[op.dim] += counted ? static_cast<double>(*counted) : s.ring_wire_bytes;
          it.ops.push_back({me, s.op, s.posted_s, std::max(s.done_s, s.posted_s)});
          it.ops.push_back({me, i, arrived, left});
          s.active = false;
          break;
        }
      }
    }
    it.times.finish_s = now();
    it.by_algorithm = by_algorithm_;
    it.unpaid_delay_s += gpu_.debt_s();
    return it;
  }

  /// Rank 0 receives every rank's times of the chosen iteration.
  runtime::RunResult gather_times(const IterationRecord& mine, double iteration_s) {
    const std::size_t dims = plan_.grid.dims().size();
    int world = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    // Times: finish, compute, host compute, unpaid delay, then exposed per dimension.
    std::vector<double> packed = {mine.times.finish_s, mine.times.compute_s, mine.host_compute_s, mine.unpaid_delay_s};
    packed.insert(packed.end(), mine.times.exposed_s.begin(), mine.times.exposed_s.end());
    std::vector<double> all(rank_ == 0 ? packed.size() * static_cast<std::size_t>(world) : 0);
    MPI_Gather(packed.data(), static_cast<int>(packed.size()), MPI_DOUBLE, all.data(), static_cast<int>(packed.size()),
               MPI_DOUBLE, 0, MPI_COMM_WORLD);
    runtime::RunResult result;
    result.backend = "mpi";
    result.iteration_s = iteration_s;
    const auto me = static_cast<schedule::Rank>(rank_);
    if (rank_ == 0) {
      for (int r = 0; r < world; ++r) {
        const double* p = all.data() + static_cast<std::size_t>(r) * packed.size();
        result.ranks.push_back({p[0], p[1], std::vector<double>(p + 4, p + 4 + dims)});
        host_compute_s_.push_back(p[2]);
        unpaid_delay_s_.push_back(p[3]);
      }
    } else {
      result.ranks.push_back(mine.times);
    }
    result.rank0_wire_bytes = mine.wire_bytes;  // rank 0's own, there: what its collectives sent
    result.rank0_collectives = schedule::collectives_per_dim(plan_, me);
    return result;
  }

  /// Rank 0 receives the op records of one iteration of every rank (empty elsewhere).
  std::vector<OpRecord> gather_records(const IterationRecord& mine) {
    int world = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    std::vector<double> origins(rank_ == 0 ? world : 0);
    MPI_Gather(&mine.origin_monotonic_s, 1, MPI_DOUBLE, origins.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    // As bytes (OpRecord is plain data and every rank runs the same binary: checked at start).
    int my_bytes = static_cast<int>(mine.ops.size() * sizeof(OpRecord));
    std::vector<int> counts(rank_ == 0 ? world : 0), displs(rank_ == 0 ? world : 0);
    MPI_Gather(&my_bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank_ == 0) std::exclusive_scan(counts.begin(), counts.end(), displs.begin(), 0);
    std::vector<OpRecord> records(
        rank_ == 0 ? static_cast<std::size_t>(displs.back() + counts.back()) / sizeof(OpRecord) : 0);
    MPI_Gatherv(mine.ops.data(), my_bytes, MPI_BYTE, records.data(), counts.data(), displs.data(), MPI_BYTE, 0,
                MPI_COMM_WORLD);
    // One host, one monotonic clock: every rank's records move onto the time line of the first rank
    // out of the start barrier, so that a collective's members' posts compare across ranks. Across
    // hosts the clocks are not comparable and each rank keeps its own barrier exit as its zero.
    if (rank_ == 0 && one_host_) {
      const double first = *std::min_element(origins.begin(), origins.end());
      for (auto& record : records) {
        const double shift = origins[record.rank] - first;
        record.t_start_s += shift;
        record.t_end_s += shift;
      }
    }
    return records;
  }

  EmulationOptions options_;
  const runtime::Job& job_;
  const schedule::Plan& plan_;
  const topo::Topology& topology_;
  EmulatedGpu gpu_;
  Poller poller_;
  int rank_ = 0;
  double origin_ = 0;
  bool one_host_ = all_on_one_host();
  std::vector<MPI_Comm> comms_;
  std::vector<HierarchicalComms> hierarchical_;        ///< per dimension; invalid where none may run
  std::vector<std::uint64_t> sequence_;                ///< collectives started per communicator (their tags)
  std::map<std::string, std::uint64_t> by_algorithm_;  ///< of the iteration running
  std::vector<Slot> slots_;
  std::vector<double> host_compute_s_;  ///< per rank, on rank 0, of the reported iteration
  std::vector<double> unpaid_delay_s_;  ///< per rank, on rank 0, of the reported iteration
};

MpiRuntime::MpiRuntime(EmulationOptions options, const topo::Topology& topology)
    : options_(options), topology_(topology) {}
MpiRuntime::~MpiRuntime() = default;

runtime::RunResult MpiRuntime::run(const runtime::Job& job, const std::function<bool(runtime::Rank)>& observe,
                                   const runtime::OpObserver& observer) {
  const double wall_start = MPI_Wtime();
  Impl impl(options_, job, topology_);
  for (std::uint32_t i = 0; i < options_.warmup; ++i) (void)impl.iterate();
  std::vector<IterationRecord> measured;
  for (std::uint32_t i = 0; i < options_.iterations; ++i) measured.push_back(impl.iterate());

  // Every rank learns every iteration's time (the slowest rank's finish) and picks the same median.
  std::vector<double> mine(measured.size());
  for (std::size_t i = 0; i < measured.size(); ++i) mine[i] = measured[i].times.finish_s;
  iterations_s_.assign(mine.size(), 0.0);
  MPI_Allreduce(mine.data(), iterations_s_.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  std::vector<std::size_t> order(iterations_s_.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return iterations_s_[a] < iterations_s_[b] || (iterations_s_[a] == iterations_s_[b] && a < b);
  });
  const std::size_t median = order[(order.size() - 1) / 2];

  auto result = impl.gather_times(measured[median], iterations_s_[median]);
  by_algorithm_ = measured[median].by_algorithm;
  // Every measured iteration's records reach rank 0, one iteration at a time: its op classes are kept,
  // its records only for the median one, which the observer sees.
  iteration_op_classes_.clear();
  std::vector<OpRecord> median_records;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    auto records = impl.gather_records(measured[i]);
    iteration_op_classes_.push_back(trace::op_class_times(rows_of(*job.plan, records), report::group_of(*job.plan)));
    if (i == median) median_records = std::move(records);
  }
  if (observer) {
    for (const auto& r : median_records)
      if (!observe || observe(r.rank)) observer(r.rank, r.op_index, r.t_start_s, r.t_end_s);
  }
  overshoot_s_ = impl.gpu_.mean_overshoot_s();
  host_compute_s_ = impl.host_compute_s_;
  unpaid_delay_s_ = impl.unpaid_delay_s_;
  result.wall_s = MPI_Wtime() - wall_start;
  return result;
}

}  // namespace exasim::emu
