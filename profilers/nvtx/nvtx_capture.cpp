#include "profilers/nvtx/nvtx_capture.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <mutex>
#include <unordered_map>

#include "speedlab/config.hpp"

#if SPEEDLAB_HAS_NVTX
// Types only: this file is the tool, not an NVTX client.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#endif

namespace speedlab::profiling {
std::uint64_t steady_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

namespace {

constexpr std::size_t max_stored_ranges = 1u << 20;

struct open_range {
  std::uint64_t start = 0;
  const void* domain = nullptr;
  std::string name;
  bool captured = false;
  std::uint32_t thread = 0;
};

// One per process, never destroyed: NVTX calls can arrive from static destructors.
struct recorder {
  std::atomic<int> capturing{0};
  std::atomic<bool> attached{false};
  std::mutex mutex; // guards everything below; never held across a call out of this file
  std::vector<trace::range_record> done;
  std::uint64_t dropped = 0;
  std::unordered_map<std::uint64_t, open_range> start_end;
  std::uint64_t next_id = 1;
};

recorder& rec() {
  static recorder* r = new recorder;
  return *r;
}

// Called by the NVTX callbacks only: a build without NVTX headers has none.
[[maybe_unused]] std::uint32_t this_thread_id() {
  thread_local const auto tid = static_cast<std::uint32_t>(::syscall(SYS_gettid));
  return tid;
}

thread_local std::vector<open_range> t_stack;

struct domain_info {
  std::string name;
};

[[maybe_unused]] void finish(open_range&& r, std::uint64_t end) {
  auto& R = rec();
  if (!r.captured || R.capturing.load(std::memory_order_relaxed) == 0) return;
  const auto* dom = static_cast<const domain_info*>(r.domain);
  trace::range_record out{r.start, end, static_cast<std::uint32_t>(::getpid()), r.thread,
                          dom ? dom->name : std::string{}, std::move(r.name)};
  std::lock_guard lock(R.mutex);
  if (R.done.size() >= max_stored_ranges) {
    ++R.dropped;
    return;
  }
  R.done.push_back(std::move(out));
}

#if SPEEDLAB_HAS_NVTX

std::string narrow(const wchar_t* w) {
  std::string s;
  if (!w) return s;
  for (; *w; ++w) s.push_back(*w < 128 ? static_cast<char>(*w) : '?');
  return s;
}

std::string message_of(const nvtxEventAttributes_t* a) {
  if (!a) return {};
  switch (a->messageType) {
  case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii ? a->message.ascii : "";
  case NVTX_MESSAGE_TYPE_UNICODE: return narrow(a->message.unicode);
  case NVTX_MESSAGE_TYPE_REGISTERED:
    return a->message.registered ? *reinterpret_cast<const std::string*>(a->message.registered) : "";
  default: return {};
  }
}

open_range make_open(const void* domain, std::string&& name) {
  open_range r;
  r.captured = rec().capturing.load(std::memory_order_relaxed) > 0;
  r.domain = domain;
  r.thread = this_thread_id();
  if (r.captured) r.name = std::move(name); // keep pushes cheap while nobody records
  r.start = steady_now_ns();
  return r;
}

int push(const void* domain, std::string&& name) {
  t_stack.push_back(make_open(domain, std::move(name)));
  return static_cast<int>(t_stack.size()) - 1;
}

int pop(const void* domain) {
  const std::uint64_t end = steady_now_ns();
  // Pop the innermost range of this domain on this thread.
  for (auto i = t_stack.size(); i-- > 0;) {
    if (t_stack[i].domain != domain) continue;
    open_range r = std::move(t_stack[i]);
    t_stack.erase(t_stack.begin() + static_cast<std::ptrdiff_t>(i));
    finish(std::move(r), end);
    return static_cast<int>(i);
  }
  return -1;
}

nvtxRangeId_t start(const void* domain, std::string&& name) {
  open_range r = make_open(domain, std::move(name));
  auto& R = rec();
  std::lock_guard lock(R.mutex);
  const std::uint64_t id = R.next_id++;
  R.start_end.emplace(id, std::move(r));
  return id;
}

void end(nvtxRangeId_t id) {
  const std::uint64_t t = steady_now_ns();
  open_range r;
  {
    auto& R = rec();
    std::lock_guard lock(R.mutex);
    auto it = R.start_end.find(id);
    if (it == R.start_end.end()) return;
    r = std::move(it->second);
    R.start_end.erase(it);
  }
  finish(std::move(r), t);
}

// NVTX entry points. They never throw: NVTX calls them from C code.
int NVTX_API push_ex(const nvtxEventAttributes_t* a) noexcept try { return push(nullptr, message_of(a)); } catch (...) { return -1; }
int NVTX_API push_a(const char* m) noexcept try { return push(nullptr, m ? m : ""); } catch (...) { return -1; }
int NVTX_API push_w(const wchar_t* m) noexcept try { return push(nullptr, narrow(m)); } catch (...) { return -1; }
int NVTX_API pop_default() noexcept try { return pop(nullptr); } catch (...) { return -1; }
nvtxRangeId_t NVTX_API start_ex(const nvtxEventAttributes_t* a) noexcept try { return start(nullptr, message_of(a)); } catch (...) { return 0; }
nvtxRangeId_t NVTX_API start_a(const char* m) noexcept try { return start(nullptr, m ? m : ""); } catch (...) { return 0; }
nvtxRangeId_t NVTX_API start_w(const wchar_t* m) noexcept try { return start(nullptr, narrow(m)); } catch (...) { return 0; }
void NVTX_API end_default(nvtxRangeId_t id) noexcept try { end(id); } catch (...) {}
// Thread naming is accepted and ignored (CUPTI 13.0.0 can crash here when it is the tool).
void NVTX_API name_os_thread_a(uint32_t, const char*) noexcept {}
void NVTX_API name_os_thread_w(uint32_t, const wchar_t*) noexcept {}

int NVTX_API domain_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) noexcept try { return push(d, message_of(a)); } catch (...) { return -1; }
int NVTX_API domain_pop(nvtxDomainHandle_t d) noexcept try { return pop(d); } catch (...) { return -1; }
nvtxRangeId_t NVTX_API domain_start(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) noexcept try { return start(d, message_of(a)); } catch (...) { return 0; }
void NVTX_API domain_end(nvtxDomainHandle_t, nvtxRangeId_t id) noexcept try { end(id); } catch (...) {}

// Domains and registered strings live for the whole process: handles may outlive any session.
nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) noexcept try {
  return reinterpret_cast<nvtxDomainHandle_t>(new domain_info{name ? name : ""});
} catch (...) { return nullptr; }
nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t* name) noexcept try {
  return reinterpret_cast<nvtxDomainHandle_t>(new domain_info{narrow(name)});
} catch (...) { return nullptr; }
void NVTX_API domain_destroy(nvtxDomainHandle_t) noexcept {}
nvtxStringHandle_t NVTX_API register_string_a(nvtxDomainHandle_t, const char* s) noexcept try {
  return reinterpret_cast<nvtxStringHandle_t>(new std::string(s ? s : ""));
} catch (...) { return nullptr; }
nvtxStringHandle_t NVTX_API register_string_w(nvtxDomainHandle_t, const wchar_t* s) noexcept try {
  return reinterpret_cast<nvtxStringHandle_t>(new std::string(narrow(s)));
} catch (...) { return nullptr; }

