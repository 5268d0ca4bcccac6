// Streams recorded by `speedlab profile` on the GPU machine (one H100, 2026-11-23,
// `bash scripts/gpu-check.sh info profile`: tests/fixtures/profile, README.md there), read
// back without a GPU. They are format 2 (binary records chunks, type 5), what the injection
// library writes now; format1/ keeps one stream of the earlier writer (JSON records chunks)
// that the reader must go on reading (docs/profile-format.md). The same run counted each
// program's kernels with ncu (docs/results/profile-run1.md, run D): where a figure below
// is ncu's, the comment says so; the others were counted in the recorded streams.
#include <fstream>
#include <iterator>
#include <set>

#include "app/profile/profile_command.hpp"
#include "app/profile/profile_report.hpp"
#include "device/calibrate.hpp"
#include "device/device_probe.hpp"
#include "model/device_keys.hpp"
#include "model/profile_stream.hpp"
#include "speedlab_catch.hpp"
#include "stream_census.hpp"
#include "test_support.hpp"

using namespace speedlab;
using Catch::Contains;

namespace {

std::filesystem::path fixture(const std::string& name) { return speedlab::testing::fixture_dir() / "profile" / name; }

// A stream of today's writer: format 2, whole chunks, its records in binary chunks only
// (a writer that went back to JSON records chunks fails here), one header, nothing dropped.
void check_format2(const std::filesystem::path& file, bool closed) {
  INFO(file.filename().string());
  const auto c = testing::census_of(file);
  CHECK(c.format == 2);
  CHECK(c.whole);
  CHECK(c.count(profile::chunk_type::header) == 1);
  CHECK(c.count(profile::chunk_type::records_binary) > 0);
  CHECK(c.count(profile::chunk_type::records) == 0);
  CHECK(c.count(profile::chunk_type::close) == (closed ? 1u : 0u));
}

profile::process_profile read_clean(const std::string& name, bool closed = true) {
  check_format2(fixture(name), closed);
  auto r = profile::read_stream(fixture(name));
  INFO(name);
  REQUIRE(r.valid);
  CHECK(r.messages.empty());
  CHECK(r.profile.process.truncated == !closed);
  CHECK(r.profile.process.dropped_records == 0);
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
  // python3 examples/cupy_vector.py --n 4194304 --calls 20
  const auto p = read_clean("cupy_vector.slstream");
  CHECK(p.process.command_line.at(1) == "examples/cupy_vector.py");
  REQUIRE(p.trace.kernels.size() == 20); // ncu over the same program: 20 kernels
  for (const auto& k : p.trace.kernels) CHECK(k.name == "cupy_multiply__float32_float32_float32");
  // 20 calls: two pageable HtoD copies and one DtoH copy each, 16 MiB apiece (60 copies in
  // the stream, as the run's console summary printed).
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
  // python3 examples/numba_pi.py --launches 10
  const auto p = read_clean("numba_pi.slstream");
  REQUIRE(p.trace.kernels.size() == 10); // ncu over the same program: 10 kernels
  for (const auto& k : p.trace.kernels) {
    CHECK_THAT(k.name, Contains("count_hits"));
    CHECK(k.block[0] == 256);
    CHECK(k.grid[0] == 256); // 65536 threads
  }
  // Total kernel time against ncu's gpu__time_duration.sum over the same program, 5.564 ms
  // (logs/ncu-numba_pi.csv of the run); the stream holds 5.554 ms (-0.18%). Within 2%: long
  // kernels (0.56 ms each), where the two agree.
  CHECK(kernel_ns(p.trace) == Approx(5.564e6).epsilon(0.02));
  check_invariants(p);
}

TEST_CASE("recorded profile: PyTorch training loop with its own NVTX ranges", "[profile_fixture]") {
  // python3 examples/torch_mlp.py --steps 50
  const auto p = read_clean("torch_mlp.slstream");
  CHECK(p.trace.kernels.size() == 1430); // ncu over the same program: 1430 kernels
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
  // speedlab profile --flush-interval 200 -- python3 examples/numba_pi.py --launches 100000
  // --samples-per-thread 65536, SIGKILLed 12 s after start: 47 records chunks (flushes every 200 ms),
  // no closing chunk. 932 kernels and the last flush 10.870 s after start, as the run's
  // console summary printed them (no ncu count: the program never finished).
  const auto path = fixture("killed_numba.slstream");
  check_format2(path, false);
  CHECK(testing::census_of(path).count(profile::chunk_type::records_binary) == 47);
  auto r = profile::read_stream(path);
  REQUIRE(r.valid);
  CHECK(r.messages.empty());
  const auto& p = r.profile;
  CHECK(p.process.truncated);
  CHECK(p.process.dropped_records == 0);
  CHECK(p.trace.kernels.size() == 932);
  CHECK(p.process.last_flush_ns > p.process.start_ns);
  CHECK(p.process.end_ns >= p.trace.kernels.back().end);
  CHECK(static_cast<double>(p.process.last_flush_ns - p.process.start_ns) / 1e9 == Approx(10.870).margin(0.001));
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
  // The last records chunk (8,905 bytes) holds 22 of the 932 kernels (its kernels table, read
  // with the layout of docs/profile-format.md): the 46 chunks before it remain.
  CHECK(r.profile.trace.kernels.size() == 932 - 22);
  REQUIRE(r.messages.size() == 1);
  CHECK_THAT(r.messages[0], Contains("torn last chunk"));
}

TEST_CASE("recorded profile: multiprocessing spawn workers, one stream each", "[profile_fixture]") {
  // python3 examples/mp_spawn.py: the parent never used CUDA (no stream); its two spawned
  // workers ran the 4 tasks, 3 and 1 (the run's console summary; ncu was not run on it).
  std::vector<std::string> listing;
  for (const auto& f : profile::stream_files(fixture("mp_spawn"), listing)) check_format2(f, false);
  const auto r = profile::read_stream_folder(fixture("mp_spawn"));
  CHECK(r.messages.empty());
  REQUIRE(r.processes.size() == 2);
  CHECK(r.processes[0].trace.kernels.size() == 3); // ordered by start time
  CHECK(r.processes[1].trace.kernels.size() == 1);
  std::size_t kernels = 0;
  for (const auto& p : r.processes) {
    CHECK(p.process.truncated); // pool workers end with os._exit: no closing chunk
    CHECK(p.process.dropped_records == 0);
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

TEST_CASE("recorded profile: a format-1 stream (JSON records chunks) is still read", "[profile_fixture]") {
  // format1/numba_pi.slstream: the same program (python3 examples/numba_pi.py --launches 10)
  // recorded on the same H100 earlier on 2026-11-23 by the writer before binary records
  // (run C of docs/results/profile-run1.md). Streams of that format exist; the reader keeps
  // reading them (docs/profile-format.md, "Format versions").
  const auto file = fixture("format1/numba_pi.slstream");
  const auto c = testing::census_of(file);
  CHECK(c.format == 1);
  CHECK(c.whole);
  CHECK(c.count(profile::chunk_type::records) == 4);
  CHECK(c.count(profile::chunk_type::records_binary) == 0);
  CHECK(c.count(profile::chunk_type::close) == 1);
  const auto r = profile::read_stream(file);
  REQUIRE(r.valid);
  CHECK(r.messages.empty());
  const auto& p = r.profile;
  CHECK_FALSE(p.process.truncated);
  REQUIRE(p.trace.kernels.size() == 10); // ncu in that run: 10 kernels
  for (const auto& k : p.trace.kernels) {
    CHECK_THAT(k.name, Contains("count_hits"));
    CHECK(k.grid[0] == 256);
  }
  // 5.560 ms in the stream against ncu's 5.590 ms in that run (profile-run1.md, run C).
  CHECK(kernel_ns(p.trace) == Approx(5.590e6).epsilon(0.02));
  check_invariants(p);

  // The reader's sink gets the same records chunk by chunk, from JSON as from binary chunks.
  std::size_t batches = 0, streamed = 0;
  profile::read_stream(file, [&](const profile::process_info&, profile::records_batch&& b) {
    ++batches;
    streamed += b.trace.kernels.size();
  });
  CHECK(batches == 4);
  CHECK(streamed == 10);
}

// tests/fixtures/profile/counters: `speedlab profile --metrics default` on the H100 (2026-11-23),
// three programs: vector/ (speedlab run in-process, vector c = a * b on 2^24 floats, 6
// launches), cupy/ (examples/cupy_vector.py --n 16777216 --calls 5), numba/
// (examples/numba_pi.py --launches 10). K = 2: the first two launches of each kernel were
// replayed for their counters, and CUPTI records no activity for a replayed launch.
TEST_CASE("profile fixtures: counters read by the injection library", "[profile][fixtures]") {
  struct expect {
    const char* name;
    std::size_t launches, traced;
    double dram_read; // bytes the kernel must read: its inputs, or next to nothing
  };
  for (const expect& e : {expect{"counters/vector", 6, 4, 2.0 * 4 * (1 << 24)}, expect{"counters/cupy", 5, 3, 2.0 * 4 * (1 << 24)},
                          expect{"counters/numba", 10, 8, 0}}) {
    INFO(e.name);
    const auto read = profile::read_stream_folder(fixture(e.name));
    REQUIRE(read.processes.size() == 1);
    const auto& p = read.processes[0];
    REQUIRE(p.counters.size() == 1);
    const auto& pass = p.counters[0];
    CHECK(pass.metric_set == "default");
    CHECK(pass.chip == "GH100");
    CHECK(pass.passes == 2);
    CHECK(pass.per_kernel_limit == 2);
    CHECK(pass.launches == e.launches);
    CHECK(pass.skipped == e.launches - 2);
    REQUIRE(pass.kernels.size() == 2);
    CHECK(p.trace.kernels.size() == e.traced); // the replayed launches have no activity records
    bool noted = false;
    for (const auto& n : p.process.notes) noted |= n.find("2 launch(es) were replayed") != std::string::npos;
    CHECK(noted);
    for (const auto& k : pass.kernels) {
      CHECK(k.kernel == p.trace.kernels.front().mangled_name);
      const double read_bytes = k.metrics.at("dram__bytes_read.sum");
      if (e.dram_read > 0) CHECK(read_bytes == Approx(e.dram_read).epsilon(0.001)); // 134.23 MB read, as the work model says
      else CHECK(read_bytes < 1e5);                                                   // Monte Carlo reads its 64K states
      CHECK(k.metrics.at("gpu__time_duration.sum") > 0);
    }
  }
}

TEST_CASE("profile fixtures: a profiled program's roofline comes from its counters", "[profile][fixtures]") {
  const auto a = app::analyze_profile_folder(fixture("counters/cupy"));
  REQUIRE(a.points.size() == 1);
  REQUIRE(a.points[0].sections.has<counters::counter_pass>());
  std::size_t rows = 0;
  for (const auto& r : a.result.roofline) {
    if (r.work_source != "counters" || r.level != "dram") continue;
    ++rows;
    CHECK(r.kernel == "cupy_multiply__float32_float32_float32");
    // 134.2 MB read and 72.6 MB written in 82 us: about 2.5 TB/s.
    CHECK(r.achieved_gbps > 2000);
    CHECK(r.achieved_gbps < 3400);
  }
  CHECK(rows == 1); // one per distinct kernel
}

TEST_CASE("profile: the device model is this GPU's cached calibration, so profiled kernels get roofs",
          "[profile][fixtures]") {
  // The cache holds the H100's calibration (tests/fixtures/counters/device.json) under this
  // machine's key, as `speedlab calibrate` leaves it; `profile` reads it in a child and
  // writes device.json beside the streams, where the reports find it.
  testing::temp_dir cache, out;
  const char* old = std::getenv("SPEEDLAB_CACHE_DIR");
  const std::string saved = old ? old : "";
  ::setenv("SPEEDLAB_CACHE_DIR", cache.path().c_str(), 1);
  std::ifstream in(testing::fixture_dir() / "counters" / "device.json");
  auto h100 = nlohmann::json::parse(in).get<device_model>();
  h100.properties["cache_key"] = device::cache_key(device::probe_model());
  device::save_cached_model(h100);
  const auto dir = out.path() / "cupy";
  std::filesystem::copy(fixture("counters/cupy"), dir, std::filesystem::copy_options::recursive);
  std::filesystem::remove(dir / "device.json");

  CHECK_FALSE(app::profile_device_model("cached", dir, false)); // no GPU work: nothing to place
  CHECK_FALSE(std::filesystem::exists(dir / "device.json"));
  const auto d = app::profile_device_model("cached", dir, true);
  if (old) ::setenv("SPEEDLAB_CACHE_DIR", saved.c_str(), 1);
  else ::unsetenv("SPEEDLAB_CACHE_DIR");
  REQUIRE(d);
  CHECK(d->gpu.at(keys::dram_bw).value == Approx(h100.gpu.at(keys::dram_bw).value));
  REQUIRE(std::filesystem::exists(dir / "device.json"));

  const auto a = app::analyze_profile_folder(dir);
  std::size_t rows = 0;
  for (const auto& r : a.result.roofline) {
    if (r.level != "dram") continue;
    ++rows;
    CHECK(r.roof_gbps > 0); // the calibrated DRAM roof for this read/write mix
    CHECK(r.bound == "memory");
    CHECK(r.percent_of_bound > 50); // 2.5 TB/s against the H100's roof
    CHECK(r.percent_of_bound < 110);
  }
  CHECK(rows == 1);
}
