#include "app/python/python_variants.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <boost/dll/runtime_symbol_info.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/program_analysis.hpp"
#include "analysis/python_lines.hpp"
#include "app/process/child_process.hpp"
#include "app/profile/program_launcher.hpp"
#include "app/run/point_tracing.hpp"
#include "app/run/runner.hpp"
#include "device/device_probe.hpp"
#include "model/profile_stream.hpp"
#include "model/saved_records.hpp"
#include "model/trace_fold.hpp"
#include "profilers/cupti/cupti_options.hpp"
#include "profilers/profiler.hpp"
#include "speedlab/config.hpp"

extern char** environ;

namespace speedlab::app {
namespace {

using json = nlohmann::json;

// Fixed descriptors in the Python process (worker.py reads the same numbers).
constexpr int request_fd = 0;  // requests in, one JSON line each
constexpr int reply_fd = 3;    // replies out
constexpr int arrays_fd = 4;   // the shared arrays (memfd)
constexpr std::size_t array_alignment = 4096;
constexpr std::size_t log_tail_bytes = 1500;

std::string errno_text(const char* what) { return fmt::format("{} failed: {}", what, std::strerror(errno)); }

// An fd closed on scope exit.
class unique_fd {
public:
  explicit unique_fd(int fd = -1) : m_fd(fd) {}
  ~unique_fd() { reset(); }
  unique_fd(unique_fd&& o) noexcept : m_fd(std::exchange(o.m_fd, -1)) {}
  unique_fd& operator=(unique_fd&& o) noexcept {
    if (this != &o) {
      reset();
      m_fd = std::exchange(o.m_fd, -1);
    }
    return *this;
  }
  int get() const { return m_fd; }
  void reset() {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
  }

private:
  int m_fd;
};

// The environment of the Python process: ours with the package folder first on PYTHONPATH
// and `set` applied (a key there replaces the inherited one).
std::vector<std::string> python_environment(const std::filesystem::path& package_dir,
                                            const std::map<std::string, std::string>& set = {}) {
  std::vector<std::string> env;
  std::string path = package_dir.string();
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    if (key == "PYTHONPATH") path += ":" + entry.substr(11);
    else if (!set.count(key)) env.push_back(std::move(entry));
  }
  env.push_back("PYTHONPATH=" + path);
  env.push_back("PYTHONUNBUFFERED=1");
  for (const auto& [k, v] : set) env.push_back(k + "=" + v);
  return env;
}

// Starts `argv` with `fds` (target -> source) as its only open descriptors besides 0..2.
// The process gets SIGKILL when the thread that started it ends, so a point killed for a
// timeout takes its Python process along.
pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
            const std::vector<std::pair<int, int>>& fds) {
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::vector<int> moved(fds.size(), -1); // allocated before fork: the child must not allocate
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(errno_text("fork() for the Python process"));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    // Move every source above the targets first, so no dup2 overwrites a later source.
    for (std::size_t i = 0; i < fds.size(); ++i) moved[i] = ::fcntl(fds[i].second, F_DUPFD, 64);
    for (std::size_t i = 0; i < fds.size(); ++i)
      if (moved[i] < 0 || ::dup2(moved[i], fds[i].first) < 0) ::_exit(127);
    ::close_range(5, ~0u, 0);
    ::execvpe(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

std::string read_tail(int fd) {
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size <= 0) return {};
  const off_t start = size > off_t(log_tail_bytes) ? size - off_t(log_tail_bytes) : 0;
  std::string text(static_cast<std::size_t>(size - start), '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), start);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// A running Python worker: requests out, replies in, its output kept in a memfd.
class python_process {
public:
  python_process(const python_settings& settings, const std::filesystem::path& package_dir, int arrays,
                 const std::map<std::string, std::string>& env = {}) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) throw std::runtime_error(errno_text("socketpair()"));
    m_socket = unique_fd(pair[0]);
    unique_fd theirs(pair[1]);
    m_log = unique_fd(::memfd_create("speedlab-python-log", MFD_CLOEXEC));
    if (m_log.get() < 0) throw std::runtime_error(errno_text("memfd_create()"));
    std::vector<std::string> argv{settings.interpreter, "-m", "speedlab_variants.worker", "serve"};
    for (const auto& f : settings.files) argv.push_back(std::filesystem::absolute(f).string());
    std::vector<std::pair<int, int>> fds{{request_fd, theirs.get()}, {1, m_log.get()}, {2, m_log.get()},
                                         {reply_fd, theirs.get()}};
    if (arrays >= 0) fds.push_back({arrays_fd, arrays});
    m_pid = spawn(argv, python_environment(package_dir, env), fds);
    // The worker does the point's work: its CPU time is the point's (the host backend).
    profiling::add_helper_process(m_pid);
    m_interpreter = settings.interpreter;
  }
  ~python_process() { stop(); }
  python_process(const python_process&) = delete;
  python_process& operator=(const python_process&) = delete;

  // One request, one reply. A process that ended (crash, exit) becomes an exception naming
  // how it ended and the last of its output.
  json request(const json& message, const std::string& phase) {
    const std::string line = message.dump() + "\n";
    for (std::size_t sent = 0; sent < line.size();) {
      const ssize_t n = ::send(m_socket.get(), line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) ended(phase);
      sent += static_cast<std::size_t>(n);
    }
    std::size_t nl;
    while ((nl = m_buffer.find('\n')) == std::string::npos) {
      char chunk[65536];
      const ssize_t n = ::recv(m_socket.get(), chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) ended(phase);
      m_buffer.append(chunk, static_cast<std::size_t>(n));
    }
    const std::string reply = m_buffer.substr(0, nl);
    m_buffer.erase(0, nl + 1);
    try {
      return json::parse(reply);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("unreadable reply from the Python process during {}: {}", phase, json_problem(e)));
    }
  }

  void stop() {
    if (m_pid <= 0) return;
    profiling::remove_helper_process(m_pid);
    m_socket.reset(); // the worker's stdin ends: it leaves its loop
    int status = 0;
    for (int i = 0; i < 200; ++i) { // up to 2 s for a clean exit, then no more waiting
      const pid_t r = ::waitpid(m_pid, &status, WNOHANG);
      if (r == m_pid || (r < 0 && errno != EINTR)) {
        m_pid = -1;
        return;
      }
      ::usleep(10000);
    }
    ::kill(m_pid, SIGKILL);
    ::waitpid(m_pid, &status, 0);
    m_pid = -1;
  }

  std::string log_tail() const { return read_tail(m_log.get()); }
  pid_t pid() const { return m_pid; }

private:
  [[noreturn]] void ended(const std::string& phase) {
    profiling::remove_helper_process(m_pid);
    int status = 0;
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
    m_pid = -1;
    std::string how = describe_end(status);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
      how += fmt::format(" (could '{}' be started? it must be a Python interpreter on the PATH)", m_interpreter);
    const std::string tail = log_tail();
    throw std::runtime_error(fmt::format("the Python process ended during {}: {}{}", phase, how,
                                         tail.empty() ? "" : "; its last output: " + tail));
  }

  unique_fd m_socket, m_log;
  pid_t m_pid = -1;
  std::string m_buffer, m_interpreter;
};

