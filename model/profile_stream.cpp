#include "model/profile_stream.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include "model/json_support.hpp"
#include "model/saved_records.hpp"
#include "model/trace_fields.hpp"
#include "model/trace_fold.hpp"
#include "model/trace_text.hpp"

namespace speedlab::profile {
namespace {

using nlohmann::json;

constexpr char chunk_magic[4] = {'S', 'L', 'P', '1'};

void put_u32(std::string& s, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_u64(std::string& s, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint32_t get_u32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

std::uint32_t crc_of(std::string_view payload) {
  return static_cast<std::uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(payload.data()), static_cast<uInt>(payload.size())));
}

template <class T>
void append_all(std::vector<T>& to, std::vector<T>&& from) {
  if (to.empty()) to = std::move(from);
  else to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

std::uint64_t last_end(const trace::device_trace& t) {
  std::uint64_t end = 0;
  auto each = [&end](const auto& records) {
    for (const auto& r : records) end = std::max(end, r.end);
  };
  each(t.kernels), each(t.memcpys), each(t.memsets), each(t.api_calls), each(t.syncs), each(t.ranges);
  return end;
}

// The injection library names each GPU the process ran kernels on in a note, "gpu <index>:
// <name>, uuid GPU-<hex>"; the first becomes the gpu, gpu_name and gpu_uuid tags (true),
// any later one stays a note.
bool gpu_tags(const std::string& text, process_info& info) {
  if (!text.starts_with("gpu ") || info.tags.count("gpu")) return false;
  const auto colon = text.find(": ");
  if (colon == std::string::npos) return false;
  const std::string index = text.substr(4, colon - 4);
  if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos) return false;
  info.tags["gpu"] = index;
  std::string rest = text.substr(colon + 2);
  if (const auto u = rest.rfind(", uuid "); u != std::string::npos) {
    info.tags["gpu_uuid"] = rest.substr(u + 7);
    rest.resize(u);
  }
  info.tags["gpu_name"] = rest;
  return true;
}

// ---- binary records payload -------------------------------------------------------------
// Layout (docs/profile-format.md): u32 version, u32 table count, u64 flushed_ns,
// u64 dropped_records, u64 buffer_bytes, u32 process, u32 string count S, u32 string bytes B,
// S x u32 lengths, B bytes of UTF-8, u32 backend string, u32 note string; then per table
// (trace::schema::tables order) u32 rows N, u32 columns C, and C columns of N values each,
// every column fixed-width little endian (u64/u32/i32 as such, u8 and bool one byte, a
// string a u32 index into the table).

constexpr std::size_t binary_fixed_bytes = 4 + 4 + 8 + 8 + 8 + 4 + 4 + 4;

template <class T>
constexpr std::size_t width_of() {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, std::string>) return 4;
  else if constexpr (std::is_same_v<U, bool>) return 1;
  else {
    static_assert(std::is_integral_v<U> && (sizeof(U) == 1 || sizeof(U) == 4 || sizeof(U) == 8),
                  "a trace field of a type the binary records chunk cannot hold");
    return sizeof(U);
  }
}

template <class T>
void store_le(char* p, T v) {
  using U = std::make_unsigned_t<T>;
  auto u = static_cast<U>(v);
  for (std::size_t i = 0; i < sizeof(U); ++i) p[i] = static_cast<char>((static_cast<std::uint64_t>(u) >> (8 * i)) & 0xff);
}

template <class T>
T load_le(const char* p) {
  using U = std::make_unsigned_t<T>;
  std::uint64_t u = 0;
  for (std::size_t i = sizeof(U); i-- > 0;) u = (u << 8) | static_cast<unsigned char>(p[i]);
  return static_cast<T>(static_cast<U>(u));
}

// The widths of a record's columns, in column order. Never destroyed: the injection library
// writes its last chunk from an atexit handler, possibly after static destructors ran.
template <class Record>
const std::vector<std::size_t>& column_widths() {
  static const std::vector<std::size_t>& widths = *new std::vector<std::size_t>([] {
    std::vector<std::size_t> w;
    Record r;
    trace::schema::fields(r, [&](const char*, auto& member) { w.push_back(width_of<decltype(member)>()); });
    return w;
  }());
  return widths;
}

// Start of each column of a table of `rows` rows, from `base`.
std::vector<std::size_t> column_offsets(const std::vector<std::size_t>& widths, std::size_t base, std::size_t rows) {
  std::vector<std::size_t> out;
  out.reserve(widths.size());
  for (const std::size_t w : widths) {
    out.push_back(base);
    base += w * rows;
  }
  return out;
}

class binary_strings {
public:
  std::uint32_t id(const std::string& s) {
    // A chunk's names are few (kernels, API functions, ranges); most lookups hit the last one.
    if (m_last < m_strings.size() && m_strings[m_last] == s) return m_last;
    auto [it, inserted] = m_ids.try_emplace(s, static_cast<std::uint32_t>(m_strings.size()));
    if (inserted) m_strings.push_back(s);
    return m_last = it->second;
  }
  const std::vector<std::string>& strings() const { return m_strings; }

private:
  std::unordered_map<std::string, std::uint32_t> m_ids;
  std::vector<std::string> m_strings;
  std::uint32_t m_last = std::numeric_limits<std::uint32_t>::max();
};

template <class Record>
void encode_table(const std::vector<Record>& records, binary_strings& strings, std::string& out) {
  const auto& widths = column_widths<Record>();
  if (records.size() > std::numeric_limits<std::uint32_t>::max())
    throw std::runtime_error("records chunk: more than 2^32 rows in one table");
  put_u32(out, static_cast<std::uint32_t>(records.size()));
  put_u32(out, static_cast<std::uint32_t>(widths.size()));
  std::size_t row_bytes = 0;
  for (const std::size_t w : widths) row_bytes += w;
  const std::size_t base = out.size();
  out.resize(base + row_bytes * records.size());
  const std::vector<std::size_t> at = column_offsets(widths, base, records.size());
  char* data = out.data();
  for (std::size_t i = 0; i < records.size(); ++i) {
    std::size_t c = 0;
    trace::schema::fields(records[i], [&](const char*, const auto& value) {
      using T = std::remove_cvref_t<decltype(value)>;
      char* p = data + at[c] + i * widths[c];
      if constexpr (std::is_same_v<T, std::string>) store_le(p, strings.id(value));
      else if constexpr (std::is_same_v<T, bool>) *p = value ? 1 : 0;
      else store_le(p, value);
      ++c;
    });
  }
}

// Reads a payload front to back; every read is checked against what is left.
class payload_reader {
public:
  explicit payload_reader(std::string_view data) : m_data(data) {}
  std::size_t left() const { return m_data.size() - m_pos; }
  const char* take(std::size_t n, const char* what) {
    if (n > left())
      throw std::runtime_error(fmt::format("binary records: {} needs {} bytes at offset {}, {} left", what, n, m_pos, left()));
    const char* p = m_data.data() + m_pos;
    m_pos += n;
    return p;
  }
  std::uint32_t u32(const char* what) { return load_le<std::uint32_t>(take(4, what)); }
  std::uint64_t u64(const char* what) { return load_le<std::uint64_t>(take(8, what)); }
  std::size_t offset() const { return m_pos; }

private:
  std::string_view m_data;
  std::size_t m_pos = 0;
};

template <class Record>
void decode_table(payload_reader& in, const std::vector<std::string>& strings, const char* table,
                  std::vector<Record>& records) {
  const auto& widths = column_widths<Record>();
  const std::uint32_t rows = in.u32("a row count"), columns = in.u32("a column count");
  if (columns != widths.size())
    throw std::runtime_error(fmt::format("binary records: table '{}' has {} columns, this reader knows {}", table,
                                         columns, widths.size()));
  std::size_t row_bytes = 0;
  for (const std::size_t w : widths) row_bytes += w;
  if (rows > in.left() / row_bytes)
    throw std::runtime_error(fmt::format("binary records: table '{}' claims {} rows of {} bytes, {} bytes left", table,
                                         rows, row_bytes, in.left()));
  const char* data = in.take(row_bytes * rows, table);
  const std::vector<std::size_t> at = column_offsets(widths, 0, rows);
  records.resize(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    std::size_t c = 0;
    trace::schema::fields(records[i], [&](const char* column, auto& value) {
      using T = std::remove_cvref_t<decltype(value)>;
      const char* p = data + at[c] + i * widths[c];
      if constexpr (std::is_same_v<T, std::string>) {
        const auto s = load_le<std::uint32_t>(p);
        if (s >= strings.size())
          throw std::runtime_error(fmt::format("binary records: '{}' row {} column '{}' names string {} of {}", table, i,
                                               column, s, strings.size()));
        value = strings[s];
      } else if constexpr (std::is_same_v<T, bool>) {
        value = *p != 0;
      } else {
        value = load_le<T>(p);
      }
      ++c;
    });
  }
}

// A whole-number field of a JSON payload: absent, the fallback; anything but a whole number
// in T's range is an error (nlohmann would cast a float to T: undefined out of range).
template <class T>
T whole(const json& j, const char* key, T fallback) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (const auto v = json_checked::whole_number<T>(*it)) return *v;
  throw std::runtime_error(
      fmt::format("'{}' is not a whole number from {} to {}", key, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

// What the reader knows of one stream while it goes through the chunks.
struct read_state {
  process_profile& profile;
  const records_sink& sink;
  bool have_header = false, closed = false;
  std::uint64_t data_end = 0; // latest end of any record
  records_batch batch;        // with a sink: every binary records chunk is decoded into it
};

void take_records(records_batch&& batch, read_state& st) {
  auto& p = st.profile;
  auto& info = p.process;
  info.last_flush_ns = std::max(info.last_flush_ns, batch.flushed_ns);
  info.dropped_records += batch.trace.dropped_records;
  p.trace.buffer_bytes = std::max(p.trace.buffer_bytes, batch.trace.buffer_bytes);
  st.data_end = std::max(st.data_end, last_end(batch.trace));
  if (st.sink) {
    st.sink(info, std::move(batch));
    return;
  }
  trace::append_records(p.trace, std::move(batch.trace)); // one fold (model/trace_fold); drops counted in info
}

// The header chunk: who the process is and the stream's format.
void apply_header(const json& j, read_state& st) {
  auto& p = st.profile;
  auto& info = p.process;
  const auto format = whole<std::uint32_t>(j, "format", 0);
  if (format > static_cast<std::uint32_t>(stream_format_version))
    throw std::runtime_error(fmt::format("stream format {} is newer than this reader's {}", format, stream_format_version));
  if (!j.contains("pid")) throw std::runtime_error("the header has no 'pid'");
  info.pid = whole<std::uint32_t>(j, "pid", 0);
  info.parent_pid = whole<std::uint32_t>(j, "ppid", 0);
  info.host = j.value("host", std::string{});
  info.command_line = j.value("argv", std::vector<std::string>{});
  info.start_ns = whole<std::uint64_t>(j, "start_ns", 0);
  info.tags = j.value("tags", std::map<std::string, std::string>{});
  if (j.contains("realtime_ns")) info.tags["realtime_ns_at_start"] = std::to_string(whole<std::uint64_t>(j, "realtime_ns", 0));
  if (j.contains("flush_interval_ms"))
    info.tags["flush_interval_ms"] = std::to_string(whole<std::uint32_t>(j, "flush_interval_ms", 0));
  info.used_cuda = true; // the library writes a stream only once CUDA initialized it
  p.trace.backend = j.value("backend", std::string("cupti"));
  p.trace.process = info.pid;
  st.have_header = true;
}

// A JSON array of whole numbers of type T (a python chunk's columns and frame lists).
template <class T>
std::vector<T> whole_array(const json& j, const char* key) {
  std::vector<T> out;
  const auto it = j.find(key);
  if (it == j.end()) return out;
  if (!it->is_array()) throw std::runtime_error(fmt::format("'{}' is not an array", key));
  out.reserve(it->size());
  for (const auto& v : *it) {
    const auto n = json_checked::whole_number<T>(v);
    if (!n)
      throw std::runtime_error(
          fmt::format("'{}' holds {}, not a whole number from 0 to {}", key, v.dump(), std::numeric_limits<T>::max()));
    out.push_back(*n);
  }
  return out;
}

// A python_calls chunk, checked whole before any of it is kept (a bad one changes nothing).
python_chunk read_python_chunk(const json& j) {
  python_chunk c;
  c.interpreter = j.value("interpreter", std::string{});
  if (const auto f = j.find("folding"); f != j.end()) {
    c.has_folding = true;
    c.library_prefixes = f->at("library_prefixes").get<std::vector<std::string>>();
    c.user_prefixes = f->at("user_prefixes").get<std::vector<std::string>>();
  }
  if (const auto calls = j.find("calls"); calls != j.end()) {
    const auto correlation = whole_array<std::uint32_t>(*calls, "correlation");
    const auto stack = whole_array<std::uint32_t>(*calls, "stack");
    const auto how = whole_array<std::uint8_t>(*calls, "how");
    if (stack.size() != correlation.size() || how.size() != correlation.size())
      throw std::runtime_error(fmt::format("the calls' columns differ in length (correlation {}, stack {}, how {})",
                                           correlation.size(), stack.size(), how.size()));
    for (std::size_t i = 0; i < correlation.size(); ++i) {
      if (how[i] > 2) throw std::runtime_error(fmt::format("a call's 'how' is {}, not 0, 1 or 2", how[i]));
      c.calls.push_back({correlation[i], stack[i], static_cast<python_how>(how[i])});
    }
  }
  for (const auto& s : j.value("stacks", json::array()))
    c.stacks.emplace_back(whole<std::uint32_t>(s, "id", 0), whole_array<std::uint32_t>(s, "frames"));
  for (const auto& f : j.value("frames", json::array())) {
    python_frame frame{f.at("file").get<std::string>(), whole<std::int32_t>(f, "line", 0),
                       f.at("function").get<std::string>(), f.value("text", std::string{}), f.value("user", false)};
    c.frames.emplace_back(whole<std::uint32_t>(f, "id", 0), std::move(frame));
  }
  return c;
}

void apply_python(const json& j, python_calls& into) {
  python_chunk c = read_python_chunk(j);
  if (!c.interpreter.empty()) into.interpreter = std::move(c.interpreter);
  if (c.has_folding) {
    into.library_prefixes = std::move(c.library_prefixes);
    into.user_prefixes = std::move(c.user_prefixes);
  }
  for (const auto& call : c.calls) into.calls[call.correlation] = {call.stack, call.how};
  for (auto& [id, frames] : c.stacks) into.stacks[id] = std::move(frames);
  for (auto& [id, frame] : c.frames) into.frames[id] = std::move(frame);
}

void apply_launch_windows(const json& j, process_profile& p) {
  for (const auto& w : j.at("windows")) {
    if (!w.is_array() || w.size() != 2) throw std::runtime_error("a launch window is not [start, end]");
    const auto start = w[0].get<std::uint64_t>(), end = w[1].get<std::uint64_t>();
    if (end < start) throw std::runtime_error("a launch window ends before it starts");
    p.launch_windows.emplace_back(start, end);
  }
}

// Applies one chunk to the profile; throws on a payload that is not what its type says.
void apply(chunk_type type, std::string_view payload, read_state& st) {
  auto& p = st.profile;
  auto& info = p.process;
  if (type == chunk_type::records_binary) {
    if (!st.sink) {
      take_records(decode_records_binary(payload), st);
      return;
    }
    // One batch for the whole stream: the sink reads it, the next chunk overwrites it (its
    // records' names reuse their strings' memory: no allocation per record).
    decode_records_binary(payload, st.batch);
    take_records(std::move(st.batch), st);
    return;
  }
  if (type == chunk_type::records) {
    // JSON records chunks (format 1: the committed fixtures, older streams) read straight
    // from the text when they are the compact form (model/trace_text.hpp); anything else
    // goes through the JSON tree below, which says what is wrong.
    records_batch batch;
    std::map<std::string, std::uint64_t> numbers;
    if (trace::read_compact_trace_member(payload, "trace", batch.trace, numbers)) {
      if (const auto it = numbers.find("flushed_ns"); it != numbers.end()) {
        batch.flushed_ns = it->second;
        batch.trace.repetitions.clear();
        take_records(std::move(batch), st);
        return;
      }
    }
  }
  const json j = json::parse(payload);
  if (!j.is_object()) throw std::runtime_error("the payload is no JSON object");
  switch (type) {
  case chunk_type::header:
    apply_header(j, st);
    return;
  case chunk_type::records: {
    records_batch batch;
    batch.trace = j.at("trace").get<trace::device_trace>();
    batch.trace.repetitions.clear();
    batch.flushed_ns = whole<std::uint64_t>(j, "flushed_ns", 0);
    take_records(std::move(batch), st);
    return;
  }
  case chunk_type::note: {
    std::string text = j.at("text").get<std::string>();
    if (gpu_tags(text, info)) return;
    if (std::find(info.notes.begin(), info.notes.end(), text) == info.notes.end()) info.notes.push_back(std::move(text));
    return;
  }
  case chunk_type::close: {
    info.end_ns = whole<std::uint64_t>(j, "end_ns", 0);
    info.dropped_records = std::max(info.dropped_records, whole<std::uint64_t>(j, "dropped_records", 0));
    if (std::string reason = j.value("reason", std::string{}); !reason.empty() && reason != "exit")
      info.tags["closed_by"] = reason;
    st.closed = true;
    return;
  }
  case chunk_type::counters: {
    p.counters.push_back(j.at("pass").get<counters::counter_pass>());
    return;
  }
  case chunk_type::source: {
    p.source.push_back(j.at("pass").get<source::source_pass>());
    return;
  }
  case chunk_type::launch_windows:
    apply_launch_windows(j, p);
    return;
  case chunk_type::python_calls:
    apply_python(j, p.python);
    return;
  case chunk_type::records_binary: break;
  }
  throw std::runtime_error("unknown chunk type");
}

bool known_type(std::uint32_t t) { return t >= 1 && t <= 9; }

// What makes 16 bytes no chunk header, for the message that skips them.
std::string header_problem(const char* h) {
  if (std::memcmp(h, chunk_magic, 4) != 0) {
    std::string shown;
    for (int i = 0; i < 4; ++i) {
      const auto c = static_cast<unsigned char>(h[i]);
      shown += c >= 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
    }
    return fmt::format("wrong magic '{}', a chunk begins with '{}'", shown, std::string_view(chunk_magic, 4));
  }
  if (!known_type(get_u32(h + 4))) return fmt::format("unknown chunk type {}", get_u32(h + 4));
  return fmt::format("payload length {} above the limit of {}", get_u32(h + 8), max_chunk_payload);
}

// Where the reader gets its bytes: a file (read chunk by chunk, never whole) or memory.
class byte_source {
public:
  virtual ~byte_source() = default;
  virtual std::uint64_t size() const = 0;
  // Exactly n bytes at offset into out; false on a read error.
  virtual bool read(std::uint64_t offset, std::size_t n, char* out) const = 0;
};

class memory_source final : public byte_source {
public:
  explicit memory_source(std::string_view data) : m_data(data) {}
  std::uint64_t size() const override { return m_data.size(); }
  bool read(std::uint64_t offset, std::size_t n, char* out) const override {
    if (offset > m_data.size() || n > m_data.size() - offset) return false;
    std::memcpy(out, m_data.data() + offset, n);
    return true;
  }

private:
  std::string_view m_data;
};

class file_source final : public byte_source {
public:
  explicit file_source(const std::filesystem::path& file) : m_fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC)) {
    struct stat st{};
    if (m_fd >= 0 && ::fstat(m_fd, &st) == 0 && S_ISREG(st.st_mode)) m_size = static_cast<std::uint64_t>(st.st_size);
    else if (m_fd >= 0) {
      ::close(m_fd);
      m_fd = -1;
    }
  }
  ~file_source() override {
    if (m_fd >= 0) ::close(m_fd);
  }
  file_source(const file_source&) = delete;
  file_source& operator=(const file_source&) = delete;
  bool ok() const { return m_fd >= 0; }
  std::uint64_t size() const override { return m_size; }
  bool read(std::uint64_t offset, std::size_t n, char* out) const override {
    while (n > 0) {
      const ssize_t got = ::pread(m_fd, out, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      out += got;
      offset += static_cast<std::uint64_t>(got);
      n -= static_cast<std::size_t>(got);
    }
    return true;
  }

private:
  int m_fd = -1;
  std::uint64_t m_size = 0;
};

// Offset of the next chunk magic at or after `from`, or the source's size.
std::uint64_t next_magic(const byte_source& src, std::uint64_t from) {
  constexpr std::size_t block = 1 << 16;
  std::string buf;
  const std::uint64_t size = src.size();
  while (from < size) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(block, size - from));
    buf.resize(n);
    if (!src.read(from, n, buf.data())) return size;
    const std::size_t hit = std::string_view(buf).find(std::string_view(chunk_magic, 4));
    if (hit != std::string_view::npos) return from + hit;
    if (n < 4) return size;
    from += n - 3; // a magic may straddle two blocks
  }
  return size;
}

