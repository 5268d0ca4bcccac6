#include "profilers/python/python_interpreter.hpp"

#include <dlfcn.h>

#include <array>
#include <cstdio>
#include <cstring>

namespace speedlab::profiling::python {
namespace {

// The frame chain's offsets, read by compiling an offsetof program (offsetof(PyThreadState,
// frame), offsetof(_PyInterpreterFrame, previous), ...) with -DPy_BUILD_CORE against each
// version's headers, include/python3.X and its internal/ folder, of pyenv's CPython 3.10.13,
// 3.11.7, 3.12.1 and 3.13.0 on x86-64 Linux; tests/python/python_offsets_test.py compiles the
// same program (tests/python/python_offsets.c) where those headers exist and compares.
// Private layouts change only between minor versions (3.13's _Py_DebugOffsets says so).
constexpr std::array<frame_layout, 4> frame_layouts = {{
    // 3.10: tstate->frame, PyFrameObject f_back, f_code, f_lasti (int, code units)
    {10, 24, 0, 32, 24, 96, 0, 0, -1},
    // 3.11: tstate->cframe->current_frame, _PyInterpreterFrame f_code, previous, prev_instr, owner
    {11, 56, 8, 32, 48, 56, 69, 184, -1},
    // 3.12: the same fields moved; FRAME_OWNED_BY_CSTACK frames are C entry shims
    {12, 56, 0, 0, 8, 56, 70, 192, 3},
    // 3.13: tstate->current_frame; f_executable may be a non-code object; instr_ptr
    {13, 72, 0, 0, 8, 56, 70, 200, 3},
}};

template <class F>
F symbol(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

// A field at a byte offset of an object this thread owns (no GIL: see capture()).
template <class T>
T field(const void* base, std::uint32_t offset) noexcept {
  T v;
  std::memcpy(&v, static_cast<const char*>(base) + offset, sizeof v);
  return v;
}

struct version_parts {
  int major = 0, minor = 0, micro = 0;
  char level = 'f'; // a(lpha), b(eta), c (release candidate), f(inal)
};

// Py_Version (3.11+: 0xMMmmuuLS, level 0xA/B/C/F), else Py_GetVersion()'s "3.10.13 (main, ...".
bool read_version(version_parts& v) {
  if (const auto* hex = symbol<const unsigned long*>("Py_Version")) {
    v.major = static_cast<int>((*hex >> 24) & 0xff);
    v.minor = static_cast<int>((*hex >> 16) & 0xff);
    v.micro = static_cast<int>((*hex >> 8) & 0xff);
    const unsigned level = (*hex >> 4) & 0xf;
    v.level = level == 0xa ? 'a' : level == 0xb ? 'b' : level == 0xc ? 'c' : 'f';
    return true;
  }
  const auto get = symbol<const char* (*)()>("Py_GetVersion");
  const char* text = get ? get() : nullptr;
  if (!text || std::sscanf(text, "%d.%d.%d", &v.major, &v.minor, &v.micro) != 3) return false;
  const char* rest = std::strpbrk(text, "abc ");
  v.level = rest && *rest != ' ' ? *rest : 'f';
  if (v.level == 'r') v.level = 'c';
  return true;
}

void find_api(c_api& a) {
  a.is_initialized = symbol<int (*)()>("Py_IsInitialized");
  a.is_finalizing = symbol<int (*)()>("Py_IsFinalizing");
  if (!a.is_finalizing) a.is_finalizing = symbol<int (*)()>("_Py_IsFinalizing");
  a.this_thread_state = symbol<void* (*)()>("PyGILState_GetThisThreadState");
  a.gil_ensure = symbol<int (*)()>("PyGILState_Ensure");
  a.gil_release = symbol<void (*)(int)>("PyGILState_Release");
  a.get_attr = symbol<void* (*)(void*, const char*)>("PyObject_GetAttrString");
  a.as_utf8 = symbol<const char* (*)(void*)>("PyUnicode_AsUTF8");
  a.addr2line = symbol<int (*)(void*, int)>("PyCode_Addr2Line");
  a.incref = symbol<void (*)(void*)>("Py_IncRef");
  a.decref = symbol<void (*)(void*)>("Py_DecRef");
  a.err_clear = symbol<void (*)()>("PyErr_Clear");
  a.sys_get = symbol<void* (*)(const char*)>("PySys_GetObject");
  a.import = symbol<void* (*)(const char*)>("PyImport_ImportModule");
  a.call = symbol<void* (*)(void*, ...)>("PyObject_CallFunctionObjArgs"); // CallOneArg: inline in 3.10
  a.cfunction_new = symbol<void* (*)(void*, void*, void*)>("PyCFunction_NewEx");
  a.add_code_watcher = symbol<int (*)(int (*)(int, void*))>("PyCode_AddWatcher");
  a.none = symbol<void*>("_Py_NoneStruct");
  a.code_type = symbol<const void*>("PyCode_Type");
}

bool api_complete(const c_api& a) {
  return a.is_initialized && a.is_finalizing && a.this_thread_state && a.gil_ensure && a.gil_release && a.get_attr &&
         a.as_utf8 && a.addr2line && a.incref && a.decref && a.err_clear && a.sys_get && a.import && a.call &&
         a.cfunction_new && a.none && a.code_type;
}

// The first fields of 3.13's _PyRuntime.debug_offsets (Include/internal/pycore_runtime.h):
// the offsets CPython publishes for out-of-process debuggers.
struct debug_offsets_313 {
  char cookie[8];
  std::uint64_t version, free_threaded;
  std::uint64_t runtime_state[3];
  std::uint64_t interpreter_state[13];
  std::uint64_t thread_state[9];      // size, prev, next, interp, current_frame, ...
  std::uint64_t interpreter_frame[6]; // size, previous, executable, instr_ptr, localsplus, owner
  std::uint64_t code_object[10];      // ..., co_code_adaptive last
};
static_assert(offsetof(debug_offsets_313, thread_state) + 4 * 8 == 184);
static_assert(offsetof(debug_offsets_313, interpreter_frame) + 1 * 8 == 232);
static_assert(offsetof(debug_offsets_313, code_object) + 9 * 8 == 344);

// 3.13: the table checked against what the runtime publishes; where they differ, the
// runtime's offsets are taken. A free-threaded build (3.13t: another object layout) is refused.
void check_debug_offsets(interpreter& py) {
  const auto* d = symbol<const debug_offsets_313*>("_PyRuntime");
  if (!d || std::memcmp(d->cookie, "xdebugpy", 8) != 0) {
    py.refused = "_PyRuntime.debug_offsets not found (no 'xdebugpy' cookie)";
    return;
  }
  if (d->free_threaded) {
    py.refused = "a free-threaded build (3.13t): its object layout is not read";
    return;
  }
  frame_layout from = py.layout;
  from.tstate_frame = static_cast<std::uint32_t>(d->thread_state[4]);
  from.frame_previous = static_cast<std::uint32_t>(d->interpreter_frame[1]);
  from.frame_code = static_cast<std::uint32_t>(d->interpreter_frame[2]);
  from.frame_instr = static_cast<std::uint32_t>(d->interpreter_frame[3]);
  from.frame_owner = static_cast<std::uint32_t>(d->interpreter_frame[5]);
  from.code_adaptive = static_cast<std::uint32_t>(d->code_object[9]);
  py.layout_note = from == py.layout ? "debug_offsets agree with the table"
                                     : "debug_offsets differ from the table: the runtime's offsets are used";
  py.layout = from;
}

// A debug build (Py_REF_DEBUG, Py_TRACE_REFS: other object headers) exports these.
bool debug_build() {
  for (const char* name : {"_Py_RefTotal", "_Py_INCREF_IncRefTotal", "_Py_PrintReferences", "_Py_GetRefTotal"})
    if (dlsym(RTLD_DEFAULT, name)) return true;
  return false;
}

// 3.10: PyFrameObject chain; f_lasti counts code units.
std::size_t walk_310(const frame_layout& l, const void* frame, frame_ref* out, std::size_t max) noexcept {
  std::size_t n = 0;
  for (; frame && n < max; frame = field<const void*>(frame, l.frame_previous)) {
    const auto lasti = field<std::int32_t>(frame, l.frame_instr);
    out[n++] = {field<const void*>(frame, l.frame_code), lasti < 0 ? -1 : lasti * 2};
  }
  return n;
}

// 3.11+: _PyInterpreterFrame chain. A frame whose instruction pointer is before its first
// code unit has not started (CPython's own walks skip such "incomplete" frames).
std::size_t walk_311(const frame_layout& l, const void* frame, const void* code_type, frame_ref* out,
                     std::size_t max) noexcept {
  std::size_t n = 0;
  for (std::size_t seen = 0; frame && n < max && seen < 4 * max;
       frame = field<const void*>(frame, l.frame_previous), ++seen) {
    if (l.owned_by_cstack >= 0 && field<std::uint8_t>(frame, l.frame_owner) == l.owned_by_cstack) continue;
    const void* code = field<const void*>(frame, l.frame_code);
    if (!code) continue;
    if (l.minor >= 13 && field<const void*>(code, sizeof(std::intptr_t)) != code_type) continue; // ob_type
    const auto* first = static_cast<const char*>(code) + l.code_adaptive;
    const auto* instr = field<const char*>(frame, l.frame_instr);
    const std::ptrdiff_t offset = instr - first;
    if (offset < 0 || offset > INT32_MAX) continue;
    out[n++] = {code, static_cast<std::int32_t>(offset)};
  }
  return n;
}

} // namespace

const frame_layout* layout_for_minor(int minor) {
  for (const auto& l : frame_layouts)
    if (l.minor == minor) return &l;
  return nullptr;
}

interpreter look_up_interpreter() {
  interpreter py;
  find_api(py.api);
  if (!py.api.is_initialized) return py; // not a Python process
  py.found = true;
  version_parts v;
  if (!read_version(v)) {
    py.refused = "the CPython version could not be read (neither Py_Version nor Py_GetVersion)";
    return py;
  }
  py.version = std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.micro);
  py.minor = v.minor;
#if !defined(__linux__) || !defined(__LP64__)
  py.refused = "frames are read on LP64 Linux only";
  return py;
#endif
  const frame_layout* layout = v.major == 3 ? layout_for_minor(v.minor) : nullptr;
  if (!layout) {
    py.refused = "CPython " + py.version + " is not 3.10 to 3.13";
  } else if (v.level == 'a' || v.level == 'b') {
    py.refused = "CPython " + py.version + " is a pre-release (alpha or beta): layouts settle at the release candidate";
  } else if (debug_build()) {
    py.refused = "a debug build of CPython (other object headers)";
  } else if (!api_complete(py.api)) {
    py.refused = "CPython's C API functions were not all found with dlsym (an interpreter loaded RTLD_LOCAL?)";
  } else {
    py.layout = *layout;
    if (v.minor >= 13) check_debug_offsets(py);
  }
  return py;
}

const interpreter& find_interpreter() {
  static const interpreter py = look_up_interpreter();
  return py;
}

capture_result capture(const interpreter& py, frame_ref* out, std::size_t max) noexcept {
  capture_result r;
  if (!py.usable()) return r;
  // Finalization frees other threads' states while their thread-local pointers stay (a daemon
  // thread still in C code): nothing is read then.
  if (!py.api.is_initialized() || py.api.is_finalizing()) {
    r.what = thread_frames::not_now;
    return r;
  }
  const void* tstate = py.api.this_thread_state();
  if (!tstate) return r;
  const frame_layout& l = py.layout;
  const void* frame = field<const void*>(tstate, l.tstate_frame);
  if (l.minor == 11 || l.minor == 12) frame = frame ? field<const void*>(frame, l.cframe_current) : nullptr;
  r.count = l.minor == 10 ? walk_310(l, frame, out, max) : walk_311(l, frame, py.api.code_type, out, max);
  r.what = r.count ? thread_frames::frames : thread_frames::no_frames;
  return r;
}

} // namespace speedlab::profiling::python
