// Compact JSON for trace::device_trace: each record is an array (column order listed once
// under "columns"), and every name is an index into one "strings" table, so a trace of
// 100000 launches of one kernel stores the kernel's name once. Round trip is exact: all
// integers are kept as JSON integers, no times are rescaled.
#include <concepts>
#include <stdexcept>
#include <type_traits>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/trace.hpp"

namespace speedlab::trace {
namespace {

using nlohmann::json;

// Each record's fields, listed once: the column names, the writer and the reader all come
// from these. A visitor gets (column name, member); strings go through the string table.
template <class R, class V>
void fields(R& k, V&& v) requires std::same_as<std::remove_const_t<R>, kernel_record> {
  v("start", k.start), v("end", k.end), v("device", k.device), v("context", k.context), v("stream", k.stream);
  v("correlation", k.correlation), v("name", k.name), v("mangled_name", k.mangled_name);
  v("grid_x", k.grid[0]), v("grid_y", k.grid[1]), v("grid_z", k.grid[2]);
  v("block_x", k.block[0]), v("block_y", k.block[1]), v("block_z", k.block[2]);
  v("registers_per_thread", k.registers_per_thread), v("static_shared_bytes", k.static_shared_bytes);
  v("dynamic_shared_bytes", k.dynamic_shared_bytes), v("local_bytes_per_thread", k.local_bytes_per_thread);
}
template <class R, class V>
void fields(R& m, V&& v) requires std::same_as<std::remove_const_t<R>, memcpy_record> {
  v("start", m.start), v("end", m.end), v("device", m.device), v("context", m.context), v("stream", m.stream);
  v("correlation", m.correlation), v("bytes", m.bytes), v("copy_kind", m.copy_kind), v("src_kind", m.src_kind);
  v("dst_kind", m.dst_kind), v("async", m.async);
}
template <class R, class V>
void fields(R& m, V&& v) requires std::same_as<std::remove_const_t<R>, memset_record> {
  v("start", m.start), v("end", m.end), v("device", m.device), v("context", m.context), v("stream", m.stream);
  v("correlation", m.correlation), v("bytes", m.bytes), v("value", m.value), v("memory_kind", m.memory_kind);
}
template <class R, class V>
void fields(R& a, V&& v) requires std::same_as<std::remove_const_t<R>, api_record> {
  v("start", a.start), v("end", a.end), v("process", a.process), v("thread", a.thread);
  v("correlation", a.correlation), v("callback_id", a.callback_id), v("name", a.name), v("driver", a.driver);
  v("return_value", a.return_value);
}
template <class R, class V>
void fields(R& s, V&& v) requires std::same_as<std::remove_const_t<R>, sync_record> {
  v("start", s.start), v("end", s.end), v("context", s.context), v("stream", s.stream);
  v("correlation", s.correlation), v("type", s.type);
}
template <class R, class V>
void fields(R& r, V&& v) requires std::same_as<std::remove_const_t<R>, range_record> {
  v("start", r.start), v("end", r.end), v("process", r.process), v("thread", r.thread), v("domain", r.domain);
  v("name", r.name);
}
template <class R, class V>
void fields(R& o, V&& v) requires std::same_as<std::remove_const_t<R>, overhead_record> {
  v("start", o.start), v("end", o.end), v("kind", o.kind);
}
template <class R, class V>
void fields(R& w, V&& v) requires std::same_as<std::remove_const_t<R>, repetition_window> {
  v("start", w.start), v("end", w.end), v("transfer_in_end", w.transfer_in_end), v("compute_end", w.compute_end);
}

// The tables of a trace, by name, in file order.
template <class T, class V>
void tables(T& t, V&& v) {
  v("kernels", t.kernels), v("memcpys", t.memcpys), v("memsets", t.memsets), v("api_calls", t.api_calls);
  v("syncs", t.syncs), v("ranges", t.ranges), v("overheads", t.overheads), v("repetitions", t.repetitions);
}

template <class Record>
json column_names() {
  json names = json::array();
  Record r;
  fields(r, [&](const char* name, auto&) {
    names.push_back(name);
  });
  return names;
}

// Never destroyed: the injection library writes traces from an atexit handler, which can
// run after the static destructors of objects first used later than it was registered.
const json& columns() {
  static const json& c = *new json([] {
    json out = json::object();
    device_trace t;
    tables(t, [&](const char* table, auto& records) {
      out[table] = column_names<typename std::decay_t<decltype(records)>::value_type>();
    });
    return out;
  }());
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

template <class Record>
json write_row(const Record& r, string_table& strings) {
  json row = json::array();
  fields(r, [&](const char*, const auto& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) row.push_back(strings.id(value));
    else row.push_back(value);
  });
  return row;
}

// Reads one record row with bounds and type checks, so a malformed file fails clearly.
template <class Record>
Record read_row(const json& row, const std::vector<std::string>& strings, const char* table, std::size_t width) {
  if (!row.is_array() || row.size() != width)
    throw std::runtime_error(fmt::format("device trace: a '{}' record must be an array of {} values", table, width));
  Record r;
  std::size_t index = 0;
  fields(r, [&](const char*, auto& value) {
    const json& cell = row.at(index++);
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) {
      const auto i = cell.get<std::size_t>();
      if (i >= strings.size())
        throw std::runtime_error(fmt::format("device trace: '{}' record names string {} of {}", table, i, strings.size()));
      value = strings[i];
    } else {
      value = cell.get<std::decay_t<decltype(value)>>();
    }
  });
  return r;
}

} // namespace

void to_json(json& j, const device_trace& t) {
  string_table strings;
  j = json{{"format", "speedlab-device-trace"},
           {"version", trace_format_version},
           {"backend", t.backend},
           {"note", t.note},
           {"dropped_records", t.dropped_records},
           {"buffer_bytes", t.buffer_bytes},
           {"process", t.process},
           {"columns", columns()}};
  tables(t, [&](const char* table, const auto& records) {
    json rows = json::array();
    for (const auto& r : records) rows.push_back(write_row(r, strings));
    j[table] = std::move(rows);
  });
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
  tables(t, [&](const char* table, auto& records) {
    using record = typename std::decay_t<decltype(records)>::value_type;
    records.clear();
    auto it = j.find(table);
    if (it == j.end()) return;
    const std::size_t width = columns().at(table).size();
    records.reserve(it->size());
    for (const auto& row : *it) records.push_back(read_row<record>(row, strings, table, width));
  });
}

} // namespace speedlab::trace