// After the last chunk: the trace in time order, and the end of a process that never closed
// its stream (crash, kill, _exit) at its last data.
void finish_read(stream_read& out, const read_state& st, const std::string& name, std::size_t skipped_chunks) {
  auto& info = out.profile.process;
  out.valid = st.have_header;
  if (!st.have_header) {
    out.messages.push_back(fmt::format("{}: no readable header chunk; not read as a speedlab profile stream", name));
    return;
  }
  auto& t = out.profile.trace;
  trace::sort_by_start(t);
  t.dropped_records = info.dropped_records;
  const std::uint64_t data_end = std::max({st.data_end, info.last_flush_ns, info.start_ns});
  if (!st.closed) {
    info.truncated = true;
    if (!info.last_flush_ns) info.last_flush_ns = info.start_ns;
    info.end_ns = data_end;
    info.notes.push_back(fmt::format("{}: the process crashed, was killed or called _exit; data up to the last "
                                     "flush, {:.3f} s after it started",
                                     truncated_note_start, static_cast<double>(info.last_flush_ns - std::min(info.last_flush_ns, info.start_ns)) / 1e9));
  } else if (info.end_ns < data_end) {
    info.end_ns = data_end;
  }
  if (skipped_chunks) info.notes.push_back(fmt::format("{} damaged chunk(s) skipped while reading the stream", skipped_chunks));
  t.repetitions = {{info.start_ns, info.end_ns, 0, 0}};
}

