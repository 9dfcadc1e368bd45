#include "sim/scenario/scheme.hpp"
#include "sim/core/error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/schemes/fsdp_scheme.hpp"
#include "sim/schedule/axonn4d.hpp"
#include "sim/schedule/fsdp.hpp"
#include "sim/schedule/megatron.hpp"
#include "sim/schedule/memory.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace exasim;

namespace {

nlohmann::json axonn_doc() {
  return nlohmann::json::parse(R"({
    "machine": "simple-a100", "model": "gpt-5b", "gpus": 64,
    "parallel": {"scheme": "axonn4d", "gx": 2, "gy": 2, "gz": 2, "gdata": 8},
    "training": {"global_batch": 512, "recompute": "full"}})");
}

nlohmann::json megatron_doc() {
  return nlohmann::json::parse(R"({
    "machine": "simple-a100", "model": "gpt-5b", "gpus": 16,
    "parallel": {"scheme": "megatron", "tp": 2, "pp": 2, "dp": 4, "zero": 1, "micro_batch": 2,
                 "sequence_parallel": true},
    "training": {"global_batch": 64, "recompute": "selective"}})");
}

nlohmann::json fsdp_doc() {
  return nlohmann::json::parse(R"({
    "machine": "simple-a100", "model": "gpt-5b", "gpus": 16,
    "parallel": {"scheme": "fsdp", "shard": 8, "micro_batch": 2},
    "training": {"global_batch": 64, "recompute": "selective"}})");
}

/// Two plans are the same when they have the same grid, kernels and op streams.
void check_same_plan(const schedule::Plan& a, const schedule::Plan& b) {
  CHECK(a.grid.world_size() == b.grid.world_size());
  REQUIRE(a.kernels.size() == b.kernels.size());
  for (std::size_t k = 0; k < a.kernels.size(); ++k) CHECK(a.kernels[k].flops == b.kernels[k].flops);
  REQUIRE(a.streams.size() == b.streams.size());
  for (std::size_t i = 0; i < a.streams.size(); ++i) CHECK(a.streams[i].ops.size() == b.streams[i].ops.size());
}

void check_same_memory(const schedule::MemoryEstimate& a, const schedule::MemoryEstimate& b) {
  CHECK(a.weights == b.weights);
  CHECK(a.gradients == b.gradients);
  CHECK(a.optimizer == b.optimizer);
  CHECK(a.activations == b.activations);
  CHECK(a.workspace == b.workspace);
}

/// What every entry must give: a config that survives JSON and tune.csv, a label, an order.
void check_round_trips(const scenario::Scenario& s) {
  const auto& entry = scenario::scheme_of(s);
  CHECK(entry.build_plan(s).scheme == entry.name);
  auto doc = s.resolved;
  doc["parallel"] = entry.to_json(*s.parallel);
  const auto back = scenario::parse_scenario(doc, "back.json");
  CHECK(back.scheme == &entry);
  CHECK(entry.label(*back.parallel, s.training.recompute) == entry.label(*s.parallel, s.training.recompute));
  const auto cells = entry.to_csv(*s.parallel);
  REQUIRE(cells.size() == entry.csv_columns.size());
  const scenario::CsvCells read{
      [&](std::string_view column) {
        for (std::size_t i = 0; i < cells.size(); ++i)
          if (entry.csv_columns[i] == column) return cells[i];
        return std::string();
      },
      [](std::string_view column, const std::string& why) { throw InputError("t.csv", std::string(column), why); }};
  const auto from_csv = entry.from_csv(read);
  CHECK_FALSE(entry.less(*from_csv, *s.parallel));
  CHECK_FALSE(entry.less(*s.parallel, *from_csv));
  // Every enumerated configuration is distinct, in a strict order of `less` or the recompute.
  std::size_t configs = 0;
  bool has_own = false;
  entry.enumerate(s, [&](const scenario::TuneChoice& c) {
    ++configs;
    has_own |= !entry.less(*c.config, *s.parallel) && !entry.less(*s.parallel, *c.config);
  });
  CHECK(configs > 1);
  CHECK(has_own);
}

}  // namespace

