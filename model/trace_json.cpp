// Compact JSON for trace::device_trace: each record is an array (column order listed once
// under "columns"), and every name is an index into one "strings" table, so a trace of
// 100000 launches of one kernel stores the kernel's name once. Round trip is exact: all
// integers are kept as JSON integers, no times are rescaled.
#include <cctype>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>
#include <type_traits>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/json_support.hpp"
#include "model/trace.hpp"
#include "model/trace_fields.hpp"
#include "model/trace_text.hpp"

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
  if (const auto v = json_checked::whole_number<T>(cell)) return *v;
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

// ---- the fast reader: straight from the text ----------------------------------------------

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = 0;
    std::uint32_t cp = 0, min = 0;
    if ((c & 0xe0) == 0xc0) n = 1, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0) n = 2, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0) n = 3, cp = c & 0x07, min = 0x10000;
    else return false;
    if (s.size() - i <= n) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n + 1;
  }
  return true;
}

namespace {

// A strict forward reader over JSON text: what read_compact_trace needs and nothing more.
class json_text {
public:
  explicit json_text(std::string_view s) : m_p(s.data()), m_end(s.data() + s.size()) {}

  void ws() {
    while (m_p < m_end && (*m_p == ' ' || *m_p == '\n' || *m_p == '\r' || *m_p == '\t')) ++m_p;
  }
  bool eat(char c) {
    ws();
    if (m_p < m_end && *m_p == c) {
      ++m_p;
      return true;
    }
    return false;
  }
  bool done() {
    ws();
    return m_p == m_end;
  }
  const char* pos() const { return m_p; }

  bool string(std::string& out) {
    ws();
    if (m_p >= m_end || *m_p != '"') return false;
    ++m_p;
    out.clear();
    bool high = false; // bytes above ASCII: checked as UTF-8 at the end, as the JSON parser does
    while (m_p < m_end) {
      const char* q = m_p;
      while (q < m_end && *q != '"' && *q != '\\' && static_cast<unsigned char>(*q) >= 0x20) {
        high = high || static_cast<unsigned char>(*q) >= 0x80;
        ++q;
      }
      out.append(m_p, q);
      m_p = q;
      if (m_p >= m_end || static_cast<unsigned char>(*m_p) < 0x20) return false;
      if (*m_p == '"') {
        ++m_p;
        return !high || valid_utf8(out);
      }
      if (++m_p >= m_end) return false; // the backslash
      switch (*m_p++) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        unsigned cp = 0;
        if (!hex4(cp)) return false;
        if (cp >= 0xD800 && cp < 0xDC00) { // a surrogate pair
          unsigned lo = 0;
          if (m_end - m_p < 2 || m_p[0] != '\\' || m_p[1] != 'u') return false;
          m_p += 2;
          if (!hex4(lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          return false;
        }
        utf8(cp, out);
        break;
      }
      default: return false;
      }
    }
    return false;
  }

  bool u64(std::uint64_t& v) {
    ws();
    return digits(v);
  }
  bool i64(std::int64_t& v) {
    ws();
    const bool negative = m_p < m_end && *m_p == '-';
    if (negative) ++m_p;
    std::uint64_t x = 0;
    if (!digits(x)) return false;
    constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (x > max + (negative ? 1 : 0)) return false;
    v = negative ? (x == max + 1 ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(x))
                 : static_cast<std::int64_t>(x);
    return true;
  }
  bool boolean(bool& b) {
    ws();
    if (m_end - m_p >= 4 && std::memcmp(m_p, "true", 4) == 0) {
      m_p += 4;
      b = true;
      return true;
    }
    if (m_end - m_p >= 5 && std::memcmp(m_p, "false", 5) == 0) {
      m_p += 5;
      b = false;
      return true;
    }
    return false;
  }

