#include "sim/schedule/fsdp.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

using namespace exasim::schedule;

namespace {

/// A GPT with 4 layers of 12 h^2 (h = 512) and a 1,000-word vocabulary; `tied` picks the LM head.
ModelSpec model(bool tied) {
  ModelSpec m{"t", 4, 512, 8, 256, 1000};
  m.tied_embeddings = tied;
  return m;
}

TrainingSpec fsdp_training(std::int64_t global_batch, Recompute recompute = Recompute::Full) {
  TrainingSpec t;
  t.global_batch = global_batch;
  t.recompute = recompute;
  return t;
}

FsdpConfig config(std::uint32_t shard, std::uint32_t replicas, std::uint32_t micro_batch = 1) {
  FsdpConfig c;
  c.shard = shard;
  c.replicas = replicas;
  c.micro_batch = micro_batch;
  return c;
}

/// Bytes and counts of one kind of collective a rank posts along a dimension.
struct Posted {
  double wire_bytes = 0;
  int count = 0;
};
Posted posted(const Plan& plan, CollKind kind, std::uint8_t dim) {
  Posted p;
  for (const auto& op : plan.streams.front().ops) {
    if (op.type != OpType::CollStart || op.coll != kind || op.dim != dim) continue;
    p.wire_bytes += ring_wire_bytes(kind, plan.grid.dim(dim).size, op.bytes);
    ++p.count;
  }
  return p;
}

}  // namespace

TEST_CASE("fsdp all-gathers every unit twice and reduce-scatters it once per micro-batch", "[unit]") {
  // Closed forms from fsdp.hpp: per micro-batch, forward gathers every unit (embedding, layers, untied
  // head), backward gathers the layers and the untied embedding again (the head stays gathered); every
  // unit's gradients are reduce-scattered once. Ring wire bytes per member: (p - 1) / p x S.
  for (const bool tied : {true, false}) {
    const auto m = model(tied);
    const double h = 512, V = 1000, layer = 12 * h * h, vocab = V * h, L = 4, e = 2, g = 4;
    const double shard = 8, micro_batches = 2;  // 16 sequences over 8 GPUs, one at a time
    const auto plan = build_fsdp_plan(m, config(8, 1), fsdp_training(16));
    const double share = (shard - 1) / shard;
    const double forward = L * layer + (tied ? 1 : 2) * vocab;
    const double backward = L * layer + (tied ? 0 : vocab);
    const auto ag = posted(plan, CollKind::AllGather, kFsdpDimShard);
    CHECK(ag.wire_bytes == Approx(micro_batches * share * e * (forward + backward)));
    CHECK(ag.count == micro_batches * ((L + (tied ? 1 : 2)) + (L + (tied ? 0 : 1))));
    const auto rs = posted(plan, CollKind::ReduceScatter, kFsdpDimShard);
    CHECK(rs.wire_bytes == Approx(micro_batches * share * g * m.parameters()));
    CHECK(rs.count == micro_batches * (L + (tied ? 1 : 2)));
    CHECK(posted(plan, CollKind::AllReduce, kFsdpDimReplica).count == 0);  // one replica: nothing to reduce
    const auto dims = wire_bytes_per_dim(plan, 0);
    CHECK(dims[kFsdpDimShard] == Approx(ag.wire_bytes + rs.wire_bytes));
  }
}

TEST_CASE("hybrid fsdp all-reduces each reduced shard over the replicas", "[unit]") {
  // shard 4 x 2 replicas: the all-gathers and reduce-scatters stay in groups of 4; each unit's reduced
  // shard, 1/4 of its gradients, is all-reduced over 2 replicas: 2 (r - 1) / r x g P / shard per micro-batch.
  const auto m = model(false);
  const double shard = 4, replicas = 2, g = 4, micro_batches = 2;
  const auto plan = build_fsdp_plan(m, config(4, 2), fsdp_training(16));
  CHECK(plan.grid.dim(kFsdpDimShard).stride == 1);
  CHECK(plan.grid.dim(kFsdpDimReplica).stride == 4);
  const auto ar = posted(plan, CollKind::AllReduce, kFsdpDimReplica);
  CHECK(ar.wire_bytes == Approx(micro_batches * 2 * (replicas - 1) / replicas * g * m.parameters() / shard));
  CHECK(ar.count == micro_batches * (4 + 2));
  const auto rs = posted(plan, CollKind::ReduceScatter, kFsdpDimShard);
  CHECK(rs.wire_bytes == Approx(micro_batches * (shard - 1) / shard * g * m.parameters()));
}

TEST_CASE("fsdp without resharding gathers once per micro-batch", "[unit]") {
  auto c = config(8, 1);
  c.reshard_after_forward = false;
  const auto m = model(false);
  const auto plan = build_fsdp_plan(m, c, fsdp_training(8));
  const auto ag = posted(plan, CollKind::AllGather, kFsdpDimShard);
  CHECK(ag.count == 4 + 2);
  CHECK(ag.wire_bytes == Approx(7.0 / 8 * 2 * m.parameters()));
  CHECK(posted(plan, CollKind::ReduceScatter, kFsdpDimShard).count == 4 + 2);
}

