// Compact JSON for trace::device_trace: each record is an array (column order listed once
// under "columns"), and every name is an index into one "strings" table, so a trace of
// 100000 launches of one kernel stores the kernel's name once. Round trip is exact: all
// integers are kept as JSON integers, no times are rescaled.
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/trace.hpp"

namespace speedlab::trace {
namespace {

using nlohmann::json;

constexpr int trace_format_version = 1;

const json& columns() {
  static const json c = {
      {"kernels", {"start", "end", "device", "context", "stream", "correlation", "name", "mangled_name", "grid_x",
                   "grid_y", "grid_z", "block_x", "block_y", "block_z", "registers_per_thread", "static_shared_bytes",
                   "dynamic_shared_bytes", "local_bytes_per_thread"}},
      {"memcpys", {"start", "end", "device", "context", "stream", "correlation", "bytes", "copy_kind", "src_kind",
                   "dst_kind", "async"}},
      {"memsets", {"start", "end", "device", "context", "stream", "correlation", "bytes", "value", "memory_kind"}},
      {"api_calls", {"start", "end", "process", "thread", "correlation", "callback_id", "name", "driver", "return_value"}},
      {"syncs", {"start", "end", "context", "stream", "correlation", "type"}},
      {"ranges", {"start", "end", "process", "thread", "domain", "name"}},
      {"overheads", {"start", "end", "kind"}},
      {"repetitions", {"start", "end", "transfer_in_end", "compute_end"}},
  };
  return c;
}

class string_table {
public:
  std::size_t id(const std::string& s) {
    auto [it, inserted] = m_ids.try_emplace(s, m_strings.size());
    if (inserted) m_strings.push_back(s);
    return it->second;
  }
  json to_json() && { return json(std::move(m_strings)); }

private:
  std::unordered_map<std::string, std::size_t> m_ids;
  std::vector<std::string> m_strings;
};

// Reads one record row with bounds and type checks, so a malformed file fails clearly.
class row_reader {
public:
  row_reader(const json& row, const std::vector<std::string>& strings, const char* table, std::size_t columns)
      : m_row(row), m_strings(strings), m_table(table) {
    if (!row.is_array() || row.size() != columns)
      throw std::runtime_error(fmt::format("device trace: a '{}' record must be an array of {} values", table, columns));
  }
  template <class T>
  T num() {
    return m_row.at(m_index++).get<T>();
  }
  bool flag() { return m_row.at(m_index++).get<bool>(); }
  std::string str() {
    const auto i = m_row.at(m_index++).get<std::size_t>();
    if (i >= m_strings.size())
      throw std::runtime_error(fmt::format("device trace: '{}' record names string {} of {}", m_table, i, m_strings.size()));
    return m_strings[i];
  }

private:
  const json& m_row;
  const std::vector<std::string>& m_strings;
  const char* m_table;
  std::size_t m_index = 0;
};

template <class Record, class ReadFn>
void read_table(const json& j, const char* table, const std::vector<std::string>& strings, std::vector<Record>& out,
                ReadFn&& read) {
  out.clear();
  auto it = j.find(table);
  if (it == j.end()) return;
  const std::size_t width = columns().at(table).size();
  out.reserve(it->size());
  for (const auto& row : *it) {
    row_reader r(row, strings, table, width);
    out.push_back(read(r));
  }
}

} // namespace

void to_json(json& j, const device_trace& t) {
  string_table strings;
  json kernels = json::array();
  for (const auto& k : t.kernels)
    kernels.push_back({k.start, k.end, k.device, k.context, k.stream, k.correlation, strings.id(k.name),
                       strings.id(k.mangled_name), k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2],
                       k.registers_per_thread, k.static_shared_bytes, k.dynamic_shared_bytes, k.local_bytes_per_thread});
  json memcpys = json::array();
  for (const auto& m : t.memcpys)
    memcpys.push_back({m.start, m.end, m.device, m.context, m.stream, m.correlation, m.bytes, m.copy_kind, m.src_kind,
                       m.dst_kind, m.async});
  json memsets = json::array();
  for (const auto& m : t.memsets)
    memsets.push_back({m.start, m.end, m.device, m.context, m.stream, m.correlation, m.bytes, m.value, m.memory_kind});
  json api = json::array();
  for (const auto& a : t.api_calls)
    api.push_back({a.start, a.end, a.process, a.thread, a.correlation, a.callback_id, strings.id(a.name), a.driver,
                   a.return_value});
  json syncs = json::array();
  for (const auto& s : t.syncs) syncs.push_back({s.start, s.end, s.context, s.stream, s.correlation, s.type});
  json ranges = json::array();
  for (const auto& r : t.ranges)
    ranges.push_back({r.start, r.end, r.process, r.thread, strings.id(r.domain), strings.id(r.name)});
  json overheads = json::array();
  for (const auto& o : t.overheads) overheads.push_back({o.start, o.end, strings.id(o.kind)});
  json reps = json::array();
  for (const auto& r : t.repetitions) reps.push_back({r.start, r.end, r.transfer_in_end, r.compute_end});

