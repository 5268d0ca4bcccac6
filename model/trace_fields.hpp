// The fields of each trace record and the tables of a trace, listed once: the compact JSON
// (model/trace_json.cpp) and the binary records chunks of a profile stream
// (model/profile_stream.cpp) both take their columns from here, so a field added to a
// record is written, read and checked by both. Internal to model/.
//
//   trace::schema::fields(kernel, [](const char* column, auto& member) { ... });
//   trace::schema::tables(trace, [](const char* table, auto& records) { ... });
//
// Member types are std::uint64_t, std::uint32_t, std::int32_t, std::uint8_t, bool and
// std::string; a new type needs a case in both encodings.
#pragma once

#include <concepts>
#include <type_traits>

#include "model/trace.hpp"

namespace speedlab::trace::schema {

// A visitor gets (column name, member) for each field, in column order.
template <class R, class V>
void fields(R& k, V&& v) requires std::same_as<std::remove_const_t<R>, kernel_record> {
  v("start", k.start), v("end", k.end), v("device", k.device), v("context", k.context), v("stream", k.stream);
  v("correlation", k.correlation), v("name", k.name), v("mangled_name", k.mangled_name);
  v("grid_x", k.grid[0]), v("grid_y", k.grid[1]), v("grid_z", k.grid[2]);
  v("block_x", k.block[0]), v("block_y", k.block[1]), v("block_z", k.block[2]);
  v("registers_per_thread", k.registers_per_thread), v("static_shared_bytes", k.static_shared_bytes);
  v("dynamic_shared_bytes", k.dynamic_shared_bytes), v("local_bytes_per_thread", k.local_bytes_per_thread);
}
template <class R, class V>
void fields(R& m, V&& v) requires std::same_as<std::remove_const_t<R>, memcpy_record> {
  v("start", m.start), v("end", m.end), v("device", m.device), v("context", m.context), v("stream", m.stream);
  v("correlation", m.correlation), v("bytes", m.bytes), v("copy_kind", m.copy_kind), v("src_kind", m.src_kind);
  v("dst_kind", m.dst_kind), v("async", m.async);
}
template <class R, class V>
void fields(R& m, V&& v) requires std::same_as<std::remove_const_t<R>, memset_record> {
  v("start", m.start), v("end", m.end), v("device", m.device), v("context", m.context), v("stream", m.stream);
  v("correlation", m.correlation), v("bytes", m.bytes), v("value", m.value), v("memory_kind", m.memory_kind);
}
template <class R, class V>
void fields(R& a, V&& v) requires std::same_as<std::remove_const_t<R>, api_record> {
  v("start", a.start), v("end", a.end), v("process", a.process), v("thread", a.thread);
  v("correlation", a.correlation), v("callback_id", a.callback_id), v("name", a.name), v("driver", a.driver);
  v("return_value", a.return_value);
}
template <class R, class V>
void fields(R& s, V&& v) requires std::same_as<std::remove_const_t<R>, sync_record> {
  v("start", s.start), v("end", s.end), v("context", s.context), v("stream", s.stream);
  v("correlation", s.correlation), v("type", s.type);
}
template <class R, class V>
void fields(R& r, V&& v) requires std::same_as<std::remove_const_t<R>, range_record> {
  v("start", r.start), v("end", r.end), v("process", r.process), v("thread", r.thread), v("domain", r.domain);
  v("name", r.name);
}
template <class R, class V>
void fields(R& o, V&& v) requires std::same_as<std::remove_const_t<R>, overhead_record> {
  v("start", o.start), v("end", o.end), v("kind", o.kind);
}
template <class R, class V>
void fields(R& w, V&& v) requires std::same_as<std::remove_const_t<R>, repetition_window> {
  v("start", w.start), v("end", w.end), v("transfer_in_end", w.transfer_in_end), v("compute_end", w.compute_end);
}

// The tables of a trace, by name, in file order.
template <class T, class V>
void tables(T& t, V&& v) {
  v("kernels", t.kernels), v("memcpys", t.memcpys), v("memsets", t.memsets), v("api_calls", t.api_calls);
  v("syncs", t.syncs), v("ranges", t.ranges), v("overheads", t.overheads), v("repetitions", t.repetitions);
}

} // namespace speedlab::trace::schema