TEST_CASE("the scheme table lists every scheme once", "[unit]") {
  const auto table = scenario::schemes();
  REQUIRE(table.size() == 3);
  CHECK(table[0].name == "axonn4d");
  CHECK(table[1].name == "megatron");
  CHECK(table[2].name == "fsdp");
  for (const auto& entry : table) {
    CHECK(scenario::find_scheme(entry.name) == &entry);
    CHECK(&table[scenario::scheme_index(entry)] == &entry);
  }
  CHECK(scenario::find_scheme("zero3") == nullptr);
  CHECK(scenario::scheme_names() == "axonn4d, megatron, fsdp");
  CHECK(scenario::scheme_list(&scenario::Scheme::title) == "AxoNN 4D, Megatron and FSDP");
}

TEST_CASE("a tune.csv cell that is not the entry's type fails naming its column", "[unit]") {
  const scenario::CsvCells cells{
      [](std::string_view column) { return std::string(column == "gx" ? "0" : "2"); },
      [](std::string_view column, const std::string& why) { throw InputError("t.csv", std::string(column), why); }};
  CHECK_THROWS_WITH(scenario::find_scheme("axonn4d")->from_csv(cells),
                    Catch::Contains("gx: '0' is not an integer from 1 to"));
  CHECK_THROWS_WITH(scenario::find_scheme("megatron")->from_csv(cells),
                    Catch::Contains("sequence_parallel: '2' is not true or false"));
}

TEST_CASE("an unknown parallel.scheme is an InputError listing the table", "[unit]") {
  auto doc = axonn_doc();
  doc["parallel"]["scheme"] = "zero3";
  CHECK_THROWS_WITH(scenario::parse_scenario(doc, "s.json"),
                    Catch::Contains("s.json: parallel.scheme: 'zero3' is not one of: axonn4d, megatron, fsdp"));
  doc["parallel"].erase("scheme");
  CHECK_THROWS_AS(scenario::parse_scenario(doc, "s.json"), InputError);
}

TEST_CASE("the axonn4d entry loads, plans and estimates as the AxoNN functions do", "[unit]") {
  const auto s = scenario::parse_scenario(axonn_doc(), "s.json");
  CHECK(s.scheme->name == "axonn4d");
  CHECK_FALSE(s.scheme->name == "megatron");
  const auto& entry = scenario::scheme_of(s);
  const auto& grid = scenario::parallel_as<schedule::Axonn4DConfig>(s);
  CHECK(grid.gdata == 8);
  CHECK_THROWS_AS(scenario::parallel_as<schedule::MegatronConfig>(s), std::logic_error);
  check_same_plan(entry.build_plan(s), schedule::build_axonn4d_plan(s.model, grid, s.training, s.overlap));
  check_same_memory(entry.memory_per_gpu(s), schedule::estimate_axonn4d_memory(s.model, grid, s.training));
  check_same_memory(scenario::memory_per_gpu(s), schedule::estimate_axonn4d_memory(s.model, grid, s.training));
  CHECK(entry.label(*s.parallel, s.training.recompute) == "gx=2 gy=2 gz=2 gdata=8");
  CHECK(entry.uniform_plan != nullptr);
  check_round_trips(s);
  const auto layout = entry.describe(s);
  REQUIRE(layout.size() == 4);
  CHECK(layout[0].name == "gx");
  CHECK(layout[3].name == "gdata");
  CHECK(std::get<std::int64_t>(layout[3].value) == 8);
  const auto flops = entry.flops(s);
  CHECK(flops.hardware > flops.model);  // full recomputation adds a forward pass
}

