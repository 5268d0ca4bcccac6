// The device probe, the calibration cache and host calibration (no GPU needed).
#include "speedlab_catch.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "model/device_keys.hpp"
#include "device/calibrate.hpp"
#include "device/device_probe.hpp"

namespace dev = speedlab::device;
namespace keys = speedlab::keys;

namespace {
// Points $SPEEDLAB_CACHE_DIR at a fresh folder for the test's lifetime.
struct temp_cache {
  std::filesystem::path dir;
  std::string old;
  bool had_old = false;
  temp_cache() {
    dir = std::filesystem::temp_directory_path() / ("speedlab-cache-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    if (const char* o = std::getenv("SPEEDLAB_CACHE_DIR")) {
      old = o;
      had_old = true;
    }
    setenv("SPEEDLAB_CACHE_DIR", dir.c_str(), 1);
  }
  ~temp_cache() {
    if (had_old) setenv("SPEEDLAB_CACHE_DIR", old.c_str(), 1);
    else unsetenv("SPEEDLAB_CACHE_DIR");
    std::filesystem::remove_all(dir);
  }
};
} // namespace

TEST_CASE("FP32 lanes and FP64 ratio by compute capability", "[device]") {
  CHECK(dev::fp32_lanes_per_sm(9, 0) == 128);
  CHECK(dev::fp32_lanes_per_sm(8, 0) == 64);
  CHECK(dev::fp32_lanes_per_sm(8, 6) == 128);
  CHECK(dev::fp32_lanes_per_sm(7, 0) == 64);
  CHECK(dev::fp64_ratio(9, 0) == 0.5);
  CHECK(dev::fp64_ratio(8, 0) == 0.5);
  CHECK(dev::fp64_ratio(8, 9) == 1.0 / 64);
  // H100 SXM: 132 SMs x 128 lanes x 2 x 1980 MHz = 66.9 TFLOP/s FP32, half of it FP64.
  const double fp32 = 132 * dev::fp32_lanes_per_sm(9, 0) * 2.0 * 1980e6 / 1e9;
  CHECK(fp32 == Approx(66908).epsilon(1e-3));
}

TEST_CASE("probe_model always describes the host; GPU only when usable", "[device]") {
  const auto m = dev::probe_model();
  REQUIRE(speedlab::find_ceiling(m.host, keys::cores));
  CHECK(m.host.at(keys::cores).value >= 1);
  CHECK_FALSE(m.host.at(keys::cores).measured);
  CHECK(m.properties.count("cpu_model"));
  CHECK(!m.properties.at("cache_key").empty());
  const std::string why = dev::gpu_unavailable_reason();
  if (why.empty()) {
    CHECK(!m.gpu_name.empty());
    REQUIRE(speedlab::find_ceiling(m.gpu, keys::dram_bw));
    CHECK_FALSE(m.gpu.at(keys::dram_bw).measured);
    CHECK(m.properties.at("cache_key").rfind("gpu-", 0) == 0);
  } else {
    CHECK(m.gpu_name.empty());
    CHECK(m.gpu.empty());
    CHECK(m.properties.at("gpu_unavailable") == why);
    CHECK(m.properties.at("cache_key").rfind("host-", 0) == 0);
  }
}

TEST_CASE("cache keys prefer the UUID, then name and bus id", "[device]") {
  speedlab::device_model m;
  m.gpu_name = "NVIDIA H100 80GB HBM3";
  m.properties["uuid"] = "GPU-0a1b2c3d-0000-1111-2222-333344445555";
  CHECK(dev::cache_key(m) == "gpu-GPU-0a1b2c3d-0000-1111-2222-333344445555");
  m.properties.erase("uuid");
  m.properties["pci_bus_id"] = "0000:1a:00.0";
  CHECK(dev::cache_key(m) == "gpu-NVIDIA_H100_80GB_HBM3-0000_1a_00.0");
  speedlab::device_model h;
  h.properties["hostname"] = "box";
  CHECK(dev::cache_key(h) == "host-box");
}

TEST_CASE("cached models are saved, found by key and checked for version", "[device]") {
  temp_cache tc;
  speedlab::device_model m;
  m.properties["cache_key"] = "host-unit-test";
  m.host[keys::memory_bw] = {42, "GB/s", true, "test"};
  const auto path = dev::save_cached_model(m);
  CHECK(path.parent_path() == tc.dir);
  CHECK(std::filesystem::exists(path));
  const auto back = dev::load_cached_model_for_key("host-unit-test");
  REQUIRE(back);
  CHECK(back->host.at(keys::memory_bw).value == 42);
  CHECK_FALSE(dev::load_cached_model_for_key("host-other"));

  // A file from another calibration version, or a damaged one, is ignored.
  auto j = nlohmann::json::parse(std::ifstream(path));
  j["calibration_version"] = dev::calibration_version + 1;
  std::ofstream(path) << j.dump();
  CHECK_FALSE(dev::load_cached_model_for_key("host-unit-test"));
  std::ofstream(path) << "{ not json";
  CHECK_FALSE(dev::load_cached_model_for_key("host-unit-test"));
}

TEST_CASE("host calibration measures memory bandwidth and cores, and is cached", "[device][calibrate]") {
  temp_cache tc;
  dev::calibrate_options o;
  o.quick = true;
  o.gpu = false;
  std::vector<std::string> lines;
  o.log = [&](const std::string& s) { lines.push_back(s); };
  const auto m = dev::calibrate(o);
  REQUIRE(speedlab::find_ceiling(m.host, keys::memory_bw));
  CHECK(m.host.at(keys::memory_bw).measured);
  CHECK(m.host.at(keys::memory_bw).value > 0.1);
  CHECK(m.host.at(keys::memory_bw_1thread).value > 0.1);
  CHECK(m.host.at(keys::cores).measured);
  CHECK(m.properties.at("calibration_mode") == "quick");
  CHECK(!lines.empty());
  // Reused from the cache when asked to.
  const auto cached = dev::load_cached_model_for_key(m.properties.at("cache_key"));
  REQUIRE(cached);
  CHECK(cached->host.at(keys::memory_bw).value == m.host.at(keys::memory_bw).value);
  o.use_cache = true;
  o.host = false; // would measure nothing new: the cache must answer
  const auto again = dev::calibrate(o);
  CHECK(again.properties.at("calibrated_at") == m.properties.at("calibrated_at"));
  CHECK(again.host.at(keys::memory_bw).value == m.host.at(keys::memory_bw).value);
}
