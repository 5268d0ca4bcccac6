#include "model/python_lines.hpp"

#include <nlohmann/json.hpp>

#include "model/json_support.hpp"

namespace speedlab::pylines {

void python_line::add(const python_line& l) {
  calls += l.calls, launches += l.launches, graph_launches += l.graph_launches;
  kernels += l.kernels, kernel_ns += l.kernel_ns, copies += l.copies;
  h2d_bytes += l.h2d_bytes, d2h_bytes += l.d2h_bytes, other_copy_bytes += l.other_copy_bytes;
  pageable_bytes += l.pageable_bytes, copy_ns += l.copy_ns, memsets += l.memsets;
  memset_ns += l.memset_ns, syncs += l.syncs, sync_ns += l.sync_ns, allocs += l.allocs;
  frees += l.frees, alloc_ns += l.alloc_ns, inferred_calls += l.inferred_calls;
  processes += l.processes;
}

void python_coverage::add(const python_coverage& x) {
  calls += x.calls, calls_own += x.calls_own, calls_inferred += x.calls_inferred;
  calls_library += x.calls_library, calls_unknown += x.calls_unknown;
  kernel_ns += x.kernel_ns, kernel_ns_own += x.kernel_ns_own, kernel_ns_inferred += x.kernel_ns_inferred;
  sync_ns += x.sync_ns, sync_ns_own += x.sync_ns_own;
  kernel_ns_captured += x.kernel_ns_captured, windowed_processes += x.windowed_processes;
}

// The rows' own codecs, for python_lines' (found by argument-dependent lookup).
void to_json(nlohmann::json& j, const python_line& l);
void from_json(const nlohmann::json& j, python_line& l);
void to_json(nlohmann::json& j, const python_stack_weight& s);
void from_json(const nlohmann::json& j, python_stack_weight& s);
void to_json(nlohmann::json& j, const python_coverage& c);
void from_json(const nlohmann::json& j, python_coverage& c);

SPEEDLAB_JSON_FIELDS(python_line, file, line, function, text, calls, launches, graph_launches, kernels, kernel_ns,
                     copies, h2d_bytes, d2h_bytes, other_copy_bytes, pageable_bytes, copy_ns, memsets, memset_ns, syncs,
                     sync_ns, allocs, frees, alloc_ns, inferred_calls, processes)
SPEEDLAB_JSON_FIELDS(python_stack_weight, frames, gpu_ns, sync_ns, calls)
SPEEDLAB_JSON_FIELDS(python_coverage, calls, calls_own, calls_inferred, calls_library, calls_unknown, kernel_ns,
                     kernel_ns_own, kernel_ns_inferred, sync_ns, sync_ns_own, kernel_ns_captured, windowed_processes)
SPEEDLAB_JSON_FIELDS(python_lines, interpreter, lines, stacks, coverage)

} // namespace speedlab::pylines