TEST_CASE("fsdp prefetch posts the next unit's all-gather before the current unit's compute", "[unit]") {
  for (const bool prefetch : {true, false}) {
    auto c = config(8, 1);
    c.prefetch = prefetch;
    const auto plan = build_fsdp_plan(model(true), c, fsdp_training(8));
    const auto& ops = plan.streams.front().ops;
    // The gathers before the first compute op: the embedding's, and with prefetch layer 0's too.
    int started = 0;
    std::size_t i = 0;
    for (; ops[i].type != OpType::Compute; ++i) started += ops[i].type == OpType::CollStart;
    CHECK(plan.names[ops[i].name] == "embedding.fwd");
    CHECK(started == (prefetch ? 2 : 1));
    // Without prefetch every all-gather is waited for at once.
    if (!prefetch)
      for (std::size_t k = 0; k + 1 < ops.size(); ++k)
        if (ops[k].type == OpType::CollStart && ops[k].coll == CollKind::AllGather)
          CHECK(ops[k + 1].type == OpType::Wait);
  }
}

TEST_CASE("fsdp refuses what cannot run, naming the field", "[unit]") {
  const auto m = model(true);
  CHECK(fsdp_infeasibility(m, config(8, 1), fsdp_training(16), 8).why.empty());
  CHECK(fsdp_infeasibility(m, config(3, 2), fsdp_training(12), 8).field == "parallel.shard");
  CHECK(fsdp_infeasibility(m, config(0, 1), fsdp_training(16), 8).field == "parallel.shard");
  CHECK(fsdp_infeasibility(m, config(8, 1), fsdp_training(12), 8).field == "training.global_batch");
  CHECK(fsdp_infeasibility(m, config(8, 1, 3), fsdp_training(16), 8).field == "parallel.micro_batch");
  CHECK_THROWS_AS(build_fsdp_plan(m, config(8, 1, 3), fsdp_training(16)), std::invalid_argument);
  auto experts = m;
  experts.moe.experts = 8;
  experts.moe.top_k = 2;
  experts.moe.expert_ffn = experts.ffn();
  CHECK(fsdp_infeasibility(experts, config(8, 1), fsdp_training(16), 8).field == "model.experts");
  CHECK(fsdp_micro_batches(config(4, 2, 2), fsdp_training(32)) == 2);
}

TEST_CASE("fsdp memory matches its hand-derived closed form", "[unit]") {
  // Untied GPT, bf16 with fp32 gradients, standard attention with dropout, no recomputation: Korthikanti's
  // sbh(34 + 5as/h) per layer per micro-batch of b sequences.
  auto m = model(false);
  auto t = fsdp_training(64, Recompute::None);
  t.attention = AttentionImpl::Standard;
  const double h = 512, a = 8, s = 256, V = 1000, L = 4, b = 2, shard = 8;
  const double layer = 12 * h * h, vocab = V * h, P = L * layer + 2 * vocab;
  const auto c = config(8, 2, 2);  // 16 GPUs, 4 sequences each, 2 per micro-batch
  const auto mem = estimate_fsdp_memory(m, c, t);
  CHECK(mem.weights == Approx(2 * P / shard));
  CHECK(mem.gradients == Approx(4 * P / shard));
  CHECK(mem.optimizer == Approx(12 * P / shard));
  CHECK(mem.activations == Approx(L * s * b * h * (34 + 5 * a * s / h)));
  CHECK(mem.logits == Approx((4 + 2) * b * s * V));
  // The unit computed beside the prefetched one (the vocabulary matrix, 512,000, is smaller than a
  // layer, 3,145,728: two layers), and the largest unit's fp32 gradient.
  CHECK(mem.buffers == Approx(2 * (layer + std::max(layer, vocab)) + 4 * std::max(layer, vocab)));
  const double nccl_per_group = 32 * (4194304.0 + 120.0 * 640 * 8 * 8 + 8.0 * 512 * 8 * 16);
  CHECK(mem.runtime == Approx(0.5e9 + 2 * nccl_per_group));
  CHECK(mem.total() ==
        Approx(mem.weights + mem.gradients + mem.optimizer + mem.activations + mem.logits + mem.buffers + mem.runtime));

  // Without resharding every unit stays gathered; without prefetch only the largest one.
  auto kept = c;
  kept.reshard_after_forward = false;
  CHECK(estimate_fsdp_memory(m, kept, t).buffers == Approx(2 * P + 4 * layer));
  auto alone = c;
  alone.prefetch = false;
  CHECK(estimate_fsdp_memory(m, alone, t).buffers == Approx(2 * layer + 4 * layer));
  // Full sharding over the same 16 GPUs: the state over 16, no replica group.
  const auto full = estimate_fsdp_memory(m, config(16, 1, 2), t);
  CHECK(full.optimizer == Approx(12 * P / 16));
  CHECK(full.runtime == Approx(0.5e9 + nccl_per_group));
}
