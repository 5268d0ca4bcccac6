// `speedlab run --devices`: the list, the child's CUDA_VISIBLE_DEVICES and the device
// parameter (app/run/device_list.hpp); what needs no GPU.
#include "app/run/device_list.hpp"

#include "app/suite/suite_config.hpp"
#include "speedlab_catch.hpp"

using namespace speedlab;
using app::gpu_census;
using app::parse_device_list;
using Catch::Matchers::Contains;

TEST_CASE("devices: all and explicit lists", "[devices]") {
  const gpu_census two{2, ""};
  CHECK(parse_device_list("all", two) == std::vector<int>{0, 1});
  CHECK(parse_device_list("1", two) == std::vector<int>{1});
  CHECK(parse_device_list("1,0", two) == std::vector<int>{1, 0}); // in the order given
  CHECK(parse_device_list(" 0 , 1 ", two) == std::vector<int>{0, 1});
  CHECK(parse_device_list("all", gpu_census{1, ""}) == std::vector<int>{0});
}

TEST_CASE("devices: clear errors", "[devices]") {
  const gpu_census two{2, ""};
  CHECK_THROWS_AS(parse_device_list("2", two), app::config_error);
  CHECK_THROWS_WITH(parse_device_list("0,2", two), Contains("device 2 does not exist") && Contains("2 GPUs (devices 0-1)"));
  CHECK_THROWS_WITH(parse_device_list("1", gpu_census{1, ""}), Contains("1 GPU (device 0)"));
  CHECK_THROWS_WITH(parse_device_list("0,0", two), Contains("listed twice"));
  CHECK_THROWS_WITH(parse_device_list("x", two), Contains("'x' is not a device index"));
  CHECK_THROWS_WITH(parse_device_list("-1", two), Contains("is not a device index"));
  CHECK_THROWS_WITH(parse_device_list("1.5", two), Contains("is not a device index"));
  CHECK_THROWS_WITH(parse_device_list("0,", two), Contains("an empty entry"));
  CHECK_THROWS_WITH(parse_device_list("", two), Contains("empty"));
  // No GPU: says why, for "all" as for an index.
  const gpu_census none{0, "no CUDA device found"};
  CHECK_THROWS_WITH(parse_device_list("all", none), Contains("no usable GPU here (no CUDA device found)"));
  CHECK_THROWS_WITH(parse_device_list("0", none), Contains("no usable GPU"));
}

TEST_CASE("devices: the child sees only its GPU", "[devices]") {
  CHECK(app::visible_devices_for(1, nullptr) == "1");
  CHECK(app::visible_devices_for(0, "") == "0");
  CHECK(app::visible_devices_for(1, "3,5") == "5"); // an index among the devices speedlab sees
  CHECK(app::visible_devices_for(0, "GPU-0a1b,GPU-2c3d") == "GPU-0a1b");
  CHECK_THROWS_WITH(app::visible_devices_for(2, "3,5"), Contains("lists only 2"));
}

TEST_CASE("devices: the device parameter is taken out before the plugin sees the point", "[devices]") {
  std::map<std::string, std::string> params{{"n", "1024"}, {"device", "1"}};
  CHECK(app::take_device(params) == 1);
  CHECK(params == std::map<std::string, std::string>{{"n", "1024"}});
  CHECK_FALSE(app::take_device(params));
}
