// Which line of the user's Python program made the GPU work (issue 40): every CUDA call the
// profiled process made carries the Python stack of that moment (profilers/python), keyed by
// the call's correlation id; kernels, copies and memsets carry the id of the call that
// launched them. So each call and what it launched is given to the innermost frame of the
// program's own code on that stack (the folding rule is the capture's: not the standard
// library, site-packages or generated code), as line_profiler does for the CPU:
//
//   python_line_builder b(input);                 // the process's stacks, frames and calls
//   for (call) b.add_call(correlation, kind, thread, start, end, name);
//   for (gpu record) b.add_gpu(correlation, ...);
//   python_lines lines = b.finish();              // rows by cost, the folded stacks
//
// A call of a thread without Python frames (PyTorch's autograd engine) is given to the last
// Python stack captured on any thread before it (`inferred`), and counted apart.
//
// Launch calls in windows (the light capture, issue 41): a launch's stack is taken only in a
// window, every other call's always. launches_windowed() makes finish() scale each line's
// kernel figures (time, kernels, launches) by the process's kernel time over the kernel
// time whose launch was captured: a ratio estimate, each line's share of the windows' kernels
// taken for its share of all (coverage.kernel_ns_captured says how much the windows held).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/cuda_api.hpp"
#include "model/python_lines.hpp"

namespace speedlab::analysis {

// What the capture recorded for one process (built from its stream's python chunks).
struct python_input {
  struct frame {
    std::string file, function, text;
    std::uint32_t line = 0;
    bool user = false; // the program's own code (the capture's folding rule)
  };
  enum class how : std::uint8_t { own = 0, inferred = 1, none = 2 };
  struct call {
    std::uint32_t correlation = 0, stack = 0;
    how attributed = how::own;
  };
  std::string interpreter;                        // "3.12.1"
  std::vector<frame> frames;                      // by id
  std::vector<std::vector<std::uint32_t>> stacks; // by id: frame ids, outermost first
  std::vector<call> calls;                        // any order
};

// The rows themselves are the results model's (model/python_lines.hpp).
using pylines::python_coverage;
using pylines::python_line;
using pylines::python_lines;
using pylines::python_stack_weight;

class python_line_builder {
public:
  explicit python_line_builder(const python_input& input);
  // A recorded CUDA call (API record); calls of one thread in any order.
  void add_call(std::uint32_t correlation, trace::api_kind kind, std::uint32_t thread, std::uint64_t start,
                std::uint64_t end, const std::string& name);
  enum class gpu_kind : std::uint8_t { kernel, copy, memset };
  struct gpu_work {
    gpu_kind kind = gpu_kind::kernel;
    double ns = 0, bytes = 0;
    std::uint8_t copy_kind = 0; // trace::copy_kind
    bool pageable = false;
  };
  void add_gpu(std::uint32_t correlation, const gpu_work& work);
  // The capture took launch stacks in windows only: finish() scales the kernel figures.
  void launches_windowed() { m_windowed = true; }
  python_lines finish();

private:
  struct pending_call {
    std::uint64_t start, end;
    std::uint32_t thread, correlation;
    trace::api_kind kind;
    bool driver, graph;
  };
  struct site {
    std::int64_t line = -1; // index into m_out.lines; -1: no frame of the program
    std::uint32_t stack = 0;
    python_input::how attributed = python_input::how::none;
  };
  const site* site_of(std::uint32_t correlation) const;
  python_line* row(const site& s);
  void count_call(const pending_call& c);
  void scale_to_windows();

  const python_input& m_in;
  std::vector<std::pair<std::uint32_t, site>> m_sites; // by correlation
  std::vector<std::int64_t> m_line_of_stack;           // stack id -> row, -1 none
  std::vector<pending_call> m_calls;
  std::vector<std::uint32_t> m_pageable_copies; // correlations: an async copy through pageable memory blocks
  std::vector<double> m_stack_gpu, m_stack_sync, m_stack_kernel;
  bool m_windowed = false;
  std::vector<std::size_t> m_stack_calls;
  python_lines m_out;
};

// Rows of several processes (a program's, a job's ranks) as one: the same file:line summed.
python_lines merge_python_lines(const std::vector<const python_lines*>& parts);

} // namespace speedlab::analysis
