// CPython as seen from inside its own process, without linking libpython and without the
// GIL (the way py-spy and austin read it from outside): the interpreter found with
// dlsym(RTLD_DEFAULT), its version checked, and the calling thread's frame chain read from
// the per-version struct offsets in frame_layouts (python_interpreter.cpp, read from each
// version's headers; tests/python/python_offsets_test.py re-derives them).
//
//   const python::interpreter& py = python::find_interpreter();   // once; py.refused says why not
//   python::frame_ref frames[128];
//   python::thread_frames got = python::capture(py, frames, 128); // in a CUPTI callback
//
// A capture reads only this thread's own frames while this thread is inside a C call (a CUDA
// call), so they cannot change under it; it takes no lock, allocates nothing and never
// calls into Python. Names and lines come later, with the GIL (python_resolver.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace speedlab::profiling::python {

// One frame: its code object and the byte offset of its current instruction (what
// PyCode_Addr2Line takes).
struct frame_ref {
  const void* code = nullptr;
  std::int32_t offset = 0;
  bool operator==(const frame_ref&) const = default;
};

// Where one CPython minor version keeps the frame chain (byte offsets on LP64 Linux).
struct frame_layout {
  int minor = 0;
  std::uint32_t tstate_frame = 0;   // 3.10: PyThreadState.frame; 3.11/3.12: .cframe; 3.13: .current_frame
  std::uint32_t cframe_current = 0; // 3.11/3.12: _PyCFrame.current_frame
  std::uint32_t frame_code = 0;     // 3.10: PyFrameObject.f_code; 3.11+: _PyInterpreterFrame.f_code/f_executable
  std::uint32_t frame_previous = 0; // 3.10: f_back; 3.11+: previous
  std::uint32_t frame_instr = 0;    // 3.10: f_lasti (int, code units); 3.11/3.12: prev_instr; 3.13: instr_ptr
  std::uint32_t frame_owner = 0;    // 3.11+: owner (one byte)
  std::uint32_t code_adaptive = 0;  // 3.11+: PyCodeObject.co_code_adaptive (the first code unit)
  int owned_by_cstack = -1;         // 3.12+: FRAME_OWNED_BY_CSTACK (a C entry frame, skipped)
  bool operator==(const frame_layout&) const = default;
};

// The committed table for 3.10 to 3.13 (nullptr for another minor version).
const frame_layout* layout_for_minor(int minor);

// The few C API functions the resolver calls with the GIL (signatures as in CPython's
// headers, objects as void*), and those the capture calls without it.
struct c_api {
  int (*is_initialized)() = nullptr;
  int (*is_finalizing)() = nullptr;                       // Py_IsFinalizing (3.13) / _Py_IsFinalizing
  void* (*this_thread_state)() = nullptr;                 // PyGILState_GetThisThreadState: safe without the GIL
  int (*gil_ensure)() = nullptr;                          // PyGILState_Ensure
  void (*gil_release)(int) = nullptr;                     // PyGILState_Release
  void* (*get_attr)(void*, const char*) = nullptr;        // PyObject_GetAttrString
  const char* (*as_utf8)(void*) = nullptr;                // PyUnicode_AsUTF8
  int (*addr2line)(void*, int) = nullptr;                 // PyCode_Addr2Line
  void (*incref)(void*) = nullptr;                        // Py_IncRef
  void (*decref)(void*) = nullptr;                        // Py_DecRef
  void (*err_clear)() = nullptr;                          // PyErr_Clear
  void* (*sys_get)(const char*) = nullptr;                // PySys_GetObject (borrowed)
  void* (*import)(const char*) = nullptr;                 // PyImport_ImportModule
  void* (*call)(void*, ...) = nullptr;                    // PyObject_CallFunctionObjArgs (NULL-terminated)
  void* (*cfunction_new)(void*, void*, void*) = nullptr;  // PyCFunction_NewEx
  int (*add_code_watcher)(int (*)(int, void*)) = nullptr; // PyCode_AddWatcher (3.12+)
  void* none = nullptr;                                   // &_Py_NoneStruct
  const void* code_type = nullptr;                        // &PyCode_Type
};

struct interpreter {
  bool found = false;  // CPython's symbols are in this process
  std::string version; // "3.12.1"
  std::string refused; // why its frames are not read (empty: they are)
  int minor = 0;
  frame_layout layout;
  c_api api;
  std::string layout_note; // 3.13: how the table compared with _PyRuntime.debug_offsets
  bool usable() const { return found && refused.empty(); }
};

// This process's CPython, looked up once (later calls return the same); never loads one.
const interpreter& find_interpreter();
// The same lookup, uncached (tests).
interpreter look_up_interpreter();

// What a capture found on the calling thread.
enum class thread_frames : std::uint8_t {
  frames,    // its own Python frames (count > 0)
  no_frames, // a Python thread state without frames (PyTorch's autograd engine threads)
  no_thread, // no Python thread state (a C thread), or the interpreter not usable
  not_now,   // the interpreter is not initialized or is finalizing: thread states may be freed
};

struct capture_result {
  std::size_t count = 0; // frames written, innermost first
  thread_frames what = thread_frames::no_thread;
};

// The calling thread's frames, innermost first, at most `max`; no GIL, no lock, no allocation.
capture_result capture(const interpreter& py, frame_ref* out, std::size_t max) noexcept;

} // namespace speedlab::profiling::python
