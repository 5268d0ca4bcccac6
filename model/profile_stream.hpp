// The per-process stream of `speedlab profile`: the injection library appends chunks to one
// file per process while the program runs; after the program ends, `speedlab profile` reads
// the folder back into process_profile (model/profile.hpp). docs/profile-format.md is the
// format's description; this file is its one implementation (writer and reader).
//
//   auto w = profile::stream_writer::create(dir / profile::stream_file_name(host, pid), error);
//   w->write(profile::chunk_type::header, profile::header_json(info, flush_ms));
//   w->write_bytes(profile::chunk_type::records_binary, profile::records_binary(flushed_at, trace));
//   w->write(profile::chunk_type::close, profile::close_json(end_ns, "exit", dropped));
//   auto read = profile::read_stream_folder(dir); // every *.slstream, tolerant of torn tails
//   profile::read_stream(file, [&](const profile::process_info&, profile::records_batch&& b) {
//     summary.add(b.trace); // one chunk's records at a time: memory bounded by the chunk
//   });
//
// A chunk: "SLP1", u32 type, u32 payload length, u32 CRC-32 of the payload (all little
// endian), then the payload: a JSON object, or for records_binary little-endian fixed-width
// columns and one string table. Each chunk is one write(2) on an O_APPEND file, so a process
// killed at any point leaves whole chunks plus at most one torn one at the end. The reader
// reads every form a writer of this format ever wrote (JSON records chunks: format 1).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/profile.hpp"

namespace speedlab::profile {

// 1: records chunks are JSON (type 2); 2: the injection library writes binary records chunks
// (type 5). The header's "format"; a reader refuses a newer one.
inline constexpr int stream_format_version = 2;
// The first field of a binary records payload; a reader skips (with a message) a newer one.
inline constexpr std::uint32_t records_binary_version = 1;
inline constexpr std::string_view stream_extension = ".slstream";
inline constexpr std::size_t chunk_header_bytes = 16;
inline constexpr std::uint32_t max_chunk_payload = 1u << 30; // larger lengths mean a corrupt header

enum class chunk_type : std::uint32_t {
  header = 1,
  records = 2,
  note = 3,
  close = 4,
  records_binary = 5,
  counters = 6,
  source = 7,
  launch_windows = 8,
  python_calls = 9
};

// "<host>-<pid>.slstream", the host reduced to [A-Za-z0-9._-] so any host name is a file name.
std::string stream_file_name(const std::string& host, std::uint32_t pid);

// One encoded chunk (header + payload), what the writer hands to write(2).
std::string encode_chunk(chunk_type type, std::string_view payload);

// Payloads. The header carries the process's facts (info.pid, parent_pid, host,
// command_line, start_ns, tags); realtime_ns is the wall clock at start_ns, so streams from
// several hosts can be put on one time line.
nlohmann::json header_json(const process_info& info, std::uint64_t realtime_ns, std::uint32_t flush_interval_ms,
                           const std::string& writer);
nlohmann::json records_json(std::uint64_t flushed_ns, const trace::device_trace& batch);
nlohmann::json note_json(std::uint64_t t_ns, const std::string& text);
// A counters pass (model/counters.hpp) as the injection library read it for one context.
nlohmann::json counters_json(std::uint64_t t_ns, const counters::counter_pass& pass);
// A source pass (model/source_view.hpp: top lines per kernel) as the injection library
// folded it for one context (`speedlab profile --source`).
nlohmann::json source_json(std::uint64_t t_ns, const source::source_pass& pass);
// The launch-call windows closed since the last such chunk (process_profile::launch_windows).
nlohmann::json launch_windows_json(std::uint64_t t_ns, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& windows);
// One python_calls chunk (profilers/python): the calls since the last chunk, the stacks and
// frames first written in it, and, once, the interpreter and the folding rule's prefixes.
struct python_chunk {
  std::string interpreter; // the first chunk's
  bool has_folding = false;
  std::vector<std::string> library_prefixes, user_prefixes;
  struct call {
    std::uint32_t correlation = 0, stack = 0;
    python_how how = python_how::unknown;
  };
  std::vector<call> calls;
  std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> stacks; // id, frame ids outermost first
  std::vector<std::pair<std::uint32_t, python_frame>> frames;               // id, frame
  bool empty() const {
    return interpreter.empty() && !has_folding && calls.empty() && stacks.empty() && frames.empty();
  }
};
nlohmann::json python_calls_json(std::uint64_t t_ns, const python_chunk& chunk);
nlohmann::json close_json(std::uint64_t end_ns, const std::string& reason, std::uint64_t dropped_records);

// The binary records payload (chunk type records_binary; docs/profile-format.md has the
// layout): what records_json holds, in fixed-width columns, decoded without a parser.
std::string records_binary(std::uint64_t flushed_ns, const trace::device_trace& batch);

// One records chunk, decoded.
struct records_batch {
  std::uint64_t flushed_ns = 0;
  trace::device_trace trace; // no repetitions: the reader gives the process one window
};
// Decodes a binary records payload. Every count, length and string index is checked against
// the payload before use; throws std::runtime_error saying what is wrong.
records_batch decode_records_binary(std::string_view payload);
// The same into `into`, every field overwritten: the storage of an earlier batch (its
// vectors, and the names of its records) is reused, so a reader going through a stream's
// chunks does not allocate a string per record.
void decode_records_binary(std::string_view payload, records_batch& into);

// Appends chunks to one stream file. Created exclusively (a second writer for the same
// name fails rather than interleaving) and close-on-exec (exec'd children write their own).
class stream_writer {
public:
  // nullptr with `error` set when the file cannot be created.
  static std::unique_ptr<stream_writer> create(const std::filesystem::path& file, std::string& error);
  ~stream_writer();
  stream_writer(const stream_writer&) = delete;
  stream_writer& operator=(const stream_writer&) = delete;

