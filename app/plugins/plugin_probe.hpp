// Opening a plugin file (Boost.DLL: shared_library, and get_alias for the entry symbols that
// SPEEDLAB_REGISTER_WORKLOAD exports), and trying that first in a child process. Loading runs
// a library's constructors and describe() runs its code: a truncated file (SIGBUS in the
// loader), a missing symbol, or a crash or hang in describe() must end a child, not speedlab.
// Failures carry the loader's own words (dlerror: not ELF, wrong class, missing dependency,
// undefined symbol).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <boost/dll/shared_library.hpp>
#include <speedlab/plugin.hpp>

namespace speedlab::app {

// Why `file` cannot be a plugin judged from its first bytes (no ELF header, another
// architecture, not a shared library), or "" when it may be one.
std::string elf_problem(const std::filesystem::path& file);

// A plugin opened in this process: the library (unloaded when the last copy goes) and what
// describe() returned, or the reason it is not usable (then the library is not loaded).
struct opened_plugin {
  boost::dll::shared_library library;
  std::vector<workload_info> workloads;
  std::string error;
  // speedlab_build_flags (plugin.hpp): bit 0 optimized, bit 1 NDEBUG, bit 2 recorded; -1
  // for a plugin built before the SDK exported it.
  int build_flags = -1;
};
opened_plugin open_plugin(const std::filesystem::path& file);

// Opens each file in a forked child (one child for all of them, a new one after a child
// died) and returns, per file, "" when it opened cleanly or why not. A file that kills the
// child or takes longer than `timeout_s` is named with how it ended.
std::vector<std::string> probe_plugins(const std::vector<std::filesystem::path>& files, double timeout_s = 10);

} // namespace speedlab::app