stream_read read_source(const byte_source& src, const std::string& name, const records_sink& sink) {
  stream_read out;
  read_state st{out.profile, sink, false, false, 0, {}};
  const std::uint64_t size = src.size();
  std::uint64_t pos = 0;
  std::size_t skipped_chunks = 0, before_header = 0;
  std::uint64_t first_before_header = 0;
  std::string payload;
  if (size == 0) out.messages.push_back(fmt::format("{}: empty (0 bytes); a stream begins with a header chunk", name));
  while (pos < size) {
    if (size - pos < chunk_header_bytes) {
      out.messages.push_back(fmt::format("{}: torn chunk header at offset {} ({} bytes) skipped: the process ended while "
                                         "writing it",
                                         name, pos, size - pos));
      break;
    }
    char h[chunk_header_bytes];
    if (!src.read(pos, chunk_header_bytes, h)) {
      out.messages.push_back(fmt::format("{}: read error at offset {}; the rest is not read", name, pos));
      break;
    }
    const std::uint32_t type = get_u32(h + 4), length = get_u32(h + 8), crc = get_u32(h + 12);
    if (std::memcmp(h, chunk_magic, 4) != 0 || !known_type(type) || length > max_chunk_payload) {
      // Garbage: look for the next chunk header after it.
      const std::uint64_t end = next_magic(src, pos + 1);
      out.messages.push_back(fmt::format("{}: corrupt chunk header at offset {} ({}); {} bytes skipped{}", name, pos,
                                         header_problem(h), end - pos,
                                         end < size ? fmt::format(" to the next chunk at offset {}", end) : ""));
      pos = end;
      continue;
    }
    if (size - pos - chunk_header_bytes < length) {
      out.messages.push_back(fmt::format("{}: torn last chunk at offset {} ({} of {} payload bytes) skipped: the "
                                         "process ended while writing it",
                                         name, pos, size - pos - chunk_header_bytes, length));
      break;
    }
    payload.resize(length);
    if (!src.read(pos + chunk_header_bytes, length, payload.data())) {
      out.messages.push_back(fmt::format("{}: read error at offset {}; the rest is not read", name, pos));
      break;
    }
    const std::uint64_t at = pos;
    pos += chunk_header_bytes + length;
    if (const std::uint32_t computed = crc_of(payload); computed != crc) {
      ++skipped_chunks;
      out.messages.push_back(fmt::format("{}: corrupt chunk at offset {}: CRC mismatch (stored {:08x}, computed {:08x} "
                                         "over its {} payload bytes); skipped",
                                         name, at, crc, computed, length));
      continue;
    }
    const auto t = static_cast<chunk_type>(type);
    if (t != chunk_type::header && !st.have_header) {
      if (!before_header++) first_before_header = at;
      continue;
    }
    if (t == chunk_type::header && st.have_header) {
      out.messages.push_back(fmt::format("{}: a second header chunk at offset {}; skipped", name, at));
      continue;
    }
    try {
      apply(t, payload, st);
    } catch (const std::exception& e) {
      ++skipped_chunks;
      out.messages.push_back(fmt::format("{}: chunk at offset {} unreadable ({}); skipped", name, at, json_problem(e)));
    }
  }
  payload = {};
  if (before_header)
    out.messages.push_back(
        fmt::format("{}: {} chunk(s) from offset {} on come before any readable header chunk; skipped", name,
                    before_header, first_before_header));
  finish_read(out, st, name, skipped_chunks);
  return out;
}

} // namespace

