#include "traces/trace.hpp"

#include "sim/core/error.hpp"
#include "sim/core/fccp_csv.hpp"

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <stdexcept>

namespace exasim::trace {

namespace {
constexpr const char* kHeader = "rank,op,kind,dim,bytes,flops,t_start_s,t_end_s";
}

void write_csv(const std::string& path, const std::vector<TraceRow>& rows) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << kHeader << '\n' << std::setprecision(17);
  for (const auto& r : rows) {
    out << r.rank << ',' << r.op << ',' << r.kind << ',' << r.dim << ',' << r.bytes << ',' << r.flops << ','
        << r.t_start_s << ',' << r.t_end_s << '\n';
  }
  if (!out) throw std::runtime_error("error while writing " + path);
}

std::vector<TraceRow> read_csv(const std::string& path) {
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
      if (r.t_end_s < r.t_start_s)
        throw InputError(path, "line " + std::to_string(in.get_file_line()), "t_end_s is before t_start_s");
      rows.push_back(r);
    }
  } catch (const io::error::base& e) {
    throw InputError(path, "", std::string("malformed trace CSV: ") + e.what());
  }
  return rows;
}

}  // namespace exasim::trace