// The arrays of one point in a memfd mapped here and in the Python process.
class shared_arrays {
public:
  explicit shared_arrays(std::vector<array_spec> specs) : m_specs(std::move(specs)) {
    for (const auto& s : m_specs) {
      m_offsets.push_back(m_bytes);
      m_bytes += (s.bytes() + array_alignment - 1) / array_alignment * array_alignment;
    }
    m_fd = unique_fd(::memfd_create("speedlab-arrays", MFD_CLOEXEC));
    if (m_fd.get() < 0) throw std::runtime_error(errno_text("memfd_create()"));
    if (m_bytes == 0) return;
    if (::ftruncate(m_fd.get(), static_cast<off_t>(m_bytes)) != 0) throw std::runtime_error(errno_text("ftruncate()"));
    void* p = ::mmap(nullptr, m_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m_fd.get(), 0);
    if (p == MAP_FAILED) throw std::runtime_error(errno_text(fmt::format("mmap() of {} bytes", m_bytes).c_str()));
    m_base = static_cast<char*>(p);
    for (std::size_t i = 0; i < m_specs.size(); ++i) {
      m_set.add(m_specs[i], m_base + m_offsets[i]);
      // Outputs start as all-ones bytes (NaN, -1): a variant that writes nothing cannot pass.
      if (m_specs[i].output) std::memset(m_base + m_offsets[i], 0xff, m_specs[i].bytes());
    }
  }
  ~shared_arrays() {
    if (m_base) ::munmap(m_base, m_bytes);
  }
  shared_arrays(const shared_arrays&) = delete;
  shared_arrays& operator=(const shared_arrays&) = delete;