TEST_CASE("the megatron entry loads, plans and estimates as the Megatron functions do", "[unit]") {
  const auto s = scenario::parse_scenario(megatron_doc(), "s.json");
  CHECK(s.scheme->name == "megatron");
  const auto& entry = scenario::scheme_of(s);
  const auto& m = scenario::parallel_as<schedule::MegatronConfig>(s);
  CHECK(m.tp == 2);
  CHECK(m.zero == 1);
  check_same_plan(entry.build_plan(s), schedule::build_megatron_plan(s.model, m, s.training, s.overlap));
  check_same_memory(entry.memory_per_gpu(s), schedule::estimate_megatron_memory(s.model, m, s.training));
  CHECK(entry.label(*s.parallel, s.training.recompute) == "tp=2 pp=2 dp=4 zero=1 mb=2 v=1 sp=on recompute=selective");
  CHECK(entry.uniform_plan == nullptr);
  check_round_trips(s);
  const auto layout = entry.describe(s);
  REQUIRE(layout.size() == 8);
  CHECK(layout[0].name == "tp");
  CHECK(std::get<std::int64_t>(layout[0].value) == 2);
  CHECK(layout[6].name == "sequence_parallel");
  CHECK(std::get<bool>(layout[6].value));
}

TEST_CASE("each entry checks its own keys and feasibility", "[unit]") {
  auto axonn = axonn_doc();
  axonn["parallel"]["tp"] = 2;  // a Megatron key
  CHECK_THROWS_AS(scenario::parse_scenario(axonn, "s.json"), InputError);
  auto megatron = megatron_doc();
  megatron["parallel"]["dp"] = 3;  // tp*pp*dp != gpus
  CHECK_THROWS_AS(scenario::parse_scenario(megatron, "s.json"), InputError);
}

TEST_CASE("the megatron entry runs a mixture of experts: ep, etp, refusals naming the field", "[unit]") {
  auto doc = nlohmann::json::parse(R"({
    "machine": "simple-a100", "model": "mixtral-8x7b", "gpus": 16,
    "parallel": {"scheme": "megatron", "tp": 2, "pp": 1, "dp": 8, "ep": 4, "zero": 1, "micro_batch": 1,
                 "sequence_parallel": true},
    "training": {"global_batch": 16, "recompute": "full"}})");
  const auto s = scenario::parse_scenario(doc, "s.json");
  const auto& entry = scenario::scheme_of(s);
  const auto& m = scenario::parallel_as<schedule::MegatronConfig>(s);
  CHECK(m.ep == 4);
  CHECK(m.expert_tp() == 2);  // etp defaults to tp
  CHECK(entry.label(*s.parallel, s.training.recompute) == "tp=2 pp=1 dp=8 zero=1 mb=1 v=1 sp=on ep=4 recompute=full");
  check_round_trips(s);
  const auto layout = entry.describe(s);
  REQUIRE(layout.size() == 10);
  CHECK(layout[8].name == "ep");
  CHECK(layout[9].name == "etp");
  // Model flops count 2 of the 8 experts: the active parameters, not the total.
  const auto flops = entry.flops(s);
  CHECK(flops.model < 6.0 * 16 * 4096 * s.model.parameters() / 2);
  // tune walks ep over the divisors of dp that divide the experts: 1, 2, 4, 8 of dp = 8.
  std::set<std::uint32_t> eps;
  entry.enumerate(s, [&](const scenario::TuneChoice& c) {
    eps.insert(scenario::config_as<schedule::MegatronConfig>(*c.config).ep);
  });
  CHECK(eps == std::set<std::uint32_t>{1, 2, 4, 8});

  const auto field_of = [&](const char* key, nlohmann::json value, const char* section = "parallel") {
    auto bad = doc;
    bad[section][key] = std::move(value);
    try {
      (void)scenario::parse_scenario(bad, "s.json");
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string();
  };
  CHECK(field_of("ep", 3) == "parallel.ep");  // does not divide dp x tp / etp, nor the 8 experts
  CHECK(field_of("ep", 16) == "parallel.ep");
  CHECK(field_of("etp", 4) == "parallel.etp");  // does not divide tp
  CHECK(field_of("sequence_parallel", false) == "parallel.sequence_parallel");
  CHECK(field_of("zero", 3) == "parallel.zero");
  auto dense = megatron_doc();
  dense["parallel"]["ep"] = 2;
  CHECK_THROWS_WITH(scenario::parse_scenario(dense, "s.json"), Catch::Contains("parallel.ep"));
  auto axonn = axonn_doc();
  axonn["model"] = "mixtral-8x7b";
  CHECK_THROWS_WITH(scenario::parse_scenario(axonn, "s.json"), Catch::Contains("model.experts"));
}

