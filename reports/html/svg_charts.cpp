#include "reports/html/svg_charts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include <speedlab/enum_words.hpp>

#include "reports/common/overview.hpp"
#include "reports/common/trace_util.hpp"

namespace speedlab::reports::html {

namespace {

// Okabe-Ito (colour-blind safe), then two greys for the 9th and 10th series.
constexpr const char* palette[] = {"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9",
                                   "#d55e00", "#f0e442", "#000000", "#999999", "#666666"};

struct split_part {
  const char* name;
  double time_split::*field;
};
constexpr split_part split_parts[] = {{"kernel", &time_split::kernel}, {"h2d", &time_split::h2d},
                                      {"d2h", &time_split::d2h},       {"copy_other", &time_split::copy_other},
                                      {"memset", &time_split::memset}, {"sync", &time_split::sync},
                                      {"api", &time_split::api},       {"host", &time_split::host}};

// A log10 axis mapped onto pixels.
struct log_axis {
  double lo = 1, hi = 10, px0 = 0, px1 = 1;
  double operator()(double v) const {
    return px0 + (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) * (px1 - px0);
  }
  // Decades, plus 2x and 5x steps when the range spans fewer than three decades.
  std::vector<double> ticks() const {
    std::vector<double> t;
    const bool fine = std::log10(hi) - std::log10(lo) < 3;
    for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= static_cast<int>(std::ceil(std::log10(hi))); ++e)
      for (double m : {1.0, 2.0, 5.0}) {
        if (!fine && m != 1.0) continue;
        const double v = m * std::pow(10.0, e);
        if (v >= lo * 0.999 && v <= hi * 1.001) t.push_back(v);
      }
    return t;
  }
};

// Snaps a positive range outwards to whole decades.
std::pair<double, double> decades(double lo, double hi) {
  lo = std::pow(10.0, std::floor(std::log10(lo)));
  hi = std::pow(10.0, std::ceil(std::log10(hi)));
  if (hi <= lo) hi = lo * 10;
  return {lo, hi};
}

// 1500 -> "1.5k", 16777216 -> "16.8M".
std::string compact(double v) {
  const double a = std::fabs(v);
  if (a >= 1e12) return fmt_sig(v / 1e12, 3) + "T";
  if (a >= 1e9) return fmt_sig(v / 1e9, 3) + "G";
  if (a >= 1e6) return fmt_sig(v / 1e6, 3) + "M";
  if (a >= 1e3) return fmt_sig(v / 1e3, 3) + "k";
  return fmt_sig(v, 3);
}

// Trim trailing zeros of a fixed-point label ("2.00k" -> "2k").
std::string tidy(std::string s) {
  const auto unit_pos = s.find_first_not_of("-0123456789.");
  std::string unit = unit_pos == std::string::npos ? "" : s.substr(unit_pos);
  std::string number = s.substr(0, unit_pos);
  if (number.find('.') != std::string::npos) {
    while (!number.empty() && number.back() == '0') number.pop_back();
    if (!number.empty() && number.back() == '.') number.pop_back();
  }
  return number + unit;
}

void svg_open(writer& w, double width, double height, const std::string& label) {
  w.open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                 {"viewBox", "0 0 " + num(width) + " " + num(height)},
                 {"width", num(width)},
                 {"class", "chart"},
                 {"role", "img"},
                 {"aria-label", label}});
  w.element("title", label);
}

void text(writer& w, double x, double y, std::string_view s, const char* anchor = "start", const char* cls = nullptr) {
  if (cls) w.open("text", {{"x", num(x)}, {"y", num(y)}, {"text-anchor", anchor}, {"class", cls}});
  else w.open("text", {{"x", num(x)}, {"y", num(y)}, {"text-anchor", anchor}});
  w << s;
  w.close("text");
}

void line(writer& w, double x1, double y1, double x2, double y2, const char* cls) {
  w.empty("line", {{"x1", num(x1)}, {"y1", num(y1)}, {"x2", num(x2)}, {"y2", num(y2)}, {"class", cls}});
}

void rect(writer& w, double x, double y, double width, double height, const std::string& fill, const std::string& tip,
          const char* cls = "bar") {
  w.open("rect", {{"x", num(x)}, {"y", num(y)}, {"width", num(std::max(width, 0.5))}, {"height", num(height)},
                  {"fill", fill}, {"class", cls}});
  w.element("title", tip);
  w.close("rect");
}

// Frame, grid and tick labels of a log-log plot.
// y_tick, when given, writes the y tick labels (times: "10.0 µs").
void log_frame(writer& w, const log_axis& x, const log_axis& y, const std::string& x_label, const std::string& y_label,
               const std::string& x_suffix, const std::string& y_suffix, bool compact_y = true,
               std::string (*y_tick)(double) = nullptr) {
  for (double t : x.ticks()) {
    line(w, x(t), y.px1, x(t), y.px0, "grid");
    text(w, x(t), y.px0 + 16, tidy(compact(t)) + x_suffix, "middle", "tick");
  }
  for (double t : y.ticks()) {
    line(w, x.px0, y(t), x.px1, y(t), "grid");
    text(w, x.px0 - 6, y(t) + 4, y_tick ? y_tick(t) : tidy(compact_y ? compact(t) : fmt_sig(t, 3)) + y_suffix, "end", "tick");
  }
  w.empty("rect", {{"x", num(x.px0)}, {"y", num(y.px1)}, {"width", num(x.px1 - x.px0)}, {"height", num(y.px0 - y.px1)},
                   {"class", "frame"}});
  text(w, (x.px0 + x.px1) / 2, y.px0 + 36, x_label, "middle", "axis-label");
  w.open("text", {{"x", "0"}, {"y", "0"}, {"text-anchor", "middle"}, {"class", "axis-label"},
                  {"transform", "translate(14," + num((y.px0 + y.px1) / 2) + ") rotate(-90)"}});
  w << y_label;
  w.close("text");
}

// A crossover size as a dotted line from y0 to y1 with its interval shaded; returns its x.
double crossover_mark(writer& w, const log_axis& x, double y0, double y1, const analysis::crossover& c,
                      const std::string& colour) {
  const double cx = x(*c.size);
  w.open("g", {{"class", "crossover"}, {"stroke", colour}});
  if (c.size_low > 0 && c.size_high > c.size_low)
    w.empty("rect", {{"x", num(x(std::max(c.size_low, x.lo)))}, {"y", num(y0)},
                     {"width", num(x(std::min(c.size_high, x.hi)) - x(std::max(c.size_low, x.lo)))},
                     {"height", num(y1 - y0)}, {"fill", colour}, {"class", "band"}});
  line(w, cx, y0, cx, y1, "cross");
  w.close("g");
  return cx;
}

