// The states a result passes through, as enums from the SDK to the reports: a point's kind
// (the SDK's variant_kind), the verdict of a speedup or a comparison, the verdict of the
// timing check, a finding's severity. Their words live here alone: one to_string and one
// parse per state, used where JSON and text are written and read. A parse of an unknown word
// throws std::invalid_argument naming the word and the words it accepts; the reader that
// called it adds the file (model/saved_records.hpp).
//
// Usage:
//
//   verdict v = parse_verdict("slower");  // verdict::slower
//   std::string word = to_string(v);      // "slower"
//   if (v == verdict::slower) ...         // never v == "slower"
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include <speedlab/variant_kind.hpp>

namespace speedlab {

// A point's kind: the SDK's variant_kind (serial, threads, cuda).
variant_kind parse_variant_kind(std::string_view word);

// A speedup's verdict (analysis/comparisons.hpp: same, slower, faster, unclear) and a compared
// point's (analysis/compare.hpp: those and broken, fixed, not measured).
enum class verdict { same, slower, faster, unclear, broken, fixed, not_measured };
const char* to_string(verdict v);
verdict parse_verdict(std::string_view word);

// The timing check's verdict (analysis/timing_check.hpp): the profiler's time against the
// variant's own.
enum class timing_verdict { agree, differ, not_compared, no_counterpart };
const char* to_string(timing_verdict v);
timing_verdict parse_timing_verdict(std::string_view word);

// A finding's severity, least severe first, so `a > b` reads "a is more severe than b".
enum class severity { info, warning, critical };
const char* to_string(severity s);
severity parse_severity(std::string_view word);

// JSON: each state as its word (nlohmann finds these by argument-dependent lookup).
void to_json(nlohmann::json& j, verdict v);
void from_json(const nlohmann::json& j, verdict& v);
void to_json(nlohmann::json& j, timing_verdict v);
void from_json(const nlohmann::json& j, timing_verdict& v);
void to_json(nlohmann::json& j, severity s);
void from_json(const nlohmann::json& j, severity& s);

} // namespace speedlab
