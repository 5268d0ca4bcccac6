#include <algorithm>
#include <iterator>

#include "model/trace_fold.hpp"

namespace speedlab::trace {
namespace {

template <class T>
void append_inside(std::vector<T>& to, std::vector<T>&& from, std::uint64_t begin, std::uint64_t end) {
  const bool everything = begin == 0 && end == UINT64_MAX;
  if (everything && to.empty()) {
    to = std::move(from);
    return;
  }
  // No reserve(size + n) here: an exact reserve per chunk would copy the whole trace once per chunk.
  for (auto& r : from)
    if (everything || (r.start >= begin && r.end <= end)) to.push_back(std::move(r));
}

} // namespace

void append_records(device_trace& into, device_trace&& from, std::uint64_t begin, std::uint64_t end) {
  append_inside(into.kernels, std::move(from.kernels), begin, end);
  append_inside(into.memcpys, std::move(from.memcpys), begin, end);
  append_inside(into.memsets, std::move(from.memsets), begin, end);
  append_inside(into.api_calls, std::move(from.api_calls), begin, end);
  append_inside(into.syncs, std::move(from.syncs), begin, end);
  append_inside(into.ranges, std::move(from.ranges), begin, end);
  append_inside(into.overheads, std::move(from.overheads), begin, end);
  into.dropped_records += from.dropped_records;
  into.buffer_bytes = std::max(into.buffer_bytes, from.buffer_bytes);
}

namespace {
template <class T>
void sort_records(std::vector<T>& v) {
  const auto by_start = [](const T& a, const T& b) { return a.start < b.start; };
  if (!std::is_sorted(v.begin(), v.end(), by_start)) std::stable_sort(v.begin(), v.end(), by_start);
}
} // namespace

void sort_by_start(device_trace& t) {
  sort_records(t.kernels), sort_records(t.memcpys), sort_records(t.memsets), sort_records(t.api_calls);
  sort_records(t.syncs), sort_records(t.ranges), sort_records(t.overheads);
}

} // namespace speedlab::trace
