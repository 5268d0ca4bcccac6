#include "profilers/profiler.hpp"

#include "speedlab/config.hpp"

namespace speedlab::profiling {

// Each backend defines one anchor next to its SPEEDLAB_REGISTER_PROFILER. Taking their
// addresses here makes the linker keep every backend object (and so its registration)
// wherever the registry itself is linked, archive or not.
namespace detail {
extern const int none_profiler_anchor;
extern const int host_profiler_anchor;
extern const int nvtx_capture_anchor;
#if SPEEDLAB_HAS_CUPTI
extern const int cupti_profiler_anchor;
#endif
} // namespace detail

namespace {
[[gnu::used]] const void* const backend_anchors[] = {
    &detail::none_profiler_anchor, &detail::host_profiler_anchor, &detail::nvtx_capture_anchor,
#if SPEEDLAB_HAS_CUPTI
    &detail::cupti_profiler_anchor,
#endif
};
} // namespace

std::map<std::string, profiler_factory>& profiler_registry() {
  static std::map<std::string, profiler_factory> registry;
  return registry;
}

std::unique_ptr<profiler> make_profiler(const std::string& name) {
  auto& reg = profiler_registry();
  auto it = reg.find(name);
  if (it == reg.end()) return nullptr;
  return it->second();
}

std::string profiler_not_built_reason(const std::string& name) {
#if !SPEEDLAB_HAS_CUPTI
  if (name == "cupti") return "speedlab was built without CUDA/CUPTI";
#endif
  (void)name;
  return {};
}

std::vector<std::string> profiler_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : profiler_registry()) names.push_back(name);
  return names;
}

} // namespace speedlab::profiling
