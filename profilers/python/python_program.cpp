// "python" in a profiled program (`speedlab profile` of a Python program): the program
// session that gives each recorded CUDA call the Python stack it was made from (issue 40).
// A client of the process's one CUPTI subscription (cupti::callback_hub): at the entry of a
// launch (kernels, cooperative and Ex forms, graphs), copy, memset, synchronization, stream
// wait, allocation or free, the calling thread's frames are read without the GIL
// (python_interpreter.hpp), interned (stack_table.hpp) and kept with the call's correlation
// id, the id CUPTI gives the call's API record and its kernels, copies and memsets. Names and
// lines come from the resolver's thread (python_resolver.hpp). Each flush writes a
// python_calls chunk (docs/profile-format.md, type 9). A process without CPython: configure()
// says no and nothing else happens.
#include <memory>
#include <mutex>
#include <vector>

#include <cupti.h>

#include <fmt/format.h>

#include "model/cuda_api.hpp"
#include "profilers/cupti/callback_hub.hpp"
#include "profilers/nvtx/nvtx_capture.hpp"
#include "profilers/program_session.hpp"
#include "profilers/python/python_resolver.hpp"
#include "profilers/python/stack_table.hpp"

namespace speedlab::profiling {
namespace {

namespace py = python;
using call_record = profile::python_chunk::call;

// The calls the analysis attributes to a line, by CUPTI's callback name.
bool python_call_wanted(const char* name) {
  const std::string_view n(name);
  if (n.find("StreamWaitEvent") != std::string_view::npos) return true;
  switch (trace::classify_api(n)) {
  case trace::api_kind::launch:
  case trace::api_kind::synchronize:
  case trace::api_kind::copy_sync:
  case trace::api_kind::copy_async:
  case trace::api_kind::memset:
  case trace::api_kind::alloc:
  case trace::api_kind::free:
    return true;
  default:
    return false;
  }
}

std::vector<std::uint8_t> python_callback_marks(CUpti_CallbackDomain domain) {
  const std::size_t size = domain == CUPTI_CB_DOMAIN_RUNTIME_API
                               ? static_cast<std::size_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                               : static_cast<std::size_t>(CUPTI_DRIVER_TRACE_CBID_SIZE);
  std::vector<std::uint8_t> marks(size, 0);
  for (CUpti_CallbackId id = 1; id < size; ++id) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, id, &name) == CUPTI_SUCCESS && name && python_call_wanted(name)) marks[id] = 1;
  }
  return marks;
}

// Each calling thread appends to its own buffer (its mutex is contended only by the drain at
// a flush); a buffer lives to the process's end, one per thread that made a CUDA call.
class call_buffers {
public:
  struct buffer {
    std::mutex mutex;
    std::vector<call_record> calls;
    std::vector<py::frame_ref> scratch; // the capture's, this thread's only
  };

  buffer* mine(std::size_t depth) noexcept {
    thread_local std::shared_ptr<buffer> slot;
    thread_local const call_buffers* owner = nullptr;
    if (owner == this && slot) return slot.get();
    try {
      auto b = std::make_shared<buffer>();
      b->scratch.resize(depth);
      std::lock_guard lock(m_mutex);
      m_all.push_back(b);
      slot = std::move(b);
      owner = this;
      return slot.get();
    } catch (...) {
      return nullptr;
    }
  }

  void drain(std::vector<call_record>& out) {
    std::lock_guard lock(m_mutex);
    for (const auto& b : m_all) {
      std::lock_guard one(b->mutex);
      out.insert(out.end(), b->calls.begin(), b->calls.end());
      b->calls.clear();
    }
  }

private:
  std::mutex m_mutex;
  std::vector<std::shared_ptr<buffer>> m_all;
};

class python_program final : public program_session, public cupti::callback_client {
public:
  bool configure(const profile::parsed_injection_options& settings, std::map<std::string, std::string>& tags) override {
    const py::interpreter& found = py::find_interpreter();
    if (!found.found || !settings.options.python.lines) return false; // not Python, or --no-python-lines
    m_py = &found;
    m_options = settings.options.python;
    if (const std::string* why = settings.problem(profile::option::python_depth)) m_problems.push_back(*why);
    tags["python"] = found.version.empty() ? "unknown" : found.version;
    // Launch calls in windows (the light capture) switch this session's launch callbacks
    // too: the stacks of launches follow the windows, every other call's are taken (the
    // analysis scales the lines' kernel figures from the windows, analysis/python_lines.hpp).
    return true;
  }