template <class Fn>
void set_slot(NvtxFunctionTable table, unsigned int size, unsigned int id, Fn fn) {
  if (table && id <= size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

int NVTX_API initialize_injection(NvtxGetExportTableFunc_t get_export_table) noexcept {
  if (!get_export_table) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!callbacks || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) || !callbacks->GetModuleFunctionTable)
    return 0;
  NvtxFunctionTable core = nullptr, core2 = nullptr;
  unsigned int core_size = 0, core2_size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size)) return 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size)) return 0;
  set_slot(core, core_size, NVTX_CBID_CORE_RangeStartEx, &start_ex);
  set_slot(core, core_size, NVTX_CBID_CORE_RangeStartA, &start_a);
  set_slot(core, core_size, NVTX_CBID_CORE_RangeStartW, &start_w);
  set_slot(core, core_size, NVTX_CBID_CORE_RangeEnd, &end_default);
  set_slot(core, core_size, NVTX_CBID_CORE_RangePushEx, &push_ex);
  set_slot(core, core_size, NVTX_CBID_CORE_RangePushA, &push_a);
  set_slot(core, core_size, NVTX_CBID_CORE_RangePushW, &push_w);
  set_slot(core, core_size, NVTX_CBID_CORE_RangePop, &pop_default);
  set_slot(core, core_size, NVTX_CBID_CORE_NameOsThreadA, &name_os_thread_a);
  set_slot(core, core_size, NVTX_CBID_CORE_NameOsThreadW, &name_os_thread_w);
  set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, &domain_start);
  set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &domain_end);
  set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &domain_push);
  set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &domain_pop);
  set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &register_string_a);
  set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, &register_string_w);
  set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &domain_create_a);
  set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, &domain_create_w);
  set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, &domain_destroy);
  rec().attached.store(true);
  return 1;
}

#endif // SPEEDLAB_HAS_NVTX

} // namespace

nvtx_capture::nvtx_capture() : m_start(steady_now_ns()) { rec().capturing.fetch_add(1); }

nvtx_capture::~nvtx_capture() {
  auto& R = rec();
  if (R.capturing.fetch_sub(1) == 1) {
    std::lock_guard lock(R.mutex);
    R.done.clear();
    R.done.shrink_to_fit();
  }
}

std::vector<trace::range_record> nvtx_capture::take() const {
  auto& R = rec();
  std::lock_guard lock(R.mutex);
  std::vector<trace::range_record> out;
  for (const auto& r : R.done)
    if (r.end >= m_start) out.push_back(r);
  return out;
}

std::vector<trace::range_record> nvtx_capture::drain() {
  auto& R = rec();
  std::vector<trace::range_record> out;
  std::lock_guard lock(R.mutex);
  out.swap(R.done);
  return out;
}

int initialize_nvtx_tool(void* get_export_table) noexcept {
#if SPEEDLAB_HAS_NVTX
  return initialize_injection(reinterpret_cast<NvtxGetExportTableFunc_t>(get_export_table));
#else
  (void)get_export_table;
  return 0;
#endif
}

bool nvtx_capture::tool_attached() { return rec().attached.load(); }

std::uint64_t nvtx_capture::dropped() {
  auto& R = rec();
  std::lock_guard lock(R.mutex);
  return R.dropped;
}

} // namespace speedlab::profiling

#if SPEEDLAB_HAS_NVTX
// The static-injection hook NVTX v3 looks for (a strong definition overrides the weak null
// one in every NVTX client compiled into this executable).
extern "C" {
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = &speedlab::profiling::initialize_injection;
}
#endif