std::string stream_file_name(const std::string& host, std::uint32_t pid) {
  std::string h;
  for (char c : host) h.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ? c : '_');
  if (h.empty()) h = "host";
  return fmt::format("{}-{}{}", h, pid, stream_extension);
}

std::string encode_chunk(chunk_type type, std::string_view payload) {
  std::string out;
  out.reserve(chunk_header_bytes + payload.size());
  out.append(chunk_magic, 4);
  put_u32(out, static_cast<std::uint32_t>(type));
  put_u32(out, static_cast<std::uint32_t>(payload.size()));
  put_u32(out, crc_of(payload));
  out.append(payload);
  return out;
}

json header_json(const process_info& info, std::uint64_t realtime_ns, std::uint32_t flush_interval_ms,
                 const std::string& writer) {
  return json{{"format", stream_format_version},
              {"writer", writer},
              {"backend", "cupti"},
              {"pid", info.pid},
              {"ppid", info.parent_pid},
              {"host", info.host},
              {"argv", info.command_line},
              {"start_ns", info.start_ns},
              {"realtime_ns", realtime_ns},
              {"clock", "CLOCK_MONOTONIC ns"},
              {"flush_interval_ms", flush_interval_ms},
              {"tags", info.tags}};
}

json records_json(std::uint64_t flushed_ns, const trace::device_trace& batch) {
  return json{{"flushed_ns", flushed_ns}, {"trace", batch}};
}