  const array_set& set() const { return m_set; }
  int fd() const { return m_fd.get(); }
  json describe() const {
    json arrays = json::array();
    for (std::size_t i = 0; i < m_specs.size(); ++i)
      arrays.push_back({{"name", m_specs[i].name}, {"dtype", to_string(m_specs[i].type)}, {"shape", m_specs[i].shape},
                        {"offset", m_offsets[i]}, {"output", m_specs[i].output}});
    return {{"arrays", arrays}, {"shm_fd", arrays_fd}, {"shm_bytes", m_bytes}};
  }

private:
  std::vector<array_spec> m_specs;
  std::vector<std::size_t> m_offsets;
  std::size_t m_bytes = 0;
  unique_fd m_fd;
  char* m_base = nullptr;
  array_set m_set;
};

// What one Python variant needs to run, shared by its factory and its runs.
struct python_variant_def {
  std::string workload, name, kind;
  workload_data data;
  std::vector<param_spec> parameters;
  python_settings settings;
  std::filesystem::path package_dir;
};

json typed_params(const python_variant_def& def, const point& p) {
  json out = json::object();
  for (const auto& [name, value] : p.values()) {
    const param_spec* spec = nullptr;
    for (const auto& s : def.parameters)
      if (s.name == name) spec = &s;
    if (spec && spec->type == param_type::integer) out[name] = p.get_int(name);
    else if (spec && spec->type == param_type::real) out[name] = p.get_real(name);
    else out[name] = value;
  }
  return out;
}

// A folder of our own for the worker's profile stream, removed with it.
class stream_folder {
public:
  stream_folder() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/speedlab-python-trace-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::runtime_error(errno_text("mkdtemp() for the Python worker's trace"));
    m_path = pattern;
  }
  ~stream_folder() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  stream_folder(const stream_folder&) = delete;
  stream_folder& operator=(const stream_folder&) = delete;
  const std::filesystem::path& path() const { return m_path; }

private:
  std::filesystem::path m_path;
};

// A Python variant as a variant_run: each phase is one request, timed by the runner like
// any phase; the Python side's own perf_counter time of the phase comes back too and is
// reported as "python <phase>" (speedlab's figure minus it is the bridge's cost).
//
// Under the cupti profiler the worker runs with the injection library of `speedlab profile`
// (CUDA_INJECTION64_PATH), which writes its CUDA activity (CuPy, Numba) to a profile stream;
// after the measured repetitions the worker flushes it on request and the records inside
// the sessions' span join the point's trace (point_tracing.hpp, out_of_process_trace).
class python_run final : public variant_run, public out_of_process_trace {
public:
  python_run(std::shared_ptr<const python_variant_def> def, const point& p, const run_context& ctx)
      : m_def(std::move(def)), m_point(p), m_ctx(ctx) {}

  void setup() override {
    m_arrays.emplace(m_def->data.arrays(m_point));
    m_def->data.fill(m_point, m_arrays->set());
    m_process.emplace(m_def->settings, m_def->package_dir, m_arrays->fd(), tracing_environment());
    json open = m_arrays->describe();
    open["op"] = "open";
    open["workload"] = m_def->workload;
    open["variant"] = m_def->name;
    open["params"] = typed_params(*m_def, m_point);
    open["threads"] = m_ctx.threads;
    const json reply = m_process->request(open, "open");
    if (reply.contains("skip")) throw point_skipped(reply["skip"].get<std::string>());
    check(reply, "open");
    for (const auto& ph : reply.value("phases", json::array())) m_phases.push_back(ph.get<std::string>());
    phase("setup");
  }
  void transfer_in() override { optional_phase("transfer_in"); }
  void compute() override { phase("compute"); }
  void transfer_out() override { optional_phase("transfer_out"); }
  validation validate() override {
    check(m_process->request({{"op", "result"}}, "result"), "result");
    return m_def->data.check(m_point, m_arrays->set());
  }
  void teardown() override {
    if (m_process) {
      phase("teardown");
      m_process->request({{"op", "quit"}}, "quit");
      m_process.reset();
    }
  }

