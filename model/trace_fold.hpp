// Folding one device trace's records into another: the stream reader of `speedlab profile`
// folds each records chunk into its process's trace, and the Python bridge folds a worker
// process's stream into its point's trace (app/python/python_variants.cpp), both this one way.
//
//   trace::append_records(point_trace, std::move(worker_trace), sessions_begin, sessions_end);
#pragma once

#include <cstdint>

#include "model/trace.hpp"

namespace speedlab::trace {

// Appends the records of `from` (kernels, copies, memsets, API calls, syncs, ranges,
// overheads) to `into`, keeping only those wholly inside [begin, end] when a window is
// given; dropped records add up and the larger buffer peak stays.
void append_records(device_trace& into, device_trace&& from, std::uint64_t begin = 0, std::uint64_t end = UINT64_MAX);

// Each kind of record in start order (a stable sort: equal starts keep their order; a kind
// already in order is left as it is).
void sort_by_start(device_trace& t);

} // namespace speedlab::trace
