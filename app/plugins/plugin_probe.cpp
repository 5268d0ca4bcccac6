#include "app/plugins/plugin_probe.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <signal.h>

#include <cstring>
#include <fstream>

#include <boost/dll/runtime_symbol_info.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/process/child_process.hpp"
#include "speedlab/config.hpp"

namespace speedlab::app {
namespace {

const char* machine_name(unsigned machine) {
  switch (machine) {
  case EM_X86_64: return "x86-64";
  case EM_386: return "x86 (32-bit)";
  case EM_AARCH64: return "AArch64";
  case EM_ARM: return "ARM (32-bit)";
  case EM_PPC64: return "POWER (ppc64)";
  case EM_RISCV: return "RISC-V";
  case EM_S390: return "s390";
  default: return nullptr;
  }
}

#if defined(__x86_64__)
constexpr unsigned host_machine = EM_X86_64;
#elif defined(__aarch64__)
constexpr unsigned host_machine = EM_AARCH64;
#elif defined(__powerpc64__)
constexpr unsigned host_machine = EM_PPC64;
#else
constexpr unsigned host_machine = EM_NONE; // not checked here; dlopen says it
#endif

// The symbols of SPEEDLAB_REGISTER_WORKLOAD are Boost.DLL aliases: exported pointers to
// the functions, read by get_alias. has() first: get_alias throws for a missing symbol.
template <class Fn>
Fn* alias(const boost::dll::shared_library& library, const char* name) {
  return library.has(name) ? &library.get_alias<Fn>(name) : nullptr;
}

} // namespace

std::string elf_problem(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "cannot be read";
  Elf64_Ehdr header{};
  in.read(reinterpret_cast<char*>(&header), sizeof header);
  const auto got = static_cast<std::size_t>(in.gcount());
  if (got < SELFMAG || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return "not a shared library (no ELF header)";
  if (got >= EI_NIDENT && header.e_ident[EI_CLASS] == ELFCLASS32)
    return "not a shared library for this machine (a 32-bit ELF file)";
  if (got < sizeof header) return fmt::format("not a shared library (the file ends after {} bytes, inside its ELF header)", got);
  if (header.e_type != ET_DYN)
    return header.e_type == ET_EXEC ? "not a shared library (an executable)"
           : header.e_type == ET_REL ? "not a shared library (an object file; link it with -shared)"
                                     : "not a shared library (ELF type " + std::to_string(header.e_type) + ")";
  if (host_machine != EM_NONE && header.e_machine != host_machine) {
    const char* theirs = machine_name(header.e_machine);
    return fmt::format("built for another architecture ({}); this speedlab runs on {}",
                       theirs ? theirs : fmt::format("ELF machine {}", header.e_machine), machine_name(host_machine));
  }
  return {};
}

opened_plugin open_plugin(const std::filesystem::path& file) {
  opened_plugin out;
  // Boost.DLL opens the running program itself in place of a file that is that program,
  // where dlopen refuses a position-independent executable: refuse it the same way here.
  std::error_code same_ec;
  if (std::filesystem::equivalent(file, boost::dll::program_location(same_ec), same_ec)) {
    out.error = "cannot be loaded: it is this program, an executable (cannot dynamically load a position-independent "
                "executable)";
    return out;
  }
  ::dlerror();
  // rtld_now: an undefined symbol is an error here, not an exit(127) in the middle of a run.
  namespace mode = boost::dll::load_mode;
  boost::dll::shared_library library;
  boost::dll::fs::error_code ec;
  library.load(file, mode::rtld_now | mode::rtld_local, ec);
  if (ec || !library) {
    // Boost.DLL's error code says only "bad file descriptor"; the loader's words are still
    // in dlerror (nothing between its dlopen and here calls into libdl).
    const char* why = ::dlerror();
    out.error = fmt::format("cannot be loaded: {}", why ? why : ec ? ec.message() : "unknown loader error");
    return out;
  }
  auto fail = [&](std::string message) {
    library.unload();
    out.error = std::move(message);
    return out;
  };
  auto* abi_version = alias<int()>(library, "speedlab_abi_version");
  auto* describe = alias<std::vector<workload_info>()>(library, "speedlab_describe");
  if (!abi_version || !describe)
    return fail("not a speedlab plugin (no speedlab_abi_version/speedlab_describe symbols; register workloads with "
                "SPEEDLAB_REGISTER_WORKLOAD)");
  // The ABI is checked through a plain int function before any SDK type crosses over.
  const int abi = abi_version();
  if (abi != SPEEDLAB_PLUGIN_ABI_VERSION)
    return fail(fmt::format("plugin ABI version {} does not match this speedlab's ABI version {}; rebuild the plugin "
                            "against this SDK",
                            abi, SPEEDLAB_PLUGIN_ABI_VERSION));
  try {
    out.workloads = describe();
  } catch (const std::exception& e) {
    return fail(std::string("describe() threw: ") + e.what());
  } catch (...) {
    return fail("describe() threw a non-standard exception");
  }
  if (out.workloads.empty()) return fail("plugin describes no workload");
  // Optional: a plugin built before the SDK exported it lacks the symbol (unknown).
  if (auto* build_flags = alias<int()>(library, "speedlab_build_flags")) out.build_flags = build_flags();
  out.library = std::move(library);
  return out;
}

std::vector<std::string> probe_plugins(const std::vector<std::filesystem::path>& files, double timeout_s) {
  std::vector<std::string> verdict(files.size());
  std::vector<std::size_t> pending(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) pending[i] = i;
  while (!pending.empty()) {
    // The child names each file before opening it, so a death points at its file.
    const child_outcome c = run_in_child(
        [&](const heartbeat_function& beat) {
          // A crash must end this child as it is: no handler inherited from the parent (a
          // test framework's, a sanitizer's report-and-continue) may catch it here.
          for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) ::signal(sig, SIG_DFL);
          nlohmann::json errors = nlohmann::json::array();
          // Never unloaded: a library's destructors run at unload, and this child only answers.
          auto* kept = new std::vector<boost::dll::shared_library>();
          for (std::size_t k = 0; k < pending.size(); ++k) {
            beat(std::to_string(k));
            opened_plugin p = open_plugin(files[pending[k]]);
            errors.push_back(p.error);
            if (p.library) kept->push_back(std::move(p.library));
          }
          return errors.dump();
        },
        timeout_s);
    if (!c.error.empty()) { // no child at all: say so for each file rather than load blind
      for (auto i : pending) verdict[i] = "could not be checked in a child process: " + c.error;
      break;
    }
    if (c.result) {
      nlohmann::json errors;
      try {
        errors = nlohmann::json::parse(*c.result);
      } catch (const nlohmann::json::exception&) {
      }
      for (std::size_t k = 0; k < pending.size(); ++k)
        verdict[pending[k]] = errors.is_array() && k < errors.size() && errors[k].is_string()
                                  ? errors[k].get<std::string>()
                                  : "the probe's answer was unreadable";
      break;
    }
    std::size_t culprit = 0;
    try {
      culprit = std::stoul(c.last_heartbeat);
    } catch (const std::exception&) {
    }
    if (culprit >= pending.size()) culprit = 0;
    verdict[pending[culprit]] =
        c.timed_out ? fmt::format("loading it or its describe() did not finish within {:g} s; skipped", timeout_s)
                    : fmt::format("loading it or its describe() ended the probe process with {}; skipped",
                                  describe_end(c.wait_status));
    // The files before the culprit were fine but their answers died with the child.
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(culprit));
  }
  return verdict;
}

} // namespace speedlab::app
