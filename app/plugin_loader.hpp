// Finds and loads workload plugins (Boost.DLL). A bad file (missing, not a speedlab
// plugin, wrong ABI, throwing describe()) becomes a load_error naming the file; the
// other plugins still load.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <speedlab/plugin.hpp>

namespace speedlab::app {

struct load_error {
  std::filesystem::path file;
  std::string message;
};

struct loaded_workload {
  workload_info info;
  std::filesystem::path file;
  const variant_spec* find_variant(const std::string& name) const;
};

class plugin_registry {
public:
  plugin_registry();
  ~plugin_registry();
  plugin_registry(const plugin_registry&) = delete;
  plugin_registry& operator=(const plugin_registry&) = delete;

  // Loads one file; returns false and records a load_error when it is not usable.
  bool load_file(const std::filesystem::path& file);
  // Loads every libspeedlab-*.so in a folder (non-recursive). A missing folder is an error.
  void load_directory(const std::filesystem::path& dir);

  const std::map<std::string, loaded_workload>& workloads() const { return m_workloads; }
  const loaded_workload* find(const std::string& name) const;
  // Adds a variant made outside the plugin (a Python variant); false when the workload is
  // not loaded or already has a variant of that name. Call before planning points.
  bool add_variant(const std::string& workload, variant_spec spec);
  const std::vector<load_error>& errors() const { return m_errors; }

private:
  struct library_handles;
  std::unique_ptr<library_handles> m_libraries; // keeps code alive as long as the registry
  std::map<std::string, loaded_workload> m_workloads;
  std::vector<load_error> m_errors;
};

// The folders searched, in order: --plugin-path values, SPEEDLAB_PLUGIN_PATH (colon
// separated), the build tree's plugins folder next to the executable, the installed folder.
std::vector<std::filesystem::path> plugin_search_path(const std::vector<std::string>& cli_paths);

// Closest names by edit distance, for "did you mean" messages.
std::string did_you_mean(const std::string& wrong, const std::vector<std::string>& valid);

} // namespace speedlab::app