// Markers (with whiskers and tooltips) on at most 16 points of a long series, evenly spaced
// with both ends; the line still passes through every point.
bool marked(std::size_t i, std::size_t n) {
  constexpr std::size_t most = 16;
  if (n <= most) return true;
  for (std::size_t k = 0; k < most; ++k)
    if (i == k * (n - 1) / (most - 1)) return true;
  return false;
}

// Whether a "#rrggbb" fill is light enough to need dark text on it.
bool light_fill(const std::string& colour) {
  if (colour.size() != 7 || colour[0] != '#') return false;
  const long v = std::strtol(colour.c_str() + 1, nullptr, 16);
  const double r = static_cast<double>((v >> 16) & 0xff), g = static_cast<double>((v >> 8) & 0xff),
               b = static_cast<double>(v & 0xff);
  return 0.299 * r + 0.587 * g + 0.114 * b > 170;
}

// A point of a sweep chart: a size and a value (median time or speedup) with its interval.
struct sweep_dot {
  double size, value, lo, hi;
  std::string tip;
};
using sweep_series = std::map<std::string, std::vector<sweep_dot>>; // by variant

// The frame of the sweep charts: 900 px wide, log axes over the data (sizes padded 1.6x either
// way; values padded by y_pad, then out to whole decades).
struct sweep_frame {
  static constexpr double width = 900, left = 70, right = 190, top = 20, bottom = 56;
  double height;
  log_axis x, y;
};

// The frame over a chart's points, or nullopt when they do not span two sizes. The values'
// range covers the intervals; with `with_one`, the values and 1 too (the speedup chart's
// break-even line).
std::optional<sweep_frame> frame_over(const sweep_series& series, double height, double y_pad, bool with_one) {
  double xmin = 0, xmax = 0, ymin = 1, ymax = 1;
  bool any = false;
  for (const auto& [variant, dots] : series)
    for (const auto& d : dots) {
      xmin = any ? std::min(xmin, d.size) : d.size;
      xmax = any ? std::max(xmax, d.size) : d.size;
      if (with_one) {
        ymin = std::min({ymin, d.value, d.lo});
        ymax = std::max({ymax, d.value, d.hi});
      } else {
        ymin = any ? std::min(ymin, d.lo) : d.lo;
        ymax = any ? std::max(ymax, d.hi) : d.hi;
      }
      any = true;
    }
  if (!any || xmax <= xmin) return std::nullopt;
  const log_axis x{xmin / 1.6, xmax * 1.6, sweep_frame::left, sweep_frame::width - sweep_frame::right};
  auto [ylo, yhi] = decades(ymin / y_pad, ymax * y_pad);
  return sweep_frame{height, x, log_axis{ylo, yhi, height - sweep_frame::bottom, sweep_frame::top}};
}

// One palette colour per variant that has data, in the workload's variant order.
std::map<std::string, std::string> series_colours(const std::vector<std::string>& variants,
                                                  const sweep_series& series) {
  std::map<std::string, std::string> colour;
  int ci = 0;
  for (const auto& v : variants)
    if (series.count(v)) colour[v] = palette[ci++ % 10];
  return colour;
}

// How a chart draws its lines: every other one dashed (so the lines part without colour too)
// or not, its markers' radius and class.
struct series_style {
  bool dash_every_other;
  const char* radius;
  const char* marker_class; // nullptr: none
};

// Each variant's line, the whiskers and markers of its marked points and its legend entry.
void draw_series(writer& w, const sweep_frame& f, const std::vector<std::string>& variants, const sweep_series& series,
                 const std::map<std::string, std::string>& colour, const series_style& style) {
  const auto& x = f.x;
  const auto& y = f.y;
  double ly = sweep_frame::top + 8;
  int vi = 0;
  for (const auto& v : variants) {
    auto it = series.find(v);
    if (it == series.end()) continue;
    auto dots = it->second;
    std::sort(dots.begin(), dots.end(), [](const sweep_dot& a, const sweep_dot& b) { return a.size < b.size; });
    std::string points;
    for (const auto& d : dots) points += num(x(d.size)) + "," + num(y(d.value)) + " ";
    w.empty("polyline", {{"points", points},
                         {"stroke", colour.at(v)},
                         {"class", style.dash_every_other && vi % 2 ? "series dashed" : "series"}});
    for (std::size_t i = 0; i < dots.size(); ++i) {
      if (!marked(i, dots.size())) continue;
      const auto& d = dots[i];
      line(w, x(d.size), y(d.lo), x(d.size), y(d.hi), "whisker");
      const std::string cx = num(x(d.size)), cy = num(y(d.value)), fill = colour.at(v);
      if (style.marker_class)
        w.open("circle", {{"cx", cx}, {"cy", cy}, {"r", style.radius}, {"fill", fill}, {"class", style.marker_class}});
      else
        w.open("circle", {{"cx", cx}, {"cy", cy}, {"r", style.radius}, {"fill", fill}});
      w.element("title", d.tip);
      w.close("circle");
    }
    const double lx = sweep_frame::width - sweep_frame::right;
    w.empty("rect", {{"x", num(lx + 16)}, {"y", num(ly)}, {"width", "12"}, {"height", "12"}, {"fill", colour.at(v)}});
    text(w, lx + 34, ly + 10, v, "start", "legend");
    ly += 18;
    ++vi;
  }
}

} // namespace

// Okabe-Ito: distinguishable with deuteranopia, protanopia and tritanopia; sync in grey
// (waiting), host in sky blue.
const char* split_colour(std::string_view part) {
  if (part == "kernel") return "#0072b2";
  if (part == "h2d") return "#e69f00";
  if (part == "d2h") return "#d55e00";
  if (part == "copy_other") return "#cc79a7";
  if (part == "memset") return "#009e73";
  if (part == "sync") return "#999999";
  if (part == "api") return "#f0e442";
  return "#56b4e9"; // host
}

void split_bar(writer& w, const time_split& s) {
  const double width = 160, height = 14;
  std::string tip;
  for (const auto& p : split_parts)
    if (s.*p.field > 0) tip += (tip.empty() ? "" : ", ") + std::string(p.name) + " " + fmt_percent(100 * s.*p.field / s.wall_ns);
  w.open("svg", {{"xmlns", "http://www.w3.org/2000/svg"},
                 {"viewBox", "0 0 " + num(width) + " " + num(height)},
                 {"width", num(width)},
                 {"height", num(height)},
                 {"preserveAspectRatio", "none"},
                 {"class", "splitbar"},
                 {"role", "img"},
                 {"aria-label", "time split: " + tip}});
  w.element("title", "time split: " + tip);
  double x = 0;
  for (const auto& p : split_parts) {
    const double part = s.*p.field / s.wall_ns * width;
    if (part <= 0) continue;
    w.empty("rect", {{"x", num(x)}, {"y", "0"}, {"width", num(std::max(part, 0.5))}, {"height", num(height)},
                     {"fill", split_colour(p.name)}});
    x += part;
  }
  w.close("svg");
}

