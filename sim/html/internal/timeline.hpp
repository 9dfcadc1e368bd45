#pragma once
// The report's per-rank timeline: trace rows (traces/SCHEMA.md) turned into the blocks the page draws.
// Each traced rank gets a work lane (its compute kernels and its waits, which never overlap: a wait is
// the time the rank was blocked on a collective or a pipeline transfer of one dimension) and a
// communication lane (collectives and Send/Recv from post to completion, which overlap compute and
// each other, packed into up to three sub-lanes). Idle time is left blank: the pipeline bubble shows
// as pp waits at the start and end of a stage's schedule, and as blank where a rank has nothing to do.
//
// A page must stay small enough to open (a 512-GPU Megatron rank has ~70,000 rows), so each rank gets an
// equal share of `max_blocks`; over it, blocks are reduced in steps, each said on the page:
//  1. neighbours of the same kind (same compute kind, or same wait/collective dimension) less than
//     1/64,000 of the iteration apart are merged (invisible at the deepest zoom of 64x on 1,000 px);
//  2. the compute kinds are merged together ("compute"), and merged again;
//  3. neighbours of any kind are coarsened into spans of 1/1000 of the iteration (a pixel at full
//     zoom-out), then 2/1000, 4/1000, ... until the rank fits; a span takes the colour of the kind that
//     holds most of its time and says so on hover ("mostly gemm (83%)"). Gaps stay blank, so idle time
//     and the pipeline bubble stay visible.
//
// LIMITATIONS: at most `max_ranks` ranks (the first by number); collectives beyond three overlapping
// ones share the third sub-lane; merged blocks name their first and last op only.

#include "traces/trace.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace exasim::html::internal {

struct Block {
  double t0 = 0, t1 = 0;
  std::string key;    ///< "gemm", "attention", "memory", "compute" (merged kinds), "wait:DIM", "comm:DIM"
  std::string first;  ///< the first op's name
  std::string last;   ///< the last op's name (merged blocks)
  std::size_t count = 1;
  double mostly = 1;  ///< coarsened blocks: the share of their time that `key` holds
  int sublane = 0;    ///< communication lane only
};

struct RankLanes {
  std::uint32_t rank = 0;
  std::vector<Block> work;  ///< compute and waits, by start time
  std::vector<Block> comm;  ///< collectives and transfers, by start time
  int comm_sublanes = 0;
};

struct Timeline {
  std::vector<RankLanes> ranks;
  double end_s = 0;                ///< the time axis: the iteration time (or the last row's end)
  std::size_t rows = 0;            ///< rows of the traced ranks drawn
  std::size_t ranks_in_trace = 0;  ///< ranks the trace holds (drawn: ranks.size())
  std::size_t blocks = 0;          ///< blocks drawn
  int reduction_step = 0;          ///< 0: every row drawn; else the last step of the header applied
  std::vector<std::string> dims;   ///< dimensions seen, in order of first appearance
  std::vector<std::string> kinds;  ///< compute kinds seen (gemm, attention, memory)
};

/// `iteration_s` <= 0: the axis ends at the last row's end.
[[nodiscard]] Timeline build_timeline(const std::vector<trace::TraceRow>& rows, double iteration_s,
                                      std::size_t max_blocks, std::size_t max_ranks);

/// The SVG (id "timeline") with its axis, rank labels and legend; the page's script zooms it.
[[nodiscard]] std::string timeline_svg(const Timeline& t);

}  // namespace exasim::html::internal
