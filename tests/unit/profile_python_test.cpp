// The python_calls chunk of `speedlab profile` (model/profile_stream, chunk type 9): Python
// stacks at CUDA calls written by profilers/python, read back into process_profile::python
// across chunks (calls every flush, stacks when first seen, frames when resolved), and bad
// payloads skipped with a message naming the file and offset, changing nothing.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "analysis/program_analysis.hpp"
#include "model/profile_stream.hpp"
#include "speedlab_catch.hpp"
#include "test_support.hpp"

using namespace speedlab;
using Catch::Contains;

namespace {

std::string header_chunk() {
  profile::process_info info;
  info.pid = 21;
  info.host = "node";
  info.start_ns = 1000;
  return profile::encode_chunk(profile::chunk_type::header, profile::header_json(info, 5555, 500, "test").dump());
}

std::string python_chunk(const profile::python_chunk& c) {
  return profile::encode_chunk(profile::chunk_type::python_calls, profile::python_calls_json(2000, c).dump());
}

profile::python_chunk first_flush() {
  profile::python_chunk c;
  c.interpreter = "3.12.1";
  c.calls = {{101, 1, profile::python_how::own},
             {102, 1, profile::python_how::other_thread},
             {103, 0, profile::python_how::unknown}};
  c.stacks = {{1, {1, 2}}};
  c.frames = {{1, {"/home/u/train.py", 57, "main", "loss = step(x)", true}}};
  return c;
}

profile::python_chunk second_flush() {
  profile::python_chunk c;
  c.has_folding = true;
  c.library_prefixes = {"/usr", "/venv"};
  c.user_prefixes = {"/venv/src/mine"};
  c.calls = {{104, 2, profile::python_how::own}};
  c.stacks = {{2, {1, 3}}};
  // Frame 2 resolved a flush after its stack came; frame 3 never (written at the last flush).
  c.frames = {{2,
               {"/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", 1736, "Module._call_impl",
                "return forward_call(*args, **kwargs)", false}},
              {3, {"", 0, "0x7f00deadbeef", "", false}}};
  return c;
}

} // namespace

TEST_CASE("profile stream: python calls, stacks and frames round-trip across chunks", "[profile_stream][python]") {
  const auto r = profile::read_stream_bytes(header_chunk() + python_chunk(first_flush()) + python_chunk(second_flush()),
                                            "py.slstream");
  REQUIRE(r.valid);
  CHECK(r.messages.empty());
  const profile::python_calls& p = r.profile.python;
  CHECK(p.interpreter == "3.12.1");
  CHECK(p.library_prefixes == std::vector<std::string>{"/usr", "/venv"});
  CHECK(p.user_prefixes == std::vector<std::string>{"/venv/src/mine"});
  REQUIRE(p.calls.size() == 4);
  CHECK(p.calls.at(101) == profile::python_call{1, profile::python_how::own});
  CHECK(p.calls.at(102) == profile::python_call{1, profile::python_how::other_thread});
  CHECK(p.calls.at(103) == profile::python_call{0, profile::python_how::unknown});
  CHECK(p.calls.at(104) == profile::python_call{2, profile::python_how::own});
  CHECK(p.stacks.at(1) == std::vector<std::uint32_t>{1, 2});
  CHECK(p.stacks.at(2) == std::vector<std::uint32_t>{1, 3});
  REQUIRE(p.frames.size() == 3);
  CHECK(p.frames.at(1) == profile::python_frame{"/home/u/train.py", 57, "main", "loss = step(x)", true});
  CHECK(p.frames.at(2).function == "Module._call_impl");
  CHECK_FALSE(p.frames.at(2).user);
  CHECK(p.frames.at(3).file.empty());
  CHECK(p.frames.at(3).function == "0x7f00deadbeef");
}

TEST_CASE("profile stream: the python chunk's calls are columns", "[profile_stream][python]") {
  const nlohmann::json j = profile::python_calls_json(7, first_flush());
  CHECK(j.at("calls").at("correlation") == nlohmann::json{101, 102, 103});
  CHECK(j.at("calls").at("stack") == nlohmann::json{1, 1, 0});
  CHECK(j.at("calls").at("how") == nlohmann::json{0, 1, 2});
  CHECK(j.at("interpreter") == "3.12.1");
  CHECK_FALSE(j.contains("folding"));
  CHECK(j.at("stacks").at(0).at("frames") == nlohmann::json{1, 2});
  // Text that is not UTF-8 (a Latin-1 source line) is written, not thrown.
  profile::python_chunk latin;
  latin.frames = {{9, {"/a.py", 1, "f", "caf\xe9", true}}};
  const testing::temp_dir dir;
  std::string error;
  auto w = profile::stream_writer::create(dir.path() / "x.slstream", error);
  REQUIRE(w);
  profile::process_info info;
  info.pid = 3;
  CHECK(w->write(profile::chunk_type::header, profile::header_json(info, 1, 500, "test")));
  CHECK(w->write(profile::chunk_type::python_calls, profile::python_calls_json(1, latin)));
  w.reset();
  const auto r = profile::read_stream(dir.path() / "x.slstream");
  CHECK(r.messages.empty());
  CHECK(r.profile.python.frames.at(9).text.rfind("caf", 0) == 0); // the byte replaced
}