bool time_chart(writer& w, const workload_view& wl, const sweep_view& sweep, const analysis::analysis_result& analysis) {
  sweep_series series;
  for (const auto* p : sweep.points) {
    if (!p->valid() || p->wall.median <= 0 || p->size_value() <= 0) continue;
    const double lo = p->wall.ci_low > 0 ? p->wall.ci_low : p->wall.median;
    const double hi = p->wall.ci_high > 0 ? p->wall.ci_high : p->wall.median;
    series[p->variant].push_back({p->size_value(), p->wall.median, lo, hi,
                                  p->variant + " at " + size_label(*p) + ": " + fmt_duration(p->wall.median) +
                                      " (95% CI " + fmt_duration(lo) + "–" + fmt_duration(hi) + ")"});
  }
  const auto f = frame_over(series, 360, 1.3, false);
  if (!f) return false;
  const log_axis &x = f->x, &y = f->y;
  const std::string size_name = sweep.points.front()->size_param();
  svg_open(w, f->width, f->height,
           "Median time versus " + size_name + ": " + wl.name +
               (sweep.params_key.empty() ? "" : " (" + sweep.params_key + ")"));
  // The axis is in ns; the tick labels carry their unit.
  log_frame(w, x, y, size_name + " (log scale)", "median time per repetition (log scale)", "", "", true,
            [](double ns) { return fmt_duration(ns); });
  const auto colour = series_colours(wl.variants, series);
  double label_y = f->top + 14;
  for (const auto& c : analysis.crossovers) {
    if (c.workload != wl.name || c.params_key != sweep.params_key || !c.with_transfers || !c.size ||
        !colour.count(c.variant) || *c.size < x.lo || *c.size > x.hi)
      continue;
    const double cx = crossover_mark(w, x, f->top, f->height - f->bottom, c, colour.at(c.variant));
    const std::string label = c.variant + " beats " + c.baseline + (c.faster_above ? " above " : " below ") +
                              c.size_param + "≈" + tidy(compact(*c.size)) + " [" + tidy(compact(c.size_low)) + "–" +
                              tidy(compact(c.size_high)) + "]";
    // Right of the line when it fits inside the plot, else left of it (about 6.5 px a character).
    const bool fits = cx + 4 + 6.5 * static_cast<double>(label.size()) < x.px1;
    text(w, fits ? cx + 4 : cx - 4, label_y, label, fits ? "start" : "end", "note");
    label_y += 14;
  }
  draw_series(w, *f, wl.variants, series, colour, {.dash_every_other = true, .radius = "3.5", .marker_class = "marker"});
  w.close("svg");
  return true;
}

bool split_chart(writer& w, const workload_view& wl) {
  std::vector<const point_result*> rows;
  for (const auto* p : wl.points)
    if (p->split_median && p->split_median->wall_ns > 0) rows.push_back(p);
  if (rows.empty()) return false;
  const double left = 230, bar_w = 540, right = 110, row_h = 22, top = 34;
  const double n_rows = static_cast<double>(rows.size());
  const double width = left + bar_w + right, height = top + n_rows * row_h + 28;
  svg_open(w, width, height, "Time split per variant and size: " + wl.name);
  // Legend.
  double lx = left;
  for (const auto& part : split_parts) {
    rect(w, lx, 8, 12, 12, split_colour(part.name), part.name, "swatch");
    text(w, lx + 16, 18, part.name, "start", "legend");
    lx += 24 + 8.0 * static_cast<double>(std::string_view(part.name).size());
  }
  for (int pct = 0; pct <= 100; pct += 25) {
    const double x = left + bar_w * pct / 100.0;
    line(w, x, top - 4, x, top + n_rows * row_h, "grid");
    text(w, x, top + n_rows * row_h + 16, std::to_string(pct) + "%", "middle", "tick");
  }
  double y = top;
  for (const auto* p : rows) {
    const auto& s = *p->split_median;
    text(w, left - 8, y + 15, p->variant + " " + size_label(*p), "end", "label");
    double x = left;
    for (const auto& part : split_parts) {
      const double v = s.*(part.field);
      if (v <= 0) continue;
      const double bw = bar_w * v / s.wall_ns;
      rect(w, x, y + 3, bw, row_h - 6, split_colour(part.name),
           p->variant + " " + size_label(*p) + " — " + part.name + ": " + fmt_percent(100 * v / s.wall_ns) + " (" +
               fmt_duration(v) + ")");
      x += bw;
    }
    text(w, left + bar_w + 8, y + 15, fmt_duration(s.wall_ns), "start", "value");
    y += row_h;
  }
  w.close("svg");
  return true;
}

// The crossovers the analysis found for this sweep, each a mark and a label at the top.
void speedup_crossovers(writer& w, const log_axis& x, double top, double bottom, const workload_view& wl,
                        const sweep_view& sweep, const std::string& baseline, const analysis::analysis_result& analysis,
                        const std::map<std::string, std::string>& colour) {
  double label_y = top + 14;
  for (const auto& c : analysis.crossovers) {
    // The curves are whole-repetition speedups over the baseline: only crossovers of the same kind belong here.
    if (c.workload != wl.name || c.params_key != sweep.params_key || c.baseline != baseline || !c.with_transfers ||
        !c.size || !colour.count(c.variant))
      continue;
    if (*c.size < x.lo || *c.size > x.hi) continue;
    const double cx = crossover_mark(w, x, top, bottom, c, colour.at(c.variant));
    text(w, cx + 4, label_y, c.variant + " wins " + (c.faster_above ? "above" : "below") + " " + c.size_param + "≈" +
                                 tidy(compact(*c.size)),
         "start", "note");
    label_y += 14;
  }
}