  void start(program_host& host) override {
    m_host = &host;
    for (const auto& p : m_problems) host.note(p);
    if (!m_py->usable()) {
      host.note(fmt::format("python: CPython {} found, no Python lines: {}", m_py->version, m_py->refused));
      return;
    }
    if (!hub().subscribed()) return; // CUPTI is not ours: the cupti session said why
    m_table = std::make_unique<py::stack_table>();
    py::fold_rule extra;
    for (const auto& p : m_options.library_paths) py::fold_rule::add_prefix(extra.library_prefixes, p);
    for (const auto& p : m_options.user_paths) py::fold_rule::add_prefix(extra.user_prefixes, p);
    m_resolver = std::make_unique<py::resolver>(*m_py, *m_table, std::move(extra));
    m_runtime = python_callback_marks(CUPTI_CB_DOMAIN_RUNTIME_API);
    m_driver = python_callback_marks(CUPTI_CB_DOMAIN_DRIVER_API);
    if (!hub().add(this)) { // before any of its callbacks is enabled
      host.note("python: no Python lines: CUPTI's callback hub has no room for another client");
      m_resolver.reset();
      return;
    }
    m_on.store(true, std::memory_order_release);
    enable(CUPTI_CB_DOMAIN_RUNTIME_API, m_runtime);
    enable(CUPTI_CB_DOMAIN_DRIVER_API, m_driver);
    m_resolver->start_thread();
    if (!m_py->layout_note.empty()) host.note("python: " + m_py->layout_note);
  }

  void flush(flush_kind kind) override {
    if (!m_resolver) return;
    // Asked for by the program (speedlab_inject_flush, from `speedlab run`'s worker between
    // points): its frames are named now, with the GIL, which the asking thread released
    // (ctypes), so the chunk is whole while the process lives on.
    if (kind == flush_kind::now) m_resolver->resolve_now();
    profile::python_chunk chunk;
    if (!m_said_interpreter) chunk.interpreter = m_py->version;
    m_calls.drain(chunk.calls);
    std::vector<py::stack_chain> stacks;
    m_table->take_new_stacks(stacks);
    for (auto& s : stacks) chunk.stacks.emplace_back(s.id, std::move(s.frames));
    add_frames(chunk, m_resolver->take_resolved());
    if (kind == flush_kind::last) add_frames(chunk, m_resolver->take_unresolved());
    if (!m_said_rule)
      if (const auto rule = m_resolver->rule()) {
        chunk.has_folding = m_said_rule = true;
        chunk.library_prefixes = rule->library_prefixes;
        chunk.user_prefixes = rule->user_prefixes;
      }
    for (const auto& m : m_resolver->take_messages()) m_host->note(m);
    count(chunk.calls);
    if (chunk.empty()) return;
    m_said_interpreter = true;
    m_host->write(profile::chunk_type::python_calls, profile::python_calls_json(steady_now_ns(), chunk));
  }

  void close(const program_end&) override {
    if (!m_resolver) return;
    m_host->note(fmt::format("python: {} CUDA calls with a Python stack ({} from the calling thread's own frames, {} "
                             "from another thread's latest, {} without), {} distinct stacks of {} frames, {} frames "
                             "never resolved (CPython {})",
                             m_counts[0] + m_counts[1] + m_counts[2], m_counts[0], m_counts[1], m_counts[2],
                             m_table->stack_count(), m_table->frame_count(), m_unresolved, m_py->version));
  }

