// The per-process stream of `speedlab profile` (model/profile_stream): writer/reader round
// trip, torn and truncated streams, damaged chunks, file naming.
#include "speedlab_catch.hpp"

#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/counters.hpp"
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
  CHECK_THAT(r.messages[0], Contains(fmt::format("corrupt chunk at offset {}: CRC mismatch", first_records)));

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
  CHECK_THAT(r.messages.at(0), Contains(fmt::format("corrupt chunk header at offset {} (wrong magic 'garb'", second) +
                                        ", a chunk begins with 'SLP1'); 14 bytes skipped"));
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

// ---- binary records chunks (chunk type 5) -----------------------------------------------

namespace {

// Every table, every field away from its default, names shared and distinct.
trace::device_trace full_batch() {
  trace::device_trace t;
  t.backend = "cupti";
  t.note = "a note \xc3\xa9";
  t.dropped_records = 3;
  t.buffer_bytes = 1ull << 33;
  t.process = 4242;
  for (int i = 0; i < 3; ++i) {
    trace::kernel_record k;
    k.start = (1ull << 40) + static_cast<std::uint64_t>(i);
    k.end = k.start + 7;
    k.device = 1, k.context = 2, k.stream = 13, k.correlation = 0xfffffff0u + static_cast<std::uint32_t>(i);
    k.name = i == 2 ? "other" : "void k<float>(float*)";
    k.mangled_name = "_Z1kIfEvPT_";
    k.grid = {-1, 2, 3};
    k.block = {128, 1, 65535};
    k.registers_per_thread = 40, k.static_shared_bytes = 1024, k.dynamic_shared_bytes = -5, k.local_bytes_per_thread = 8;
    t.kernels.push_back(k);
  }
  t.memcpys.push_back({10, 20, 1, 2, 3, 4, 1ull << 35, trace::copy_dtoh, trace::mem_device, trace::mem_pageable, true});
  t.memsets.push_back({30, 40, 1, 2, 3, 5, 99, 0xdeadbeef, trace::mem_device});
  t.api_calls.push_back({5, 9, 4242, 4243, 4, 211, "cuLaunchKernel", true, -2});
  t.api_calls.push_back({6, 8, 4242, 4243, 5, 13, "", false, 0});
  t.syncs.push_back({50, 60, 2, 3, 6, 4});
  t.ranges.push_back({1, 100, 4242, 4243, "app", "step \xe2\x9c\x93"});
  t.overheads.push_back({70, 80, "buffer flush"});
  return t;
}

std::string payload_of(const std::string& chunk) { return chunk.substr(profile::chunk_header_bytes); }

std::string chunk_with(profile::chunk_type type, std::string_view payload) { return profile::encode_chunk(type, payload); }

std::string header_chunk(std::uint32_t pid, int format = profile::stream_format_version) {
  auto h = profile::header_json(info_of(pid), 5555, 500, "test");
  h["format"] = format;
  return chunk_with(profile::chunk_type::header, h.dump());
}

void put32(std::string& s, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Offsets in a binary payload of full_batch(): after the fixed fields and the string table.
std::size_t string_table_at() { return 4 + 4 + 8 + 8 + 8 + 4; }

} // namespace

TEST_CASE("profile stream: binary records round trip exactly", "[profile_stream]") {
  const trace::device_trace t = full_batch();
  const std::string payload = profile::records_binary(777, t);
  const profile::records_batch b = profile::decode_records_binary(payload);
  CHECK(b.flushed_ns == 777);
  trace::device_trace expected = t;
  expected.repetitions.clear();
  CHECK(nlohmann::json(b.trace) == nlohmann::json(expected));
  CHECK(b.trace.kernels[2].name == "other");
  CHECK(b.trace.kernels[0].grid[0] == -1);
  CHECK(b.trace.api_calls[0].return_value == -2);
  CHECK(b.trace.memcpys[0].bytes == 1ull << 35);
  // Much smaller than the JSON of the same records.
  CHECK(payload.size() < profile::records_json(777, t).dump().size());
  // An empty batch.
  const auto empty = profile::decode_records_binary(profile::records_binary(0, {}));
  CHECK_FALSE(empty.trace.has_gpu_activity());
  CHECK(empty.trace.api_calls.empty());
}

TEST_CASE("profile stream: a binary payload decoded into a used batch leaves nothing of the old one", "[profile_stream]") {
  // The reader decodes a stream's chunks into one batch (its names' memory reused): each
  // chunk must come out exactly as decoded fresh, a smaller one after a larger one too.
  const std::string large = profile::records_binary(777, full_batch());
  const std::string small = profile::records_binary(3000, batch(3000, 3));
  const std::string none = profile::records_binary(0, {});
  profile::records_batch reused;
  for (const std::string* payload : {&large, &small, &large, &none, &small}) {
    profile::decode_records_binary(*payload, reused);
    const profile::records_batch fresh = profile::decode_records_binary(*payload);
    CHECK(reused.flushed_ns == fresh.flushed_ns);
    CHECK(nlohmann::json(reused.trace) == nlohmann::json(fresh.trace));
  }
  // Through a sink: every chunk as decoded fresh, whether the sink keeps the batch or moves it out.
  testing::temp_dir dir;
  std::string data = header_chunk(11);
  for (const std::string* payload : {&large, &small, &none, &large})
    data += chunk_with(profile::chunk_type::records_binary, *payload);
  data += chunk_with(profile::chunk_type::close, profile::close_json(9000, "exit", 0).dump());
  const auto file = dir.path() / "reused.slstream";
  spit(file, data);
  for (const bool steal : {false, true}) {
    std::vector<nlohmann::json> seen;
    profile::read_stream(file, [&](const profile::process_info&, profile::records_batch&& b) {
      if (steal) {
        const profile::records_batch mine = std::move(b);
        seen.push_back(mine.trace);
      } else {
        seen.push_back(b.trace);
      }
    });
    REQUIRE(seen.size() == 4);
    CHECK(seen[0] == nlohmann::json(profile::decode_records_binary(large).trace));
    CHECK(seen[1] == nlohmann::json(profile::decode_records_binary(small).trace));
    CHECK(seen[2] == nlohmann::json(profile::decode_records_binary(none).trace));
    CHECK(seen[3] == seen[0]);
  }
}

TEST_CASE("profile stream: JSON and binary records chunks mixed in one stream", "[profile_stream]") {
  testing::temp_dir dir;
  std::string data = header_chunk(11);
  data += chunk_with(profile::chunk_type::records, profile::records_json(2000, batch(2000, 3)).dump());
  data += chunk_with(profile::chunk_type::records_binary, profile::records_binary(3000, batch(3000, 3)));
  data += chunk_with(profile::chunk_type::note, profile::note_json(2100, "hello").dump());
  data += chunk_with(profile::chunk_type::records_binary, profile::records_binary(4000, full_batch()));
  data += chunk_with(profile::chunk_type::close, profile::close_json(9000, "exit", 0).dump());
  const auto file = dir.path() / "mixed.slstream";
  spit(file, data);
  const auto r = profile::read_stream(file);
  REQUIRE(r.valid);
  CHECK(r.messages.empty());
  const auto& t = r.profile.trace;
  CHECK(t.kernels.size() == 9);
  CHECK(t.api_calls.size() == 8);
  CHECK(t.memcpys.size() == 1);
  CHECK(t.memsets.size() == 1);
  CHECK(t.syncs.size() == 1);
  CHECK(t.overheads.size() == 1);
  CHECK(t.ranges.size() == 3);
  CHECK(r.profile.process.last_flush_ns == 4000);
  CHECK(r.profile.process.dropped_records == 3);
  CHECK(t.buffer_bytes == 1ull << 33);
  CHECK(r.profile.process.end_ns == (1ull << 40) + 2 + 7); // the latest record, after the close chunk's end
  CHECK_FALSE(r.profile.process.truncated);
  for (std::size_t i = 1; i < t.kernels.size(); ++i) CHECK(t.kernels[i - 1].start <= t.kernels[i].start);

  // The same stream through a sink: the records come chunk by chunk, none kept.
  std::vector<std::uint64_t> flushes;
  std::size_t kernels = 0;
  const auto s = profile::read_stream(file, [&](const profile::process_info& info, profile::records_batch&& b) {
    CHECK(info.pid == 11);
    flushes.push_back(b.flushed_ns);
    kernels += b.trace.kernels.size();
  });
  REQUIRE(s.valid);
  CHECK(flushes == std::vector<std::uint64_t>{2000, 3000, 4000});
  CHECK(kernels == 9);
  CHECK(s.profile.trace.kernels.empty());
  CHECK(s.profile.process.end_ns == r.profile.process.end_ns);
  CHECK(s.profile.process.notes == r.profile.process.notes);
  // And from memory.
  const auto m = profile::read_stream_bytes(data, "memory");
  CHECK(m.profile.trace.kernels.size() == 9);
}

TEST_CASE("profile stream: a torn or damaged binary chunk is skipped, the rest kept", "[profile_stream]") {
  testing::temp_dir dir;
  const std::string head = header_chunk(12);
  const std::string first = chunk_with(profile::chunk_type::records_binary, profile::records_binary(2000, batch(2000, 3)));
  const std::string second = chunk_with(profile::chunk_type::records_binary, profile::records_binary(3000, batch(3000, 4)));
  // Torn: the file ends inside the second chunk.
  auto r = profile::read_stream_bytes(head + first + second.substr(0, second.size() / 2), "torn");
  REQUIRE(r.valid);
  CHECK(r.profile.trace.kernels.size() == 3);
  CHECK(r.profile.process.truncated);
  REQUIRE(r.messages.size() == 1);
  CHECK_THAT(r.messages[0], Contains("torn last chunk"));
  // A flipped byte: the checksum fails.
  std::string bad = first;
  bad[profile::chunk_header_bytes + 50] ^= 0x20;
  r = profile::read_stream_bytes(head + bad + second, "crc");
  CHECK(r.profile.trace.kernels.size() == 4);
  CHECK_THAT(r.messages.at(0), Contains("CRC mismatch"));
  // A payload cut short but framed with a right checksum: the decoder says what is missing.
  const std::string cut = payload_of(first).substr(0, payload_of(first).size() - 10);
  r = profile::read_stream_bytes(head + chunk_with(profile::chunk_type::records_binary, cut) + second, "cut");
  CHECK(r.profile.trace.kernels.size() == 4);
  CHECK_THAT(r.messages.at(0), Contains("unreadable"));
  CHECK_THAT(r.messages.at(0), Contains("binary records"));
  CHECK_THAT(r.profile.process.notes.back(), Contains("1 damaged chunk(s)"));
}

TEST_CASE("profile stream: binary records with bad counts, indices or versions are refused", "[profile_stream]") {
  const std::string good = profile::records_binary(1, full_batch());
  REQUIRE_NOTHROW(profile::decode_records_binary(good));
  auto refused = [](const std::string& payload, const std::string& why) {
    INFO(why);
    CHECK_THROWS_WITH(profile::decode_records_binary(payload), Contains(why));
  };
  std::string p = good;
  put32(p, 0, 2);
  refused(p, "version 2");
  p = good;
  put32(p, 4, 9);
  refused(p, "9 tables");
  p = good;
  put32(p, string_table_at(), 0x7fffffff); // string count
  refused(p, "strings claimed");
  p = good;
  put32(p, string_table_at() + 4, 12345); // string bytes
  refused(p, "add up to");
  refused(good.substr(0, 3), "needs 4 bytes");
  refused(good + "x", "1 bytes after the last table");
  refused(std::string(), "needs 4 bytes");

  // The kernels table: after the string table (count, bytes, lengths, text) and the backend
  // and note ids.
  const std::size_t at = string_table_at();
  auto small = [&](std::size_t i) { return std::size_t{static_cast<unsigned char>(good[i])} | std::size_t{static_cast<unsigned char>(good[i + 1])} << 8; };
  const std::size_t count = small(at), bytes = small(at + 4);
  const std::size_t kernels = at + 8 + 4 * count + bytes + 8;
  p = good;
  put32(p, kernels, 0xffffffffu); // rows
  refused(p, "claims 4294967295 rows");
  p = good;
  put32(p, kernels + 4, 17); // columns
  refused(p, "has 17 columns");
  p = good;
  put32(p, kernels + 8 + 3 * 8 + 3 * 8 + 3 * 4 * 4, 1000); // first kernel's name: string 1000
  refused(p, "names string 1000");
  p = good;
  put32(p, at + 8 + 4 * count + bytes, 77); // the backend
  refused(p, "the backend names string 77");
  // A string that is not UTF-8 (a lone continuation byte in the first string).
  p = good;
  p[at + 8 + 4 * count] = static_cast<char>(0x80);
  refused(p, "not UTF-8");
}

TEST_CASE("profile stream: a binary stream encoded from the documented layout reads back", "[profile_stream]") {
  // tests/fixtures/stream/make_documented_layout.py wrote it from docs/profile-format.md,
  // not with this writer: header, binary records, note, the same records again, close.
  const auto r = profile::read_stream(speedlab::testing::fixture_dir() / "stream" / "documented_layout.slstream");
  REQUIRE(r.valid);
  CHECK(r.messages.empty());
  const auto& p = r.profile;
  CHECK(p.process.pid == 42);
  CHECK(p.process.start_ns == 1000);
  CHECK(p.process.end_ns == 9000);
  CHECK_FALSE(p.process.truncated);
  CHECK(p.process.last_flush_ns == 3000);
  CHECK(p.process.notes == std::vector<std::string>{"cupti: a note"});
  const auto& t = p.trace;
  CHECK(t.buffer_bytes == 1u << 20);
  REQUIRE(t.kernels.size() == 6);
  CHECK(t.kernels[0].start == 2000);
  CHECK(t.kernels[0].end == 2050);
  CHECK(t.kernels[0].stream == 7);
  CHECK(t.kernels[0].name == "mul_kernel");
  CHECK(t.kernels[0].mangled_name == "_Z10mul_kernelPf");
  CHECK(t.kernels[0].grid == std::array<std::int32_t, 3>{4096, 1, 1});
  CHECK(t.kernels[0].block == std::array<std::int32_t, 3>{256, 1, 1});
  CHECK(t.kernels[0].registers_per_thread == 32);
  REQUIRE(t.api_calls.size() == 6);
  CHECK(t.api_calls[0].name == "cudaLaunchKernel_v7000");
  CHECK(t.api_calls[0].callback_id == 211);
  REQUIRE(t.memcpys.size() == 2);
  CHECK(t.memcpys[0].bytes == 4096);
  CHECK(t.memcpys[0].copy_kind == trace::copy_dtoh);
  CHECK(t.memcpys[0].dst_kind == trace::mem_pageable);
  CHECK_FALSE(t.memcpys[0].async);
  REQUIRE(t.memsets.size() == 2);
  CHECK(t.memsets[0].bytes == 64);
  REQUIRE(t.syncs.size() == 2);
  CHECK(t.syncs[0].type == 3);
  REQUIRE(t.ranges.size() == 2);
  CHECK(t.ranges[0].domain == "app");
  CHECK(t.ranges[0].name == "step");
  REQUIRE(t.overheads.size() == 2);
  CHECK(t.overheads[0].kind == "flush");
}

TEST_CASE("profile stream: a stream of a newer format or with a second header", "[profile_stream]") {
  auto r = profile::read_stream_bytes(header_chunk(13, profile::stream_format_version + 1), "newer");
  CHECK_FALSE(r.valid);
  CHECK_THAT(r.messages.at(0), Contains("newer than this reader"));
  // Format 1 (JSON records, the fixtures') still reads.
  r = profile::read_stream_bytes(header_chunk(13, 1), "old");
  CHECK(r.valid);
  r = profile::read_stream_bytes(header_chunk(13) + header_chunk(14), "twice");
  REQUIRE(r.valid);
  CHECK(r.profile.process.pid == 13);
  CHECK_THAT(r.messages.at(0), Contains("second header"));
  // Numbers that are no whole numbers in range (found by fuzz_stream: a float pid was cast
  // to an integer, undefined behaviour): the chunk is refused with a message.
  auto h = profile::header_json(info_of(15), 0, 500, "test");
  h["pid"] = 4.2e19;
  r = profile::read_stream_bytes(chunk_with(profile::chunk_type::header, h.dump()), "float pid");
  CHECK_FALSE(r.valid);
  CHECK_THAT(r.messages.at(0), Contains("'pid' is not a whole number"));
  auto records = profile::records_json(1, batch(2000, 1));
  records["trace"]["kernels"][0][0] = -1.5e300;
  r = profile::read_stream_bytes(header_chunk(16) + chunk_with(profile::chunk_type::records, records.dump()), "float start");
  CHECK(r.profile.trace.kernels.empty());
  CHECK_THAT(r.messages.at(0), Contains("not a whole number in range"));
  records = profile::records_json(1, batch(2000, 1));
  records["trace"]["kernels"][0][2] = -1; // device, a u32
  r = profile::read_stream_bytes(header_chunk(16) + chunk_with(profile::chunk_type::records, records.dump()), "negative");
  CHECK_THAT(r.messages.at(0), Contains("not a whole number in range"));
  // The text fast path leaves such chunks to the JSON tree: a fractional flushed_ns beside a
  // good trace, and a name that is not UTF-8, are refused as the tree refuses them.
  records = profile::records_json(1, batch(2000, 1));
  records["flushed_ns"] = 2.5;
  r = profile::read_stream_bytes(header_chunk(16) + chunk_with(profile::chunk_type::records, records.dump()), "float flush");
  CHECK(r.profile.trace.kernels.empty());
  CHECK_THAT(r.messages.at(0), Contains("'flushed_ns' is not a whole number"));
  std::string text = profile::records_json(1, batch(2000, 1)).dump();
  const auto at = text.find("mul_kernel");
  REQUIRE(at != std::string::npos);
  text[at] = '\xff';
  r = profile::read_stream_bytes(header_chunk(16) + chunk_with(profile::chunk_type::records, text), "not utf-8");
  CHECK(r.profile.trace.kernels.empty());
  CHECK_THAT(r.messages.at(0), Contains("unreadable"));
}

// Not a timed test (hidden tag): how long reading a large stream takes, JSON chunks (stream
// format 1) against binary ones, whole and through a sink, and the peak memory.
//   build/tests/speedlab_tests "[.profile_stream_benchmark]"
TEST_CASE("profile stream: reading 1 million kernels and 2 million API calls", "[.profile_stream_benchmark]") {
  testing::temp_dir dir;
  using clock = std::chrono::steady_clock;
  auto seconds = [](clock::time_point a, clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  auto peak_mib = [] {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024;
  };
  for (const bool binary : {true, false}) { // binary first: the peak RSS only grows
    const auto file = dir.path() / profile::stream_file_name(binary ? "binary" : "json", 1);
    std::string error;
    auto w = profile::stream_writer::create(file, error);
    REQUIRE(w);
    w->write(profile::chunk_type::header, profile::header_json(info_of(1), 0, 500, "bench"));
    const auto t0 = clock::now();
    for (int c = 0; c < 10; ++c) {
      trace::device_trace t = batch(2000 + 1000000000ull * c, 100000);
      for (int k = 0; k < 100000; ++k) t.api_calls.push_back(t.api_calls[k]); // runtime + driver record per launch
      const std::uint64_t at = 3000 + 1000000000ull * c;
      const bool written = binary ? w->write_bytes(profile::chunk_type::records_binary, profile::records_binary(at, t))
                                  : w->write(profile::chunk_type::records, profile::records_json(at, t));
      REQUIRE(written);
    }
    w->write(profile::chunk_type::close, profile::close_json(20000000000ull, "exit", 0));
    const auto t1 = clock::now();
    std::size_t streamed = 0;
    profile::read_stream(file, [&](const profile::process_info&, profile::records_batch&& b) {
      streamed += b.trace.kernels.size() + b.trace.api_calls.size();
    });
    const auto t2 = clock::now();
    const long streamed_peak = peak_mib();
    const auto r = profile::read_stream(file);
    const auto t3 = clock::now();
    REQUIRE(streamed == 3000000);
    REQUIRE(r.profile.trace.kernels.size() == 1000000);
    REQUIRE(r.profile.trace.api_calls.size() == 2000000);
    WARN((binary ? "binary" : "JSON") << " stream of " << std::filesystem::file_size(file) / 1048576 << " MiB: written in "
                                      << seconds(t0, t1) << " s, read through a sink in " << seconds(t1, t2)
                                      << " s (peak RSS so far " << streamed_peak << " MiB), read whole in "
                                      << seconds(t2, t3) << " s (peak RSS " << peak_mib() << " MiB)");
  }
}

TEST_CASE("profile stream: counters chunks read back; a bad one is skipped with a message", "[profile_stream]") {
  testing::temp_dir dir;
  std::string error;
  const auto file = dir.path() / profile::stream_file_name("node-1", 77);
  auto w = profile::stream_writer::create(file, error);
  REQUIRE(w);
  REQUIRE(w->write(profile::chunk_type::header, profile::header_json(info_of(77), 5555, 500, "test")));
  counters::counter_pass pass;
  pass.metric_set = "dram";
  pass.metrics = {"dram__bytes_read.sum"};
  pass.chip = "GH100";
  pass.passes = 1;
  pass.per_kernel_limit = 2;
  pass.launches = 7;
  pass.skipped = 5;
  counters::kernel_counters k;
  k.kernel = "_Z10mul_kernelPf";
  k.grid = {4096, 1, 1};
  k.block = {256, 1, 1};
  k.metrics["dram__bytes_read.sum"] = 1.25e8;
  pass.kernels = {k, k};
  REQUIRE(w->write(profile::chunk_type::counters, profile::counters_json(3000, pass)));
  nlohmann::json bad = profile::counters_json(3100, pass);
  bad["pass"]["passes"] = 2.5; // not a whole number
  REQUIRE(w->write(profile::chunk_type::counters, bad));
  REQUIRE(w->write(profile::chunk_type::records, profile::records_json(4000, batch(4000, 2))));
  REQUIRE(w->write(profile::chunk_type::close, profile::close_json(9000, "exit", 0)));
  w.reset();
  const auto r = profile::read_stream(file);
  REQUIRE(r.valid);
  REQUIRE(r.profile.counters.size() == 1);
  const auto& got = r.profile.counters[0];
  CHECK(got.metric_set == "dram");
  CHECK(got.launches == 7);
  CHECK(got.skipped == 5);
  REQUIRE(got.kernels.size() == 2);
  CHECK(got.kernels[1].kernel == "_Z10mul_kernelPf");
  CHECK(got.kernels[1].metrics.at("dram__bytes_read.sum") == 1.25e8);
  REQUIRE(r.messages.size() == 1);
  CHECK_THAT(r.messages[0], Contains("passes"));
  CHECK(r.profile.trace.kernels.size() == 2); // the chunks after the bad one still read
}