  void collect_trace(profiling::profile_data& into, std::uint64_t begin, std::uint64_t end) override {
    std::vector<std::string>& messages = into.messages;
    if (!m_trace_note.empty()) messages.push_back(m_trace_note);
    if (!m_streams || !m_process) return;
    const json reply = m_process->request({{"op", "flush"}}, "flush");
    check(reply, "flush");
    if (!reply.value("flushed", false)) return; // CUDA never started in the worker: nothing to add
    // The worker's streams (its children's too, where they used CUDA), read as `speedlab
    // profile` reads them.
    profile::folder_read read = profile::read_stream_folder(m_streams->path());
    for (auto& m : read.messages) messages.push_back("python worker's trace: " + m);
    std::vector<pylines::python_lines> lines;
    for (auto& p : read.processes) {
      for (const auto& n : p.process.notes) // the worker lives on: its stream is not closed yet
        if (n.rfind(profile::truncated_note_start, 0) != 0) messages.push_back("python worker: " + n);
      trace::device_trace measured;
      trace::append_records(measured, std::move(p.trace), begin, end);
      p.trace = std::move(measured);
      // The lines of the variant's code behind the measured repetitions' CUDA calls, as
      // `speedlab profile` gives a Python program's (analysis/python_lines.hpp).
      if (analysis::is_python_process(p.process))
        if (auto s = analysis::summarize_process(p); s.python && !s.python->empty())
          lines.push_back(std::move(*s.python));
      trace::append_records(into.device, std::move(p.trace));
    }
    if (!lines.empty()) {
      std::vector<const pylines::python_lines*> parts;
      for (const auto& l : lines) parts.push_back(&l);
      into.sections.set(analysis::merge_python_lines(parts));
    }
    // The worker's main thread ran the phases (its tid is its pid): the time split reads
    // the API calls and syncs of the thread the runner's phase ranges name.
    const auto worker = static_cast<std::uint32_t>(m_process->pid());
    for (auto& r : into.device.ranges)
      if (r.domain == "speedlab") r.thread = worker;
  }

private:
  // The injection variables for the worker when the point's device activity is traced.
  std::map<std::string, std::string> tracing_environment() {
    const profiling::profiler_options* tracing = point_device_tracing();
    if (!tracing) return {};
    const std::filesystem::path library = find_inject_library();
    if (library.empty()) {
      m_trace_note = "python worker not traced: no libspeedlab-inject.so beside speedlab (SPEEDLAB_INJECT_LIBRARY)";
      return {};
    }
    if (const char* other = std::getenv("CUDA_INJECTION64_PATH"); other && *other) {
      m_trace_note = fmt::format("python worker not traced: another CUDA tool is attached (CUDA_INJECTION64_PATH={})",
                                 other);
      return {};
    }
    m_streams.emplace();
    // Flushed on request (collect_trace), not every 500 ms in the middle of a measurement.
    profile::injection_options o;
    o.dir = m_streams->path().string();
    o.flush_ms = 3600 * 1000;
    o.cupti.max_buffer_mib = std::max<std::size_t>(1, tracing->get<profiling::cupti_options>().max_buffer_bytes >> 20);
    // As `run`'s cupti profiler records: every runtime call (the library's default under
    // `speedlab profile` is the analysis's calls only), and the worker's signals left as
    // they are (run ends its worker itself and reads only what was flushed on request).
    o.cupti.all_api = true;
    // A point is short and its launches are its figures: every launch call, not the light
    // capture's windows, as `run`'s cupti profiler records them.
    o.cupti.use_full_capture();
    o.signals = false;
    // Python stacks at the CUDA calls (the point's "Python lines"): taken during the measured
    // repetitions, as CUPTI's records are, so their cost joins the measured time (docs/python-variants.md).
    // The bridge's own files are not the variant's code: the worker's copy of a result for
    // the check (`value.get()`) is no line of the variant.
    for (const char* own : {"worker.py", "__init__.py", "compat.py"})
      o.python.library_paths.push_back((m_def->package_dir / "speedlab_variants" / own).string());
    return injection_environment(library, o);
  }

  void check(const json& reply, const std::string& what) {
    if (reply.value("ok", false)) return;
    const std::string where = reply.value("where", "");
    throw std::runtime_error(fmt::format("Python {} raised {}{}", what, reply.value("error", "an unknown error"),
                                         where.empty() ? "" : " (at " + where + ")"));
  }
  void phase(const std::string& name) {
    const json reply = m_process->request({{"op", name}}, name);
    check(reply, name);
    if (reply.contains("ns")) report_timing(m_ctx, ("python " + name).c_str(), reply["ns"].get<double>());
    if (reply.contains("cpu_ns")) report_timing(m_ctx, ("python " + name + " cpu").c_str(), reply["cpu_ns"].get<double>());
  }
  void optional_phase(const std::string& name) {
    for (const auto& p : m_phases)
      if (p == name) return phase(name);
  }

