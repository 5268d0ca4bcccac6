#include "profilers/python/python_resolver.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <utility>

namespace speedlab::profiling::python {
namespace {

// The resolver the C callbacks (atexit, the code watcher) reach: one per process.
std::atomic<resolver*> g_active{nullptr};

// CPython's PyMethodDef (Include/methodobject.h), stable in 3.10 to 3.13.
struct method_def {
  const char* name;
  void* (*function)(void*, void*);
  int flags;
  const char* doc;
};
constexpr int meth_noargs = 0x0004;
constexpr int code_event_destroy = 1; // PY_CODE_EVENT_DESTROY (Include/cpython/code.h, 3.12+)

void* at_exit(void*, void*) {
  resolver* r = g_active.load(std::memory_order_acquire);
  if (r) r->finish_at_exit();
  const interpreter& py = find_interpreter();
  py.api.incref(py.api.none);
  return py.api.none;
}
method_def g_at_exit{"speedlab_resolve_python_frames", &at_exit, meth_noargs, nullptr};

int code_watcher(int event, void* code) {
  if (event != code_event_destroy) return 0;
  if (resolver* r = g_active.load(std::memory_order_acquire)) r->code_destroyed(code);
  return 0;
}

// The polling thread's body: pthread, not std::thread, and no catch: a PyGILState_Ensure
// during finalization ends this thread with pthread_exit, whose unwinding must not meet a
// noexcept frame.
void* resolver_thread(void* self) {
  auto* r = static_cast<resolver*>(self);
  for (;;) { // the first pass at once: atexit registered early
    if (!r->resolve_now() && r->python_over()) return nullptr;
    ::usleep(r->interval_ms() * 1000);
  }
}

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  std::string t = s.substr(b, e - b + 1);
  if (t.size() > 240) t = t.substr(0, 237) + "...";
  return t;
}

} // namespace

resolver::resolver(const interpreter& py, stack_table& table, fold_rule extra, std::uint32_t interval_ms)
    : m_py(py), m_table(table), m_interval_ms(interval_ms), m_extra(std::move(extra)) {}

void resolver::start_thread() {
  if (m_thread_started.exchange(true)) return;
  pthread_t t{};
  if (pthread_create(&t, nullptr, &resolver_thread, this) == 0) {
    pthread_detach(t);
  } else {
    std::lock_guard lock(m_mutex);
    m_messages.push_back("python: the resolving thread could not be started; frames are resolved at Python's exit");
  }
}

bool resolver::python_over() const {
  if (done() || !m_py.usable()) return true;
  // Before Python was first seen initialized (an embedding program), keep waiting for it.
  return m_first_done.load(std::memory_order_acquire) && (!m_py.api.is_initialized() || m_py.api.is_finalizing());
}

bool resolver::python_allows() const {
  return !done() && m_py.usable() && m_py.api.is_initialized() && !m_py.api.is_finalizing();
}

bool resolver::resolve_now() {
  if (!python_allows()) return false;
  // Nothing new: the GIL is left alone.
  if (m_first_done.load(std::memory_order_acquire) && m_table.frame_count() == m_seen.load(std::memory_order_acquire) &&
      nothing_pending())
    return true;
  const int state = m_py.api.gil_ensure(); // no lock of ours held here
  if (!done()) resolve_with_gil();
  m_py.api.gil_release(state);
  return !done();
}

// The first time the GIL is held: the folding rule's prefixes from sys, the atexit callback,
// and (3.12+) the code watcher.
void resolver::first_acquisition() {
  m_first_done.store(true, std::memory_order_release);
  g_active.store(this, std::memory_order_release);
  const c_api& a = m_py.api;
  fold_rule rule = m_extra;
  for (const char* name : {"prefix", "base_prefix", "exec_prefix", "base_exec_prefix"})
    if (void* v = a.sys_get(name))
      if (const char* s = a.as_utf8(v)) fold_rule::add_prefix(rule.library_prefixes, s);
  a.err_clear();
  std::vector<std::string> said;
  void* module = a.import("atexit");
  void* reg = module ? a.get_attr(module, "register") : nullptr;
  void* fn = reg ? a.cfunction_new(&g_at_exit, nullptr, nullptr) : nullptr;
  void* ok = fn ? a.call(reg, fn, static_cast<void*>(nullptr)) : nullptr;
  if (!ok) said.push_back("python: atexit.register failed: frames seen after the last flush may stay unresolved");
  for (void* o : {ok, fn, reg, module})
    if (o) a.decref(o);
  a.err_clear();
  if (a.add_code_watcher && a.add_code_watcher(&code_watcher) < 0) {
    a.err_clear();
    said.push_back("python: no code watcher left (PyCode_AddWatcher): a code object freed before its frames were "
                   "resolved may be misnamed");
  }
  std::lock_guard lock(m_mutex);
  m_rule = std::move(rule);
  for (auto& s : said) m_messages.push_back(std::move(s));
}

bool resolver::nothing_pending() const {
  std::lock_guard lock(m_mutex);
  return m_pending.empty();
}

void resolver::pull_new_frames() {
  std::vector<frame_key> fresh;
  m_table.take_new_frames(fresh);
  if (fresh.empty()) return;
  m_seen.fetch_add(fresh.size(), std::memory_order_acq_rel);
  std::lock_guard lock(m_mutex);
  for (const auto& f : fresh) {
    m_pending.push_back(f);
    m_pending_codes.insert(f.frame.code);
  }
}

