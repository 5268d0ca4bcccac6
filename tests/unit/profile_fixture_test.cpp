// Streams recorded by `speedlab profile` on the GPU machine (H100, tests/fixtures/profile,
// scripts/gpu-check.sh stage `profile`), read back without a GPU. The kernel counts were
// checked there against ncu over the same program (docs/results/profile-run1.md): these
// tests hold the reader and the recorded data to them.
#include "speedlab_catch.hpp"

#include <fstream>
#include <iterator>
#include <set>

#include "model/profile_stream.hpp"
#include "test_support.hpp"

using namespace speedlab;
using Catch::Contains;

namespace {

std::filesystem::path fixture(const std::string& name) {
  return speedlab::testing::fixture_dir() / "profile" / name;
}

profile::process_profile read_clean(const std::string& name) {
  auto r = profile::read_stream(fixture(name));
  INFO(name);
  REQUIRE(r.valid);
  CHECK(r.messages.empty());
  return std::move(r.profile);
}

double kernel_ns(const trace::device_trace& t) {
  double sum = 0;
  for (const auto& k : t.kernels) sum += static_cast<double>(k.end - k.start);
  return sum;
}

void check_invariants(const profile::process_profile& p) {
  const auto& t = p.trace;
  for (const auto& k : t.kernels) {
    CHECK(k.end >= k.start);
    CHECK(k.start >= p.process.start_ns);
    CHECK(k.end <= p.process.end_ns);
  }
  for (std::size_t i = 1; i < t.kernels.size(); ++i) CHECK(t.kernels[i - 1].start <= t.kernels[i].start);
  // With driver API records every kernel has its launch call (same correlation id); CuPy
  // and Numba launch through the driver API only, so runtime records alone miss theirs.
  std::set<std::uint32_t> api;
  bool driver = false;
  for (const auto& a : t.api_calls) {
    api.insert(a.correlation);
    driver |= a.driver;
  }
  std::size_t launched = 0;
  for (const auto& k : t.kernels) launched += api.count(k.correlation);
  if (driver) CHECK(launched == t.kernels.size());
}

} // namespace

TEST_CASE("recorded profile: CuPy vector multiply, copies on every call", "[profile_fixture]") {
  const auto p = read_clean("cupy_vector.slstream");
  CHECK(p.process.command_line.at(1) == "examples/cupy_vector.py");
  CHECK_FALSE(p.process.truncated);
  REQUIRE(p.trace.kernels.size() == 20); // ncu: 20
  for (const auto& k : p.trace.kernels) CHECK(k.name == "cupy_multiply__float32_float32_float32");
  // 20 calls: two pageable HtoD copies and one DtoH copy each, 16 MiB apiece.
  std::size_t htod = 0, dtoh = 0;
  for (const auto& m : p.trace.memcpys) {
    CHECK(m.bytes == 4194304u * 4);
    htod += m.copy_kind == trace::copy_htod;
    dtoh += m.copy_kind == trace::copy_dtoh;
  }
  CHECK(htod == 40);
  CHECK(dtoh == 20);
  CHECK(p.process.tags.count("libcupti"));
  check_invariants(p);
}

TEST_CASE("recorded profile: Numba Monte Carlo pi", "[profile_fixture]") {
  const auto p = read_clean("numba_pi.slstream");
  REQUIRE(p.trace.kernels.size() == 10); // ncu: 10
  for (const auto& k : p.trace.kernels) {
    CHECK_THAT(k.name, Contains("count_hits"));
    CHECK(k.block[0] == 256);
    CHECK(k.grid[0] == 256); // 65536 threads
  }
  // Total kernel time within 5% of ncu's gpu__time_duration.sum (5.590 ms over the same program).
  CHECK(kernel_ns(p.trace) == Approx(5.590e6).epsilon(0.05));
  check_invariants(p);
}

TEST_CASE("recorded profile: PyTorch training loop with its own NVTX ranges", "[profile_fixture]") {
  const auto p = read_clean("torch_mlp.slstream");
  CHECK(p.trace.kernels.size() == 1430); // ncu: 1430
  // One "train_step" range per step (torch.cuda.nvtx): a warm-up step plus 50.
  std::size_t steps = 0;
  for (const auto& r : p.trace.ranges) steps += r.name == "train_step";
  CHECK(steps == 51);
  // The MLP's GEMMs come from cuBLAS.
  std::size_t gemms = 0;
  for (const auto& k : p.trace.kernels) gemms += k.name.find("gemm") != std::string::npos;
  CHECK(gemms >= 51 * 3);
  // PyTorch's wheel brings its own libcupti; the library used that one (one copy).
  CHECK_THAT(p.process.tags.at("libcupti"), Contains("site-packages/nvidia"));
  for (const auto& n : p.process.notes) CHECK_THAT(n, !Contains("copies are loaded"));
  check_invariants(p);
}

TEST_CASE("recorded profile: a program killed with SIGKILL keeps what was flushed", "[profile_fixture]") {
  const auto path = fixture("killed_numba.slstream");
  auto r = profile::read_stream(path);
  REQUIRE(r.valid);
  const auto& p = r.profile;
  CHECK(p.process.truncated);
  CHECK(p.trace.kernels.size() == 962);
  CHECK(p.process.last_flush_ns > p.process.start_ns);
  CHECK(p.process.end_ns >= p.trace.kernels.back().end);
  CHECK(static_cast<double>(p.process.last_flush_ns - p.process.start_ns) / 1e9 == Approx(10.715).margin(0.01));
  CHECK_THAT(p.process.notes.back(), Contains("without its closing chunk"));

  // The same stream torn inside its last chunk, as if the kill came during a write: the
  // chunks before it survive and the reader says what it skipped.
  testing::temp_dir dir;
  std::ifstream in(path, std::ios::binary);
  std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto torn = dir.path() / "torn.slstream";
  std::ofstream(torn, std::ios::binary) << data.substr(0, data.size() - 100);
  r = profile::read_stream(torn);
  REQUIRE(r.valid);
  CHECK(r.profile.process.truncated);
  CHECK(r.profile.trace.kernels.size() < 962);
  CHECK(r.profile.trace.kernels.size() > 800);
  REQUIRE(r.messages.size() == 1);
  CHECK_THAT(r.messages[0], Contains("torn last chunk"));
}

TEST_CASE("recorded profile: multiprocessing spawn workers, one stream each", "[profile_fixture]") {
  const auto r = profile::read_stream_folder(fixture("mp_spawn"));
  CHECK(r.messages.empty());
  REQUIRE(r.processes.size() == 2);
  std::size_t kernels = 0;
  for (const auto& p : r.processes) {
    CHECK(p.process.truncated); // pool workers end with os._exit: no closing chunk
    bool spawned = false;
    for (const auto& a : p.process.command_line) spawned |= a.find("spawn_main") != std::string::npos;
    CHECK(spawned);
    CHECK(p.process.parent_pid != 0);
    kernels += p.trace.kernels.size();
    check_invariants(p);
  }
  CHECK(kernels == 4); // 4 tasks, one multiply each
  // Both workers are children of the same parent, the program's process (it never used CUDA).
  CHECK(r.processes[0].process.parent_pid == r.processes[1].process.parent_pid);
}