bool speedup_chart(writer& w, const workload_view& wl, const sweep_view& sweep, const analysis_index& index,
                   const analysis::analysis_result& analysis) {
  sweep_series series;
  std::string baseline;
  for (const auto* p : sweep.points) {
    const auto* s = index.speedup(*p);
    if (!s || s->ratio <= 0 || p->size_value() <= 0) continue;
    baseline = s->baseline;
    series[p->variant].push_back({p->size_value(), s->ratio, s->ci_low > 0 ? s->ci_low : s->ratio,
                                  s->ci_high > 0 ? s->ci_high : s->ratio,
                                  p->variant + " at " + size_label(*p) + ": " + speedup_words(*s)});
  }
  const auto f = frame_over(series, 380, 1.5, true);
  if (!f) return false;
  const log_axis &x = f->x, &y = f->y;
  const std::string size_name = sweep.points.front()->size_param();
  svg_open(w, f->width, f->height,
           "Speedup over " + baseline + " versus " + size_name + ": " + wl.name +
               (sweep.params_key.empty() ? "" : " (" + sweep.params_key + ")"));
  log_frame(w, x, y, size_name + " (log scale)", "speedup over " + baseline + " (log scale)", "", "x", false);
  line(w, x.px0, y(1), x.px1, y(1), "baseline");
  text(w, x.px1 - 4, y(1) - 5, "break-even", "end", "note");
  // Crossovers the analysis found for this sweep.
  const auto colour = series_colours(wl.variants, series);
  speedup_crossovers(w, x, f->top, f->height - f->bottom, wl, sweep, baseline, analysis, colour);
  // Lines, CI whiskers and points.
  draw_series(w, *f, wl.variants, series, colour, {.dash_every_other = false, .radius = "4", .marker_class = nullptr});
  w.close("svg");
  return true;
}

namespace {

struct roof {
  std::string processor;
  double gbps, gflops;
  bool measured;
};

// Each processor's two roofs (bandwidth slope, compute flat) as one line, with its label.
void draw_roofs(writer& w, const log_axis& x, const log_axis& y, const std::vector<roof>& roofs) {
  for (const auto& r : roofs) {
    const double ridge = r.gflops / r.gbps;
    const double x0 = std::max(x.lo, y.lo / r.gbps);
    std::string pts = num(x(x0)) + "," + num(y(std::max(r.gbps * x0, y.lo))) + " ";
    if (ridge > x.lo && ridge < x.hi) pts += num(x(ridge)) + "," + num(y(r.gflops)) + " ";
    pts += num(x(x.hi)) + "," + num(y(std::min(r.gflops, r.gbps * x.hi)));
    w.open("polyline", {{"points", pts}, {"class", r.processor == "gpu" ? "roof roof-gpu" : "roof roof-cpu"}});
    w.element("title", r.processor + " roofs: " + fmt_sig(r.gbps) + " GB/s, " + fmt_sig(r.gflops) + " GFLOP/s" +
                           (r.measured ? "" : " (estimate)"));
    w.close("polyline");
    text(w, x(x.hi) - 4, y(r.gflops) - 6,
         r.processor + ": " + fmt_sig(r.gbps) + " GB/s, " + fmt_sig(r.gflops) + " GFLOP/s", "end", "note");
  }
}

// One point: marker by processor (circle GPU, square CPU), diamond for a single kernel.
void roofline_marker(writer& w, double cx, double cy, const analysis::roofline_point& r, const std::string& colour) {
  const std::string tip = r.point_id + (r.kernel.empty() ? "" : " — " + r.kernel) + ": " + fmt_sig(r.achieved_gflops) +
                          " GFLOP/s, " + fmt_sig(r.achieved_gbps) + " GB/s, " + fmt_percent(r.percent_of_bound) +
                          " of the " + r.bound + " roof (" + work_words(r) + ")" +
                          (r.counter_bound.empty() ? "" : "; bound: " + counter_bound_words(r));
  if (!r.kernel.empty()) {
    w.open("polygon", {{"points", num(cx) + "," + num(cy - 6) + " " + num(cx + 6) + "," + num(cy) + " " + num(cx) + "," +
                                      num(cy + 6) + " " + num(cx - 6) + "," + num(cy)},
                       {"fill", colour}, {"class", "marker"}});
    w.element("title", tip);
    w.close("polygon");
  } else if (r.processor == "cpu") {
    w.open("rect", {{"x", num(cx - 4)}, {"y", num(cy - 4)}, {"width", "8"}, {"height", "8"}, {"fill", colour}, {"class", "marker"}});
    w.element("title", tip);
    w.close("rect");
  } else {
    w.open("circle", {{"cx", num(cx)}, {"cy", num(cy)}, {"r", "4.5"}, {"fill", colour}, {"class", "marker"}});
    w.element("title", tip);
    w.close("circle");
  }
}

} // namespace

bool roofline_chart(writer& w, const analysis::analysis_result& analysis) {
  std::vector<roof> roofs;
  std::vector<const analysis::roofline_point*> placed, unplaced;
  for (const auto& r : analysis.roofline) {
    if (r.intensity > 0 && r.achieved_gflops > 0) placed.push_back(&r);
    else unplaced.push_back(&r);
    if (r.roof_gbps > 0 && r.roof_gflops > 0 &&
        std::none_of(roofs.begin(), roofs.end(), [&](const roof& x) {
          return x.processor == r.processor && x.gbps == r.roof_gbps && x.gflops == r.roof_gflops;
        }))
      roofs.push_back({r.processor, r.roof_gbps, r.roof_gflops, r.roof_measured});
  }
  if (placed.empty() && roofs.empty()) return false;
  double xmin = 1.0 / 16, xmax = 16, ymin = 1, ymax = 10;
  bool first = true;
  for (const auto* r : placed) {
    xmin = first ? r->intensity : std::min(xmin, r->intensity);
    xmax = first ? r->intensity : std::max(xmax, r->intensity);
    ymin = first ? r->achieved_gflops : std::min(ymin, r->achieved_gflops);
    ymax = first ? r->achieved_gflops : std::max(ymax, r->achieved_gflops);
    first = false;
  }
  for (const auto& r : roofs) {
    const double ridge = r.gflops / r.gbps;
    xmin = std::min(xmin, ridge / 8);
    xmax = std::max(xmax, ridge * 8);
    ymax = std::max(ymax, r.gflops);
  }
  auto [xlo, xhi] = decades(xmin / 2, xmax * 2);
  auto [ylo, yhi] = decades(ymin / 2, ymax * 2);
  const double width = 900, height = 440, left = 80, right = 200, top = 20, bottom = 56;
  log_axis x{xlo, xhi, left, width - right};
  log_axis y{ylo, yhi, height - bottom, top};
  svg_open(w, width, height, "Roofline: achieved GFLOP/s versus arithmetic intensity");
  log_frame(w, x, y, "arithmetic intensity (flop/byte, log scale)", "GFLOP/s (log scale)", "", "");
  draw_roofs(w, x, y, roofs);
  // Colour by variant, marker by processor (circle GPU, square CPU), diamond for single kernels.
  std::vector<std::string> variants;
  for (const auto* r : placed)
    if (std::find(variants.begin(), variants.end(), r->workload + "/" + r->variant) == variants.end())
      variants.push_back(r->workload + "/" + r->variant);
  auto colour = [&](const analysis::roofline_point& r) {
    const auto i = std::find(variants.begin(), variants.end(), r.workload + "/" + r.variant) - variants.begin();
    return palette[i % 10];
  };
  for (const auto* r : placed) roofline_marker(w, x(r->intensity), y(r->achieved_gflops), *r, colour(*r));
  double ly = top + 8;
  for (std::size_t i = 0; i < variants.size() && i < 20; ++i) {
    w.empty("rect", {{"x", num(width - right + 16)}, {"y", num(ly)}, {"width", "12"}, {"height", "12"}, {"fill", palette[i % 10]}});
    text(w, width - right + 34, ly + 10, variants[i], "start", "legend");
    ly += 18;
  }
  text(w, width - right + 16, ly + 14, "● GPU  ■ CPU  ◆ kernel", "start", "legend");
  w.close("svg");
  if (!unplaced.empty()) {
    w << "<p class=\"note\">Not on the log-log chart (no floating-point work or no time): "_html;
    for (std::size_t i = 0; i < unplaced.size(); ++i) {
      if (i) w << ", ";
      w << "<code>"_html << unplaced[i]->point_id << (unplaced[i]->kernel.empty() ? "" : " — " + unplaced[i]->kernel)
        << "</code>"_html;
    }
    w << ".</p>"_html;
  }
  return true;
}

