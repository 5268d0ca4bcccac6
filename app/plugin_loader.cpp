#include "app/plugin_loader.hpp"

#include <algorithm>
#include <cstdlib>
#include <system_error>

#include <boost/dll/import.hpp>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <fmt/format.h>

#include "speedlab/config.hpp"

namespace speedlab::app {

struct plugin_registry::library_handles {
  std::vector<boost::dll::shared_library> libraries;
};

plugin_registry::plugin_registry() : m_libraries(std::make_unique<library_handles>()) {}

// Workload descriptors hold std::function objects whose code lives in the libraries:
// destroy them before unloading.
plugin_registry::~plugin_registry() {
  m_workloads.clear();
  m_libraries.reset();
}

const variant_spec* loaded_workload::find_variant(const std::string& name) const {
  for (const auto& v : info.variants)
    if (v.name == name) return &v;
  return nullptr;
}

const loaded_workload* plugin_registry::find(const std::string& name) const {
  auto it = m_workloads.find(name);
  return it == m_workloads.end() ? nullptr : &it->second;
}

bool plugin_registry::add_variant(const std::string& workload, variant_spec spec) {
  auto it = m_workloads.find(workload);
  if (it == m_workloads.end() || it->second.find_variant(spec.name)) return false;
  it->second.info.variants.push_back(std::move(spec));
  return true;
}

bool plugin_registry::load_file(const std::filesystem::path& file) {
  auto fail = [&](std::string message) {
    m_errors.push_back({file, std::move(message)});
    return false;
  };
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return fail("file not found");
  if (!std::filesystem::is_regular_file(file, ec)) return fail("not a regular file");

  boost::dll::shared_library lib;
  boost::dll::fs::error_code load_ec;
  lib.load(file, load_ec, boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local);
  if (load_ec) return fail("cannot be loaded as a shared library: " + load_ec.message());
  if (!lib.has("speedlab_abi_version") || !lib.has("speedlab_describe"))
    return fail("not a speedlab plugin (no speedlab_abi_version/speedlab_describe symbols; "
                "register workloads with SPEEDLAB_REGISTER_WORKLOAD)");

  // The ABI is checked through a plain int function before any SDK type crosses over.
  const int abi = lib.get_alias<int()>("speedlab_abi_version")();
  if (abi != SPEEDLAB_PLUGIN_ABI_VERSION)
    return fail(fmt::format("plugin ABI version {} does not match this speedlab's ABI version {}; "
                            "rebuild the plugin against this SDK",
                            abi, SPEEDLAB_PLUGIN_ABI_VERSION));

  std::vector<workload_info> described;
  try {
    described = lib.get_alias<describe_function>("speedlab_describe")();
  } catch (const std::exception& e) {
    return fail(std::string("describe() threw: ") + e.what());
  } catch (...) {
    return fail("describe() threw a non-standard exception");
  }
  if (described.empty()) return fail("plugin describes no workload");

  bool any = false;
  for (auto& w : described) {
    if (w.name.empty()) {
      fail("a workload has an empty name");
      continue;
    }
    if (auto it = m_workloads.find(w.name); it != m_workloads.end()) {
      fail(fmt::format("workload '{}' is already provided by {}; this copy is ignored", w.name,
                       it->second.file.string()));
      continue;
    }
    std::string name = w.name;
    m_workloads.emplace(name, loaded_workload{std::move(w), file});
    any = true;
  }
  if (any) m_libraries->libraries.push_back(std::move(lib));
  return any;
}

void plugin_registry::load_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    m_errors.push_back({dir, "plugin folder not found"});
    return;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const auto name = entry.path().filename().string();
    if (name.rfind("libspeedlab-", 0) == 0 && entry.path().extension() == ".so") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end()); // deterministic order
  for (const auto& f : files) load_file(f);
}

std::vector<std::filesystem::path> plugin_search_path(const std::vector<std::string>& cli_paths) {
  std::vector<std::filesystem::path> out;
  for (const auto& p : cli_paths) out.emplace_back(p);
  if (const char* env = std::getenv("SPEEDLAB_PLUGIN_PATH"); env && *env) {
    std::string s = env;
    std::size_t start = 0;
    while (start <= s.size()) {
      auto colon = s.find(':', start);
      auto part = s.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!part.empty()) out.emplace_back(part);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  if (out.empty()) {
    // Default folders only when nothing was named, so a test can load exactly one folder.
    std::error_code ec;
    const auto exe_dir = boost::dll::program_location(ec).parent_path();
    for (auto candidate : {std::filesystem::path(exe_dir.string()) / "plugins",
                           std::filesystem::path(exe_dir.string()) / ".." / "lib" / "speedlab" / "plugins",
                           std::filesystem::path(SPEEDLAB_INSTALL_PLUGIN_DIR)}) {
      if (std::filesystem::is_directory(candidate, ec)) {
        out.push_back(std::filesystem::weakly_canonical(candidate, ec));
        break;
      }
    }
  }
  return out;
}

namespace {
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0u : 1u)});
      diag = up;
    }
  }
  return row[b.size()];
}
} // namespace

std::string did_you_mean(const std::string& wrong, const std::vector<std::string>& valid) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, wrong.size() / 3) + 1;
  for (const auto& v : valid) {
    const auto d = edit_distance(wrong, v);
    if (d < best_d) {
      best_d = d;
      best = v;
    }
  }
  return best;
}

} // namespace speedlab::app
