#include "profilers/profiler.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include "profilers/counters/counters_options.hpp"
#include "profilers/cupti/cupti_options.hpp"
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

namespace {
#if SPEEDLAB_HAS_CUPTI
constexpr const char* cupti_not_built = "";
#else
constexpr const char* cupti_not_built = "speedlab was built without CUDA/CUPTI";
profiler_factory make_cupti_profiler, make_counters_profiler, make_source_profiler; // empty: left out
#endif
} // namespace

static std::map<std::string, backend_entry>& registry() {
  static std::map<std::string, backend_entry> registry{
      {"none", {.make = make_none_profiler}},
      {"host", {.make = make_host_profiler}},
      {"cupti",
       {.make = make_cupti_profiler,
        .not_built = cupti_not_built,
        .options = &cupti_options_section(),
        .traces_device = true}},
      {"counters",
       {.make = make_counters_profiler,
        .not_built = cupti_not_built,
        .options = &counters_options_section(),
        .first_round_only = true}},
      {"source", {.make = make_source_profiler, .not_built = cupti_not_built, .first_round_only = true}},
  };
  return registry;
}

const std::map<std::string, backend_entry>& profiler_registry() { return registry(); }

bool register_backend(const std::string& name, backend_entry entry) {
  return registry().try_emplace(name, std::move(entry)).second;
}

const backend_entry* find_backend(const std::string& name) {
  const auto& reg = profiler_registry();
  auto it = reg.find(name);
  return it == reg.end() ? nullptr : &it->second;
}

std::unique_ptr<profiler> make_profiler(const std::string& name) {
  const backend_entry* b = find_backend(name);
  return b && b->make ? b->make() : nullptr;
}

std::string profiler_not_built_reason(const std::string& name) {
  const backend_entry* b = find_backend(name);
  return b && !b->make ? b->not_built : std::string();
}

std::string no_driver_reason(std::string_view then) {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libcuda.so.1", RTLD_LAZY);
  if (!lib) {
    const char* err = dlerror();
    return fmt::format("no NVIDIA driver: libcuda.so.1 cannot be loaded ({}){}{}", err ? err : "not found",
                       then.empty() ? "" : "; ", then);
  }
  dlclose(lib);
  return {};
}

std::vector<std::string> profiler_names() {
  std::vector<std::string> names;
  for (const auto& [name, entry] : profiler_registry())
    if (entry.make) names.push_back(name);
  return names;
}

} // namespace speedlab::profiling
