#include "reports/compare/compare_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "reports/common/text.hpp"
#include "reports/html/html_style.hpp"
#include "reports/html/html_writer.hpp"

namespace speedlab::reports {

namespace {

using html::operator""_html;

std::string change(const analysis::point_delta& d) {
  return d.ratio > 0 ? fmt_signed_percent(100 * (d.ratio - 1)) : "—";
}

// The interval of the change, and "not significant" when it holds no change (1) inside.
std::string interval(const analysis::point_delta& d) {
  if (d.method == "none" || !(d.ci_high > 0)) return "—";
  return fmt_signed_percent(100 * (d.ci_low - 1)) + " … " + fmt_signed_percent(100 * (d.ci_high - 1)) +
         (d.significant ? "" : " (not significant)");
}

// "5 / 5 (40 / 38 samples)"; "3 of 5" for a side stopped between rounds.
std::string rounds_text(const analysis::point_delta& d) {
  auto side = [](int done, int planned) {
    return done < planned ? fmt::format("{} of {}", done, planned) : std::to_string(done);
  };
  return fmt::format("{} / {} ({} / {} samples)", side(d.base_rounds, d.base_rounds_planned),
                     side(d.new_rounds, d.new_rounds_planned), d.base_samples, d.new_samples);
}

// The ids only in BASE that were not ok there (the rest are listed as missing).
std::vector<std::string> not_missing(const analysis::comparison& c) {
  std::vector<std::string> out;
  for (const auto& id : c.only_base)
    if (std::find(c.missing.begin(), c.missing.end(), id) == c.missing.end()) out.push_back(id);
  return out;
}

constexpr const char* method_text =
    "Change = NEW / BASE - 1. With rounds on both sides: the geometric mean of the rounds' medians (paired: of the "
    "rounds' ratios, trimmed from 10 rounds on), its interval from "
    "the spread between rounds (Welch's t on the log of each round's median; a paired t, trimmed from 10 rounds on, "
    "on each round's log ratio NEW / BASE when both sides come from one interleaved measurement) at the family-wise "
    "confidence below. "
    "Otherwise (fewer than 2 rounds on a side): the ratio of medians with the 95% exact two-sample bootstrap "
    "interval of the samples, which cannot see the drift between runs: unclear unless beyond the run-to-run "
    "allowance.";

std::string median(double ns, point_status status) {
  return status == point_status::ok && ns > 0 ? fmt_duration(ns) : to_string(status);
}

// "kernel +21.3%, h2d -0.4%": the split parts that moved, largest change first.
std::string parts_words(const analysis::point_delta& d) {
  std::string out;
  for (const auto& p : d.parts) {
    if (p.base_ns <= 0 || p.new_ns <= 0) continue;
    const double rel = p.new_ns / p.base_ns - 1;
    if (std::abs(rel) < 0.02) continue;
    out += (out.empty() ? "" : ", ") + p.part + " " + fmt_signed_percent(100 * rel);
  }
  return out;
}

std::string headline(const analysis::comparison& c) {
  std::string s = fmt::format("{} points compared: {} slower, {} faster, {} same, {} unclear", c.points.size(),
                              c.count(verdict::slower), c.count(verdict::faster), c.count(verdict::same),
                              c.count(verdict::unclear));
  if (const auto n = c.count(verdict::broken)) s += fmt::format(", {} broken", n);
  if (const auto n = c.count(verdict::fixed)) s += fmt::format(", {} fixed", n);
  if (!c.only_base.empty() || !c.only_new.empty())
    s += fmt::format("; {} only in BASE, {} only in NEW", c.only_base.size(), c.only_new.size());
  if (!c.missing.empty())
    s += fmt::format("; {} ok in BASE and missing in NEW{}", c.missing.size(),
                     c.allow_missing ? " (allowed: --allow-missing)" : " (a regression)");
  return s + ".";
}

// The outcome as the exit code gives it (app/compare: 1, 0, 3).
std::string result_text(const analysis::comparison& c) {
  if (c.has_regression())
    return "Regression: a point is slower beyond the threshold, and significantly so, or broke, or was ok in BASE "
           "and is missing in NEW.";
  if (c.decided()) return "No regression shown beyond the threshold.";
  return "Could not decide: no point's time could be judged (every point unclear, or nothing compared); this is "
         "not a pass.";
}

// The reason of a row, or the verdict alone.
std::string verdict_text(const analysis::point_delta& d) {
  const std::string word = to_string(d.verdict);
  return d.reason.empty() ? word : word + " — " + d.reason;
}

} // namespace

std::string compare_markdown(const analysis::comparison& c) {
  std::string out = "# speedlab compare\n\n";
  for (const auto& w : c.warnings) out += "> **Warning:** " + md_text(w) + "\n>\n";
  if (!c.warnings.empty()) out += "\n";
  out += fmt::format("BASE: {} ({}, {}), NEW: {} ({}, {}). Threshold {}.\n\n", md_code(c.base_run.suite),
                     md_text(c.base_run.started_at), md_text(c.base_run.gpu_name.empty() ? "no GPU" : c.base_run.gpu_name),
                     md_code(c.new_run.suite), md_text(c.new_run.started_at),
                     md_text(c.new_run.gpu_name.empty() ? "no GPU" : c.new_run.gpu_name), fmt_percent(100 * c.threshold));
  out += "**" + md_text(result_text(c)) + "** " + md_text(headline(c)) + "\n\n";
  out += std::string(method_text) + "\n\n";
  for (const auto& n : c.method_notes) out += "- " + md_text(n) + "\n";
  if (!c.method_notes.empty()) out += "\n";
  out += "| verdict | point | BASE median | NEW median | change | interval | rounds | split parts that moved |\n"
         "|---|---|---:|---:|---:|---:|---:|---|\n";
  for (const auto& d : c.points) {
    const std::string moved = parts_words(d);
    out += "| " + md_text(verdict_text(d)) + " | " + md_code(d.id) + " | " + median(d.base_median_ns, d.base_status) +
           " | " + median(d.new_median_ns, d.new_status) + " | " + change(d) + " | " + interval(d) + " | " +
           rounds_text(d) + " | " + (moved.empty() ? "—" : md_text(moved)) + " |\n";
  }
  out += "\n";
  auto list = [&](const char* title, const std::vector<std::string>& ids) {
    if (ids.empty()) return;
    out += std::string("**") + title + "**: ";
    for (std::size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + md_code(ids[i]);
    out += "\n\n";
  };
  list(c.allow_missing ? "Ok in BASE, missing in NEW (allowed by --allow-missing)"
                       : "Ok in BASE, missing in NEW (a regression; --allow-missing lists them without failing)",
       c.missing);
  list("Only in BASE", not_missing(c));
  list("Only in NEW", c.only_new);
  return out;
}

std::string compare_html(const analysis::comparison& c) {
  html::writer w;
  w << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>speedlab compare</title><style>"_html
    << html::markup{html::stylesheet}
    << "tr.v-slower td, tr.v-broken td { background: #fff4f2; } tr.v-faster td { background: #f1f8f1; }"
       ".warning { border-left: 4px solid var(--warning); padding: 4px 10px; background: #fff8f0; }</style></head><body>"
       "<header class=\"page\"><h1>speedlab compare</h1>"_html;
  w.element("p", "BASE: " + c.base_run.suite + " · " + c.base_run.started_at + " · " +
                     (c.base_run.gpu_name.empty() ? "no GPU" : c.base_run.gpu_name) + " — NEW: " + c.new_run.suite +
                     " · " + c.new_run.started_at + " · " + (c.new_run.gpu_name.empty() ? "no GPU" : c.new_run.gpu_name) +
                     " — threshold " + fmt_percent(100 * c.threshold),
            {{"class", "sub"}});
  w << "</header><main><section id=\"comparison\">"_html;
  for (const auto& warning : c.warnings) w.element("p", "Warning: " + warning, {{"class", "warning"}});
  w.element("p", result_text(c) + " " + headline(c),
            {{"id", "verdict"},
             {"class", c.has_regression() ? "v-slower"
                       : c.decided()      ? "v-faster"
                                          : "v-unclear"}});
  w.element("p", method_text, {{"class", "note"}});
  for (const auto& n : c.method_notes) w.element("p", n, {{"class", "note"}});
  w << "<div class=\"scroll\"><table><thead><tr><th>verdict</th><th>point</th>"
       "<th class=\"num\">BASE median</th><th class=\"num\">NEW median</th><th class=\"num\">change</th>"
       "<th class=\"num\">interval</th><th class=\"num\">rounds</th><th>split parts that moved</th></tr></thead><tbody>"_html;
  for (const auto& d : c.points) {
    std::string cls = fmt::format("v-{}", to_string(d.verdict));
    for (auto& ch : cls)
      if (ch == ' ') ch = '-';
    w.open("tr", {{"class", cls}});
    w << "<td>"_html << verdict_text(d) << "</td><td><code>"_html << d.id << "</code></td><td class=\"num\">"_html
      << median(d.base_median_ns, d.base_status) << "</td><td class=\"num\">"_html
      << median(d.new_median_ns, d.new_status) << "</td><td class=\"num\">"_html << change(d)
      << "</td><td class=\"num\">"_html << interval(d) << "</td><td class=\"num\">"_html << rounds_text(d)
      << "</td><td>"_html << parts_words(d) << "</td></tr>"_html;
  }
  w << "</tbody></table></div>"_html;
  auto list = [&](const char* title, const std::vector<std::string>& ids) {
    if (ids.empty()) return;
    w << "<h3>"_html << title << "</h3><ul>"_html;
    for (const auto& id : ids) w << "<li><code>"_html << id << "</code></li>"_html;
    w << "</ul>"_html;
  };
  list(c.allow_missing ? "Ok in BASE, missing in NEW (allowed by --allow-missing)"
                       : "Ok in BASE, missing in NEW (a regression; --allow-missing lists them without failing)",
       c.missing);
  list("Only in BASE", not_missing(c));
  list("Only in NEW", c.only_new);
  w << "</section></main></body></html>\n"_html;
  return w.take();
}

nlohmann::json compare_json(const analysis::comparison& c) {
  nlohmann::json j;
  j["threshold"] = c.threshold;
  j["regression"] = c.has_regression();
  j["decided"] = c.decided();
  j["result"] = result_text(c);
  j["missing"] = c.missing;
  j["allow_missing"] = c.allow_missing;
  j["one_round_allowance"] = c.one_round_allowance;
  j["warnings"] = c.warnings;
  j["base"] = c.base_run;
  j["new"] = c.new_run;
  j["method"] = method_text;
  j["method_notes"] = c.method_notes;
  j["alpha"] = c.alpha;
  j["family"] = c.family;
  nlohmann::json points = nlohmann::json::array();
  for (const auto& d : c.points) {
    nlohmann::json parts = nlohmann::json::array();
    for (const auto& p : d.parts) parts.push_back({{"part", p.part}, {"base_ns", p.base_ns}, {"new_ns", p.new_ns}});
    points.push_back({{"id", d.id},
                      {"workload", d.workload},
                      {"variant", d.variant},
                      {"size", d.size},
                      {"verdict", to_string(d.verdict)},
                      {"reason", d.reason},
                      {"base_status", to_string(d.base_status)},
                      {"new_status", to_string(d.new_status)},
                      {"base_median_ns", d.base_median_ns},
                      {"new_median_ns", d.new_median_ns},
                      {"base_samples", d.base_samples},
                      {"new_samples", d.new_samples},
                      {"ratio", d.ratio},
                      {"ci_low", d.ci_low},
                      {"ci_high", d.ci_high},
                      {"method", d.method},
                      {"confidence", d.confidence},
                      {"significant", d.significant},
                      {"p_value", d.p_value},
                      {"base_rounds", d.base_rounds},
                      {"new_rounds", d.new_rounds},
                      {"base_rounds_planned", d.base_rounds_planned},
                      {"new_rounds_planned", d.new_rounds_planned},
                      {"parts", parts}});
    if (d.base_other_cores >= 0 || d.new_other_cores >= 0) {
      points.back()["base_other_busy_cores"] = d.base_other_cores;
      points.back()["new_other_busy_cores"] = d.new_other_cores;
    }
  }
  j["points"] = points;
  j["only_base"] = c.only_base;
  j["only_new"] = c.only_new;
  return j;
}

} // namespace speedlab::reports
