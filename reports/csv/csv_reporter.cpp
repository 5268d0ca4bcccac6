// results.csv: one row per point (RFC 4180: CRLF line ends, quoted fields where needed), and
// beside it one file per table of the report content's data tables (<name>.csv).
#include <fstream>

#include "model/atomic_file.hpp"
#include "reports/common/report_data.hpp"
#include "reports/common/text.hpp"
#include "reports/reporter.hpp"

namespace speedlab::reports {

namespace {

// The column list is part of the documented interface (docs/results-schema.md).
constexpr const char* columns[] = {
    "id", "workload", "variant", "kind", "params", "status", "median_ns", "q1_ns", "q3_ns", "ci_low_ns",
    "ci_high_ns", "mean_ns", "stddev_ns", "min_ns", "max_ns", "samples", "gb_per_s", "gflop_per_s",
    "split_kernel_ns", "split_h2d_ns", "split_d2h_ns", "split_copy_other_ns", "split_memset_ns",
    "split_sync_ns", "split_api_ns", "split_host_ns", "split_wall_ns", "items_per_s", "threads",
    "expected_invalid", "reason"};

std::filesystem::path write_data_table(const data_table& tb, const std::filesystem::path& dir) {
  const auto path = dir / (tb.name + ".csv");
  atomic_file file(path);
  std::ofstream& out = file.stream();
  for (std::size_t i = 0; i < tb.header.size(); ++i) out << (i ? "," : "") << tb.header[i];
  out << "\r\n";
  for (const auto& r : tb.rows) {
    for (std::size_t i = 0; i < r.size(); ++i) out << (i ? "," : "") << csv_field(r[i]);
    out << "\r\n";
  }
  file.commit();
  return path;
}

std::string params_field(const point_result& p) {
  std::string s;
  for (const auto& [k, v] : p.params) {
    if (!s.empty()) s += ';';
    s += k + '=' + v;
  }
  return s;
}

class csv_reporter final : public reporter {
public:
  csv_reporter() : reporter("csv", "results.csv: one row per point, statistics, rates, time split") {}
  std::vector<std::filesystem::path> write(const report_input& in, const std::filesystem::path& dir) override {
    const auto path = dir / "results.csv";
    atomic_file file(path);
    std::ofstream& out = file.stream();
    bool first = true;
    for (const char* c : columns) {
      out << (first ? "" : ",") << c;
      first = false;
    }
    out << "\r\n";
    for (const auto& p : in.points) {
      std::vector<std::string> row;
      auto num = [&row](double v) { row.push_back(fmt_exact(v)); };
      auto opt = [&row](bool have, double v) { row.push_back(have ? fmt_exact(v) : std::string()); };
      row.push_back(p.id);
      row.push_back(p.workload);
      row.push_back(p.variant);
      row.push_back(p.kind ? to_string(*p.kind) : "");
      row.push_back(params_field(p));
      row.push_back(to_string(p.status));
      const bool stats = p.wall.count > 0;
      for (double v : {p.wall.median, p.wall.q1, p.wall.q3, p.wall.ci_low, p.wall.ci_high, p.wall.mean,
                       p.wall.stddev, p.wall.min, p.wall.max})
        opt(stats, v);
      num(static_cast<double>(p.wall.count));
      opt(wall_gbps(p) > 0, wall_gbps(p));
      opt(wall_gflops(p) > 0, wall_gflops(p));
      const auto& s = p.split_median;
      for (double time_split::*part : {&time_split::kernel, &time_split::h2d, &time_split::d2h,
                                       &time_split::copy_other, &time_split::memset, &time_split::sync,
                                       &time_split::api, &time_split::host, &time_split::wall_ns})
        opt(s.has_value(), s ? (*s).*part : 0);
      opt(wall_items_per_s(p) > 0, wall_items_per_s(p));
      num(p.threads);
      row.push_back(p.expected_invalid ? "true" : "false");
      row.push_back(p.reason);
      for (std::size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << csv_field(row[i]);
      out << "\r\n";
    }
    file.commit();
    std::vector<std::filesystem::path> written{path};
    for (const auto& tb : in.content.data_tables) written.push_back(write_data_table(tb, dir));
    return written;
  }
};

} // namespace

std::unique_ptr<reporter> make_csv_reporter() { return std::make_unique<csv_reporter>(); }

} // namespace speedlab::reports
