// The per-process stream of `speedlab profile` (model/profile_stream): writer/reader round
// trip, torn and truncated streams, damaged chunks, file naming.
#include "speedlab_catch.hpp"

#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "model/profile_stream.hpp"
#include "test_support.hpp"

using namespace speedlab;
using Catch::Contains;

namespace {

profile::process_info info_of(std::uint32_t pid) {
  profile::process_info i;
  i.pid = pid;
  i.parent_pid = 7;
  i.host = "node-1";
  i.command_line = {"python3", "train.py", "--steps", "3"};
  i.start_ns = 1000;
  i.tags = {{"RANK", "1"}, {"WORLD_SIZE", "2"}};
  return i;
}

trace::device_trace batch(std::uint64_t t0, int kernels) {
  trace::device_trace t;
  for (int k = 0; k < kernels; ++k) {
    trace::kernel_record r;
    r.start = t0 + 100 * k;
    r.end = r.start + 50;
    r.name = "mul_kernel";
    r.mangled_name = "_Z10mul_kernelPf";
    r.grid = {4096, 1, 1};
    r.correlation = static_cast<std::uint32_t>(t0 + k);
    t.kernels.push_back(r);
    trace::api_record a;
    a.start = r.start - 20;
    a.end = r.start - 5;
    a.name = "cudaLaunchKernel_v7000";
    a.correlation = r.correlation;
    t.api_calls.push_back(a);
  }
  t.ranges.push_back({t0, t0 + 100 * kernels, 42, 43, "app", "step"});
  return t;
}

std::filesystem::path write_stream(const std::filesystem::path& dir, std::uint32_t pid, int chunks, bool close) {
  std::string error;
  const auto file = dir / profile::stream_file_name("node-1", pid);
  auto w = profile::stream_writer::create(file, error);
  REQUIRE(w);
  REQUIRE(w->write(profile::chunk_type::header, profile::header_json(info_of(pid), 5555, 500, "test")));
  for (int c = 0; c < chunks; ++c) {
    REQUIRE(w->write(profile::chunk_type::records, profile::records_json(2000 + 1000 * c, batch(2000 + 1000 * c, 3))));
    if (c == 0) REQUIRE(w->write(profile::chunk_type::note, profile::note_json(2100, "cupti: something to say")));
  }
  if (close) REQUIRE(w->write(profile::chunk_type::close, profile::close_json(9000, "exit", 0)));
  return file;
}

std::string slurp(const std::filesystem::path& f) {
  std::ifstream in(f, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const std::filesystem::path& f, const std::string& s) {
  std::ofstream out(f, std::ios::binary | std::ios::trunc);
  out << s;
}

} // namespace

TEST_CASE("profile stream: a closed stream reads back whole", "[profile_stream]") {
  testing::temp_dir dir;
  const auto file = write_stream(dir.path(), 1234, 3, true);
  CHECK(file.filename() == "node-1-1234.slstream");
  const auto r = profile::read_stream(file);
  REQUIRE(r.valid);
  CHECK(r.messages.empty());
  const auto& p = r.profile;
  CHECK(p.process.pid == 1234);
  CHECK(p.process.parent_pid == 7);
  CHECK(p.process.host == "node-1");
  CHECK(p.process.command_line == std::vector<std::string>{"python3", "train.py", "--steps", "3"});
  CHECK(p.process.tags.at("RANK") == "1");
  CHECK(p.process.tags.at("realtime_ns_at_start") == "5555");
  CHECK(p.process.used_cuda);
  CHECK_FALSE(p.process.truncated);
  CHECK(p.process.end_ns == 9000);
  CHECK(p.process.last_flush_ns == 4000);
  REQUIRE(p.process.notes.size() == 1);
  CHECK(p.process.notes[0] == "cupti: something to say");
  REQUIRE(p.trace.kernels.size() == 9);
  CHECK(p.trace.api_calls.size() == 9);
  CHECK(p.trace.ranges.size() == 3);
  CHECK(p.trace.kernels[0].name == "mul_kernel");
  CHECK(p.trace.kernels[0].grid[0] == 4096);
  for (std::size_t i = 1; i < p.trace.kernels.size(); ++i) CHECK(p.trace.kernels[i - 1].start <= p.trace.kernels[i].start);
  REQUIRE(p.trace.repetitions.size() == 1);
  CHECK(p.trace.repetitions[0].start == 1000);
  CHECK(p.trace.repetitions[0].end == 9000);
}

TEST_CASE("profile stream: no closing chunk means truncated at the last flush", "[profile_stream]") {
  testing::temp_dir dir;
  const auto r = profile::read_stream(write_stream(dir.path(), 77, 2, false));
  REQUIRE(r.valid);
  CHECK(r.profile.process.truncated);
  CHECK(r.profile.process.last_flush_ns == 3000);
  CHECK(r.profile.trace.kernels.size() == 6);
  CHECK_THAT(r.profile.process.notes.back(), Contains("without its closing chunk"));
}

TEST_CASE("profile stream: a torn last chunk is skipped with a message, the rest kept", "[profile_stream]") {
  testing::temp_dir dir;
  const auto file = write_stream(dir.path(), 78, 3, false);
  const std::string whole = slurp(file);
  // Cut into the last records chunk: as if SIGKILL came during its write.
  spit(file, whole.substr(0, whole.size() - 40));
  auto r = profile::read_stream(file);
  REQUIRE(r.valid);
  CHECK(r.profile.process.truncated);
  CHECK(r.profile.trace.kernels.size() == 6);
  CHECK(r.profile.process.last_flush_ns == 3000);
  REQUIRE(r.messages.size() == 1);
  CHECK_THAT(r.messages[0], Contains("torn last chunk"));
  CHECK_THAT(r.messages[0], Contains("node-1-78.slstream"));
  // Cut inside a chunk header.
  const std::size_t header_only = whole.find("SLP1", 40); // second chunk
  spit(file, whole.substr(0, header_only + 7));
  r = profile::read_stream(file);
  REQUIRE(r.valid);
  CHECK(r.profile.trace.kernels.empty());
  CHECK_THAT(r.messages.at(0), Contains("torn chunk header"));
}

TEST_CASE("profile stream: a damaged chunk is skipped, later chunks still read", "[profile_stream]") {
  testing::temp_dir dir;
  const auto file = write_stream(dir.path(), 79, 3, true);
  std::string data = slurp(file);
  // Flip a byte inside the first records chunk's payload: its checksum fails.
  const std::size_t first_records = data.find("SLP1", 4);
  data[first_records + 16 + 20] ^= 0x55;
  spit(file, data);
  auto r = profile::read_stream(file);
  REQUIRE(r.valid);
  CHECK_FALSE(r.profile.process.truncated);
  CHECK(r.profile.trace.kernels.size() == 6);
  REQUIRE_FALSE(r.messages.empty());
  CHECK_THAT(r.messages[0], Contains("fails its checksum"));

  // Garbage between chunks: the reader finds the next chunk header.
  data = slurp(write_stream(dir.path(), 80, 2, true));
  const std::size_t second = data.find("SLP1", 4);
  data.insert(second, "garbage bytes!");
  const auto file2 = dir.path() / "garbage.slstream";
  spit(file2, data);
  r = profile::read_stream(file2);
  REQUIRE(r.valid);
  CHECK(r.profile.trace.kernels.size() == 6);
  CHECK_FALSE(r.profile.process.truncated);
  CHECK_THAT(r.messages.at(0), Contains("14 bytes that are no chunk"));
}

TEST_CASE("profile stream: a folder of streams, with one that is not a stream", "[profile_stream]") {
  testing::temp_dir dir;
  write_stream(dir.path(), 300, 1, true);
  write_stream(dir.path(), 200, 2, false);
  spit(dir.path() / "node-1-5.slstream", "not a stream at all");
  spit(dir.path() / "unrelated.txt", "ignored");
  const auto r = profile::read_stream_folder(dir.path());
  REQUIRE(r.processes.size() == 2);
  CHECK(r.processes[0].process.pid == 200); // same start: ordered by pid
  CHECK(r.processes[0].process.truncated);
  CHECK_FALSE(r.processes[1].process.truncated);
  bool named = false;
  for (const auto& m : r.messages) named |= m.find("node-1-5.slstream") != std::string::npos;
  CHECK(named);
}

TEST_CASE("profile stream: names are safe file names; a second writer for one name fails", "[profile_stream]") {
  CHECK(profile::stream_file_name("gpu/node 3", 9) == "gpu_node_3-9.slstream");
  CHECK(profile::stream_file_name("", 9) == "host-9.slstream");
  testing::temp_dir dir;
  std::string error;
  const auto file = dir.path() / profile::stream_file_name("h", 1);
  auto first = profile::stream_writer::create(file, error);
  REQUIRE(first);
  auto second = profile::stream_writer::create(file, error);
  CHECK_FALSE(second);
  CHECK_THAT(error, Contains("cannot create"));
}

TEST_CASE("profile stream: chunk layout is magic, type, length, CRC-32, payload", "[profile_stream]") {
  const std::string c = profile::encode_chunk(profile::chunk_type::note, "{}");
  REQUIRE(c.size() == profile::chunk_header_bytes + 2);
  CHECK(c.substr(0, 4) == "SLP1");
  CHECK(static_cast<unsigned char>(c[4]) == 3);
  CHECK(static_cast<unsigned char>(c[8]) == 2);
  // CRC-32 of "{}", as Python's zlib.crc32(b"{}") gives it.
  const std::uint32_t crc = static_cast<unsigned char>(c[12]) | static_cast<unsigned char>(c[13]) << 8 |
                            static_cast<unsigned char>(c[14]) << 16 | static_cast<std::uint32_t>(static_cast<unsigned char>(c[15])) << 24;
  CHECK(crc == 0xa3a6bf43u);
  CHECK(c.substr(16) == "{}");
}

// Not a timed test (hidden tag): how long reading a large stream takes, and the peak memory.
//   build/tests/speedlab_tests "[.profile_stream_benchmark]"
TEST_CASE("profile stream: reading 1 million kernels and 2 million API calls", "[.profile_stream_benchmark]") {
  testing::temp_dir dir;
  const auto file = dir.path() / profile::stream_file_name("bench", 1);
  std::string error;
  auto w = profile::stream_writer::create(file, error);
  REQUIRE(w);
  w->write(profile::chunk_type::header, profile::header_json(info_of(1), 0, 500, "bench"));
  const auto t0 = std::chrono::steady_clock::now();
  for (int c = 0; c < 10; ++c) {
    trace::device_trace t = batch(2000 + 1000000000ull * c, 100000);
    for (int k = 0; k < 100000; ++k) t.api_calls.push_back(t.api_calls[k]); // runtime + driver record per launch
    REQUIRE(w->write(profile::chunk_type::records, profile::records_json(3000 + 1000000000ull * c, t)));
  }
  w->write(profile::chunk_type::close, profile::close_json(20000000000ull, "exit", 0));
  const auto t1 = std::chrono::steady_clock::now();
  const auto r = profile::read_stream(file);
  const auto t2 = std::chrono::steady_clock::now();
  REQUIRE(r.profile.trace.kernels.size() == 1000000);
  REQUIRE(r.profile.trace.api_calls.size() == 2000000);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  WARN("stream of " << std::filesystem::file_size(file) / 1048576 << " MiB: written in "
                    << std::chrono::duration<double>(t1 - t0).count() << " s, read in "
                    << std::chrono::duration<double>(t2 - t1).count() << " s; peak RSS " << usage.ru_maxrss / 1024
                    << " MiB");
}