namespace {

struct lane_item {
  std::uint64_t start, end;
  std::string name, colour, tip;
};
struct lane {
  std::string label;
  std::vector<lane_item> items;
};

// Puts ranges on as many rows as their nesting needs (a stack per thread).
std::vector<std::vector<const trace::range_record*>> nest(std::vector<const trace::range_record*> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](auto* a, auto* b) { return a->start != b->start ? a->start < b->start : a->end > b->end; });
  std::vector<std::vector<const trace::range_record*>> rows;
  std::vector<std::uint64_t> open; // end of the range open at each depth
  for (const auto* r : ranges) {
    while (!open.empty() && open.back() <= r->start) open.pop_back();
    const std::size_t depth = open.size();
    if (rows.size() <= depth) rows.resize(depth + 1);
    rows[depth].push_back(r);
    open.push_back(r->end);
  }
  return rows;
}

} // namespace

namespace {

// About six round ticks along a time axis of `span` ns, with their grid lines down to y1.
void time_ticks(writer& w, double left, double plot, double y0, double y1, double span) {
  const double raw = span / 6;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
  for (double v = 0; v <= span + 1e-9; v += step) {
    const double x = left + plot * v / span;
    line(w, x, y0, x, y1, "grid");
    text(w, x, y1 + 16, fmt::format("+{}", fmt_duration(v)), "middle", "tick");
  }
}

// The window a timeline shows: the middle repetition, or the span of GPU work when
// repetitions are missing.
struct time_window {
  std::uint64_t start = 0, end = 0;
  const trace::repetition_window* rep = nullptr;
  bool holds(std::uint64_t s, std::uint64_t e) const { return e > start && s < end; }
  std::string tip(const std::string& name, std::uint64_t s, std::uint64_t e) const {
    return name + " — " + fmt_duration(static_cast<double>(e - s)) + " at +" +
           fmt_duration(static_cast<double>(s > start ? s - start : 0));
  }
};

time_window timeline_window(const trace::device_trace& t) {
  time_window tw;
  if (!t.repetitions.empty()) {
    tw.rep = &t.repetitions[t.repetitions.size() / 2];
    tw.start = tw.rep->start;
    tw.end = tw.rep->end;
    return tw;
  }
  bool first = true;
  auto grow = [&](std::uint64_t s, std::uint64_t e) {
    tw.start = first ? s : std::min(tw.start, s);
    tw.end = first ? e : std::max(tw.end, e);
    first = false;
  };
  for (const auto& k : t.kernels) grow(k.start, k.end);
  for (const auto& m : t.memcpys) grow(m.start, m.end);
  for (const auto& m : t.memsets) grow(m.start, m.end);
  return tw;
}

// The runner's phases, NVTX ranges per thread and depth, and CUDA API calls per thread.
void host_lanes(const trace::device_trace& t, const time_window& tw, std::vector<lane>& lanes) {
  if (const auto* rep = tw.rep; rep && rep->compute_end > 0) {
    lane phases{"runner phases", {}};
    const std::pair<const char*, std::pair<std::uint64_t, std::uint64_t>> parts[] = {
        {"transfer_in", {rep->start, rep->transfer_in_end}},
        {"compute", {rep->transfer_in_end, rep->compute_end}},
        {"transfer_out", {rep->compute_end, rep->end}}};
    const char* colours[] = {"#f28e2b", "#4e79a7", "#e15759"};
    int i = 0;
    for (const auto& [name, span] : parts) {
      if (span.second > span.first) phases.items.push_back({span.first, span.second, name, colours[i], tw.tip(name, span.first, span.second)});
      ++i;
    }
    lanes.push_back(std::move(phases));
  }
  std::map<std::uint32_t, std::vector<const trace::range_record*>> ranges_by_thread;
  for (const auto& r : t.ranges)
    if (tw.holds(r.start, r.end)) ranges_by_thread[r.thread].push_back(&r);
  for (const auto& [tid, ranges] : ranges_by_thread) {
    const auto rows = nest(ranges);
    for (std::size_t d = 0; d < rows.size(); ++d) {
      lane l{"NVTX, thread " + std::to_string(tid) + (d ? " (depth " + std::to_string(d) + ")" : ""), {}};
      for (const auto* r : rows[d])
        l.items.push_back({r->start, r->end, r->name, r->domain == "speedlab" ? "#59a14f" : "#8cd17d",
                           tw.tip((r->domain.empty() ? "" : r->domain + ": ") + r->name, r->start, r->end)});
      lanes.push_back(std::move(l));
    }
  }
  std::map<std::pair<std::uint32_t, bool>, lane> api;
  for (const auto& a : t.api_calls) {
    if (!tw.holds(a.start, a.end)) continue;
    auto& l = api[{a.thread, a.driver}];
    l.label = std::string(a.driver ? "CUDA driver" : "CUDA runtime") + ", thread " + std::to_string(a.thread);
    l.items.push_back({a.start, a.end, a.name, a.driver ? "#d4a6c8" : "#edc948", tw.tip(a.name, a.start, a.end)});
  }
  for (auto& [key, l] : api) lanes.push_back(std::move(l));
}

// Kernels, copies and memsets per (GPU, stream), then synchronizations.
void device_lanes(const trace::device_trace& t, const time_window& tw, std::vector<lane>& lanes) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, lane> gpu;
  for (const auto& k : t.kernels)
    if (tw.holds(k.start, k.end)) {
      auto& l = gpu[{k.device, k.stream}];
      l.items.push_back({k.start, k.end, kernel_short_name(k.name), split_colour("kernel"),
                         tw.tip(k.name, k.start, k.end) + fmt::format(", grid {}x{}x{}, block {}x{}x{}", k.grid[0],
                                                                       k.grid[1], k.grid[2], k.block[0], k.block[1],
                                                                       k.block[2])});
    }
  for (const auto& m : t.memcpys)
    if (tw.holds(m.start, m.end)) {
      const char* part = m.copy_kind == trace::copy_htod ? "h2d" : m.copy_kind == trace::copy_dtoh ? "d2h" : "copy_other";
      const double ns = static_cast<double>(m.end - m.start);
      gpu[{m.device, m.stream}].items.push_back(
          {m.start, m.end, memcpy_event_name(m), split_colour(part),
           tw.tip(memcpy_event_name(m), m.start, m.end) + ", " + fmt_bytes(static_cast<double>(m.bytes)) +
               (ns > 0 ? ", " + fmt_sig(static_cast<double>(m.bytes) / ns) + " GB/s" : "")});
    }
  for (const auto& m : t.memsets)
    if (tw.holds(m.start, m.end))
      gpu[{m.device, m.stream}].items.push_back({m.start, m.end, memset_event_name(m), split_colour("memset"),
                                                 tw.tip(memset_event_name(m), m.start, m.end) + ", " +
                                                     fmt_bytes(static_cast<double>(m.bytes))});
  for (auto& [key, l] : gpu) {
    l.label = "GPU " + std::to_string(key.first) + ", stream " + std::to_string(key.second);
    lanes.push_back(std::move(l));
  }
  lane syncs{"synchronization", {}};
  for (const auto& s : t.syncs)
    if (tw.holds(s.start, s.end))
      syncs.items.push_back({s.start, s.end, sync_type_label(s.type), split_colour("sync"), tw.tip(sync_type_label(s.type), s.start, s.end)});
  if (!syncs.items.empty()) lanes.push_back(std::move(syncs));
}

