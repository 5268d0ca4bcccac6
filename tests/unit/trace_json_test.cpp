#include "speedlab_catch.hpp"

#include <limits>

#include <nlohmann/json.hpp>

#include "model/trace.hpp"
#include "model/trace_text.hpp"

using namespace speedlab;

namespace {

trace::device_trace sample_trace() {
  trace::device_trace t;
  t.backend = "cupti";
  t.note = "a \"quoted\" note\nwith ünïcode";
  t.dropped_records = 17;
  t.buffer_bytes = 8u << 20;
  t.process = 4242;
  trace::kernel_record k;
  k.start = std::numeric_limits<std::uint64_t>::max() - 10;
  k.end = std::numeric_limits<std::uint64_t>::max();
  k.device = 1;
  k.context = 2;
  k.stream = 7;
  k.correlation = 99;
  k.name = "void scale<float>(float*, int)";
  k.mangled_name = "_Z5scaleIfEvPfi";
  k.grid = {128, 2, 1};
  k.block = {256, 1, 1};
  k.registers_per_thread = 32;
  k.static_shared_bytes = 1024;
  k.dynamic_shared_bytes = 4096;
  k.local_bytes_per_thread = -1; // signed field keeps its sign
  t.kernels.push_back(k);
  t.memcpys.push_back({10, 20, 0, 1, 7, 100, 1ull << 33, trace::copy_dtoh, trace::mem_device, trace::mem_pinned, true});
  t.memsets.push_back({30, 40, 0, 1, 7, 101, 4096, 0xdeadbeef, trace::mem_device});
  t.api_calls.push_back({5, 25, 4242, 4243, 100, 31, "cudaMemcpyAsync_v3020", false, 0});
  t.api_calls.push_back({6, 7, 4242, 4243, 102, 440, "cuLaunchKernel", true, -3});
  t.syncs.push_back({50, 60, 1, 7, 103, 3});
  t.ranges.push_back({1, 100, 4242, 4243, "speedlab", "scale/cuda n=1024: compute"});
  t.ranges.push_back({2, 3, 4242, 4243, "", ""});
  t.overheads.push_back({70, 80, "cupti_buffer_flush"});
  t.repetitions.push_back({0, 200, 50, 150});
  return t;
}


} // namespace

TEST_CASE("device trace JSON round trip is exact", "[trace_json]") {
  const auto t = sample_trace();
  const nlohmann::json j = t;
  const auto back = nlohmann::json::parse(j.dump()).get<trace::device_trace>();

  CHECK(back.backend == t.backend);
  CHECK(back.note == t.note);
  CHECK(back.dropped_records == t.dropped_records);
  CHECK(back.buffer_bytes == t.buffer_bytes);
  CHECK(back.process == t.process);

  REQUIRE(back.kernels.size() == 1);
  const auto& k = back.kernels[0];
  const auto& k0 = t.kernels[0];
  CHECK(k.start == k0.start);
  CHECK(k.end == k0.end);
  CHECK(k.device == k0.device);
  CHECK(k.context == k0.context);
  CHECK(k.stream == k0.stream);
  CHECK(k.correlation == k0.correlation);
  CHECK(k.name == k0.name);
  CHECK(k.mangled_name == k0.mangled_name);
  CHECK(k.grid == k0.grid);
  CHECK(k.block == k0.block);
  CHECK(k.registers_per_thread == k0.registers_per_thread);
  CHECK(k.static_shared_bytes == k0.static_shared_bytes);
  CHECK(k.dynamic_shared_bytes == k0.dynamic_shared_bytes);
  CHECK(k.local_bytes_per_thread == k0.local_bytes_per_thread);

  REQUIRE(back.memcpys.size() == 1);
  const auto& m = back.memcpys[0];
  CHECK(m.bytes == (1ull << 33));
  CHECK(m.copy_kind == trace::copy_dtoh);
  CHECK(m.src_kind == trace::mem_device);
  CHECK(m.dst_kind == trace::mem_pinned);
  CHECK(m.async);
  CHECK(m.correlation == 100);

  REQUIRE(back.memsets.size() == 1);
  CHECK(back.memsets[0].value == 0xdeadbeef);
  CHECK(back.memsets[0].memory_kind == trace::mem_device);

  REQUIRE(back.api_calls.size() == 2);
  CHECK(back.api_calls[0].name == "cudaMemcpyAsync_v3020");
  CHECK(back.api_calls[1].driver);
  CHECK(back.api_calls[1].return_value == -3);
  CHECK(back.api_calls[1].callback_id == 440);
  CHECK(back.api_calls[1].thread == 4243);

  REQUIRE(back.syncs.size() == 1);
  CHECK(back.syncs[0].type == 3);
  CHECK(back.syncs[0].correlation == 103);

  REQUIRE(back.ranges.size() == 2);
  CHECK(back.ranges[0].domain == "speedlab");
  CHECK(back.ranges[0].name == "scale/cuda n=1024: compute");
  CHECK(back.ranges[1].name.empty());

  REQUIRE(back.overheads.size() == 1);
  CHECK(back.overheads[0].kind == "cupti_buffer_flush");
  REQUIRE(back.repetitions.size() == 1);
  CHECK(back.repetitions[0].transfer_in_end == 50);
  CHECK(back.repetitions[0].compute_end == 150);

  // A second trip gives the identical document.
  CHECK(nlohmann::json(back).dump() == j.dump());
}

