#include "speedlab_catch.hpp"

#include "speedlab/config.hpp"

#if SPEEDLAB_HAS_NVTX

#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

#include <nvtx3/nvToolsExt.h>

#include "profilers/nvtx/nvtx_capture.hpp"

using speedlab::profiling::nvtx_capture;

namespace {

std::uint32_t tid() { return static_cast<std::uint32_t>(::syscall(SYS_gettid)); }

nvtxEventAttributes_t attributes(const char* text) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = text;
  return a;
}

} // namespace

TEST_CASE("nvtx capture: speedlab is the NVTX tool of its own executable", "[nvtx_capture]") {
  if (std::getenv("NVTX_INJECTION64_PATH")) {
    WARN("NVTX_INJECTION64_PATH names another NVTX tool: not testable here");
    return;
  }
  nvtxRangePushA("wake NVTX up");
  nvtxRangePop();
  CHECK(nvtx_capture::tool_attached());
}

TEST_CASE("nvtx capture: push/pop, domains, start/end and registered strings", "[nvtx_capture]") {
  if (std::getenv("NVTX_INJECTION64_PATH")) {
    WARN("NVTX_INJECTION64_PATH names another NVTX tool: not testable here");
    return;
  }
  nvtxRangePushA("before capture");
  nvtxDomainHandle_t domain = nvtxDomainCreateA("speedlab");
  nvtxStringHandle_t registered = nvtxDomainRegisterStringA(domain, "registered name");
  std::vector<speedlab::trace::range_record> ranges;
  std::uint64_t t0 = 0, t1 = 0;
  {
    nvtx_capture capture;
    t0 = speedlab::profiling::steady_now_ns();
    nvtxRangePop(); // "before capture" began outside: not recorded
    auto a = attributes("w/v n=1: compute");
    CHECK(nvtxDomainRangePushEx(domain, &a) == 0);
    nvtxRangePushA("inner default");
    nvtxRangePop();
    nvtxEventAttributes_t r = attributes("");
    r.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    r.message.registered = registered;
    nvtxDomainRangePushEx(domain, &r);
    nvtxDomainRangePop(domain);
    nvtxDomainRangePop(domain);
    const nvtxRangeId_t id = nvtxRangeStartA("start/end");
    std::uint32_t other = 0;
    std::thread([&] {
      other = tid();
      nvtxRangePushW(L"wide");
      nvtxRangePop();
    }).join();
    nvtxRangeEnd(id);
    CHECK(nvtxDomainRangePop(domain) < 0); // nothing open: an error level, no crash
    t1 = speedlab::profiling::steady_now_ns();
    ranges = capture.take();
    REQUIRE(ranges.size() == 5);
    auto find = [&](const std::string& name) -> const speedlab::trace::range_record& {
      for (const auto& x : ranges)
        if (x.name == name) return x;
      FAIL("missing range " << name);
      return ranges.front();
    };
    const auto& compute = find("w/v n=1: compute");
    CHECK(compute.domain == "speedlab");
    CHECK(compute.thread == tid());
    CHECK(compute.process == static_cast<std::uint32_t>(::getpid()));
    CHECK((compute.start >= t0 && compute.end <= t1 && compute.start <= compute.end));
    const auto& inner = find("inner default");
    CHECK(inner.domain.empty());
    CHECK((inner.start >= compute.start && inner.end <= compute.end));
    CHECK(find("registered name").domain == "speedlab");
    CHECK(find("wide").thread == other);
    CHECK(find("start/end").end >= find("wide").end);
  }
  // After the capture ends nothing is kept.
  nvtxRangePushA("after");
  nvtxRangePop();
  nvtx_capture later;
  CHECK(later.take().empty());
}

TEST_CASE("nvtx capture: concurrent captures see ranges that ended since each began", "[nvtx_capture]") {
  if (std::getenv("NVTX_INJECTION64_PATH")) {
    WARN("NVTX_INJECTION64_PATH names another NVTX tool: not testable here");
    return;
  }
  nvtx_capture first;
  nvtxRangePushA("one");
  nvtxRangePop();
  nvtx_capture second;
  nvtxRangePushA("two");
  nvtxRangePop();
  CHECK(first.take().size() == 2);
  REQUIRE(second.take().size() == 1);
  CHECK(second.take()[0].name == "two");
}

#endif

#if SPEEDLAB_HAS_NVTX
#include "app/plugins/plugin_loader.hpp"
#include "app/run/runner.hpp"
#include "test_support.hpp"

TEST_CASE("nvtx capture: a plugin's scoped_range reaches speedlab's recorder", "[nvtx_capture]") {
  if (std::getenv("NVTX_INJECTION64_PATH")) {
    WARN("NVTX_INJECTION64_PATH names another NVTX tool: not testable here");
    return;
  }
  speedlab::app::plugin_registry reg;
  REQUIRE(reg.load_file(speedlab::testing::faulty_plugin()));
  const auto* w = reg.find("faulty");
  REQUIRE(w);
  nvtx_capture capture;
  auto run = w->find_variant("ok")->create(speedlab::point({{"n", "100"}, {"mode", "a"}, {"scale", "1"}}),
                                                 speedlab::app::make_run_context(1));
  run->setup();
  run->compute();
  CHECK(run->validate().ok);
  bool found = false;
  for (const auto& r : capture.take()) found = found || r.name == "faulty: summing";
  CHECK(found);
}
#endif
