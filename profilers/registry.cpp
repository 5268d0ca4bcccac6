#include "profilers/profiler.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include "speedlab/config.hpp"

namespace speedlab::profiling {

// Each backend folder defines its factory; this list is the one place that names them.
std::unique_ptr<profiler> make_none_profiler();
std::unique_ptr<profiler> make_host_profiler();
#if SPEEDLAB_HAS_CUPTI
std::unique_ptr<profiler> make_cupti_profiler();
std::unique_ptr<profiler> make_counters_profiler();
std::unique_ptr<profiler> make_source_profiler();
#endif

const std::map<std::string, profiler_factory>& profiler_registry() {
  static const std::map<std::string, profiler_factory> registry{
      {"none", make_none_profiler},
      {"host", make_host_profiler},
#if SPEEDLAB_HAS_CUPTI
      {"cupti", make_cupti_profiler},
      {"counters", make_counters_profiler},
      {"source", make_source_profiler},
#endif
  };
  return registry;
}

std::unique_ptr<profiler> make_profiler(const std::string& name) {
  const auto& reg = profiler_registry();
  auto it = reg.find(name);
  if (it == reg.end()) return nullptr;
  return it->second();
}

std::string profiler_not_built_reason(const std::string& name) {
#if !SPEEDLAB_HAS_CUPTI
  if (name == "cupti" || name == "counters" || name == "source") return "speedlab was built without CUDA/CUPTI";
#endif
  (void)name;
  return {};
}

std::string no_driver_reason() {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libcuda.so.1", RTLD_LAZY);
  if (!lib) {
    const char* err = dlerror();
    return fmt::format("no NVIDIA driver: libcuda.so.1 cannot be loaded ({})", err ? err : "not found");
  }
  dlclose(lib);
  return {};
}

std::vector<std::string> profiler_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : profiler_registry()) names.push_back(name);
  return names;
}

} // namespace speedlab::profiling
