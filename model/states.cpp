#include "model/states.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <speedlab/enum_words.hpp>

namespace speedlab {

namespace {

// The one parse of every state: the word's enumerator, or an error naming the word and the
// words accepted.
template <class E, std::size_t N>
E parse_word(std::string_view word, const enum_word<E> (&words)[N], const char* what) {
  if (const auto e = enum_of(word, words)) return *e;
  std::string accepted;
  for (const auto& w : words) accepted += (accepted.empty() ? "" : ", ") + std::string(w.word);
  throw std::invalid_argument(fmt::format("unknown {} '{}' (one of {})", what, word, accepted));
}

// Each state's words, in the order a parse error lists them. The kinds' words are the SDK's
// (variant_kind.hpp): their table reads them there.
const enum_word<variant_kind> variant_kind_words[] = {{variant_kind::serial, to_string(variant_kind::serial)},
                                                      {variant_kind::threads, to_string(variant_kind::threads)},
                                                      {variant_kind::cuda, to_string(variant_kind::cuda)}};
constexpr enum_word<verdict> verdict_words[] = {{verdict::same, "same"},
                                                {verdict::slower, "slower"},
                                                {verdict::faster, "faster"},
                                                {verdict::unclear, "unclear"},
                                                {verdict::broken, "broken"},
                                                {verdict::fixed, "fixed"},
                                                {verdict::not_measured, "not measured"}};
constexpr enum_word<timing_verdict> timing_verdict_words[] = {{timing_verdict::agree, "agree"},
                                                              {timing_verdict::differ, "differ"},
                                                              {timing_verdict::not_compared, "not compared"},
                                                              {timing_verdict::no_counterpart, "no counterpart"}};
constexpr enum_word<severity> severity_words[] = {
    {severity::info, "info"}, {severity::warning, "warning"}, {severity::critical, "critical"}};

} // namespace

variant_kind parse_variant_kind(std::string_view word) { return parse_word(word, variant_kind_words, "kind"); }

const char* to_string(verdict v) { return word_of(v, verdict_words, "unclear"); }
verdict parse_verdict(std::string_view word) { return parse_word(word, verdict_words, "verdict"); }

const char* to_string(timing_verdict v) { return word_of(v, timing_verdict_words, "not compared"); }
timing_verdict parse_timing_verdict(std::string_view word) {
  return parse_word(word, timing_verdict_words, "timing verdict");
}

const char* to_string(severity s) { return word_of(s, severity_words, "info"); }
severity parse_severity(std::string_view word) { return parse_word(word, severity_words, "severity"); }

void to_json(nlohmann::json& j, verdict v) { j = to_string(v); }
void from_json(const nlohmann::json& j, verdict& v) { v = parse_verdict(j.get<std::string>()); }
void to_json(nlohmann::json& j, timing_verdict v) { j = to_string(v); }
void from_json(const nlohmann::json& j, timing_verdict& v) { v = parse_timing_verdict(j.get<std::string>()); }
void to_json(nlohmann::json& j, severity s) { j = to_string(s); }
void from_json(const nlohmann::json& j, severity& s) { s = parse_severity(j.get<std::string>()); }

} // namespace speedlab