// One bar, with its name inside when there is room (cut at a UTF-8 character).
void lane_bar(writer& w, double x0, double x1, double y, double row_h, const lane_item& it) {
  rect(w, x0, y + 3, x1 - x0, row_h - 6, it.colour, it.tip);
  const double room = x1 - x0 - 6;
  if (room <= 30) return;
  const std::size_t chars = static_cast<std::size_t>(room / 6.2);
  std::string label = it.name;
  if (label.size() > chars) {
    std::size_t cut = chars > 1 ? chars - 1 : 0;
    while (cut > 0 && (static_cast<unsigned char>(label[cut]) & 0xC0) == 0x80) --cut; // not inside a UTF-8 character
    label = label.substr(0, cut) + "…";
  }
  w.open("text", {{"x", num(x0 + 3)}, {"y", num(y + 15)}, {"class", light_fill(it.colour) ? "in-bar dark" : "in-bar"}});
  w << label;
  w.close("text");
}

} // namespace

bool timeline_chart(writer& w, const point_result& p, const trace::device_trace& t) {
  const time_window tw = timeline_window(t);
  if (tw.end <= tw.start) return false;
  std::vector<lane> lanes;
  host_lanes(t, tw, lanes);
  device_lanes(t, tw, lanes);
  if (lanes.empty()) return false;

  const double left = 210, plot = 660, right = 30, row_h = 22, top = 12;
  const double n_lanes = static_cast<double>(lanes.size());
  const double width = left + plot + right, height = top + n_lanes * row_h + 40;
  const double span = static_cast<double>(tw.end - tw.start);
  auto px = [&](std::uint64_t v) {
    const double c = static_cast<double>(std::clamp(v, tw.start, tw.end) - tw.start);
    return left + plot * c / span;
  };
  svg_open(w, width, height, "Timeline of one repetition of " + p.id);
  time_ticks(w, left, plot, top, top + n_lanes * row_h, span);
  std::size_t drawn = 0, total = 0;
  for (const auto& l : lanes) total += l.items.size();
  constexpr std::size_t max_items = 4000; // keeps the page light on huge traces
  double y = top;
  for (const auto& l : lanes) {
    text(w, left - 8, y + 15, l.label, "end", "label");
    for (const auto& it : l.items) {
      if (drawn >= max_items) break;
      ++drawn;
      lane_bar(w, px(it.start), px(it.end), y, row_h, it);
    }
    y += row_h;
  }
  text(w, left + plot / 2, height - 4, "time since the repetition started", "middle", "axis-label");
  w.close("svg");
  if (total > drawn)
    w << "<p class=\"note\">"_html << fmt::format("Showing {} of {} records.", drawn, total) << "</p>"_html;
  return true;
}

