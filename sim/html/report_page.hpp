#pragma once
// `exasim report`: one self-contained HTML page (inline CSS, SVG drawn here, a little vanilla JS for
// zoom and hover; no network, opens from disk) from the folder a command wrote:
//  - `simulate --out DIR` (summary.json; trace.csv, links.csv when present): the summary (time,
//    TFLOP/s, % of peak, a memory bar), where the time goes per dimension, compute per kernel class, a
//    zoomable per-rank timeline of the traced ranks (internal/timeline.hpp), and with --links the link
//    classes, the hottest links and, on networks with groups, the group x group matrix;
//  - `sweep --out DIR` (sweep.json): iteration time, TFLOP/s per GPU and scaling efficiency (or % of
//    peak and MFU when the GPU count does not vary) against the GPU count or the first varied field,
//    one series per combination of the other varied fields (grouped bars when the x values are names),
//    and the rows (internal/sweep_page.cpp);
//  - `tune --out DIR` (tune.csv; best.json names the job): the simulated grids ranked on a seconds
//    axis, with % of peak and MFU and their analytic estimates (internal/tune_page.cpp);
//  - `place --out DIR` (place.csv; scenario.json names the job, place_network.json the network): the
//    simulated placements ranked, the plan first, each against the packed (or scheduler) baseline; the
//    hot links and group pairs of the plan and the baseline, and a map of the groups the ranks sit in
//    (internal/place_page.cpp);
//  - `job --out DIR` (job.json, beside the iteration's summary.json): time to train, goodput, energy and
//    cost, goodput over the checkpoint interval with Young's, Daly's and the searched optimum marked, and
//    the what-if table (internal/job_page.cpp).
// The page is byte-identical for the same folder (fixed number formats, no dates), and its script
// records any JavaScript error or console.error in an element (#js-status) that the browser test reads.
//
// LIMITATIONS: the timeline draws at most `max_timeline_ranks` ranks and `max_timeline_blocks` blocks
// (the page says how many rows it merged or left out); one folder is one kind (job.json first, then summary.json, then
// sweep.json, then tune.csv, then place.csv); `compare` output (a Chrome trace) is not read: open it in
// Perfetto.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace exasim::html {

enum class FolderKind { simulate, sweep, tune, place, job };

[[nodiscard]] const char* to_string(FolderKind kind);

/// What `dir` holds; InputError naming the folder and the files looked for when it is none of them.
[[nodiscard]] FolderKind detect_folder(const std::filesystem::path& dir);

struct ReportOptions {
  std::size_t max_timeline_blocks = 4000;
  std::size_t max_timeline_ranks = 16;
};

struct ReportPage {
  FolderKind kind = FolderKind::simulate;
  std::string title;                ///< the scenario's name; tune and place: the job simulated
  std::string html;                 ///< the whole page
  std::vector<std::string> charts;  ///< ids of the charts drawn, in page order
  std::vector<std::string> notes;   ///< one line each: what was left out or reduced, and why
  std::size_t trace_rows = 0;       ///< timeline: rows of the drawn ranks
  std::size_t timeline_blocks = 0;  ///< timeline: blocks drawn
};

/// Reads the folder and builds the page. Malformed files are InputErrors naming the file and field.
[[nodiscard]] ReportPage render_report(const std::filesystem::path& dir, const ReportOptions& options = {});

}  // namespace exasim::html