  void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) noexcept override {
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
    const auto& marks = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? m_runtime : m_driver;
    if (id >= marks.size() || !marks[id] || !m_on.load(std::memory_order_acquire)) return;
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    // A runtime call's own driver calls (cudaLaunchKernel's cuLaunchKernel) share its stack,
    // taken once at the runtime call; they are kept too, under their own correlation id: a
    // graph replay's kernels carry the id of cudaGraphLaunch's cuGraphLaunch (seen on the
    // H200 with torch.compile's CUDA graphs), a kernel launch's that of the runtime call.
    thread_local int runtime_depth = 0;
    thread_local py::call_stack runtime_stack{};
    thread_local std::uint32_t switch_seen = 0;
    // A call in flight when the program switched the capture, or a launch window opened or
    // closed, lost its entry or its exit.
    if (const std::uint32_t s = hub().switches(); s != switch_seen) {
      switch_seen = s;
      runtime_depth = 0;
    }
    const bool enter = cb->callbackSite == CUPTI_API_ENTER;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
      runtime_depth += enter ? 1 : -1;
      if (runtime_depth < 0) runtime_depth = 0; // an exit whose entry came before this session
    }
    if (!enter) return;
    call_buffers::buffer* b = m_calls.mine(m_options.max_depth);
    if (!b) return;
    const bool nested = domain == CUPTI_CB_DOMAIN_DRIVER_API && runtime_depth > 0;
    const py::call_stack c =
        nested ? runtime_stack : py::attribute_call(*m_py, *m_table, b->scratch.data(), b->scratch.size(), m_last);
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) runtime_stack = c;
    try {
      std::lock_guard lock(b->mutex);
      b->calls.push_back({cb->correlationId, c.stack, static_cast<profile::python_how>(c.how)});
    } catch (...) {
      // no memory: the call goes without a stack
    }
  }

  // The program's switch (speedlab_inject_capture("python", on)): the capture's callbacks
  // disabled in CUPTI, not only skipped, so a region switched off costs what it would without
  // the lines. Not where launches are reserved (--metrics, --source: their collectors enable
  // the same launch callbacks on the one subscription by themselves), nor where the cupti
  // session switches them in windows (the light capture: --full for a switch).
  bool set_capture(bool on) override {
    if (!m_resolver || hub().launches_reserved() || hub().launches_windowed()) return false;
    std::lock_guard lock(m_switch_mutex);
    if (m_capturing == on) return true;
    m_capturing = on;
    hub().callbacks_switched();
    if (on) m_on.store(true, std::memory_order_release);
    switch_callbacks(CUPTI_CB_DOMAIN_RUNTIME_API, m_runtime, on);
    switch_callbacks(CUPTI_CB_DOMAIN_DRIVER_API, m_driver, on);
    if (!on) m_on.store(false, std::memory_order_release);
    return true;
  }

private:
  static cupti::callback_hub& hub() { return cupti::callback_hub::process(); }

  void switch_callbacks(CUpti_CallbackDomain domain, const std::vector<std::uint8_t>& marks, bool on) {
    for (CUpti_CallbackId id = 1; id < marks.size(); ++id)
      if (marks[id]) hub().enable(domain, id, on);
  }

  void enable(CUpti_CallbackDomain domain, std::vector<std::uint8_t>& marks) {
    std::size_t refused = 0, asked = 0;
    for (CUpti_CallbackId id = 1; id < marks.size(); ++id) {
      if (!marks[id]) continue;
      ++asked;
      if (hub().enable(domain, id) != CUPTI_SUCCESS) ++refused;
    }
    if (refused)
      m_host->note(fmt::format("python: {} of {} {} API calls could not be given a Python stack (CUPTI refused their "
                               "callbacks)",
                               refused, asked, domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver" : "runtime"));
  }

  void add_frames(profile::python_chunk& chunk, std::vector<py::resolved_frame>&& frames) {
    for (auto& f : frames) {
      if (f.file.empty() && f.line == 0) ++m_unresolved;
      chunk.frames.emplace_back(
          f.id, profile::python_frame{std::move(f.file), f.line, std::move(f.function), std::move(f.text), f.user});
    }
  }

  void count(const std::vector<call_record>& calls) {
    for (const auto& c : calls) ++m_counts[static_cast<std::size_t>(c.how) % 3];
  }

  const py::interpreter* m_py = nullptr;
  profile::python_injection_options m_options;
  std::vector<std::string> m_problems; // found while configuring, said at start
  program_host* m_host = nullptr;
  std::unique_ptr<py::stack_table> m_table;
  std::unique_ptr<py::resolver> m_resolver;      // lives to the process's end: its thread uses it
  std::vector<std::uint8_t> m_runtime, m_driver; // 1: the callback id is captured
  std::atomic<bool> m_on{false};
  std::mutex m_switch_mutex; // the program's switch (set_capture)
  bool m_capturing = true;
  std::atomic<std::uint32_t> m_last{0}; // the latest stack of a thread with frames
  call_buffers m_calls;
  bool m_said_interpreter = false, m_said_rule = false;
  std::uint64_t m_counts[3] = {0, 0, 0};
  std::uint64_t m_unresolved = 0;
};

} // namespace

std::unique_ptr<program_session> make_python_program_session() {
  // Never destroyed with the registry's sessions: the resolver's thread and Python's atexit
  // callback may still reach it while the process ends.
  return std::make_unique<python_program>();
}

} // namespace speedlab::profiling
