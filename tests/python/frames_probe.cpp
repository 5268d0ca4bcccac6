// A test library for tests/python/python_frames_test.py: the capture, interning and
// resolving of profilers/python loaded into a real CPython through ctypes, with no CUDA.
// ctypes' CDLL calls release the GIL, as PyTorch, CuPy and Triton do around a CUDA call, so
// probe_capture() sees what a CUPTI callback would.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "profilers/python/python_resolver.hpp"
#include "profilers/python/stack_table.hpp"

using namespace speedlab::profiling::python;

namespace {

struct probe {
  const interpreter* py = nullptr;
  std::unique_ptr<stack_table> table;
  std::unique_ptr<resolver> res;
  std::atomic<std::uint32_t> last{0};
  std::size_t max_depth = 128;
  std::mutex mutex;
  std::vector<call_stack> calls;
  std::vector<stack_chain> stacks;
  std::map<std::uint32_t, resolved_frame> frames;
  std::string text;
};
probe g;

void take_all() {
  g.table->take_new_stacks(g.stacks);
  for (auto& f : g.res->take_resolved()) g.frames[f.id] = f;
}

nlohmann::json frame_json(std::uint32_t id) {
  const auto it = g.frames.find(id);
  if (it == g.frames.end()) return {{"id", id}, {"resolved", false}};
  const auto& f = it->second;
  return {{"id", id}, {"file", f.file}, {"line", f.line}, {"function", f.function}, {"user", f.user}, {"text", f.text}};
}

// Written at the process's C exit, after Python's finalization: did atexit resolve everything?
void report_at_exit() {
  const char* out = std::getenv("SPEEDLAB_FRAMES_PROBE_EXIT");
  if (!out || !g.table) return;
  take_all();
  const auto rest = g.res->take_unresolved();
  nlohmann::json j{{"frames", g.table->frame_count()},
                   {"resolved", g.frames.size()},
                   {"unresolved", rest.size()},
                   {"done", g.res->done()},
                   {"last_how", g.calls.empty() ? -1 : static_cast<int>(g.calls.back().how)}};
  if (FILE* f = std::fopen(out, "w")) {
    std::fputs(j.dump().c_str(), f);
    std::fclose(f);
  }
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) int probe_init(int max_depth, const char* library_paths,
                                                      const char* user_paths) {
  g.py = &find_interpreter();
  g.max_depth = static_cast<std::size_t>(max_depth);
  g.table = std::make_unique<stack_table>();
  fold_rule extra{split_paths(library_paths ? library_paths : ""), split_paths(user_paths ? user_paths : "")};
  g.res = std::make_unique<resolver>(*g.py, *g.table, std::move(extra), 20);
  std::atexit(&report_at_exit);
  return g.py->usable() ? 1 : 0;
}

__attribute__((visibility("default"))) const char* probe_interpreter() {
  g.text = nlohmann::json{{"found", g.py->found},
                          {"version", g.py->version},
                          {"refused", g.py->refused},
                          {"layout_note", g.py->layout_note}}
               .dump();
  return g.text.c_str();
}

// A capture as a CUDA call's would be, from the calling thread: its index.
__attribute__((visibility("default"))) int probe_capture() {
  std::vector<frame_ref> scratch(g.max_depth);
  const call_stack c = attribute_call(*g.py, *g.table, scratch.data(), scratch.size(), g.last);
  std::lock_guard lock(g.mutex);
  g.calls.push_back(c);
  return static_cast<int>(g.calls.size() - 1);
}

// The same from a new C thread (no Python thread state).
__attribute__((visibility("default"))) int probe_capture_c_thread() {
  int index = -1;
  std::thread([&] { index = probe_capture(); }).join();
  return index;
}

// Captures for `ms` milliseconds on this thread (the GIL released by ctypes): how many, or -1
// when one gave another stack than the first (or none).
__attribute__((visibility("default"))) int probe_capture_for(int ms) {
  std::vector<frame_ref> scratch(g.max_depth);
  const std::uint32_t want = attribute_call(*g.py, *g.table, scratch.data(), scratch.size(), g.last).stack;
  if (!want) return -1;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  int n = 0;
  for (; std::chrono::steady_clock::now() < end; ++n)
    if (attribute_call(*g.py, *g.table, scratch.data(), scratch.size(), g.last).stack != want) return -1;
  return n;
}

__attribute__((visibility("default"))) void probe_forget_last() { g.last.store(0); }

__attribute__((visibility("default"))) int probe_resolve() { return g.res->resolve_now() ? 1 : 0; }
__attribute__((visibility("default"))) void probe_start_thread() { g.res->start_thread(); }

// {"stack": id, "how": 0|1|2, "frames": [outermost first]} of call `index`.
__attribute__((visibility("default"))) const char* probe_describe(int index) {
  std::lock_guard lock(g.mutex);
  take_all();
  const call_stack c = g.calls.at(static_cast<std::size_t>(index));
  nlohmann::json frames = nlohmann::json::array();
  for (const auto& s : g.stacks)
    if (s.id == c.stack)
      for (std::uint32_t f : s.frames) frames.push_back(frame_json(f));
  nlohmann::json j{{"stack", c.stack}, {"how", static_cast<int>(c.how)}, {"frames", frames}};
  if (auto rule = g.res->rule()) j["library_prefixes"] = rule->library_prefixes;
  g.text = j.dump();
  return g.text.c_str();
}

__attribute__((visibility("default"))) int probe_counts(int which) {
  return static_cast<int>(which == 0 ? g.table->stack_count() : g.table->frame_count());
}

// Nanoseconds per capture + intern at the caller's depth, over `reps` calls (the cost a CUDA
// call pays), and per capture alone (which == 1).
__attribute__((visibility("default"))) double probe_bench(int reps, int which) {
  std::vector<frame_ref> scratch(g.max_depth);
  std::atomic<std::uint32_t> last{0};
  std::size_t sink = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) {
    if (which == 1)
      sink += capture(*g.py, scratch.data(), scratch.size()).count;
    else
      sink += attribute_call(*g.py, *g.table, scratch.data(), scratch.size(), last).stack;
  }
  const auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  return sink ? ns / reps : -1.0;
}

// The committed offsets of a minor version, for python_offsets_test.py.
__attribute__((visibility("default"))) const char* probe_layout(int minor) {
  const frame_layout* l = layout_for_minor(minor);
  if (!l) return "";
  g.text = nlohmann::json{{"tstate_frame", l->tstate_frame},   {"cframe_current", l->cframe_current},
                          {"frame_code", l->frame_code},       {"frame_previous", l->frame_previous},
                          {"frame_instr", l->frame_instr},     {"frame_owner", l->frame_owner},
                          {"code_adaptive", l->code_adaptive}, {"owned_by_cstack", l->owned_by_cstack}}
               .dump();
  return g.text.c_str();
}

} // extern "C"
