// The lines of a Python program's own code and what their CUDA calls cost and launched (issue
// 40): the result analysis/python_lines.hpp builds from a profile's Python stacks, kept in
// the results model so that `speedlab profile`'s program (results.json's program.python_lines)
// and a `speedlab run` point (its section "python_lines", result_sections.hpp) hold the same
// type, written and read by one codec.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace speedlab::pylines {

// One line of the program: what its CUDA calls cost and launched.
struct python_line {
  std::string file, function, text;
  std::uint32_t line = 0;
  std::size_t calls = 0; // recorded CUDA calls (a driver call inside a runtime call counts once)
  std::size_t launches = 0, graph_launches = 0;
  std::size_t kernels = 0; // kernels run (a graph's nodes each)
  double kernel_ns = 0;
  std::size_t copies = 0;
  double h2d_bytes = 0, d2h_bytes = 0, other_copy_bytes = 0, pageable_bytes = 0, copy_ns = 0;
  std::size_t memsets = 0;
  double memset_ns = 0;
  std::size_t syncs = 0; // synchronizations and synchronous copies: the host waited
  double sync_ns = 0;    // host time blocked in them
  std::size_t allocs = 0, frees = 0;
  double alloc_ns = 0;
  std::size_t inferred_calls = 0; // of threads without Python frames, given to this line
  std::size_t processes = 1;      // merged over a job's ranks or a program's processes
  double gpu_ns() const { return kernel_ns + copy_ns + memset_ns; }
  // What the table is sorted by: the GPU time it launched and the host time it blocked.
  double cost_ns() const { return gpu_ns() + sync_ns + alloc_ns; }
  // Another process's figures of the same file:line.
  void add(const python_line& other);
};

// A stack folded to the program's frames ("file:line function", outermost first), weighed by
// the GPU time it launched and the time it blocked: the flame graph's input.
struct python_stack_weight {
  std::vector<std::string> frames;
  double gpu_ns = 0, sync_ns = 0;
  std::size_t calls = 0;
};

// What the lines cover: every figure a line could hold, and how much of it reached one.
struct python_coverage {
  std::size_t calls = 0, calls_own = 0, calls_inferred = 0, calls_library = 0, calls_unknown = 0;
  double kernel_ns = 0, kernel_ns_own = 0, kernel_ns_inferred = 0;
  double sync_ns = 0, sync_ns_own = 0;
  // Kernel time whose launch call the capture saw (all of it unless launch stacks were taken
  // in windows). With windows, the lines' kernel figures and kernel_ns_own/_inferred are
  // scaled by kernel_ns / kernel_ns_captured (analysis/python_lines.hpp); windowed_processes
  // counts the processes so estimated.
  double kernel_ns_captured = 0;
  std::size_t windowed_processes = 0;
  void add(const python_coverage& other);
};

struct python_lines {
  static constexpr const char* section_key = "python_lines"; // its section of a run point (result_sections.hpp)
  std::string interpreter;
  std::vector<python_line> lines;          // by cost, highest first
  std::vector<python_stack_weight> stacks; // by weight, highest first
  python_coverage coverage;
  bool empty() const { return lines.empty() && coverage.calls == 0; }
};

// docs/results-schema.md (program.python_lines, a point's python_lines), every figure.
void to_json(nlohmann::json& j, const python_lines& l);
void from_json(const nlohmann::json& j, python_lines& l);

} // namespace speedlab::pylines