TEST_CASE("the megatron entry reads, writes, describes and tunes context parallelism", "[unit]") {
  auto doc = megatron_doc();
  doc["gpus"] = 32;
  doc["parallel"]["cp"] = 2;
  doc["parallel"]["cp_comm"] = "all_gather";
  const auto s = scenario::parse_scenario(doc, "s.json");
  const auto& entry = scenario::scheme_of(s);
  const auto& m = scenario::parallel_as<schedule::MegatronConfig>(s);
  CHECK(m.cp == 2);
  CHECK(m.cp_comm == schedule::CpComm::AllGather);
  CHECK(entry.label(*s.parallel, s.training.recompute) ==
        "tp=2 cp=2 pp=2 dp=4 zero=1 mb=2 v=1 sp=on recompute=selective");
  const auto json = entry.to_json(*s.parallel);
  CHECK(json["cp"] == 2);
  CHECK(json["cp_comm"] == "all_gather");
  check_round_trips(s);
  const auto layout = entry.describe(s);
  REQUIRE(layout.size() == 10);
  CHECK(layout[1].name == "cp");
  CHECK(scenario::shown(layout[1]) == "2");
  CHECK(layout.back().name == "cp_comm");
  CHECK(scenario::shown(layout.back()) == "all_gather");
  // Without CP, nothing of it is written or described: runs before it read as they did.
  const auto plain = scenario::parse_scenario(megatron_doc(), "s.json");
  CHECK_FALSE(entry.to_json(*plain.parallel).contains("cp"));
  CHECK_FALSE(entry.to_json(*plain.parallel).contains("cp_comm"));
  // Tune tries the CP degrees whose 2 cp chunks divide gpt-5b's 2048 tokens, up to 16.
  std::set<std::uint32_t> cps;
  entry.enumerate(s, [&](const scenario::TuneChoice& c) {
    const auto& config = scenario::config_as<schedule::MegatronConfig>(*c.config);
    cps.insert(config.cp);
    CHECK(config.cp_comm == schedule::CpComm::AllGather);  // not searched: the scenario's
    CHECK(config.gpus() == 32);
  });
  CHECK(cps == std::set<std::uint32_t>{1, 2, 4, 8, 16});
}

TEST_CASE("bad context-parallel inputs exit naming parallel.cp, parallel.cp_comm or gpus", "[unit]") {
  auto with = [](const char* key, const nlohmann::json& value, int gpus) {
    auto doc = megatron_doc();
    doc["gpus"] = gpus;
    doc["parallel"]["cp"] = 2;
    doc["parallel"][key] = value;
    return doc;
  };
  CHECK_THROWS_WITH(scenario::parse_scenario(with("cp_comm", "a2a", 32), "s.json"),
                    Catch::Contains("s.json: parallel.cp_comm:") && Catch::Contains("all_gather"));
  CHECK_THROWS_WITH(scenario::parse_scenario(with("cp", 3, 48), "s.json"),
                    Catch::Contains("s.json: parallel.cp:") && Catch::Contains("2 x cp = 6 chunks"));
  CHECK_THROWS_WITH(scenario::parse_scenario(with("cp", 2, 16), "s.json"),
                    Catch::Contains("s.json: gpus: tp*cp*pp*dp = 32"));
  auto standard = with("cp", 2, 32);
  standard["training"]["attention"] = "standard";
  CHECK_THROWS_WITH(scenario::parse_scenario(standard, "s.json"),
                    Catch::Contains("s.json: parallel.cp:") && Catch::Contains("training.attention flash"));
}