TEST_CASE("device trace JSON stores each name once", "[trace_json]") {
  trace::device_trace t;
  trace::kernel_record k;
  k.name = "a_rather_long_kernel_name_that_would_dominate_the_file(float*, float const*, int)";
  k.mangled_name = "_Z50a_rather_long_kernel_name_that_would_dominate_the_filePfPKfi";
  for (std::uint64_t i = 0; i < 1000; ++i) {
    k.start = 10 * i;
    k.end = 10 * i + 5;
    k.correlation = static_cast<std::uint32_t>(i);
    t.kernels.push_back(k);
  }
  const std::string text = nlohmann::json(t).dump();
  std::size_t count = 0;
  for (auto pos = text.find(k.name); pos != std::string::npos; pos = text.find(k.name, pos + 1)) ++count;
  CHECK(count == 1);
  CHECK(text.size() < 1000 * 80); // about 40 bytes per record
  const auto back = nlohmann::json::parse(text).get<trace::device_trace>();
  REQUIRE(back.kernels.size() == 1000);
  CHECK(back.kernels[999].start == 9990);
  CHECK(back.kernels[999].name == k.name);
}

TEST_CASE("device trace JSON rejects malformed records clearly", "[trace_json]") {
  nlohmann::json j = sample_trace();
  SECTION("short row") {
    j["memcpys"][0].erase(j["memcpys"][0].size() - 1);
    CHECK_THROWS_WITH(j.get<trace::device_trace>(), Catch::Contains("'memcpys' record must be an array of 11"));
  }
  SECTION("string index out of range") {
    j["ranges"][0][5] = 100000;
    CHECK_THROWS_WITH(j.get<trace::device_trace>(), Catch::Contains("string 100000"));
  }
  SECTION("newer format") {
    j["version"] = 99;
    CHECK_THROWS_WITH(j.get<trace::device_trace>(), Catch::Contains("newer"));
  }
  SECTION("missing tables are empty") {
    j.erase("kernels");
    j.erase("syncs");
    const auto t = j.get<trace::device_trace>();
    CHECK(t.kernels.empty());
    CHECK(t.syncs.empty());
    CHECK(t.memcpys.size() == 1);
  }
}

namespace {

bool same(const trace::device_trace& a, const trace::device_trace& b) {
  return nlohmann::json(a).dump() == nlohmann::json(b).dump();
}

} // namespace

TEST_CASE("device trace: the fast text reader reads exactly what the JSON tree reads", "[trace_json]") {
  const trace::device_trace t = sample_trace();
  for (const int indent : {-1, 2}) { // compact, and with white space everywhere
    const std::string text = nlohmann::json(t).dump(indent);
    trace::device_trace fast;
    REQUIRE(trace::read_compact_trace(text, fast));
    CHECK(same(fast, t));
    CHECK(fast.kernels[0].local_bytes_per_thread == -1);
    CHECK(fast.kernels[0].end == std::numeric_limits<std::uint64_t>::max());
    CHECK(fast.note == t.note);
  }
  // Escapes the tree writer does not produce, read as JSON means them.
  std::string text = nlohmann::json(t).dump();
  const auto at = text.find("cudaMemcpyAsync_v3020");
  REQUIRE(at != std::string::npos);
  text.replace(at, 4, "\\u0063\\/d\\ud83d\\ude00");
  trace::device_trace fast;
  REQUIRE(trace::read_compact_trace(text, fast));
  CHECK(fast.api_calls[0].name == "c/d\xF0\x9F\x98\x80" "MemcpyAsync_v3020");
  CHECK(same(fast, nlohmann::json::parse(text).get<trace::device_trace>()));

  // A records chunk: the trace under "trace", the other numbers beside it.
  const std::string chunk = nlohmann::json{{"flushed_ns", 123456789}, {"trace", t}}.dump();
  std::map<std::string, std::uint64_t> numbers;
  trace::device_trace member;
  REQUIRE(trace::read_compact_trace_member(chunk, "trace", member, numbers));
  CHECK(numbers["flushed_ns"] == 123456789);
  CHECK(same(member, t));
}

TEST_CASE("device trace: the fast text reader refuses what is not the compact form", "[trace_json]") {
  const std::string good = nlohmann::json(sample_trace()).dump();
  auto refused = [](std::string text) {
    trace::device_trace t;
    return !trace::read_compact_trace(text, t);
  };
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    s.replace(at, from.size(), to);
    return s;
  };
  CHECK(refused(good.substr(0, good.size() - 1)));                       // cut short
  CHECK(refused(good + "x"));                                            // trailing garbage
  CHECK(refused(edit("\"version\":1", "\"version\":99")));               // newer format
  CHECK(refused(edit("[[10,20,0,1,7,100,", "[[10.5,20,0,1,7,100,")));    // a fraction
  CHECK(refused(edit("[[10,20,0,1,7,100,", "[[10,20,0,1,7,")));          // a row too short
  CHECK(refused(edit("[[10,20,0,1,7,100,", "[[-10,20,0,1,7,100,")));     // negative unsigned
  CHECK(refused(edit("[[10,20,0,1,7,100,", "[[\"10\",20,0,1,7,100,")));  // a string for a number
  CHECK(refused(edit(",true]", ",1]")));                                 // a number for a bool
  CHECK(refused(edit("\"strings\":[", "\"strings\":[\"\\x\",")));        // a bad escape
  CHECK(refused(edit("\"strings\":[", "\"strings\":[\"\xC3\",")));        // not UTF-8 (as the JSON tree)
  CHECK(refused(edit("\"strings\":[", "\"strings\":[\"\xED\xA0\x80\","))); // a surrogate in UTF-8
  CHECK(refused("[]"));
  std::map<std::string, std::uint64_t> numbers;
  trace::device_trace t;
  CHECK_FALSE(trace::read_compact_trace_member("{\"flushed_ns\":1}", "trace", t, numbers)); // no trace
}