  std::shared_ptr<const python_variant_def> m_def;
  point m_point;
  run_context m_ctx;
  std::optional<stream_folder> m_streams; // outlives the process that writes there
  std::string m_trace_note;
  std::optional<shared_arrays> m_arrays; // outlives the process that maps it
  std::optional<python_process> m_process;
  std::vector<std::string> m_phases;
};

std::optional<variant_kind> parse_kind(const std::string& k) {
  try {
    return parse_variant_kind(k);
  } catch (const std::invalid_argument&) { // the caller's note names the variant and the kind
    return std::nullopt;
  }
}

// Runs `interpreter -m speedlab_variants.worker list FILES` and returns its stdout.
std::string run_list(const python_settings& settings, const std::filesystem::path& package_dir, std::string& error) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    error = errno_text("pipe()");
    return {};
  }
  unique_fd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  unique_fd log(::memfd_create("speedlab-python-list", MFD_CLOEXEC));
  std::vector<std::string> argv{settings.interpreter, "-m", "speedlab_variants.worker", "list"};
  for (const auto& f : settings.files) argv.push_back(std::filesystem::absolute(f).string());
  pid_t pid = -1;
  try {
    pid = spawn(argv, python_environment(package_dir), {{1, write_end.get()}, {2, log.get()}});
  } catch (const std::exception& e) {
    error = e.what();
    return {};
  }
  write_end.reset();
  std::string out;
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(read_end.get(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(chunk, static_cast<std::size_t>(n));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string tail = read_tail(log.get());
    error = fmt::format("'{} -m speedlab_variants.worker list' ended with {}{}", settings.interpreter,
                        describe_end(status), tail.empty() ? "" : ": " + tail);
    return {};
  }
  return out;
}