json note_json(std::uint64_t t_ns, const std::string& text) { return json{{"t_ns", t_ns}, {"text", text}}; }

json counters_json(std::uint64_t t_ns, const counters::counter_pass& pass) { return json{{"t_ns", t_ns}, {"pass", pass}}; }

json source_json(std::uint64_t t_ns, const source::source_pass& pass) { return json{{"t_ns", t_ns}, {"pass", pass}}; }

json python_calls_json(std::uint64_t t_ns, const python_chunk& c) {
  json j{{"t_ns", t_ns}};
  if (!c.interpreter.empty()) j["interpreter"] = c.interpreter;
  if (c.has_folding) j["folding"] = {{"library_prefixes", c.library_prefixes}, {"user_prefixes", c.user_prefixes}};
  // The calls in columns: three arrays of numbers, not an object per call.
  json correlation = json::array(), stack = json::array(), how = json::array();
  for (const auto& call : c.calls) {
    correlation.push_back(call.correlation);
    stack.push_back(call.stack);
    how.push_back(static_cast<int>(call.how));
  }
  j["calls"] = {{"correlation", std::move(correlation)}, {"stack", std::move(stack)}, {"how", std::move(how)}};
  json stacks = json::array(), frames = json::array();
  for (const auto& [id, ids] : c.stacks) stacks.push_back({{"id", id}, {"frames", ids}});
  for (const auto& [id, f] : c.frames)
    frames.push_back(
        {{"id", id}, {"file", f.file}, {"line", f.line}, {"function", f.function}, {"user", f.user}, {"text", f.text}});
  j["stacks"] = std::move(stacks);
  j["frames"] = std::move(frames);
  return j;
}

