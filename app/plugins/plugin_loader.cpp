#include "app/plugins/plugin_loader.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <system_error>

#include <boost/dll/runtime_symbol_info.hpp>
#include <fmt/format.h>

#include "app/plugins/plugin_probe.hpp"
#include "speedlab/config.hpp"

namespace speedlab::app {

struct plugin_registry::library_handles {
  std::vector<boost::dll::shared_library> libraries;
  // Unloaded in reverse order of loading.
  ~library_handles() {
    while (!libraries.empty()) libraries.pop_back();
  }
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

namespace {

bool plugin_file_name(const std::filesystem::path& file) {
  const auto name = file.filename().string();
  return name.rfind("libspeedlab-", 0) == 0 && file.extension() == ".so";
}

} // namespace

void plugin_registry::load(const std::vector<std::filesystem::path>& entries) {
  // 1. The candidate files, in order; what is passed over says why.
  std::vector<std::filesystem::path> candidates;
  std::error_code ec;
  for (const auto& entry : entries) {
    if (entry.empty()) {
      m_errors.push_back({entry, "empty plugin path"});
    } else if (std::filesystem::is_directory(entry, ec)) {
      std::vector<std::filesystem::path> files;
      for (const auto& item : std::filesystem::directory_iterator(entry, ec)) {
        const auto& p = item.path();
        if (plugin_file_name(p)) files.push_back(p);
        else if (item.is_directory(ec)) m_skipped.push_back({p, "a folder (plugin folders are not searched recursively)"});
        else m_skipped.push_back({p, "name does not match libspeedlab-*.so"});
      }
      if (ec) m_errors.push_back({entry, "cannot list the plugin folder: " + ec.message()});
      std::sort(files.begin(), files.end()); // deterministic order
      candidates.insert(candidates.end(), files.begin(), files.end());
    } else if (!std::filesystem::exists(entry, ec)) {
      m_errors.push_back({entry, "plugin file or folder not found"});
    } else {
      candidates.push_back(entry);
    }
  }
  // 2. What the first bytes rule out, without running anything.
  std::vector<std::filesystem::path> probe;
  for (const auto& f : candidates) {
    if (!std::filesystem::is_regular_file(f, ec)) m_errors.push_back({f, "not a regular file"});
    else if (auto why = elf_problem(f); !why.empty()) m_errors.push_back({f, why});
    else probe.push_back(f);
  }
  // 3. The rest opened in a child first, then here.
  const auto verdicts = probe_plugins(probe);
  for (std::size_t i = 0; i < probe.size(); ++i) {
    if (!verdicts[i].empty()) {
      m_errors.push_back({probe[i], verdicts[i]});
      continue;
    }
    opened_plugin p = open_plugin(probe[i]);
    if (!p.library) {
      m_errors.push_back({probe[i], p.error});
      continue;
    }
    m_libraries->libraries.push_back(std::move(p.library));
    for (auto& w : p.workloads) {
      if (w.name.empty()) {
        m_errors.push_back({probe[i], "a workload has an empty name"});
        continue;
      }
      if (auto it = m_workloads.find(w.name); it != m_workloads.end()) {
        m_notes.push_back(fmt::format("workload '{}' of {} replaces the one of {} (later on the plugin path wins)", w.name,
                                      probe[i].string(), it->second.file.string()));
        m_workloads.erase(it);
      }
      std::string name = w.name;
      m_workloads.emplace(name, loaded_workload{std::move(w), probe[i], plugin_build_from_flags(p.build_flags)});
    }
  }
}

void plugin_registry::add(workload_info info, const std::filesystem::path& file) {
  std::string name = info.name;
  m_workloads.insert_or_assign(name, loaded_workload{std::move(info), file, {}});
}

bool plugin_registry::load_file(const std::filesystem::path& file) {
  const auto before = m_errors.size();
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) {
    m_errors.push_back({file, "is a folder, not a plugin file"});
    return false;
  }
  load({file});
  return m_errors.size() == before;
}

void plugin_registry::load_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    m_errors.push_back({dir, "plugin folder not found"});
    return;
  }
  load({dir});
}

std::filesystem::path builtin_plugin_dir() {
  std::error_code ec;
  const auto exe_dir = std::filesystem::path(boost::dll::program_location(ec).parent_path().string());
  // The build tree (<build>/plugins), then the installed layout relative to bin/: no
  // compiled-in absolute path, so an installed prefix can move.
  for (auto candidate : {exe_dir / "plugins", exe_dir / SPEEDLAB_PLUGIN_DIR_FROM_BIN}) {
    if (std::filesystem::is_directory(candidate, ec)) return std::filesystem::weakly_canonical(candidate, ec);
  }
  return {};
}

std::vector<std::filesystem::path> plugin_search_path(const std::vector<std::string>& cli_paths) {
  std::vector<std::filesystem::path> named;
  if (auto builtin = builtin_plugin_dir(); !builtin.empty()) named.push_back(builtin);
  if (const char* env = std::getenv("SPEEDLAB_PLUGIN_PATH"); env && *env) {
    std::string s = env;
    std::size_t start = 0;
    while (start <= s.size()) {
      auto colon = s.find(':', start);
      auto part = s.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!part.empty()) named.emplace_back(part);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  for (const auto& p : cli_paths) named.emplace_back(p);
  // A folder or file named twice (also as another spelling of the same path) is loaded once.
  std::vector<std::filesystem::path> out;
  std::set<std::filesystem::path> seen;
  for (const auto& p : named) {
    std::error_code ec;
    auto canonical = p.empty() ? p : std::filesystem::weakly_canonical(p, ec);
    if (ec) canonical = p;
    if (!p.empty() && !seen.insert(canonical).second) continue;
    out.push_back(p);
  }
  return out;
}

} // namespace speedlab::app
