// What `speedlab profile -- PROGRAM` records: one stream per process of the program (the
// injection library writes it while the process runs), decoded into the neutral trace
// model plus the facts about the process. The program-level analysis and the reports read
// this; the injection library writes it without the host program.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/counters.hpp"
#include "model/source_view.hpp"
#include "model/trace.hpp"

namespace speedlab::profile {

struct process_info {
  std::uint32_t pid = 0, parent_pid = 0;
  std::string host;                       // hostname: clocks align per host
  std::vector<std::string> command_line;  // argv of the process
  std::uint64_t start_ns = 0, end_ns = 0; // steady clock of that host; end: last record or exit
  std::optional<int> exit_code;           // as seen by whoever waited for it (absent: unknown)
  std::optional<int> signal;              // killed by this signal
  bool used_cuda = false;                 // the injection library was initialized by CUDA
  bool truncated = false;                 // the stream ends without its closing record
  std::uint64_t last_flush_ns = 0;        // where a truncated stream's data ends
  std::uint64_t dropped_records = 0;
  // Launcher facts (RANK, LOCAL_RANK, WORLD_SIZE, OMPI_COMM_WORLD_RANK, SLURM_PROCID, ...),
  // the GPU (index, UUID) and anything else a stream tags itself with.
  std::map<std::string, std::string> tags;
  std::vector<std::string> notes;         // another CUPTI client present, buffers dropped, ...
};

// Python call stacks at the process's CUDA calls (`speedlab profile` of a Python program,
// profilers/python; chunk type 9, docs/profile-format.md). Frames and stacks are interned by
// the library: a call carries a stack id, a stack lists frame ids, a frame its line.
struct python_frame {
  std::string file;      // "" when never resolved: `function` then holds the code object's address
  std::int32_t line = 0; // 0: unknown
  std::string function;  // the qualified name (3.11+: co_qualname), else co_name
  std::string text;      // the line's source, stripped; "" when not readable
  bool user = false;     // the folding rule (profilers/python/user_frames.hpp): the user's own frame
  bool operator==(const python_frame&) const = default;
};
// How a call's stack was found.
enum class python_how : std::uint8_t {
  own = 0,          // the calling thread's own frames
  other_thread = 1, // the thread had none (PyTorch's autograd engine): the latest stack of any thread
  unknown = 2,      // none known (stack 0), or Python finalizing or not yet initialized
};
struct python_call {
  std::uint32_t stack = 0; // 0: none
  python_how how = python_how::unknown;
  bool operator==(const python_call&) const = default;
};
struct python_calls {
  std::string interpreter;                                    // "3.12.1"; empty: no python chunk
  std::vector<std::string> library_prefixes, user_prefixes;   // the folding rule's prefixes
  std::map<std::uint32_t, python_frame> frames;               // by frame id
  std::map<std::uint32_t, std::vector<std::uint32_t>> stacks; // stack id -> frame ids, OUTERMOST first
  std::map<std::uint32_t, python_call> calls;                 // CUPTI correlation id -> its stack
  bool empty() const { return interpreter.empty() && calls.empty() && stacks.empty() && frames.empty(); }
};

struct process_profile {
  process_info process;
  trace::device_trace trace; // repetitions: one window over the process's lifetime
  // Hardware counters of its first launches (`speedlab profile --metrics`): one pass per
  // CUDA context, each kernel's metrics read by replaying it.
  std::vector<counters::counter_pass> counters;
  // Source lines of its kernels (`speedlab profile --source`): one pass per CUDA context,
  // PC samples and SASS metrics of a window of its first launches, folded to file:line.
  std::vector<source::source_pass> source;
  // Launch calls recorded in sampled windows only (profile_options.hpp's launch_mode::sampled,
  // the process tagged "launch_calls": "sampled"): the windows [first, second), steady
  // clock, in which every launch call that started was recorded. Outside them kernels have
  // no launch call. Empty without that tag (every launch call recorded, or none with
  // "launch_calls": "none").
  std::vector<std::pair<std::uint64_t, std::uint64_t>> launch_windows;
  // Python stacks of its CUDA calls (a Python program, unless --no-python-lines): each
  // recorded launch, copy, memset, synchronization, allocation, free and graph launch by its
  // correlation id (the API record's and its kernels', copies' and memsets').
  python_calls python;
};

// True when the process's launch calls were recorded in windows only (launch_windows).
inline bool launch_calls_sampled(const process_profile& p) {
  const auto it = p.process.tags.find("launch_calls");
  return it != p.process.tags.end() && it->second == "sampled";
}

} // namespace speedlab::profile