json launch_windows_json(std::uint64_t t_ns, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& windows) {
  json w = json::array();
  for (const auto& [start, end] : windows) w.push_back(json::array({start, end}));
  return json{{"t_ns", t_ns}, {"windows", std::move(w)}};
}

json close_json(std::uint64_t end_ns, const std::string& reason, std::uint64_t dropped_records) {
  return json{{"end_ns", end_ns}, {"reason", reason}, {"dropped_records", dropped_records}};
}


std::string records_binary(std::uint64_t flushed_ns, const trace::device_trace& batch) {
  binary_strings strings;
  const std::uint32_t backend = strings.id(batch.backend), note = strings.id(batch.note);
  std::string body;
  std::uint32_t tables = 0;
  trace::schema::tables(batch, [&](const char*, const auto& records) {
    encode_table(records, strings, body);
    ++tables;
  });
  std::uint64_t string_bytes = 0;
  for (const auto& s : strings.strings()) string_bytes += s.size();
  if (string_bytes > max_chunk_payload) throw std::runtime_error("records chunk: string table over 1 GiB");
  std::string out;
  out.reserve(binary_fixed_bytes + 4 * strings.strings().size() + string_bytes + 8 + body.size());
  put_u32(out, records_binary_version);
  put_u32(out, tables);
  put_u64(out, flushed_ns);
  put_u64(out, batch.dropped_records);
  put_u64(out, batch.buffer_bytes);
  put_u32(out, batch.process);
  put_u32(out, static_cast<std::uint32_t>(strings.strings().size()));
  put_u32(out, static_cast<std::uint32_t>(string_bytes));
  for (const auto& s : strings.strings()) put_u32(out, static_cast<std::uint32_t>(s.size()));
  for (const auto& s : strings.strings()) out += s;
  put_u32(out, backend);
  put_u32(out, note);
  out += body;
  return out;
}

