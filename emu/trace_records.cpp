#include "emu/trace_records.hpp"

#include "sim/report/trace_collector.hpp"

#include <unistd.h>  // getpid

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace exasim::emu {

std::vector<trace::TraceRow> rows_of(const schedule::Plan& plan, const std::vector<OpRecord>& records) {
  // The simulator's collector does the naming and sorting: measured and simulated traces are then
  // built by the same code.
  report::TraceCollector collector(plan);
  auto observe = collector.observer();
  for (const auto& r : records) observe(r.rank, r.op_index, r.t_start_s, r.t_end_s);
  return collector.rows();
}

void publish_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::string temp = path + ".partial." + std::to_string(::getpid());
  try {
    {
      std::ofstream out(temp);
      if (!out) throw std::runtime_error("cannot write " + temp);
      write(out);
      out.flush();
      if (!out) throw std::runtime_error("error while writing " + temp);
    }
    std::filesystem::rename(temp, path);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw;
  }
}

void publish_trace_csv(const std::string& path, const std::vector<trace::TraceRow>& rows) {
  // trace::write_csv writes a named file; write it under the temporary name, then rename.
  const std::string temp = path + ".partial." + std::to_string(::getpid());
  try {
    trace::write_csv(temp, rows);
    std::filesystem::rename(temp, path);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw;
  }
}

}  // namespace exasim::emu
