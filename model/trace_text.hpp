// The compact trace JSON (model/trace_json.cpp) read straight from its text, without building
// a JSON tree: several times faster than from_json, the profile stream reader's path for its
// records chunks (which hold most of a stream).
//
//   trace::device_trace t;
//   if (!trace::read_compact_trace(text, t)) t = nlohmann::json::parse(text).get<trace::device_trace>();
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "model/trace.hpp"

namespace speedlab::trace {

// Strict: false (t then unspecified) for anything but well-formed JSON of the compact form
// with known tables and rows of the right width and types; the caller then reads the text
// with from_json, which says precisely what is wrong.
bool read_compact_trace(std::string_view text, device_trace& t);

// An object holding such a trace under `key` (a stream's records chunk: {"flushed_ns": N,
// "trace": {...}}): the trace, and the object's other members that are unsigned integers in
// `numbers`. False as above, or without `key`.
bool read_compact_trace_member(std::string_view text, std::string_view key, device_trace& t,
                               std::map<std::string, std::uint64_t>& numbers);

// Well-formed UTF-8 (no overlongs, no surrogates, at most U+10FFFF): names read without the
// JSON parser (this text reader, binary records chunks) end up in JSON reports, whose writer
// refuses anything else.
bool valid_utf8(std::string_view s);

} // namespace speedlab::trace