  j = json{{"format", "speedlab-device-trace"},
           {"version", trace_format_version},
           {"backend", t.backend},
           {"note", t.note},
           {"dropped_records", t.dropped_records},
           {"buffer_bytes", t.buffer_bytes},
           {"process", t.process},
           {"columns", columns()},
           {"kernels", std::move(kernels)},
           {"memcpys", std::move(memcpys)},
           {"memsets", std::move(memsets)},
           {"api_calls", std::move(api)},
           {"syncs", std::move(syncs)},
           {"ranges", std::move(ranges)},
           {"overheads", std::move(overheads)},
           {"repetitions", std::move(reps)}};
  j["strings"] = std::move(strings).to_json();
}

void from_json(const json& j, device_trace& t) {
  if (!j.is_object()) throw std::runtime_error("device trace: expected a JSON object");
  if (auto it = j.find("version"); it != j.end() && it->get<int>() > trace_format_version)
    throw std::runtime_error(fmt::format("device trace: format version {} is newer than this speedlab reads ({})",
                                         it->get<int>(), trace_format_version));
  const auto strings = j.value("strings", std::vector<std::string>{});
  t.backend = j.value("backend", std::string{});
  t.note = j.value("note", std::string{});
  t.dropped_records = j.value("dropped_records", std::uint64_t{0});
  t.buffer_bytes = j.value("buffer_bytes", std::uint64_t{0});
  t.process = j.value("process", std::uint32_t{0});

  read_table(j, "kernels", strings, t.kernels, [](row_reader& r) {
    kernel_record k;
    k.start = r.num<std::uint64_t>();
    k.end = r.num<std::uint64_t>();
    k.device = r.num<std::uint32_t>();
    k.context = r.num<std::uint32_t>();
    k.stream = r.num<std::uint32_t>();
    k.correlation = r.num<std::uint32_t>();
    k.name = r.str();
    k.mangled_name = r.str();
    for (auto& g : k.grid) g = r.num<std::int32_t>();
    for (auto& b : k.block) b = r.num<std::int32_t>();
    k.registers_per_thread = r.num<std::int32_t>();
    k.static_shared_bytes = r.num<std::int32_t>();
    k.dynamic_shared_bytes = r.num<std::int32_t>();
    k.local_bytes_per_thread = r.num<std::int32_t>();
    return k;
  });
  read_table(j, "memcpys", strings, t.memcpys, [](row_reader& r) {
    memcpy_record m;
    m.start = r.num<std::uint64_t>();
    m.end = r.num<std::uint64_t>();
    m.device = r.num<std::uint32_t>();
    m.context = r.num<std::uint32_t>();
    m.stream = r.num<std::uint32_t>();
    m.correlation = r.num<std::uint32_t>();
    m.bytes = r.num<std::uint64_t>();
    m.copy_kind = r.num<std::uint8_t>();
    m.src_kind = r.num<std::uint8_t>();
    m.dst_kind = r.num<std::uint8_t>();
    m.async = r.flag();
    return m;
  });
  read_table(j, "memsets", strings, t.memsets, [](row_reader& r) {
    memset_record m;
    m.start = r.num<std::uint64_t>();
    m.end = r.num<std::uint64_t>();
    m.device = r.num<std::uint32_t>();
    m.context = r.num<std::uint32_t>();
    m.stream = r.num<std::uint32_t>();
    m.correlation = r.num<std::uint32_t>();
    m.bytes = r.num<std::uint64_t>();
    m.value = r.num<std::uint32_t>();
    m.memory_kind = r.num<std::uint8_t>();
    return m;
  });
  read_table(j, "api_calls", strings, t.api_calls, [](row_reader& r) {
    api_record a;
    a.start = r.num<std::uint64_t>();
    a.end = r.num<std::uint64_t>();
    a.process = r.num<std::uint32_t>();
    a.thread = r.num<std::uint32_t>();
    a.correlation = r.num<std::uint32_t>();
    a.callback_id = r.num<std::uint32_t>();
    a.name = r.str();
    a.driver = r.flag();
    a.return_value = r.num<std::int32_t>();
    return a;
  });
  read_table(j, "syncs", strings, t.syncs, [](row_reader& r) {
    sync_record s;
    s.start = r.num<std::uint64_t>();
    s.end = r.num<std::uint64_t>();
    s.context = r.num<std::uint32_t>();
    s.stream = r.num<std::uint32_t>();
    s.correlation = r.num<std::uint32_t>();
    s.type = r.num<std::uint8_t>();
    return s;
  });
  read_table(j, "ranges", strings, t.ranges, [](row_reader& r) {
    range_record x;
    x.start = r.num<std::uint64_t>();
    x.end = r.num<std::uint64_t>();
    x.process = r.num<std::uint32_t>();
    x.thread = r.num<std::uint32_t>();
    x.domain = r.str();
    x.name = r.str();
    return x;
  });
  read_table(j, "overheads", strings, t.overheads, [](row_reader& r) {
    overhead_record o;
    o.start = r.num<std::uint64_t>();
    o.end = r.num<std::uint64_t>();
    o.kind = r.str();
    return o;
  });
  read_table(j, "repetitions", strings, t.repetitions, [](row_reader& r) {
    repetition_window w;
    w.start = r.num<std::uint64_t>();
    w.end = r.num<std::uint64_t>();
    w.transfer_in_end = r.num<std::uint64_t>();
    w.compute_end = r.num<std::uint64_t>();
    return w;
  });
}

} // namespace speedlab::trace
