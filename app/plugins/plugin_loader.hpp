// Finds and loads workload plugins. Each file is first opened in a child process
// (plugin_probe.hpp), so a file that crashes, hangs or fails to link is reported and
// skipped while the others load. Every file passed over says why: name pattern, not a
// shared library, no entry symbol, ABI mismatch (both versions), the loader's message.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <speedlab/plugin.hpp>

#include "model/results.hpp"

namespace speedlab::app {

struct load_error {
  std::filesystem::path file;
  std::string message;
};

struct loaded_workload {
  workload_info info;
  std::filesystem::path file;
  plugin_build build; // how its plugin was compiled; unknown for old plugins and tests' add()
  const variant_spec* find_variant(const std::string& name) const;
};

class plugin_registry {
public:
  plugin_registry();
  ~plugin_registry();
  plugin_registry(const plugin_registry&) = delete;
  plugin_registry& operator=(const plugin_registry&) = delete;

  // Loads files and folders in order (a folder: its libspeedlab-*.so, not recursive), with
  // one probe child for all of them. A workload defined again by a later file replaces the
  // earlier one, with a note.
  void load(const std::vector<std::filesystem::path>& files_and_folders);
  // Loads one file; returns false and records a load_error when it is not usable.
  bool load_file(const std::filesystem::path& file);
  // Loads every libspeedlab-*.so in a folder. A missing folder is an error.
  void load_directory(const std::filesystem::path& dir);

  // A workload described in this process (tests, fuzzing): no file is loaded.
  void add(workload_info info, const std::filesystem::path& file);

  const std::map<std::string, loaded_workload>& workloads() const { return m_workloads; }
  const loaded_workload* find(const std::string& name) const;
  // Adds a variant made outside the plugin (a Python variant); false when the workload is
  // not loaded or already has a variant of that name. Call before planning points.
  bool add_variant(const std::string& workload, variant_spec spec);
  const std::vector<load_error>& errors() const { return m_errors; }  // files that should have loaded
  const std::vector<load_error>& skipped() const { return m_skipped; } // files passed over by name or kind
  const std::vector<std::string>& notes() const { return m_notes; }    // replacements, folders named twice

private:
  struct library_handles;
  std::unique_ptr<library_handles> m_libraries; // keeps code alive as long as the registry
  std::map<std::string, loaded_workload> m_workloads;
  std::vector<load_error> m_errors, m_skipped;
  std::vector<std::string> m_notes;
};

// The folders and files searched, in order (later ones win): the built-in plugins folder
// (next to the executable in a build tree, else the installed one), SPEEDLAB_PLUGIN_PATH
// (colon separated), then the --plugin-path values. A folder named twice is searched once.
std::vector<std::filesystem::path> plugin_search_path(const std::vector<std::string>& cli_paths);

// The built-in plugins folder, or "" when none is found.
std::filesystem::path builtin_plugin_dir();

} // namespace speedlab::app