  // Over any one value (its structure checked only as far as finding its end).
  bool skip() {
    ws();
    if (m_p >= m_end) return false;
    if (*m_p == '"') {
      std::string ignored;
      return string(ignored);
    }
    if (*m_p == '{' || *m_p == '[') {
      int depth = 0;
      while (m_p < m_end) {
        const char c = *m_p;
        if (c == '"') {
          std::string ignored;
          if (!string(ignored)) return false;
          continue;
        }
        ++m_p;
        if (c == '{' || c == '[') ++depth;
        else if ((c == '}' || c == ']') && --depth == 0) return true;
      }
      return false;
    }
    const char* start = m_p;
    while (m_p < m_end && (std::isalnum(static_cast<unsigned char>(*m_p)) || *m_p == '-' || *m_p == '+' || *m_p == '.'))
      ++m_p;
    return m_p > start;
  }

private:
  bool digits(std::uint64_t& v) {
    const char* q = m_p;
    if (q >= m_end || *q < '0' || *q > '9') return false;
    if (*q == '0' && q + 1 < m_end && q[1] >= '0' && q[1] <= '9') return false; // no leading zeros in JSON
    std::uint64_t x = 0;
    while (q < m_end && *q >= '0' && *q <= '9') {
      const auto d = static_cast<std::uint64_t>(*q - '0');
      if (x > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return false;
      x = x * 10 + d;
      ++q;
    }
    if (q < m_end && (*q == '.' || *q == 'e' || *q == 'E')) return false; // a fraction: not an integer
    v = x;
    m_p = q;
    return true;
  }
  bool hex4(unsigned& v) {
    if (m_end - m_p < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *m_p++;
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
      else return false;
    }
    return true;
  }
  static void utf8(unsigned cp, std::string& out) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  const char* m_p;
  const char* m_end;
};

template <class V>
bool read_cell(json_text& in, V& value, std::vector<std::uint64_t>& string_ids) {
  if constexpr (std::is_same_v<V, std::string>) {
    std::uint64_t i = 0; // resolved once the string table is read (it comes after the tables)
    if (!in.u64(i)) return false;
    string_ids.push_back(i);
    return true;
  } else if constexpr (std::is_same_v<V, bool>) {
    return in.boolean(value);
  } else if constexpr (std::is_unsigned_v<V>) {
    std::uint64_t x = 0;
    if (!in.u64(x) || x > std::numeric_limits<V>::max()) return false;
    value = static_cast<V>(x);
    return true;
  } else {
    std::int64_t x = 0;
    if (!in.i64(x) || x < std::numeric_limits<V>::min() || x > std::numeric_limits<V>::max()) return false;
    value = static_cast<V>(x);
    return true;
  }
}

template <class Record>
bool read_rows(json_text& in, std::vector<Record>& out, std::vector<std::uint64_t>& string_ids) {
  if (!in.eat('[')) return false;
  if (in.eat(']')) return true;
  do {
    if (!in.eat('[')) return false;
    Record& r = out.emplace_back(); // filled in place (a failed read discards the whole trace)
    bool ok = true, first = true;
    fields(r, [&](const char*, auto& value) {
      if (!ok) return;
      if (!first && !in.eat(',')) {
        ok = false;
        return;
      }
      first = false;
      ok = read_cell(in, value, string_ids);
    });
    if (!ok || !in.eat(']')) return false; // a wrong type, or too few or too many cells
  } while (in.eat(','));
  return in.eat(']');
}

bool is_table(const std::string& key) {
  bool found = false;
  device_trace t;
  tables(t, [&](const char* table, auto&) { found = found || key == table; });
  return found;
}

// One trace object from the cursor on, in a single pass: the tables' string cells are
// resolved at the end, since the string table follows them.
bool parse_trace(json_text& in, device_trace& t) {
  if (!in.eat('{')) return false;
  t = device_trace{};
  std::vector<std::string> strings;
  std::vector<std::uint64_t> string_ids;
  std::map<std::string, std::size_t> first_id; // table -> its first entry in string_ids
  std::string key;
  if (!in.eat('}')) {
    do {
      if (!in.string(key) || !in.eat(':')) return false;
      bool ok = true;
      if (key == "version") {
        std::int64_t v = 0;
        ok = in.i64(v) && v <= trace_format_version;
      } else if (key == "strings") {
        ok = strings.empty() && in.eat('[');
        if (ok && !in.eat(']')) {
          std::string text;
          do {
            ok = in.string(text);
            if (ok) strings.push_back(text);
          } while (ok && in.eat(','));
          ok = ok && in.eat(']');
        }
      } else if (key == "backend") {
        ok = in.string(t.backend);
      } else if (key == "note") {
        ok = in.string(t.note);
      } else if (key == "dropped_records") {
        ok = in.u64(t.dropped_records);
      } else if (key == "buffer_bytes") {
        ok = in.u64(t.buffer_bytes);
      } else if (key == "process") {
        std::uint64_t v = 0;
        ok = in.u64(v) && v <= std::numeric_limits<std::uint32_t>::max();
        t.process = static_cast<std::uint32_t>(v);
      } else if (is_table(key)) {
        if (!first_id.try_emplace(key, string_ids.size()).second) return false; // a table twice
        tables(t, [&](const char* table, auto& records) {
          if (ok && key == table) ok = read_rows(in, records, string_ids);
        });
      } else {
        ok = in.skip(); // "format", "columns", or anything newer
      }
      if (!ok) return false;
    } while (in.eat(','));
    if (!in.eat('}')) return false;
  }
  bool ok = true;
  tables(t, [&](const char* table, auto& records) {
    auto it = first_id.find(table);
    if (!ok || it == first_id.end()) return;
    std::size_t k = it->second;
    for (auto& r : records)
      fields(r, [&](const char*, auto& value) {
        if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) {
          const std::uint64_t i = string_ids[k++];
          if (i >= strings.size()) ok = false;
          else value = strings[i];
        }
      });
  });
  return ok;
}

} // namespace

bool read_compact_trace(std::string_view text, device_trace& t) {
  json_text in(text);
  return parse_trace(in, t) && in.done();
}

bool read_compact_trace_member(std::string_view text, std::string_view key, device_trace& t,
                               std::map<std::string, std::uint64_t>& numbers) {
  json_text in(text);
  if (!in.eat('{')) return false;
  if (in.eat('}')) return false;
  bool found = false;
  std::string name;
  do {
    if (!in.string(name) || !in.eat(':')) return false;
    if (name == key) {
      if (found || !parse_trace(in, t)) return false;
      found = true;
      continue;
    }
    std::uint64_t v = 0;
    if (in.u64(v)) numbers[name] = v;
    else if (!in.skip()) return false;
  } while (in.eat(','));
  return in.eat('}') && in.done() && found;
}

} // namespace speedlab::trace
