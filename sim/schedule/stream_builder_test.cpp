#include "sim/schedule/stream_builder.hpp"

#include <catch2/catch.hpp>

using namespace exasim::schedule;

TEST_CASE("StreamBuilder::start puts the Send/Recv peer on the CollStart and on its Wait", "[unit]") {
  Plan plan;
  plan.grid = ProcessGrid({{"a", 4}, {"b", 1}});
  plan.streams.resize(1);
  StreamBuilder out(plan, plan.streams[0]);
  Handle send = out.start("send", CollKind::Send, 0, 100, -1);
  Handle recv = out.start("recv", CollKind::Recv, 0, 100, +3);
  out.wait(send);
  out.wait(recv);
  Handle reused = out.start("all_reduce", CollKind::AllReduce, 0, 100);  // takes a freed slot
  out.wait(reused);
  CHECK(out.start("alone", CollKind::Send, 1, 100, 1) == StreamBuilder::kNoHandle);  // group of one: no op

  const auto& ops = plan.streams[0].ops;
  REQUIRE(ops.size() == 6);
  CHECK(ops[0].type == OpType::CollStart);
  CHECK(ops[0].peer == -1);
  CHECK(ops[1].peer == 3);
  CHECK(ops[2].type == OpType::Wait);
  CHECK(ops[2].slot == ops[0].slot);
  CHECK(ops[2].peer == -1);
  CHECK(ops[3].type == OpType::Wait);
  CHECK(ops[3].peer == 3);
  CHECK(ops[4].peer == 0);  // the default: collectives have no peer, even on a slot a Send used
  CHECK(ops[5].peer == 0);
  CHECK(plan.streams[0].slots == 2);
}

TEST_CASE("StreamBuilder refuses more collectives in flight than its 16-bit handles hold", "[unit]") {
  // Handles are 16 bits and 0xffff is kNoHandle: 65535 open collectives wrapped round to slot 0 and the
  // runtime read another rank's state (a SIGSEGV at 100,000 layers on 64 GPUs).
  Plan plan;
  plan.grid = ProcessGrid({{"a", 4}});
  plan.streams.resize(1);
  StreamBuilder out(plan, plan.streams[0]);
  for (int i = 0; i < 0xffff; ++i) (void)out.start("open", CollKind::AllReduce, 0, 100);
  CHECK_THROWS_WITH(out.start("one too many", CollKind::AllReduce, 0, 100),
                    Catch::Contains("more than 65535 collectives in flight on one rank"));
}
