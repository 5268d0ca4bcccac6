#include "model/profile_stream.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include "model/trace_fold.hpp"
#include "model/trace_text.hpp"

namespace speedlab::profile {
namespace {

using nlohmann::json;

constexpr char chunk_magic[4] = {'S', 'L', 'P', '1'};

void put_u32(std::string& s, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
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

template <class T>
void sort_by_start(std::vector<T>& v) {
  const auto by_start = [](const T& a, const T& b) { return a.start < b.start; };
  if (!std::is_sorted(v.begin(), v.end(), by_start)) std::stable_sort(v.begin(), v.end(), by_start);
}

std::uint64_t last_end(const trace::device_trace& t) {
  std::uint64_t end = 0;
  auto each = [&end](const auto& records) {
    for (const auto& r : records) end = std::max(end, r.end);
  };
  each(t.kernels), each(t.memcpys), each(t.memsets), each(t.api_calls), each(t.syncs), each(t.ranges);
  return end;
}

// A records chunk's trace appended to the profile.
void apply_records(trace::device_trace&& batch, std::uint64_t flushed_ns, process_profile& p) {
  auto& info = p.process;
  info.last_flush_ns = std::max(info.last_flush_ns, flushed_ns);
  info.dropped_records += batch.dropped_records;
  trace::append_records(p.trace, std::move(batch)); // one fold (model/trace_fold); drops counted in info
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

// Applies one decoded chunk to the profile; throws on a payload that is not what its type says.
void apply(chunk_type type, const json& j, process_profile& p, bool& closed, bool& have_header) {
  auto& info = p.process;
  switch (type) {
  case chunk_type::header: {
    if (j.value("format", 0) > stream_format_version)
      throw std::runtime_error(fmt::format("stream format {} is newer than this reader's {}", j.value("format", 0),
                                           stream_format_version));
    info.pid = j.at("pid").get<std::uint32_t>();
    info.parent_pid = j.value("ppid", std::uint32_t{0});
    info.host = j.value("host", std::string{});
    info.command_line = j.value("argv", std::vector<std::string>{});
    info.start_ns = j.value("start_ns", std::uint64_t{0});
    info.tags = j.value("tags", std::map<std::string, std::string>{});
    if (j.contains("realtime_ns")) info.tags["realtime_ns_at_start"] = std::to_string(j["realtime_ns"].get<std::uint64_t>());
    if (j.contains("flush_interval_ms"))
      info.tags["flush_interval_ms"] = std::to_string(j["flush_interval_ms"].get<std::uint32_t>());
    info.used_cuda = true; // the library writes a stream only once CUDA initialized it
    p.trace.backend = j.value("backend", std::string("cupti"));
    p.trace.process = info.pid;
    have_header = true;
    return;
  }
  case chunk_type::records: {
    apply_records(j.at("trace").get<trace::device_trace>(), j.value("flushed_ns", std::uint64_t{0}), p);
    return;
  }
  case chunk_type::note: {
    std::string text = j.at("text").get<std::string>();
    if (gpu_tags(text, info)) return;
    if (std::find(info.notes.begin(), info.notes.end(), text) == info.notes.end()) info.notes.push_back(std::move(text));
    return;
  }
  case chunk_type::close: {
    info.end_ns = j.value("end_ns", std::uint64_t{0});
    info.dropped_records = std::max(info.dropped_records, j.value("dropped_records", std::uint64_t{0}));
    if (std::string reason = j.value("reason", std::string{}); !reason.empty() && reason != "exit")
      info.tags["closed_by"] = reason;
    closed = true;
    return;
  }
  }
  throw std::runtime_error("unknown chunk type");
}

bool known_type(std::uint32_t t) { return t >= 1 && t <= 4; }

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

json close_json(std::uint64_t end_ns, const std::string& reason, std::uint64_t dropped_records) {
  return json{{"end_ns", end_ns}, {"reason", reason}, {"dropped_records", dropped_records}};
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
  const std::string chunk = encode_chunk(type, payload.dump());
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

stream_read read_stream(const std::filesystem::path& file) {
  stream_read out;
  const std::string name = file.filename().string();
  // The file mapped rather than copied (streams reach hundreds of MB; a file being
  // appended to is seen up to its size now); read into memory where it cannot be mapped.
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    out.messages.push_back(fmt::format("{}: cannot be read", name));
    return out;
  }
  struct stat st {};
  std::string copy;
  void* mapped = MAP_FAILED;
  std::size_t mapped_size = 0;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    mapped_size = static_cast<std::size_t>(st.st_size);
    mapped = ::mmap(nullptr, mapped_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0); // read at once, no page faults
    if (mapped == MAP_FAILED) {
      copy.resize(mapped_size);
      std::size_t got = 0;
      while (got < copy.size()) {
        const ssize_t n = ::read(fd, copy.data() + got, copy.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
      }
      copy.resize(got);
    } else {
      ::madvise(mapped, mapped_size, MADV_SEQUENTIAL);
    }
  }
  ::close(fd);
  struct unmap {
    void* p;
    std::size_t n;
    ~unmap() {
      if (p != MAP_FAILED) ::munmap(p, n);
    }
  } unmap_at_end{mapped, mapped_size};
  const std::string_view data =
      mapped != MAP_FAILED ? std::string_view(static_cast<const char*>(mapped), mapped_size) : std::string_view(copy);
  bool closed = false, have_header = false;
  std::size_t pos = 0, skipped_chunks = 0;
  while (pos < data.size()) {
    if (data.size() - pos < chunk_header_bytes) {
      out.messages.push_back(fmt::format("{}: torn chunk header at offset {} ({} bytes) skipped: the process ended while "
                                         "writing it",
                                         name, pos, data.size() - pos));
      break;
    }
    const char* h = data.data() + pos;
    const std::uint32_t type = get_u32(h + 4), length = get_u32(h + 8), crc = get_u32(h + 12);
    if (std::memcmp(h, chunk_magic, 4) != 0 || !known_type(type) || length > max_chunk_payload) {
      // Garbage: look for the next chunk header after it.
      const std::size_t next = data.find(std::string_view(chunk_magic, 4), pos + 1);
      const std::size_t end = next == std::string_view::npos ? data.size() : next;
      out.messages.push_back(fmt::format("{}: {} bytes that are no chunk at offset {} skipped", name, end - pos, pos));
      pos = end;
      continue;
    }
    if (data.size() - pos - chunk_header_bytes < length) {
      out.messages.push_back(fmt::format("{}: torn last chunk at offset {} ({} of {} payload bytes) skipped: the "
                                         "process ended while writing it",
                                         name, pos, data.size() - pos - chunk_header_bytes, length));
      break;
    }
    const std::string_view payload(data.data() + pos + chunk_header_bytes, length);
    const std::size_t at = pos;
    pos += chunk_header_bytes + length;
    if (crc_of(payload) != crc) {
      ++skipped_chunks;
      out.messages.push_back(fmt::format("{}: chunk at offset {} ({} bytes) fails its checksum; skipped", name, at, length));
      continue;
    }
    try {
      const auto t = static_cast<chunk_type>(type);
      if (t == chunk_type::records && have_header) {
        // Records chunks are most of a stream: read straight from the text when it is the
        // compact form (trace_json.cpp); anything else goes through the JSON tree below,
        // which says what is wrong.
        trace::device_trace batch;
        std::map<std::string, std::uint64_t> numbers;
        if (trace::read_compact_trace_member(payload, "trace", batch, numbers)) {
          apply_records(std::move(batch), numbers["flushed_ns"], out.profile);
          continue;
        }
      }
      const json j = json::parse(payload);
      if (t != chunk_type::header && !have_header) {
        out.messages.push_back(fmt::format("{}: chunk at offset {} comes before the header; skipped", name, at));
        continue;
      }
      apply(t, j, out.profile, closed, have_header);
    } catch (const std::exception& e) {
      ++skipped_chunks;
      out.messages.push_back(fmt::format("{}: chunk at offset {} unreadable ({}); skipped", name, at, e.what()));
    }
  }
  out.valid = have_header;
  if (!have_header) {
    out.messages.push_back(fmt::format("{}: no readable header chunk; not a speedlab profile stream", name));
    return out;
  }
  auto& p = out.profile;
  auto& info = p.process;
  auto& t = p.trace;
  sort_by_start(t.kernels), sort_by_start(t.memcpys), sort_by_start(t.memsets), sort_by_start(t.api_calls);
  sort_by_start(t.syncs), sort_by_start(t.ranges), sort_by_start(t.overheads);
  t.dropped_records = info.dropped_records;
  const std::uint64_t data_end = std::max({last_end(t), info.last_flush_ns, info.start_ns});
  if (!closed) {
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
  return out;
}

folder_read read_stream_folder(const std::filesystem::path& dir) {
  folder_read out;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == stream_extension) files.push_back(e.path());
  if (ec) {
    out.messages.push_back(fmt::format("{}: cannot list the folder: {}", dir.string(), ec.message()));
    return out;
  }
  std::sort(files.begin(), files.end());
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
