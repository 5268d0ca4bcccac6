// libspeedlab-cupti-floor.so: CUPTI's kernel records and nothing of speedlab's, for the cost
// benches (scripts/bench/profile_overhead.sh, tools `cupti-bare` and `cupti-attach`). Loaded
// by CUDA into an unmodified program (CUDA_INJECTION64_PATH), it enables the activity kinds
// that SPEEDLAB_FLOOR_KINDS names (a comma list of kernel, memcpy, memset; default all three;
// `none`: CUPTI attached with nothing enabled) and counts the records it is handed: no
// callback, no NVTX tool, no flush thread, no stream file, no supervising process, no _exit
// shim, no Python. What `speedlab profile`'s own floor (kernel records alone) costs beyond
// this is speedlab's; what this costs over a plain process is CUPTI's.
// At exit one JSON line on stderr: {"cupti_floor": {"kinds": ..., "kernel": N, "memcpy": N,
// "memset": N, "dropped": N}} (or "error": why CUPTI refused), so a bench can check that every
// kernel was kept. Buffers are handed to CUPTI zeroed (zeroed on CUPTI's worker thread when
// they come back), as speedlab's own are, so CUPTI does not zero them on the program's thread.
// Not installed: a measuring tool, not a product part.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <cupti.h>

namespace {

constexpr std::size_t buffer_bytes = 8u << 20;

struct floor_state {
  std::mutex mutex; // the spare buffers; CUPTI may ask from several threads
  std::vector<std::uint8_t*> spare;
  // Atomic: CUPTI's worker thread completes buffers, and so does the exit's forced flush.
  std::atomic<unsigned long long> kernels{0}, copies{0}, sets{0}, dropped{0};
  std::string kinds, error;
  bool enabled = false;
};

floor_state& state() {
  static auto* s = new floor_state; // never destroyed: CUPTI may call back during exit
  return *s;
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  auto& s = state();
  std::uint8_t* b = nullptr;
  {
    std::lock_guard lock(s.mutex);
    if (!s.spare.empty()) {
      b = s.spare.back();
      s.spare.pop_back();
    }
  }
  if (!b) b = static_cast<std::uint8_t*>(std::calloc(1, buffer_bytes)); // zeroed, 8-byte aligned
  *buffer = b;
  *size = b ? buffer_bytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream_id, std::uint8_t* buffer, std::size_t,
                               std::size_t valid) {
  auto& s = state();
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL)
      ++s.kernels;
    else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY)
      ++s.copies;
    else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET)
      ++s.sets;
  }
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) s.dropped += dropped;
  std::memset(buffer, 0, valid); // only the part CUPTI wrote; the rest is still zero
  std::lock_guard lock(s.mutex);
  s.spare.push_back(buffer);
}

// The kinds SPEEDLAB_FLOOR_KINDS names; an unknown name is an error (said at exit).
bool kinds_from_environment(std::vector<CUpti_ActivityKind>& kinds, std::string& text, std::string& error) {
  const char* env = std::getenv("SPEEDLAB_FLOOR_KINDS");
  text = env && *env ? env : "kernel,memcpy,memset";
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (name == "kernel")
      kinds.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    else if (name == "memcpy")
      kinds.push_back(CUPTI_ACTIVITY_KIND_MEMCPY);
    else if (name == "memset")
      kinds.push_back(CUPTI_ACTIVITY_KIND_MEMSET);
    else if (name != "none") {
      error = "SPEEDLAB_FLOOR_KINDS: unknown kind '" + std::string(name) + "' (kernel, memcpy, memset or none)";
      return false;
    }
  }
  return true;
}

std::string cupti_error(const char* call, CUptiResult result) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return std::string(call) + " failed: " + (text ? text : "unknown CUPTI error");
}

// JSON string contents: the error texts are CUPTI's and ours, but quote them properly anyway.
std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

void report_at_exit() {
  auto& s = state();
  if (s.enabled) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (!s.error.empty())
    std::fprintf(stderr, "{\"cupti_floor\": {\"kinds\": \"%s\", \"error\": \"%s\"}}\n", escaped(s.kinds).c_str(),
                 escaped(s.error).c_str());
  else
    std::fprintf(stderr,
                 "{\"cupti_floor\": {\"kinds\": \"%s\", \"kernel\": %llu, \"memcpy\": %llu, \"memset\": %llu, "
                 "\"dropped\": %llu}}\n",
                 escaped(s.kinds).c_str(), s.kernels.load(), s.copies.load(), s.sets.load(), s.dropped.load());
}

// Attaches CUPTI and enables the kinds; on a refusal the program runs on untraced.
void start() {
  auto& s = state();
  std::vector<CUpti_ActivityKind> kinds;
  if (!kinds_from_environment(kinds, s.kinds, s.error)) return;
  std::uint8_t zeroed = 1;
  std::size_t size = sizeof zeroed;
  cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &size, &zeroed);
  if (const CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed); r != CUPTI_SUCCESS) {
    s.error = cupti_error("cuptiActivityRegisterCallbacks", r);
    return;
  }
  for (const CUpti_ActivityKind kind : kinds)
    if (const CUptiResult r = cuptiActivityEnable(kind); r != CUPTI_SUCCESS) {
      s.error = cupti_error("cuptiActivityEnable", r);
      return;
    }
  s.enabled = !kinds.empty();
}

} // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::once_flag once;
  std::call_once(once, [] {
    start();
    std::atexit(report_at_exit);
  });
  return 1;
}