  // One write(2) of the whole chunk (retried on EINTR and short writes); false on failure.
  bool write(chunk_type type, const nlohmann::json& payload);
  // The same for a payload already encoded (records_binary).
  bool write_bytes(chunk_type type, std::string_view payload);
  // Forgets the descriptor without touching the file: a forked child must not write into
  // its parent's stream.
  void abandon();
  std::uint64_t bytes_written() const { return m_bytes; }

private:
  explicit stream_writer(int fd) : m_fd(fd) {}
  int m_fd = -1;
  std::uint64_t m_bytes = 0;
};

// How the note of a stream without its closing chunk begins (read_stream): a reader that
// reads the stream of a process still running (the Python bridge) expects it and drops it.
inline constexpr std::string_view truncated_note_start = "stream ends without its closing chunk";

struct stream_read {
  process_profile profile;
  bool valid = false;                // a header chunk was found
  std::vector<std::string> messages; // what was skipped and why, naming the file and offset
};

// Reads one stream. Whole chunks are kept; a torn last chunk (the process died while
// writing it) and chunks whose checksum fails are skipped with a message; after garbage
// the reader looks for the next chunk header. No close chunk: truncated, with
// last_flush_ns the time of the last records chunk. The file is read one chunk at a time.
stream_read read_stream(const std::filesystem::path& file);

// The same, handing each records chunk to `sink` (in file order, after the header; with the
// process's facts so far) instead of keeping it: profile.trace then holds no records, and
// memory stays that of one chunk. Records within and across chunks are in CUPTI's delivery
// order, not sorted by start. A sink that leaves the batch where it is (reads it, moves
// nothing out) has its storage reused for the next chunk.
using records_sink = std::function<void(const process_info& process, records_batch&& batch)>;
stream_read read_stream(const std::filesystem::path& file, const records_sink& sink);

// A stream held in memory (tests, the fuzz target); `name` stands for the file in messages.
stream_read read_stream_bytes(std::string_view data, const std::string& name, const records_sink& sink = {});

struct folder_read {
  std::vector<process_profile> processes; // ordered by start time, then pid
  std::vector<std::string> messages;
};
folder_read read_stream_folder(const std::filesystem::path& dir);
// The *.slstream files of a folder, by name; a message when the folder cannot be listed.
std::vector<std::filesystem::path> stream_files(const std::filesystem::path& dir, std::vector<std::string>& messages);

} // namespace speedlab::profile
