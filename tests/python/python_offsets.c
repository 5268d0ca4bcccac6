/* The frame chain's offsets as one CPython's headers define them, printed as JSON with the
 * names of profilers/python/python_interpreter.hpp's frame_layout. Compiled by
 * python_offsets_test.py with -DPy_BUILD_CORE against include/python3.X of each version. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX < 0x030b0000
#include <frameobject.h>
#else
#include "internal/pycore_frame.h"
#endif

int main(void) {
  size_t tstate_frame, cframe_current = 0, code, previous, instr, owner = 0, adaptive = 0;
  int cstack = -1;
#if PY_VERSION_HEX < 0x030b0000
  tstate_frame = offsetof(PyThreadState, frame);
  code = offsetof(PyFrameObject, f_code);
  previous = offsetof(PyFrameObject, f_back);
  instr = offsetof(PyFrameObject, f_lasti);
#else
#if PY_VERSION_HEX < 0x030d0000
  tstate_frame = offsetof(PyThreadState, cframe);
  cframe_current = offsetof(_PyCFrame, current_frame);
  code = offsetof(_PyInterpreterFrame, f_code);
  instr = offsetof(_PyInterpreterFrame, prev_instr);
#else
  tstate_frame = offsetof(PyThreadState, current_frame);
  code = offsetof(_PyInterpreterFrame, f_executable);
  instr = offsetof(_PyInterpreterFrame, instr_ptr);
#endif
  previous = offsetof(_PyInterpreterFrame, previous);
  owner = offsetof(_PyInterpreterFrame, owner);
  adaptive = offsetof(PyCodeObject, co_code_adaptive);
#endif
#if PY_VERSION_HEX >= 0x030c0000
  cstack = FRAME_OWNED_BY_CSTACK;
#endif
  printf("{\"tstate_frame\": %zu, \"cframe_current\": %zu, \"frame_code\": %zu, \"frame_previous\": %zu, "
         "\"frame_instr\": %zu, \"frame_owner\": %zu, \"code_adaptive\": %zu, \"owned_by_cstack\": %d}\n",
         tstate_frame, cframe_current, code, previous, instr, owner, adaptive, cstack);
  return 0;
}
