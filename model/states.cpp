#include "model/states.hpp"

#include <array>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace speedlab {

namespace {

// The one parse of every state: the word's enumerator, or an error naming the word and the
// words accepted.
template <class E, std::size_t N>
E parse_word(std::string_view word, const std::array<E, N>& all, const char* what) {
  for (E e : all)
    if (word == to_string(e)) return e;
  std::string accepted;
  for (E e : all) accepted += (accepted.empty() ? "" : ", ") + std::string(to_string(e));
  throw std::invalid_argument(fmt::format("unknown {} '{}' (one of {})", what, word, accepted));
}

constexpr std::array all_kinds{variant_kind::serial, variant_kind::threads, variant_kind::cuda};
constexpr std::array all_verdicts{verdict::same,   verdict::slower, verdict::faster,      verdict::unclear,
                                  verdict::broken, verdict::fixed,  verdict::not_measured};
constexpr std::array all_timing_verdicts{timing_verdict::agree, timing_verdict::differ, timing_verdict::not_compared,
                                         timing_verdict::no_counterpart};
constexpr std::array all_severities{severity::info, severity::warning, severity::critical};

} // namespace

variant_kind parse_variant_kind(std::string_view word) { return parse_word(word, all_kinds, "kind"); }

const char* to_string(verdict v) {
  switch (v) {
  case verdict::same:
    return "same";
  case verdict::slower:
    return "slower";
  case verdict::faster:
    return "faster";
  case verdict::unclear:
    return "unclear";
  case verdict::broken:
    return "broken";
  case verdict::fixed:
    return "fixed";
  case verdict::not_measured:
    return "not measured";
  }
  return "unclear";
}

verdict parse_verdict(std::string_view word) { return parse_word(word, all_verdicts, "verdict"); }

const char* to_string(timing_verdict v) {
  switch (v) {
  case timing_verdict::agree:
    return "agree";
  case timing_verdict::differ:
    return "differ";
  case timing_verdict::not_compared:
    return "not compared";
  case timing_verdict::no_counterpart:
    return "no counterpart";
  }
  return "not compared";
}

timing_verdict parse_timing_verdict(std::string_view word) {
  return parse_word(word, all_timing_verdicts, "timing verdict");
}

const char* to_string(severity s) {
  switch (s) {
  case severity::info:
    return "info";
  case severity::warning:
    return "warning";
  case severity::critical:
    return "critical";
  }
  return "info";
}

severity parse_severity(std::string_view word) { return parse_word(word, all_severities, "severity"); }

void to_json(nlohmann::json& j, verdict v) { j = to_string(v); }
void from_json(const nlohmann::json& j, verdict& v) { v = parse_verdict(j.get<std::string>()); }
void to_json(nlohmann::json& j, timing_verdict v) { j = to_string(v); }
void from_json(const nlohmann::json& j, timing_verdict& v) { v = parse_timing_verdict(j.get<std::string>()); }
void to_json(nlohmann::json& j, severity s) { j = to_string(s); }
void from_json(const nlohmann::json& j, severity& s) { s = parse_severity(j.get<std::string>()); }

} // namespace speedlab