TEST_CASE("the fsdp entry loads, plans and estimates as the FSDP functions do", "[unit]") {
  const auto s = scenario::parse_scenario(fsdp_doc(), "s.json");
  CHECK(s.scheme->name == "fsdp");
  const auto& entry = scenario::scheme_of(s);
  const auto& c = scenario::parallel_as<schedule::FsdpConfig>(s);
  CHECK(c.shard == 8);
  CHECK(c.replicas == 2);
  CHECK(c.prefetch);
  CHECK(c.reshard_after_forward);
  check_same_plan(entry.build_plan(s), schedule::build_fsdp_plan(s.model, c, s.training));
  check_same_memory(entry.memory_per_gpu(s), schedule::estimate_fsdp_memory(s.model, c, s.training));
  CHECK(entry.label(*s.parallel, s.training.recompute) == "shard=8 replicas=2 mb=2 reshard=on recompute=selective");
  CHECK(entry.uniform_plan != nullptr);
  CHECK(entry.layer_unit(s) == 1);
  CHECK(entry.rank_layer_passes(s) == 2.0 * static_cast<double>(s.model.layers));  // 64 / 16 / 2 micro-batches
  check_round_trips(s);
  const auto layout = entry.describe(s);
  REQUIRE(layout.size() == 6);
  CHECK(layout[0].name == "dp");
  CHECK(std::get<std::int64_t>(layout[0].value) == 16);
  CHECK(layout[2].name == "replicas");
  CHECK(std::get<std::int64_t>(layout[2].value) == 2);
  CHECK(layout[5].name == "reshard_after_forward");
}

TEST_CASE("fsdp defaults to full sharding and one micro-batch of the GPU's sequences", "[unit]") {
  auto doc = fsdp_doc();
  doc["parallel"] = {{"scheme", "fsdp"}, {"prefetch", false}, {"reshard_after_forward", false}};
  const auto s = scenario::parse_scenario(doc, "s.json");
  const auto& c = scenario::parallel_as<schedule::FsdpConfig>(s);
  CHECK(c.shard == 16);
  CHECK(c.replicas == 1);
  CHECK(c.micro_batch == 4);
  CHECK_FALSE(c.prefetch);
  CHECK_FALSE(c.reshard_after_forward);
  CHECK(scenario::scheme_of(s).label(*s.parallel, s.training.recompute) ==
        "shard=16 replicas=1 mb=4 reshard=off prefetch=off recompute=selective");
  check_round_trips(s);
}

TEST_CASE("bad fsdp values are InputErrors naming the field", "[unit]") {
  const auto fails = [](const char* key, const nlohmann::json& value, const char* field) {
    auto doc = fsdp_doc();
    if (std::string(key).rfind("training.", 0) == 0)
      doc["training"][std::string(key).substr(9)] = value;
    else
      doc["parallel"][key] = value;
    try {
      (void)scenario::parse_scenario(doc, "s.json");
      FAIL("accepted " << key << " = " << value.dump());
    } catch (const InputError& e) {
      CHECK(e.field() == field);
      CHECK_THAT(e.what(), Catch::StartsWith(std::string("s.json: ") + field + ": "));
    }
  };
  fails("shard", 3, "parallel.shard");  // does not divide 16 GPUs
  fails("shard", 32, "parallel.shard");
  fails("shard", 0, "parallel.shard");
  fails("shard", "all", "parallel.shard");
  fails("micro_batch", 3, "parallel.micro_batch");  // does not divide 4 sequences per GPU
  fails("micro_batch", 0, "parallel.micro_batch");
  fails("prefetch", 1, "parallel.prefetch");
  fails("reshard_after_forward", "yes", "parallel.reshard_after_forward");
  fails("tp", 2, "parallel.tp");                                // not an FSDP key
  fails("training.global_batch", 40, "training.global_batch");  // not a multiple of 16 GPUs
}

TEST_CASE("fsdp tune candidates are whole nodes of shards x micro-batches x resharding x recompute", "[unit]") {
  CHECK(scenario::fsdp_shard_sizes(64, 8) == std::vector<std::uint32_t>{8, 16, 32, 64});
  CHECK(scenario::fsdp_shard_sizes(96, 8) == std::vector<std::uint32_t>{8, 16, 24, 32, 48, 96});
  CHECK(scenario::fsdp_shard_sizes(4, 8) == std::vector<std::uint32_t>{4});
  const auto s = scenario::parse_scenario(fsdp_doc(), "s.json");  // simple-a100: 4 GPUs a node
  std::size_t n = 0;
  scenario::scheme_of(s).enumerate(s, [&](const scenario::TuneChoice&) { ++n; });
  CHECK(n == 3 * 3 * 2 * 3);  // shard 4, 8, 16; micro_batch 1, 2, 4; reshard on, off; three recompute modes
}