// Whether `interpreter -c "import MODULE"` succeeds (its output discarded).
bool can_import(const std::string& interpreter, const std::string& module) {
  unique_fd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (null.get() < 0) return false;
  std::vector<std::string> env; // ours as it is: no package folder, no empty PYTHONPATH entry
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  pid_t pid = -1;
  try {
    pid = spawn({interpreter, "-c", "import " + module}, env, {{1, null.get()}, {2, null.get()}});
  } catch (const std::exception&) {
    return false;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// An interpreter named with --python or `python:` is never replaced: when it lacks NumPy
// every Python variant is skipped (each point says why); this note says so once and names
// an interpreter here that has NumPy.
std::optional<std::string> numpy_note(const json& listing, const python_settings& settings) {
  const auto variants = listing.value("variants", json::array());
  if (variants.empty()) return std::nullopt;
  for (const auto& v : variants) {
    const auto missing = v.value("missing", std::vector<std::string>{});
    if (std::find(missing.begin(), missing.end(), "numpy") == missing.end()) return std::nullopt;
  }
  std::string note = fmt::format("python variants: the interpreter {}, {}, cannot import numpy, so every Python "
                                 "variant is skipped",
                                 settings.interpreter, listing.value("interpreter", std::string("?")));
  std::error_code ec;
  const std::filesystem::path mine = listing.value("executable", std::string{});
  for (const char* other : {"/usr/bin/python3", "/usr/local/bin/python3"}) {
    if (!std::filesystem::exists(other, ec) || (!mine.empty() && std::filesystem::equivalent(other, mine, ec))) continue;
    if (can_import(other, "numpy"))
      return note + fmt::format("; {} has it: choose it with --python {} (or the suite key python:)", other, other);
  }
  return note + "; choose an interpreter that has it with --python (or the suite key python:)";
}

// One interpreter tried: its `worker list` output, or why it gave none.
struct listed_interpreter {
  std::string command; // as started: "python3" (looked up on the PATH) or a path
  json listing;        // an object when `error` is empty
  std::string error;
};

listed_interpreter list_with(const python_settings& settings, const std::string& command,
                             const std::filesystem::path& package_dir) {
  listed_interpreter tried{command, {}, {}};
  python_settings one = settings;
  one.interpreter = command;
  const std::string out = run_list(one, package_dir, tried.error);
  if (!tried.error.empty()) return tried;
  tried.listing = json::parse(out, nullptr, false);
  if (!tried.listing.is_object() || !tried.listing.value("variants", json()).is_array())
    tried.error = fmt::format("'{} -m speedlab_variants.worker list' printed no readable list of variants", command);
  return tried;
}

// "python3 on the PATH, /root/.pyenv/versions/3.11.7/bin/python3 (Python 3.11.7)".
std::string shown_interpreter(const listed_interpreter& tried) {
  const std::string where = tried.command.find('/') == std::string::npos ? tried.command + " on the PATH" : tried.command;
  if (!tried.error.empty()) return where;
  const std::string found = tried.listing.value("interpreter", std::string{});
  return found.rfind(tried.command + " ", 0) == 0 ? found : where + ", " + found;
}

std::vector<std::string> missing_of(const json& variant) {
  return variant.value("missing", std::vector<std::string>{});
}

// Each variant with the first interpreter tried that imports all it needs, else the first
// that lacks the fewest of its packages; keyed by workload and name.
struct chosen_variant {
  std::size_t from = 0; // index into the interpreters tried
  json variant;
};
std::map<std::pair<std::string, std::string>, chosen_variant> choose_variants(const std::vector<listed_interpreter>& tried) {
  std::map<std::pair<std::string, std::string>, chosen_variant> chosen;
  for (std::size_t i = 0; i < tried.size(); ++i) {
    if (!tried[i].error.empty()) continue;
    for (const auto& v : tried[i].listing["variants"]) {
      if (!v.is_object()) continue;
      const auto key = std::make_pair(v.value("workload", std::string{}), v.value("name", std::string{}));
      const auto it = chosen.find(key);
      if (it == chosen.end()) chosen.emplace(key, chosen_variant{i, v});
      else if (missing_of(v).size() < missing_of(it->second.variant).size()) it->second = {i, v};
    }
  }
  return chosen;
}

// Import errors that every interpreter which listed its variants reported (one that only
// some reported was mended by another interpreter).
std::vector<std::string> common_errors(const std::vector<listed_interpreter>& tried) {
  std::optional<std::vector<std::string>> common;
  for (const auto& t : tried) {
    if (!t.error.empty()) continue;
    auto errors = t.listing.value("errors", std::vector<std::string>{});
    if (common)
      std::erase_if(*common, [&](const std::string& e) { return std::find(errors.begin(), errors.end(), e) == errors.end(); });
    else common = std::move(errors);
  }
  return common.value_or(std::vector<std::string>{});
}

// The file `command` starts: itself when it names a path, else the first match on the PATH.
std::filesystem::path resolve_command(const std::string& command) {
  if (command.find('/') != std::string::npos) return command;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::filesystem::path candidate =
        std::filesystem::path(end > start ? dirs.substr(start, end - start) : ".") / command;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

// The command's file with its folder resolved (/bin is /usr/bin on Debian) but not the file
// itself: a venv's bin/python3 links to /usr/bin/python3 yet imports other packages.
std::filesystem::path interpreter_file(const std::string& command) {
  std::error_code ec;
  const auto file = resolve_command(command);
  if (file.empty()) return {};
  const auto folder = std::filesystem::canonical(std::filesystem::absolute(file, ec).parent_path(), ec);
  return ec ? file : folder / file.filename();
}

// Whether `command` starts the same file as an interpreter already tried (python3 on the PATH
// may be /usr/bin/python3 itself). A wrapper script or a venv's link counts as its own.
bool same_interpreter(const std::string& command, const std::vector<listed_interpreter>& tried) {
  const auto file = interpreter_file(command);
  for (const auto& t : tried)
    if (t.command == command || (!file.empty() && interpreter_file(t.command) == file)) return true;
  return false;
}

// python3 on the PATH first (an activated venv or conda env is what the user means), then
// the system interpreters, until every variant has one that imports what it needs. A chosen
// interpreter is the only one tried.
std::vector<listed_interpreter> try_interpreters(const python_settings& settings, const std::filesystem::path& package_dir) {
  std::vector<listed_interpreter> tried{list_with(settings, settings.interpreter, package_dir)};
  if (!settings.chosen_by.empty()) return tried;
  auto all_served = [&] {
    const auto chosen = choose_variants(tried);
    const bool listed = std::any_of(tried.begin(), tried.end(), [](const auto& t) { return t.error.empty(); });
    return listed && common_errors(tried).empty() &&
           std::all_of(chosen.begin(), chosen.end(), [](const auto& c) { return missing_of(c.second.variant).empty(); });
  };
  for (const auto& fallback : settings.fallbacks) {
    if (all_served()) break;
    if (!same_interpreter(fallback, tried)) tried.push_back(list_with(settings, fallback, package_dir));
  }
  return tried;
}

std::string joined_missing(const std::vector<std::string>& packages) {
  return fmt::format("{}", fmt::join(packages, ", "));
}

void add_unique(std::vector<std::string>& into, const std::vector<std::string>& more) {
  for (const auto& m : more)
    if (std::find(into.begin(), into.end(), m) == into.end()) into.push_back(m);
}

// The run header's line: which interpreter the Python variants run with and why.
std::string interpreter_line(const std::vector<listed_interpreter>& tried,
                             const std::map<std::pair<std::string, std::string>, chosen_variant>& chosen,
                             const python_settings& settings) {
  if (chosen.empty()) return {};
  const listed_interpreter& first = tried.front();
  if (!settings.chosen_by.empty())
    return fmt::format("python variants: run with {}, chosen with {}", shown_interpreter(first), settings.chosen_by);
  std::vector<std::string> parts;
  std::size_t on_first = 0;
  std::vector<std::string> unmet; // what no interpreter tried has
  std::size_t unserved = 0;
  for (std::size_t j = 0; j < tried.size(); ++j) {
    std::size_t count = 0;
    std::vector<std::string> lacked; // what the first interpreter lacks of the variants moved here
    for (const auto& [key, c] : chosen) {
      if (c.from != j) continue;
      ++count;
      if (!missing_of(c.variant).empty()) {
        ++unserved;
        add_unique(unmet, missing_of(c.variant));
      }
      if (j == 0 || !first.error.empty()) continue;
      const auto still = missing_of(c.variant); // what this interpreter lacks too
      for (const auto& v : first.listing["variants"])
        if (v.is_object() && v.value("workload", std::string{}) == key.first && v.value("name", std::string{}) == key.second)
          for (const auto& m : missing_of(v))
            if (std::find(still.begin(), still.end(), m) == still.end()) add_unique(lacked, {m});
    }
    if (j == 0) on_first = count;
    if (j == 0 || count == 0) continue;
    const std::string why = !first.error.empty() ? fmt::format("{} could not list the Python variants ({})",
                                                               shown_interpreter(first), first.error)
                            : lacked.empty()     ? fmt::format("{} cannot import their files", shown_interpreter(first))
                                                 : fmt::format("{} lacks {}", shown_interpreter(first), joined_missing(lacked));
    const std::string has = lacked.empty() ? "" : lacked.size() > 1 ? ", which has them" : ", which has it";
    parts.push_back(fmt::format("{}; using {}{}, for {} of the {} Python variants", why, shown_interpreter(tried[j]), has,
                                count, chosen.size()));
  }
  if (parts.empty())
    parts.push_back(fmt::format("run with {}{}", shown_interpreter(first),
                                unserved == 0 ? ", which imports what each needs" : ""));
  else if (on_first > 0)
    parts.push_back(fmt::format("the other {} run with {}", on_first, shown_interpreter(first)));
  if (unserved > 0) {
    std::vector<std::string> commands;
    for (const auto& t : tried) commands.push_back(t.command);
    parts.push_back(fmt::format("{} need {}, which no interpreter tried ({}) can import, and are skipped; choose one "
                                "that has {} with --python",
                                unserved, joined_missing(unmet), fmt::join(commands, ", "),
                                unmet.size() > 1 ? "them" : "it"));
  }
  return fmt::format("python variants: {}", fmt::join(parts, "; "));
}

} // namespace

std::filesystem::path python_package_dir() {
  std::error_code ec;
  std::vector<std::filesystem::path> candidates;
  if (const char* env = std::getenv("SPEEDLAB_PYTHON_DIR"); env && *env) candidates.emplace_back(env);
  const std::filesystem::path exe_dir = boost::dll::program_location(ec).parent_path().string();
  candidates.push_back(exe_dir / ".." / "share" / "speedlab" / "python"); // installed
  candidates.push_back(exe_dir / ".." / "python");                        // build folder inside the source tree
  candidates.push_back(exe_dir / "python"); // build folder: linked to the sources (app/CMakeLists.txt)
  for (const auto& c : candidates)
    if (std::filesystem::is_regular_file(c / "speedlab_variants" / "worker.py", ec))
      return std::filesystem::weakly_canonical(c, ec);
  return {};
}

namespace {

// The variant `v` as a variant_spec run by `tried`'s interpreter, or why it is left out.
std::optional<variant_spec> python_variant_spec(const plugin_registry& registry, const json& v,
                                                const listed_interpreter& tried, const python_settings& settings,
                                                const std::filesystem::path& package_dir, std::vector<std::string>& notes) {
  auto def = std::make_shared<python_variant_def>();
  def->workload = v.value("workload", "");
  def->name = v.value("name", "");
  def->kind = v.value("kind", "serial");
  const std::string shown = "py-" + def->name;
  const loaded_workload* w = registry.find(def->workload);
  if (!w) {
    // The shipped lessons name every lesson workload; only a user's variant deserves a note.
    if (v.value("module", "").rfind("speedlab_variants.lessons.", 0) != 0)
      notes.push_back(fmt::format("python variant {} of workload '{}' left out: no such workload is loaded", shown,
                                  def->workload));
    return std::nullopt;
  }
  if (!w->info.data.available()) {
    notes.push_back(fmt::format("python variant {} left out: workload '{}' does not describe its data "
                                "(workload_info::data) for variants outside C++",
                                shown, def->workload));
    return std::nullopt;
  }
  const auto kind = parse_kind(def->kind);
  if (!kind) {
    notes.push_back(fmt::format("python variant {} of '{}' left out: unknown kind '{}'", shown, def->workload, def->kind));
    return std::nullopt;
  }
  def->data = w->info.data;
  def->parameters = w->info.parameters;
  def->settings = settings;
  def->settings.interpreter = tried.command;
  def->package_dir = package_dir;

  variant_spec spec;
  spec.name = shown;
  spec.language = "python";
  spec.kind = *kind;
  spec.description = fmt::format("Python: {} ({})", v.value("description", ""), v.value("module", ""));
  spec.expected_invalid = v.value("expected_invalid", false);
  if (const auto missing = missing_of(v); !missing.empty()) {
    const std::string why = fmt::format("needs the Python package{} {}, which {} cannot import", missing.size() > 1 ? "s" : "",
                                        joined_missing(missing), tried.listing.value("interpreter", tried.command));
    spec.unavailable_reason = [why] { return why; };
  } else if (*kind == variant_kind::cuda && SPEEDLAB_HAS_CUDA) {
    // The cause, as the C++ CUDA variants name it (no driver, no GPU, ...), not the Python
    // package's "finds no CUDA device". A CUDA-less speedlab cannot tell: CuPy may still run.
    spec.unavailable_reason = [] { return device::gpu_unavailable_reason(); };
  }
  spec.create = [def](const point& p, const run_context& c) -> std::unique_ptr<variant_run> {
    return std::make_unique<python_run>(def, p, c);
  };
  return spec;
}

} // namespace

python_variants_added add_python_variants(plugin_registry& registry, const python_settings& settings) {
  python_variants_added added;
  if (!settings.enabled) return added;
  const auto package_dir = python_package_dir();
  if (package_dir.empty()) {
    added.notes.push_back("python variants: the speedlab_variants package was not found (set SPEEDLAB_PYTHON_DIR)");
    return added;
  }
  const std::vector<listed_interpreter> tried = try_interpreters(settings, package_dir);
  if (std::none_of(tried.begin(), tried.end(), [](const auto& t) { return t.error.empty(); })) {
    added.notes.push_back("python variants left out: " + tried.front().error);
    return added;
  }
  const auto chosen = choose_variants(tried);
  added.interpreter = interpreter_line(tried, chosen, settings);
  for (const auto& e : common_errors(tried)) added.notes.push_back("python variants: import failed: " + e);
  if (!settings.chosen_by.empty() || settings.fallbacks.empty())
    if (auto note = numpy_note(tried.front().listing, settings)) added.notes.push_back(std::move(*note));
  for (const auto& [key, c] : chosen) {
    auto spec = python_variant_spec(registry, c.variant, tried[c.from], settings, package_dir, added.notes);
    if (!spec) continue;
    const std::string shown = spec->name;
    if (!registry.add_variant(key.first, std::move(*spec)))
      added.notes.push_back(fmt::format("python variant {} left out: workload '{}' already has a variant of that name",
                                        shown, key.first));
  }
  return added;
}

python_settings python_settings_of(const suite_config& suite) {
  python_settings settings;
  settings.interpreter = suite.python;
  settings.files = suite.python_variants;
  settings.enabled = suite.python_enabled;
  settings.chosen_by = suite.python_chosen_by;
  return settings;
}

} // namespace speedlab::app