TEST_CASE("profile stream: a bad python chunk is skipped with a message and changes nothing",
          "[profile_stream][python]") {
  const auto bad = [](const nlohmann::json& payload) {
    return profile::encode_chunk(profile::chunk_type::python_calls, payload.dump());
  };
  nlohmann::json uneven = profile::python_calls_json(1, second_flush());
  uneven["calls"]["how"] = nlohmann::json::array();
  nlohmann::json how = profile::python_calls_json(1, second_flush());
  how["calls"]["how"] = {7};
  nlohmann::json negative = profile::python_calls_json(1, second_flush());
  negative["stacks"][0]["frames"] = {1, -3};
  nlohmann::json no_file = profile::python_calls_json(1, second_flush());
  no_file["frames"][0].erase("file");
  const std::string head = header_chunk() + python_chunk(first_flush());
  for (const auto& [what, payload, says] :
       {std::tuple{"uneven columns", bad(uneven), "differ in length"}, std::tuple{"how 7", bad(how), "not 0, 1 or 2"},
        std::tuple{"a negative frame id", bad(negative), "not a whole number"},
        std::tuple{"a frame without file", bad(no_file), "file"},
        std::tuple{"not JSON", profile::encode_chunk(profile::chunk_type::python_calls, "{calls"), "JSON"}}) {
    INFO(what);
    const auto r = profile::read_stream_bytes(head + payload, "bad.slstream");
    REQUIRE(r.valid);
    REQUIRE(r.messages.size() == 1);
    CHECK_THAT(r.messages[0], Contains("bad.slstream: chunk at offset " + std::to_string(head.size())));
    CHECK_THAT(r.messages[0], Contains(says));
    // The first chunk kept whole; nothing of the bad one.
    CHECK(r.profile.python.calls.size() == 3);
    CHECK(r.profile.python.stacks.size() == 1);
    CHECK(r.profile.python.library_prefixes.empty());
  }
}

TEST_CASE("profile stream: python chunks read back as the analysis's python input", "[profile_stream][python]") {
  const auto r = profile::read_stream_bytes(header_chunk() + python_chunk(first_flush()) + python_chunk(second_flush()),
                                            "py.slstream");
  REQUIRE(r.valid);
  const auto in = analysis::python_input_of(r.profile);
  REQUIRE(in);
  CHECK(in->interpreter == "3.12.1");
  // Index 0 is "none" in both: an empty stack, a frame of no program.
  REQUIRE(in->frames.size() == 4);
  CHECK_FALSE(in->frames[0].user);
  CHECK(in->frames[1].file == "/home/u/train.py");
  CHECK(in->frames[1].line == 57);
  CHECK(in->frames[1].user);
  REQUIRE(in->stacks.size() == 3);
  CHECK(in->stacks[0].empty());
  CHECK(in->stacks[1] == std::vector<std::uint32_t>{1, 2});
  CHECK(in->stacks[2] == std::vector<std::uint32_t>{1, 3});
  REQUIRE(in->calls.size() == 4);
  CHECK(in->calls[0].correlation == 101);
  CHECK(in->calls[0].stack == 1);
  CHECK(in->calls[1].attributed == analysis::python_input::how::inferred);
  CHECK(in->calls[2].stack == 0);
  CHECK(in->calls[2].attributed == analysis::python_input::how::none);
  // A stack naming a frame no chunk described, a call naming an unknown stack: none.
  profile::python_chunk odd;
  odd.calls = {{200, 77, profile::python_how::own}};
  odd.stacks = {{5, {1, 999}}};
  const auto o = profile::read_stream_bytes(header_chunk() + python_chunk(first_flush()) + python_chunk(odd), "odd");
  const auto oin = analysis::python_input_of(o.profile);
  REQUIRE(oin);
  CHECK(oin->stacks.back() == std::vector<std::uint32_t>{1, 0});
  CHECK(oin->calls.back().stack == 0);
  // A process without python chunks has no input.
  CHECK_FALSE(analysis::python_input_of(profile::read_stream_bytes(header_chunk(), "none").profile));
}

TEST_CASE("profile stream: a python process's kernels reach the line that launched them", "[profile_stream][python]") {
  profile::process_info info;
  info.pid = 21;
  info.host = "node";
  info.start_ns = 1000;
  info.tags["python"] = "3.12.1"; // the capture's tag: the analysis tracks the process's lines
  trace::device_trace t;
  t.api_calls.push_back({2000, 2100, 21, 7, 101, 211, "cudaLaunchKernel_v7000", false, 0});
  t.api_calls.push_back({3000, 3100, 21, 7, 104, 211, "cudaLaunchKernel_v7000", false, 0});
  trace::kernel_record k;
  k.start = 5000;
  k.end = 9000;
  k.correlation = 101;
  k.name = "mul";
  t.kernels.push_back(k);
  k.start = 9000;
  k.end = 10000;
  k.correlation = 104;
  t.kernels.push_back(k);
  const std::string data =
      profile::encode_chunk(profile::chunk_type::header, profile::header_json(info, 5555, 500, "test").dump()) +
      profile::encode_chunk(profile::chunk_type::records_binary, profile::records_binary(20000, t)) +
      python_chunk(first_flush()) + python_chunk(second_flush()) +
      profile::encode_chunk(profile::chunk_type::close, profile::close_json(30000, "exit", 0).dump());
  const auto r = profile::read_stream_bytes(data, "e2e.slstream");
  REQUIRE(r.messages.empty());
  const analysis::process_summary s = analysis::summarize_process(r.profile);
  // Stack 1 (call 101) and stack 2 (call 104) both end in train.py:57 among the user's
  // frames (frame 3 is unresolved, frame 2 the library's): 4000 + 1000 ns of kernels there.
  REQUIRE(s.python);
  REQUIRE(s.python->lines.size() == 1);
  CHECK(s.python->lines[0].file == "/home/u/train.py");
  CHECK(s.python->lines[0].line == 57);
  CHECK(s.python->lines[0].kernel_ns == Approx(5000));
  CHECK(s.python->interpreter == "3.12.1");
}