// The pending frames (of one code object, or all), taken out of the list.
std::vector<frame_key> resolver::take_pending(const void* only_code) {
  std::lock_guard lock(m_mutex);
  std::vector<frame_key> out;
  if (!only_code) {
    out.swap(m_pending);
    m_pending_codes.clear();
    return out;
  }
  if (!m_pending_codes.erase(only_code)) return out;
  auto keep =
      std::partition(m_pending.begin(), m_pending.end(), [&](const frame_key& k) { return k.frame.code != only_code; });
  out.assign(keep, m_pending.end());
  m_pending.erase(keep, m_pending.end());
  return out;
}

// A code object's file and name, read once (GIL held), and the object kept alive from then on.
const resolver::code_info& resolver::describe(const void* code) {
  if (auto it = m_codes.find(code); it != m_codes.end()) return it->second;
  const c_api& a = m_py.api;
  void* obj = const_cast<void*>(code);
  const auto text = [&](const char* attr) {
    std::string s;
    if (void* v = a.get_attr(obj, attr)) {
      if (const char* u = a.as_utf8(v)) s = u;
      a.decref(v);
    }
    a.err_clear();
    return s;
  };
  code_info info{text("co_filename"), text(m_py.minor >= 11 ? "co_qualname" : "co_name")};
  a.incref(obj);
  return m_codes.emplace(code, std::move(info)).first->second;
}

void resolver::resolve_with_gil() {
  if (!m_first_done.load(std::memory_order_acquire)) first_acquisition();
  pull_new_frames();
  const std::vector<frame_key> todo = take_pending(nullptr);
  if (todo.empty()) return;
  std::vector<raw_frame> out;
  out.reserve(todo.size());
  for (const auto& k : todo) {
    const code_info& where = describe(k.frame.code);
    out.push_back({k, where, m_py.api.addr2line(const_cast<void*>(k.frame.code), k.frame.offset)});
  }
  std::lock_guard lock(m_mutex);
  m_raw.insert(m_raw.end(), out.begin(), out.end());
}

// 3.12+, GIL held, `code` still valid: its pending frames resolved now, then forgotten by the
// table so a new code object at its address gets new frame ids. Not kept alive (it is dying).
void resolver::code_destroyed(const void* code) {
  if (done()) return;
  pull_new_frames();
  const std::vector<frame_key> todo = take_pending(code);
  if (todo.empty()) return;
  const c_api& a = m_py.api;
  code_info where;
  void* obj = const_cast<void*>(code);
  for (auto [attr, to] : {std::pair{"co_filename", &where.file},
                          std::pair{m_py.minor >= 11 ? "co_qualname" : "co_name", &where.function}})
    if (void* v = a.get_attr(obj, attr)) {
      if (const char* u = a.as_utf8(v)) *to = u;
      a.decref(v);
    }
  a.err_clear();
  std::vector<raw_frame> out;
  for (const auto& k : todo) out.push_back({k, where, a.addr2line(obj, k.frame.offset)});
  m_table.forget_code(code);
  std::lock_guard lock(m_mutex);
  m_raw.insert(m_raw.end(), out.begin(), out.end());
}

// Python's atexit, GIL held, before finalization: everything left, then never again.
void resolver::finish_at_exit() {
  if (done()) return;
  resolve_with_gil();
  m_done.store(true, std::memory_order_release);
}

std::string resolver::text_of(const std::string& file, std::int32_t line) {
  if (file.empty() || file.front() == '<' || line <= 0) return {};
  auto [it, added] = m_sources.try_emplace(file);
  if (added) {
    std::ifstream in(file);
    std::string l;
    for (std::size_t bytes = 0; bytes < (16u << 20) && std::getline(in, l); bytes += l.size())
      it->second.push_back(std::move(l));
  }
  const auto& lines = it->second;
  return static_cast<std::size_t>(line) <= lines.size() ? trimmed(lines[static_cast<std::size_t>(line) - 1]) : "";
}

resolved_frame resolver::finished(const raw_frame& r, const fold_rule& rule) {
  resolved_frame f{r.key.id, r.where.file, r.where.function, text_of(r.where.file, r.line), r.line, false};
  f.user = rule.is_user(f.file);
  return f;
}

std::vector<resolved_frame> resolver::take_resolved() {
  std::vector<raw_frame> raw;
  fold_rule rule;
  {
    std::lock_guard lock(m_mutex);
    raw.swap(m_raw);
    rule = m_rule ? *m_rule : m_extra;
  }
  std::vector<resolved_frame> out;
  out.reserve(raw.size());
  for (const auto& r : raw) out.push_back(finished(r, rule)); // m_sources: flush thread only
  return out;
}

std::vector<resolved_frame> resolver::take_unresolved() {
  std::vector<frame_key> fresh;
  m_table.take_new_frames(fresh);
  std::lock_guard lock(m_mutex);
  fresh.insert(fresh.begin(), m_pending.begin(), m_pending.end());
  m_pending.clear();
  m_pending_codes.clear();
  std::vector<resolved_frame> out;
  for (const auto& k : fresh) {
    char address[32];
    std::snprintf(address, sizeof address, "0x%zx", reinterpret_cast<std::size_t>(k.frame.code));
    out.push_back({k.id, "", address, "", 0, false});
  }
  return out;
}

std::optional<fold_rule> resolver::rule() const {
  std::lock_guard lock(m_mutex);
  return m_rule;
}

std::vector<std::string> resolver::take_messages() {
  std::lock_guard lock(m_mutex);
  return std::exchange(m_messages, {});
}

} // namespace speedlab::profiling::python