records_batch decode_records_binary(std::string_view payload) {
  records_batch b;
  decode_records_binary(payload, b);
  return b;
}

void decode_records_binary(std::string_view payload, records_batch& b) {
  payload_reader in(payload);
  const std::uint32_t version = in.u32("the version");
  if (version != records_binary_version)
    throw std::runtime_error(fmt::format("binary records version {}; this reader reads version {}", version,
                                         records_binary_version));
  std::uint32_t expected_tables = 0;
  const trace::device_trace empty;
  trace::schema::tables(empty, [&](const char*, const auto&) { ++expected_tables; });
  if (const std::uint32_t n = in.u32("the table count"); n != expected_tables)
    throw std::runtime_error(fmt::format("binary records: {} tables, version {} has {}", n, version, expected_tables));
  b.flushed_ns = in.u64("flushed_ns");
  b.trace.dropped_records = in.u64("dropped_records");
  b.trace.buffer_bytes = in.u64("buffer_bytes");
  b.trace.process = in.u32("process");
  const std::uint32_t count = in.u32("the string count"), bytes = in.u32("the string bytes");
  if (count > in.left() / 4)
    throw std::runtime_error(fmt::format("binary records: {} strings claimed, {} bytes left", count, in.left()));
  const char* lengths = in.take(std::size_t{4} * count, "the string lengths");
  std::uint64_t sum = 0;
  for (std::uint32_t i = 0; i < count; ++i) sum += load_le<std::uint32_t>(lengths + 4 * i);
  if (sum != bytes)
    throw std::runtime_error(fmt::format("binary records: string lengths add up to {}, the table says {} bytes", sum, bytes));
  const char* text = in.take(bytes, "the strings");
  std::vector<std::string> strings;
  strings.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint32_t n = load_le<std::uint32_t>(lengths + 4 * i);
    std::string_view s(text, n);
    if (!trace::valid_utf8(s)) throw std::runtime_error(fmt::format("binary records: string {} is not UTF-8", i));
    strings.emplace_back(s);
    text += n;
  }
  auto string_at = [&](const char* what) -> const std::string& {
    const std::uint32_t i = in.u32(what);
    if (i >= strings.size())
      throw std::runtime_error(fmt::format("binary records: {} names string {} of {}", what, i, strings.size()));
    return strings[i];
  };
  b.trace.backend = string_at("the backend");
  b.trace.note = string_at("the note");
  trace::schema::tables(b.trace, [&](const char* table, auto& records) { decode_table(in, strings, table, records); });
  b.trace.repetitions.clear();
  if (in.left() != 0)
    throw std::runtime_error(fmt::format("binary records: {} bytes after the last table", in.left()));
}