namespace {

constexpr const char* rank_compute_colour = "#0072b2";
constexpr const char* rank_comm_colour = "#e69f00";
constexpr const char* rank_idle_colour = "#d9dee3";

// One bar of a rank's row: a step, or neighbouring steps merged.
struct rank_span {
  std::uint64_t start = 0, end = 0;
  double compute_ns = 0, comm_ns = 0;
  std::size_t first = 0, last = 0; // step indices
};

std::vector<rank_span> rank_spans(const analysis::rank_summary& r, std::size_t max_spans) {
  std::vector<rank_span> out;
  if (r.steps.empty()) {
    if (r.window_end > r.window_start) out.push_back({r.window_start, r.window_end, r.compute_ns, r.comm_ns, 0, 0});
    return out;
  }
  const std::size_t group = (r.steps.size() + max_spans - 1) / max_spans;
  for (std::size_t i = 0; i < r.steps.size(); i += group) {
    rank_span s{r.steps[i].start, r.steps[i].end, 0, 0, i, i};
    for (std::size_t k = i; k < std::min(i + group, r.steps.size()); ++k) {
      s.end = std::max(s.end, r.steps[k].end);
      s.compute_ns += r.steps[k].compute_ns;
      s.comm_ns += r.steps[k].comm_ns;
      s.last = k;
    }
    out.push_back(s);
  }
  return out;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string rank_name(const analysis::rank_summary& r) {
  return r.id.rank ? "rank " + std::to_string(*r.id.rank) : "pid " + std::to_string(r.pid);
}

// A rank's step (or merged steps) as one bar split into compute, communication and idle.
void rank_bar(writer& w, double x0, double x1, double y, double row_h, const analysis::rank_summary& r,
              const rank_span& s, std::uint64_t t0) {
  const double len = static_cast<double>(s.end - s.start);
  if (len <= 0) return;
  const std::string who = rank_name(r) + " (" + r.host + ", pid " + std::to_string(r.pid) + ")";
  // Communication hidden under compute is drawn as compute: the parts never exceed the span.
  const double compute = std::min(s.compute_ns, len), comm = std::min(s.comm_ns, len - compute);
  const double idle = len - compute - comm;
  const std::string what = r.steps.empty() ? "profiled window"
                           : s.first == s.last ? "step " + std::to_string(s.first)
                                               : "steps " + std::to_string(s.first) + "-" + std::to_string(s.last);
  const std::string tip = who + ", " + what + ": " + fmt_duration(len) + " at +" +
                          fmt_duration(static_cast<double>(s.start - t0)) + "; compute " + fmt_duration(s.compute_ns) +
                          ", communication " + fmt_duration(s.comm_ns) + ", idle " + fmt_duration(idle);
  const double w_all = x1 - x0;
  double x = x0;
  const std::pair<double, const char*> parts[] = {
      {compute, rank_compute_colour}, {comm, rank_comm_colour}, {idle, rank_idle_colour}};
  for (const auto& [part, colour] : parts) {
    if (part <= 0) continue;
    const double pw = w_all * part / len;
    rect(w, x, y + 4, pw, row_h - 8, colour, tip);
    x += pw;
  }
}

// Under the chart: the straggler and what the others wait for it per step, or that none is.
void straggler_note(writer& w, const analysis::rank_analysis& ra) {
  if (ra.straggler) {
    std::string wait;
    for (std::size_t i = 0; i < ra.ranks.size() && i < ra.wait_per_step_ns.size(); ++i)
      if (!(ra.ranks[i].id.rank && *ra.ranks[i].id.rank == *ra.straggler) && ra.ranks[i].id.rank)
        wait += (wait.empty() ? "" : ", ") + rank_name(ra.ranks[i]) + " " + fmt_duration(ra.wait_per_step_ns[i]);
    w << "<p class=\"straggler-note\">"_html
      << fmt::format("Straggler: rank {}: its compute per step runs {} longer than the others' median", *ra.straggler,
                     fmt_duration(ra.straggler_excess_ns))
      << (wait.empty() ? std::string(".") : "; the others wait per step: " + wait + ".") << "</p>"_html;
  } else {
    w << "<p class=\"note\">"_html << "No straggler: no rank's compute per step runs clearly longer than the others'."
      << "</p>"_html;
  }
}

} // namespace

bool rank_timeline_chart(writer& w, const analysis::rank_analysis& ra) {
  if (ra.ranks.size() < 2) return false;
  // Per row, and 20,000 in all: keeps the page light for long jobs and for a thousand ranks
  // (400 a row for 1,024 ranks made a 273 MB page).
  const std::size_t max_spans = std::clamp<std::size_t>(20'000 / ra.ranks.size(), 10, 400);
  const double left = 190, plot = 620, right = 200, row_h = 24, top = 34;
  std::vector<std::vector<rank_span>> rows;
  std::uint64_t t0 = 0, t1 = 0;
  bool any = false;
  for (const auto& r : ra.ranks) {
    rows.push_back(rank_spans(r, max_spans));
    for (const auto& s : rows.back()) {
      t0 = any ? std::min(t0, s.start) : s.start;
      t1 = any ? std::max(t1, s.end) : s.end;
      any = true;
    }
  }
  if (!any || t1 <= t0) return false;
  const double span = static_cast<double>(t1 - t0);
  auto px = [&](std::uint64_t v) { return left + plot * static_cast<double>(std::clamp(v, t0, t1) - t0) / span; };
  const double n_rows = static_cast<double>(ra.ranks.size());
  const double width = left + plot + right, height = top + n_rows * row_h + 44;
  std::string title = "Ranks by time: compute, communication and idle per step";
  if (ra.straggler) title += "; straggler: rank " + std::to_string(*ra.straggler);
  svg_open(w, width, height, title);
  // Legend.
  double lx = left;
  const std::pair<const char*, const char*> legend[] = {
      {"compute", rank_compute_colour}, {"communication", rank_comm_colour}, {"idle (no GPU work)", rank_idle_colour}};
  for (const auto& [name, colour] : legend) {
    w.empty("rect", {{"x", num(lx)}, {"y", "8"}, {"width", "12"}, {"height", "12"}, {"fill", colour}});
    text(w, lx + 16, 18, name, "start", "legend");
    lx += 30 + 7.0 * static_cast<double>(std::string_view(name).size());
  }
  text(w, left + plot + 10, 18, "per step: compute / wait", "start", "legend");
  time_ticks(w, left, plot, top, top + n_rows * row_h, span);
  double y = top;
  for (std::size_t i = 0; i < ra.ranks.size(); ++i, y += row_h) {
    const auto& r = ra.ranks[i];
    const bool straggler = ra.straggler && r.id.rank && *r.id.rank == *ra.straggler;
    w.open("g", {{"class", straggler ? "rank-row straggler-rank" : "rank-row"}, {"data-rank", rank_name(r)}});
    if (straggler)
      w.empty("rect", {{"x", "0"}, {"y", num(y)}, {"width", num(width)}, {"height", num(row_h)}, {"class", "straggler-row"}});
    text(w, left - 8, y + 16, rank_name(r) + (straggler ? " · straggler" : ""), "end", straggler ? "label straggler" : "label");
    for (const auto& s : rows[i]) rank_bar(w, px(s.start), px(s.end), y, row_h, r, s, t0);
    std::vector<double> compute;
    for (const auto& s : r.steps) compute.push_back(s.compute_ns);
    std::string figures = r.steps.empty() ? "no steps" : fmt_duration(median_of(std::move(compute)));
    if (i < ra.wait_per_step_ns.size() && !r.steps.empty()) figures += " / " + fmt_duration(ra.wait_per_step_ns[i]);
    text(w, left + plot + 10, y + 16, figures, "start", straggler ? "value straggler" : "value");
    w.close("g");
  }
  text(w, left + plot / 2, height - 6, "time on the ranks' common clock, from the first step", "middle", "axis-label");
  w.close("svg");
  straggler_note(w, ra);
  return true;
}

} // namespace speedlab::reports::html

namespace speedlab::reports::html {
namespace {

// Each kind of segment's colour on the critical path (the ranks chart's for compute,
// communication and idle).
constexpr enum_word<analysis::segment_kind> path_colours[] = {{analysis::segment_kind::host, "#cc79a7"},
                                                              {analysis::segment_kind::api, "#999999"},
                                                              {analysis::segment_kind::kernel, rank_compute_colour},
                                                              {analysis::segment_kind::copy, "#d55e00"},
                                                              {analysis::segment_kind::memset, "#56b4e9"},
                                                              {analysis::segment_kind::sync, "#f0e442"},
                                                              {analysis::segment_kind::collective, rank_comm_colour},
                                                              {analysis::segment_kind::gap, rank_idle_colour}};

const char* path_colour(analysis::segment_kind k) { return word_of(k, path_colours, rank_idle_colour); }

// The step the chart draws: the judged step whose length is nearest the median.
const analysis::step_path* median_step(const analysis::critical_path& p) {
  const analysis::step_path* best = nullptr;
  for (std::size_t k = p.steps.size() > 1 ? 1 : 0; k < p.steps.size(); ++k)
    if (!best || std::abs(p.steps[k].length_ns() - p.median_step_ns) < std::abs(best->length_ns() - p.median_step_ns))
      best = &p.steps[k];
  return best;
}

} // namespace

bool critical_path_chart(writer& w, const analysis::critical_path& p) {
  const analysis::step_path* s = median_step(p);
  if (!s || s->segments.empty() || s->end <= s->start) return false;
  // One lane per rank and thread or stream the path visits, in order of first visit.
  std::vector<std::string> lanes;
  auto lane_of = [&lanes](const analysis::path_segment& g) {
    const std::string name = (g.rank >= 0 ? fmt::format("rank {} ", g.rank) : std::string()) + g.where;
    auto it = std::find(lanes.begin(), lanes.end(), name);
    if (it != lanes.end()) return static_cast<std::size_t>(it - lanes.begin());
    lanes.push_back(name);
    return lanes.size() - 1;
  };
  std::vector<std::size_t> lane(s->segments.size());
  for (std::size_t i = s->segments.size(); i-- > 0;) lane[i] = lane_of(s->segments[i]); // the step's end first
  const double left = 190, plot = 620, right = 20, row_h = 22, top = 34;
  const double span = static_cast<double>(s->end - s->start);
  const double height = top + static_cast<double>(lanes.size()) * row_h + 30;
  svg_open(w, left + plot + right, height,
           fmt::format("Critical path of step {} ({}), the median step", s->step, fmt_duration(s->length_ns())));
  double lx = left;
  for (auto k : {analysis::segment_kind::host, analysis::segment_kind::api, analysis::segment_kind::kernel,
                 analysis::segment_kind::copy, analysis::segment_kind::sync, analysis::segment_kind::collective,
                 analysis::segment_kind::gap}) {
    w.empty("rect", {{"x", num(lx)}, {"y", "8"}, {"width", "12"}, {"height", "12"}, {"fill", path_colour(k)}});
    text(w, lx + 16, 18, analysis::to_string(k), "start", "legend");
    lx += 30 + 6.5 * static_cast<double>(analysis::to_string(k).size());
  }
  for (std::size_t i = 0; i < lanes.size(); ++i)
    text(w, left - 8, top + static_cast<double>(i) * row_h + 15, lanes[i], "end", "label");
  for (std::size_t i = 0; i < s->segments.size(); ++i) {
    const auto& g = s->segments[i];
    const double x = left + plot * static_cast<double>(g.start - s->start) / span;
    const double y = top + static_cast<double>(lane[i]) * row_h;
    rect(w, x, y + 3, plot * g.ns() / span, row_h - 6, path_colour(g.kind),
         fmt::format("{} {}: {} ({})", analysis::to_string(g.kind), g.name, fmt_duration(g.ns()), lanes[lane[i]]));
  }
  text(w, left + plot / 2, height - 6, "time in the step, from the previous step's end", "middle", "axis-label");
  w.close("svg");
  return true;
}

namespace {

// A frame of the flame graph: its weight and its callees, in the order first seen.
struct flame_node {
  std::string name;
  double weight = 0;
  std::vector<std::size_t> children;
};

std::vector<flame_node> flame_tree(const analysis::python_lines& lines) {
  std::vector<flame_node> nodes(1); // the root: the whole program
  for (const auto& s : lines.stacks) {
    const double weight = s.gpu_ns + s.sync_ns;
    if (weight <= 0) continue;
    std::size_t at = 0;
    nodes[0].weight += weight;
    for (const auto& f : s.frames) {
      std::size_t next = 0;
      for (const std::size_t c : nodes[at].children)
        if (nodes[c].name == f) next = c;
      if (next == 0) {
        nodes.push_back({f, 0, {}});
        next = nodes.size() - 1;
        nodes[at].children.push_back(next);
      }
      nodes[next].weight += weight;
      at = next;
    }
  }
  return nodes;
}

std::size_t flame_depth(const std::vector<flame_node>& nodes, std::size_t at) {
  std::size_t d = 0;
  for (const std::size_t c : nodes[at].children) d = std::max(d, flame_depth(nodes, c));
  return d + 1;
}

struct flame_layout {
  double left, width, top, row_h, total;
};

void flame_frames(writer& w, const std::vector<flame_node>& nodes, std::size_t at, double x, std::size_t depth,
                  const flame_layout& l) {
  for (const std::size_t c : nodes[at].children) {
    const flame_node& n = nodes[c];
    const double width = l.width * n.weight / l.total;
    if (width >= 1) {
      const double y = l.top + static_cast<double>(depth) * l.row_h;
      rect(w, x, y, width - 1, l.row_h - 2, depth % 2 ? "#e69f00" : "#f0b84a",
           fmt::format("{}: {} ({:.1f}%)", n.name, fmt_duration(n.weight), 100 * n.weight / l.total));
      const auto fits = static_cast<std::size_t>((width - 6) / 6.5);
      if (fits >= 4)
        text(w, x + 3, y + l.row_h - 7, n.name.size() <= fits ? n.name : n.name.substr(0, fits - 1) + "…", "start",
             "label");
      flame_frames(w, nodes, c, x, depth + 1, l);
    }
    x += width;
  }
}

} // namespace

bool python_flame_chart(writer& w, const analysis::python_lines& lines) {
  const std::vector<flame_node> nodes = flame_tree(lines);
  if (nodes[0].weight <= 0) return false;
  const std::size_t depth = flame_depth(nodes, 0) - 1;
  const flame_layout l{10, 800, 30, 20, nodes[0].weight};
  const double height = l.top + static_cast<double>(depth) * l.row_h + 26;
  svg_open(w, l.left * 2 + l.width, height,
           fmt::format("The program's Python stacks, each frame as wide as the GPU time it launched plus the time "
                       "it blocked ({} in all)",
                       fmt_duration(nodes[0].weight)));
  text(w, l.left, 18, "outermost frame on top; width: GPU time launched + time blocked in synchronizations", "start",
       "legend");
  flame_frames(w, nodes, 0, l.left, 0, l);
  w.close("svg");
  return true;
}

} // namespace speedlab::reports::html
