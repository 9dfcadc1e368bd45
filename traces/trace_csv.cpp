#include "traces/trace.hpp"

#include "sim/core/error.hpp"
#include "sim/core/fccp_csv.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/output_files.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <stdexcept>

namespace exasim::trace {

namespace {
constexpr const char* kHeader = "rank,op,kind,dim,bytes,flops,t_start_s,t_end_s";
}

void write_csv(const std::string& path, const std::vector<TraceRow>& rows) {
  write_stream_checked(path, [&](std::ostream& out) {
    out << kHeader << '\n' << std::setprecision(17);
    for (const auto& r : rows) {
      out << r.rank << ',' << r.op << ',' << r.kind << ',' << r.dim << ',' << r.bytes << ',' << r.flops << ','
          << r.t_start_s << ',' << r.t_end_s << '\n';
    }
  });
}

std::vector<TraceRow> read_csv(const std::string& path) {
  require_regular_file(path, "a trace");  // the CSV reader opens the file itself: a FIFO would block it
  const auto limits = input_limits();
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) > limits.max_bytes)
    throw InputError(path, "",
                     "larger than " + std::to_string(limits.max_bytes) +
                         " bytes, the most exasim reads from one file (set EXASIM_MAX_INPUT_BYTES to raise the limit)");
  std::vector<TraceRow> rows;
  try {
    io::CSVReader<8, io::trim_chars<' ', '\t'>, io::no_quote_escape<','>, io::throw_on_overflow> in(path);
    in.read_header(io::ignore_no_column, "rank", "op", "kind", "dim", "bytes", "flops", "t_start_s", "t_end_s");
    for (const char* column : {"rank", "op", "kind", "dim", "bytes", "flops", "t_start_s", "t_end_s"}) {
      if (!in.has_column(column))
        throw InputError(path, column, "missing column (header must be: " + std::string(kHeader) + ")");
    }
    TraceRow r;
    while (in.read_row(r.rank, r.op, r.kind, r.dim, r.bytes, r.flops, r.t_start_s, r.t_end_s)) {
      const std::string line = "line " + std::to_string(in.get_file_line());
      // Finite and within bounds no simulated run reaches: a negative, NaN or 1e308 value would print
      // as null or inf further on.
      const auto check = [&](double v, double hi, const char* field, const char* allowed) {
        if (!(v >= 0 && v <= hi)) throw InputError(path, line + ": " + field, std::string("must be ") + allowed);
      };
      check(r.bytes, 1e18, "bytes", "a byte count in [0, 1e18]");
      check(r.flops, 1e24, "flops", "a FLOP count in [0, 1e24]");
      check(r.t_start_s, 1e7, "t_start_s", "a time in [0, 1e7] seconds");
      check(r.t_end_s, 1e7, "t_end_s", "a time in [0, 1e7] seconds");
      if (r.t_end_s < r.t_start_s) throw InputError(path, line, "t_end_s is before t_start_s");
      if (rows.size() >= limits.max_events) too_many_events(path, limits.max_events);
      rows.push_back(r);
    }
  } catch (const io::error::base& e) {
    throw InputError(path, "", std::string("malformed trace CSV: ") + e.what());
  }
  return rows;
}

}  // namespace exasim::trace
