#include "app/suite/names.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace speedlab::app {
namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0u : 1u)});
      diag = up;
    }
  }
  return row[b.size()];
}

} // namespace

std::string did_you_mean(const std::string& wrong, const std::vector<std::string>& valid) {
  // A name far longer than any valid one is no typo; skipping it keeps this cheap.
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, wrong.size() / 3) + 1;
  for (const auto& v : valid) {
    const std::size_t gap = wrong.size() > v.size() ? wrong.size() - v.size() : v.size() - wrong.size();
    if (gap >= best_d) continue;
    const auto d = edit_distance(wrong, v);
    if (d < best_d) {
      best_d = d;
      best = v;
    }
  }
  return best;
}

std::string unknown_name_message(const std::string& what, const std::string& wrong,
                                 const std::vector<std::string>& valid) {
  const std::string hint = did_you_mean(wrong, valid);
  return fmt::format("unknown {} '{}'{}; valid {}s: {}", what, echo(wrong),
                     hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), what,
                     valid.empty() ? std::string("(none loaded)") : fmt::format("{}", fmt::join(valid, ", ")));
}

std::string echo(const std::string& text, std::size_t limit) {
  std::string out;
  const std::size_t n = std::min(text.size(), limit);
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out += (c < 0x20 || c == 0x7f) ? '?' : text[i];
  }
  if (text.size() > limit) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

} // namespace speedlab::app
