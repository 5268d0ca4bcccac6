// Compact JSON for trace::device_trace: each record is an array (column order listed once
// under "columns"), and every name is an index into one "strings" table, so a trace of
// 100000 launches of one kernel stores the kernel's name once. Round trip is exact: all
// integers are kept as JSON integers, no times are rescaled.
#include <concepts>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/trace.hpp"
#include "model/trace_fields.hpp"

namespace speedlab::trace {
namespace {

using nlohmann::json;
using schema::fields;
using schema::tables;

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

// An integer cell: a whole number in T's range, else an error (nlohmann would cast a float
// to T, undefined behaviour out of its range).
template <class T>
T whole_cell(const json& cell, const char* table) {
  using limits = std::numeric_limits<T>;
  if (cell.is_number_unsigned()) {
    if (const auto v = cell.get<std::uint64_t>(); v <= static_cast<std::uint64_t>(limits::max())) return static_cast<T>(v);
  } else if (cell.is_number_integer()) {
    const auto v = cell.get<std::int64_t>();
    if (v >= static_cast<std::int64_t>(limits::min()) &&
        (v < 0 || static_cast<std::uint64_t>(v) <= static_cast<std::uint64_t>(limits::max())))
      return static_cast<T>(v);
  }
  throw std::runtime_error(fmt::format("device trace: a '{}' record has a value that is not a whole number in range: {}",
                                       table, cell.dump()));
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
      const auto i = whole_cell<std::size_t>(cell, table);
      if (i >= strings.size())
        throw std::runtime_error(fmt::format("device trace: '{}' record names string {} of {}", table, i, strings.size()));
      value = strings[i];
    } else if constexpr (std::is_same_v<std::decay_t<decltype(value)>, bool>) {
      value = cell.get<bool>();
    } else {
      value = whole_cell<std::decay_t<decltype(value)>>(cell, table);
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
  if (auto it = j.find("version"); it != j.end() && whole_cell<std::int64_t>(*it, "version") > trace_format_version)
    throw std::runtime_error(fmt::format("device trace: format version {} is newer than this speedlab reads ({})",
                                         it->get<std::int64_t>(), trace_format_version));
  const auto strings = j.value("strings", std::vector<std::string>{});
  t.backend = j.value("backend", std::string{});
  t.note = j.value("note", std::string{});
  auto whole = [&j]<class T>(const char* key, T fallback) {
    const auto it = j.find(key);
    return it == j.end() ? fallback : whole_cell<T>(*it, key);
  };
  t.dropped_records = whole("dropped_records", std::uint64_t{0});
  t.buffer_bytes = whole("buffer_bytes", std::uint64_t{0});
  t.process = whole("process", std::uint32_t{0});
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