// ---- writer ----------------------------------------------------------------------------

std::unique_ptr<stream_writer> stream_writer::create(const std::filesystem::path& file, std::string& error) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = fmt::format("cannot create {}: {}", file.string(), std::strerror(errno));
    return nullptr;
  }
  return std::unique_ptr<stream_writer>(new stream_writer(fd));
}

stream_writer::~stream_writer() {
  if (m_fd >= 0) ::close(m_fd);
}

bool stream_writer::write(chunk_type type, const json& payload) {
  if (m_fd < 0) return false;
  // Text the program gave (a source line in Latin-1) may not be UTF-8: replaced, never thrown.
  return write_bytes(type, payload.dump(-1, ' ', false, json::error_handler_t::replace));
}

bool stream_writer::write_bytes(chunk_type type, std::string_view payload) {
  if (m_fd < 0) return false;
  const std::string chunk = encode_chunk(type, payload);
  const char* p = chunk.data();
  std::size_t left = chunk.size();
  while (left > 0) {
    const ssize_t n = ::write(m_fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  m_bytes += chunk.size();
  return true;
}

void stream_writer::abandon() { m_fd = -1; }

// ---- reader ----------------------------------------------------------------------------

namespace {

// Why a path is not a stream that can be read: not a regular file (and what it is), or not readable.
std::string not_a_file_problem(const std::filesystem::path& file) {
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (ec || !std::filesystem::exists(status)) return "missing or not reachable";
  if (std::filesystem::is_directory(status)) return "not a regular file (a directory)";
  if (!std::filesystem::is_regular_file(status)) return "not a regular file";
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  const int error = errno;
  if (fd >= 0) {
    ::close(fd);
    return "cannot be read";
  }
  return fmt::format("cannot be opened: {}", std::strerror(error));
}

} // namespace

stream_read read_stream(const std::filesystem::path& file) { return read_stream(file, records_sink{}); }

stream_read read_stream(const std::filesystem::path& file, const records_sink& sink) {
  const std::string name = file.string(); // the path: a job's rank folders each hold streams
  const file_source src(file);
  if (!src.ok()) {
    stream_read out;
    out.messages.push_back(fmt::format("{}: {}", name, not_a_file_problem(file)));
    return out;
  }
  return read_source(src, name, sink);
}

stream_read read_stream_bytes(std::string_view data, const std::string& name, const records_sink& sink) {
  return read_source(memory_source(data), name, sink);
}

std::vector<std::filesystem::path> stream_files(const std::filesystem::path& dir, std::vector<std::string>& messages) {
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() != stream_extension) continue;
    std::error_code type_ec;
    if (e.is_regular_file(type_ec))
      files.push_back(e.path());
    else
      messages.push_back(fmt::format("{}: {}; skipped", e.path().string(), not_a_file_problem(e.path())));
  }
  if (ec) {
    messages.push_back(fmt::format("{}: cannot list the folder: {}", dir.string(), ec.message()));
    return {};
  }
  std::sort(files.begin(), files.end());
  return files;
}

folder_read read_stream_folder(const std::filesystem::path& dir) {
  folder_read out;
  const std::vector<std::filesystem::path> files = stream_files(dir, out.messages);
  for (const auto& f : files) {
    stream_read r = read_stream(f);
    append_all(out.messages, std::move(r.messages));
    if (r.valid) out.processes.push_back(std::move(r.profile));
  }
  std::stable_sort(out.processes.begin(), out.processes.end(), [](const auto& a, const auto& b) {
    return std::tie(a.process.start_ns, a.process.pid) < std::tie(b.process.start_ns, b.process.pid);
  });
  return out;
}

} // namespace speedlab::profile
