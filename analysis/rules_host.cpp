// Rules that compare variants or judge the measurement: poor-scaling, parallel-efficiency,
// threads-crossover, cpu-roof (the answers a CPU-only run gets), problem-too-small,
// noisy-measurement, too-few-repetitions, dropped-records.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "analysis/rule_support.hpp"
#include "analysis/rules.hpp"

namespace speedlab::analysis {

namespace {

using detail::add;

// Threads moving at least this share of the host's memory bandwidth are memory-bound.
constexpr double memory_bound_share = 0.7;

std::string speedup_text(const speedup& s) {
  return fmt::format("{} {} ({}, {})", text::speed(s.ratio), format::speed_interval(s.ci_low, s.ci_high),
                     to_string(s.verdict), s.method);
}

// What limits a threads variant that scales below its thread count: evidence added to f.
struct scaling_limit {
  double karp_flatt = 0;  // the serial fraction that would explain the speedup (Amdahl)
  double achieved = 0;    // bytes per ns (GB/s) of the compute phase
  const ceiling* bw = nullptr;
  const ceiling* cores = nullptr;
  bool memory_bound = false, oversubscribed = false;
};

scaling_limit diagnose_scaling(const rule_context& ctx, finding& f, double speedup) {
  const point_result& p = *ctx.point;
  const double n = p.threads, T = p.wall.median;
  scaling_limit lim;
  // Karp-Flatt: the serial fraction that would explain this speedup on n threads.
  lim.karp_flatt = (1 / speedup - 1 / n) / (1 - 1 / n);
  add(f, "Karp-Flatt serial fraction", fmt::format("{:.3f}", lim.karp_flatt));
  lim.bw = find_ceiling(ctx.device.host, keys::memory_bw);
  lim.cores = find_ceiling(ctx.device.host, keys::cores);
  double compute_ns = detail::phase_ns(p, "compute");
  if (!(compute_ns > 0)) compute_ns = T;
  const double bytes = p.work.bytes();
  lim.achieved = bytes > 0 ? bytes / compute_ns : 0;
  // Data that fits in the last-level cache is not limited by DRAM bandwidth.
  const auto llc = property_number(ctx.device, keys::prop_llc_bytes);
  const bool in_cache = llc && bytes < 2 * *llc;
  lim.memory_bound = lim.bw && !in_cache && lim.achieved >= memory_bound_share * lim.bw->value;
  lim.oversubscribed = lim.cores && n > lim.cores->value;
  if (lim.achieved > 0)
    add(f, "achieved memory bandwidth", text::gbps(lim.achieved) + (lim.bw ? " of " + detail::ceiling_text(*lim.bw) : ""));
  if (in_cache && bytes <= *llc) add(f, "working set", text::bytes(bytes) + " (fits in the " + text::bytes(*llc) + " last-level cache)");
  return lim;
}

// The explanation and next experiment for a threads variant below its thread count.
void explain_scaling(finding& f, const scaling_limit& lim, const point_result& p, double n) {
  if (lim.memory_bound) {
    f.explanation = fmt::format(
        "The threads already move {} of data per second, {} of the host's memory bandwidth: memory, not cores, "
        "limits this loop, so more threads cannot make it faster.",
        text::gbps(lim.achieved), text::percent(lim.achieved / lim.bw->value));
    f.next_experiment = "Raise arithmetic intensity (fuse passes over the data, use smaller types) rather than "
                        "threads; compare with the GPU variant, whose memory is several times faster.";
  } else if (lim.oversubscribed) {
    f.explanation = fmt::format("{:.0f} threads share {:.0f} cores: they take turns instead of running in parallel.",
                                n, lim.cores->value);
    f.next_experiment = "Run with threads <= cores and sweep 1, 2, 4, ... to find where scaling stops.";
  } else if (p.cpu_utilization > 0 && p.cpu_utilization < 0.5 * n) {
    f.explanation = fmt::format(
        "Only {:.1f} of {:.0f} threads are busy on average: workers wait for each other (uneven chunks, a serial "
        "section, or thread start-up costs comparable to the work at this size). A serial fraction of {:.2f} "
        "explains this speedup (Amdahl).",
        p.cpu_utilization, n, lim.karp_flatt);
    f.next_experiment = "Sweep the size: if efficiency rises with size, start-up costs dominate; for uneven work "
                        "use dynamic scheduling (smaller chunks handed out on demand).";
  } else {
    f.explanation = fmt::format(
        "The threads are busy but gain little: a serial fraction of {:.2f} (Karp-Flatt) or contention "
        "(false sharing, atomics, a shared lock) would explain this speedup.",
        lim.karp_flatt);
    f.next_experiment = "Give each thread private partial results merged at the end, pad per-thread data to "
                        "cache lines, and sweep the thread count to see where scaling stops.";
  }
}

// Other programs held cores this threads point needed while it was measured: its threads
// waited for cores, which says how the machine was, not what the code does. The point's own
// figure where its rounds ran long enough to read /proc/stat's 10 ms ticks, else the run's.
struct busy_machine {
  double other = 0, cores = 0;
  bool whole_run = false; // the figure is the run's, not this point's
};
constexpr double busy_missing_cores = 0.5; // this much of the cores the threads needed was taken

std::optional<busy_machine> machine_was_busy(const rule_context& ctx, double threads) {
  const point_result& p = *ctx.point;
  const ceiling* cores = find_ceiling(ctx.device.host, keys::cores);
  if (!cores || !(cores->value > 0)) return {};
  busy_machine b{p.other_busy_cores, cores->value, false};
  if (p.other_busy_cores < 0 || p.other_busy_span_s < other_busy_min_span_s) b = {ctx.run_other_busy_cores, cores->value, true};
  if (b.other < 0) return {};
  b.other = std::min(b.other, b.cores);
  if (b.cores - b.other > std::min(threads, b.cores) - busy_missing_cores) return {};
  return b;
}

// A threads point slower than it should be on a machine other programs kept busy: a warning
// about the measurement with nothing gained by changing the code (estimated gain 1).
void explain_busy(finding& f, const busy_machine& b, const point_result& p, double n, const std::string& base) {
  add(f, "other programs' busy cores",
      fmt::format("{:.2f} of {:.0f} {}", b.other, b.cores,
                  b.whole_run ? "over the whole run (this point's rounds were too short to read on their own)"
                              : fmt::format("while this point's rounds ran ({:.2g} s)", p.other_busy_span_s)));
  f.title += fmt::format(" while other programs held {:.1f} of {:.0f} cores", b.other, b.cores);
  f.explanation = fmt::format(
      "Other programs kept {:.1f} of the {:.0f} cores busy {}, so its {:.0f} threads had about {:.1f} cores between "
      "them{}; a parallel region ends with its last thread, so each time one was descheduled the others waited. This "
      "measures the machine during the run, not the code: the comparison with {} does not hold for a quiet machine.",
      b.other, b.cores, b.whole_run ? "during this run" : "while this point was measured", n,
      std::max(0.0, b.cores - b.other),
      p.cpu_utilization > 0 ? fmt::format(" (they were busy {:.2f} of {:.0f} on average)", p.cpu_utilization, n)
                            : std::string(),
      base);
  f.next_experiment = fmt::format(
      "Measure again while the machine is quiet (results.json gives each point's other_busy_cores), or with "
      "--threads {:.0f} to leave the other programs their cores.",
      std::max(1.0, std::floor(b.cores - b.other)));
  f.estimated_gain = 1;
  f.severity = severity::warning;
}

// The words for the point's serial baseline ("serial", "py-numba"; detail::baseline_words)
// and for running it instead ("the plain loop" for C++, the Python baseline's name).
std::string base_words(const rule_context& ctx) { return detail::baseline_words(*ctx.point, *ctx.serial); }
std::string plain_words(const rule_context& ctx) {
  return is_python(*ctx.point) ? base_words(ctx) : std::string("the plain loop");
}
std::string run_serially_words(const rule_context& ctx) {
  return is_python(*ctx.point) ? "Run " + base_words(ctx) : std::string("Run serially");
}

// What the comparing rules say they judge (rule::judges).
constexpr const char* threads_scope =
    "threads-kind variants with 2 or more threads, against the serial baseline of their own language: a C++ "
    "threads variant against C++ serial; a Python one against its own serial build (py-numba for "
    "py-numba-parallel), else py-numpy, else py-loop";

// Where this threads point's series starts to beat serial inside its swept sizes (the
// total time's crossover), or nullptr.
const crossover* serial_crossover(const rule_context& ctx) {
  if (!ctx.serial) return nullptr;
  for (const auto* c : ctx.crossovers)
    if (c->baseline == ctx.serial->variant && c->with_transfers && c->size && c->in_range) return c;
  return nullptr;
}

// "n ≈ 3.1e+04 (95% interval 2.2e+04–4.5e+04)": a crossover's size in words.
std::string crossover_text(const crossover& c) {
  std::string s = c.size_param + " ≈ " + text::number(*c.size);
  if (c.size_high > c.size_low && c.size_low > 0)
    s += " (interval " + text::number(c.size_low) + "–" + text::number(c.size_high) + ")";
  return s;
}

class poor_scaling final : public rule {
public:
  static constexpr double min_efficiency = 0.5;
  static constexpr double target_efficiency = 0.8;
  static constexpr double startup_scale_ns = 100e3; // below this much serial work, thread start-up can explain a loss
  poor_scaling()
      : rule({.name = "poor-scaling",
              .threshold = "parallel efficiency = serial time / (threads time x threads) below 50%, judged by the "
                           "upper end of its interval (gain projected to 80% efficiency; when threads are slower than "
                           "serial, to running serially)",
              .summary = "the multithreaded variant gains far less than its thread count"}) {}
  std::string judges() const override { return threads_scope; }

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    const point_result& p = *ctx.point;
    if (p.kind != variant_kind::threads || p.threads < 2 || !ctx.serial) return {};
    const double S = ctx.serial->wall.median, T = p.wall.median, n = p.threads;
    if (!(S > 0) || !(T > 0)) return {};
    const double speedup = S / T, eff = speedup / n;
    // Judge by the interval, not the medians: the best efficiency the data allow must be low.
    const double eff_high = ctx.vs_serial && ctx.vs_serial->method != "none" ? ctx.vs_serial->ci_high / n : eff;
    if (eff_high >= min_efficiency) return {};
    const ceiling* cores = find_ceiling(ctx.device.host, keys::cores);
    const std::string base = base_words(ctx);
    finding f = start(ctx, "", 1);
    f.compared_with = ctx.serial->id;
    add(f, base + " median", text::time(S));
    add(f, "threads median", text::time(T));
    add(f, "speedup over " + base, ctx.vs_serial ? speedup_text(*ctx.vs_serial) : text::speed(speedup));
    add(f, "parallel efficiency", fmt::format("{} / ({} x {:.0f}) = {}", text::time(S), text::time(T), n, text::percent(eff)));
    if (p.cpu_utilization > 0) add(f, "CPU utilization (busy cores)", fmt::format("{:.2f} of {:.0f} threads", p.cpu_utilization, n));
    if (cores) add(f, "host cores", detail::ceiling_text(*cores));

    if (speedup < 1) {
      // Slower than the plain loop: the fix at this size is not to use threads.
      f.estimated_gain = text::finite(1 / speedup);
      f.severity = severity_for_gain(f.estimated_gain);
      f.title = fmt::format("{:.0f} threads are {} than {}", n, text::speed(speedup), base);
      if (const auto busy = machine_was_busy(ctx, n)) {
        explain_busy(f, *busy, p, n, base);
        return {f};
      }
      if (S < startup_scale_ns)
        f.explanation =
            fmt::format("At this size the threaded variant is slower than {}: starting, waking and joining {:.0f} "
                        "threads costs more than the {} of work they share.",
                        plain_words(ctx), n, text::time(S));
      else
        f.explanation = fmt::format(
            "The threaded variant is slower than {} although there is {} of work to share, more than "
            "thread start-up costs. The threads waited{}: for cores taken by other programs, for each other "
            "(uneven chunks), or for memory.",
            plain_words(ctx), text::time(S),
            p.cpu_utilization > 0 ? fmt::format(" (on average {:.2f} of {:.0f} were busy)", p.cpu_utilization, n)
                                  : std::string());
      if (const crossover* c = serial_crossover(ctx)) {
        add(f, "crossover threads vs " + base, crossover_text(*c));
        f.next_experiment = fmt::format("{} below {} and with threads above it (the crossover threads vs "
                                        "{} this sweep shows).",
                                        run_serially_words(ctx), crossover_text(*c), base);
      } else {
        f.next_experiment = fmt::format("Sweep the size to find where threads start to pay off (the crossover threads "
                                        "vs {} in the report) and run smaller inputs {}.",
                                        base, is_python(p) ? "with " + base : std::string("serially"));
      }
      return {f};
    }

    const scaling_limit lim = diagnose_scaling(ctx, f, speedup);
    f.estimated_gain = lim.memory_bound ? 1.0 : text::finite(target_efficiency / eff);
    f.severity = severity_for_gain(f.estimated_gain);
    f.title =
        fmt::format("{:.0f} threads are {} than {} ({} efficiency)", n, text::speed(speedup), base, text::percent(eff));
    if (const auto busy = machine_was_busy(ctx, n)) explain_busy(f, *busy, p, n, base);
    else explain_scaling(f, lim, *ctx.point, n);
    return {f};
  }
};

class problem_too_small final : public rule {
public:
  problem_too_small()
      : rule({.name = "problem-too-small",
              .threshold =
                  "the GPU variant is slower than the serial variant at the same parameters (speedup interval below 1)",
              .summary = "at this size the GPU's fixed costs outweigh its speed"}) {}
  std::string judges() const override {
    return "CUDA-kind variants against the serial baseline of their own language: C++ CUDA against C++ serial, a "
           "Python GPU variant (CuPy, Numba CUDA) against py-numpy, else py-loop";
  }

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    const point_result& p = *ctx.point;
    if (p.kind != variant_kind::cuda || !ctx.serial || !ctx.vs_serial || ctx.vs_serial->verdict != verdict::slower)
      return {};
    const speedup& s = *ctx.vs_serial;
    const double gain = s.ratio > 0 ? 1 / s.ratio : 1;
    const std::string base = base_words(ctx);
    finding f = start(
        ctx, fmt::format("the GPU variant is {} than {} at this size", text::speed(s.ratio > 0 ? s.ratio : 1), base),
        gain);
    f.compared_with = ctx.serial->id;
    add(f, "GPU median", text::time(p.wall.median));
    add(f, base + " median", text::time(ctx.serial->wall.median));
    add(f, "speedup over " + base, speedup_text(s));
    if (!p.size_param().empty()) add(f, "size", p.size_param() + " = " + p.params.at(p.size_param()));
    std::string where;
    if (p.split_median && p.split_median->wall_ns > 0) {
      const time_split& t = *p.split_median;
      add(f, "GPU time split", fmt::format("kernels {}, copies {}, sync {}, API {}, host {}", text::time(t.kernel),
                                           text::time(t.h2d + t.d2h), text::time(t.sync), text::time(t.api),
                                           text::time(t.host)));
      where = fmt::format(" Kernels are only {} of the GPU variant's time.", text::percent(t.kernel / t.wall_ns));
    }
    f.explanation = fmt::format("At this size {} is faster. A GPU run pays fixed costs (copies, launches, "
                                "synchronization) that only enough work can amortize.{}",
                                is_python(p) ? base : std::string("the plain serial loop"), where);
    f.next_experiment = "Sweep the size upward and read the crossover size in the report; batch more work per "
                        "call or keep data on the device to lower the fixed cost.";
    return {f};
  }
};

class noisy_measurement final : public rule {
public:
  static constexpr double max_noise = 0.05;
  noisy_measurement()
      : rule({.name = "noisy-measurement",
              .threshold = "the 95% interval of the median is wider than +-5% of the median (warning above +-20%)",
              .summary = "the measurement is too noisy to compare small differences"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    const point_result& p = *ctx.point;
    const double noise = p.wall.relative_noise();
    if (p.wall.count < 3 || noise <= max_noise) return {};
    finding f = start(ctx, fmt::format("median known only to +-{}", text::percent(noise)), 1);
    f.severity = noise > 0.2 ? severity::warning : severity::info;
    add(f, "median", text::time(p.wall.median));
    add(f, "95% interval of the median", text::time(p.wall.ci_low) + " .. " + text::time(p.wall.ci_high));
    add(f, "repetitions", std::to_string(p.wall.count));
    add(f, "min / max", text::time(p.wall.min) + " / " + text::time(p.wall.max));
    if (!p.stop_reason.empty()) add(f, "stop reason", p.stop_reason);
    f.explanation = "Repetitions vary a lot, so speedups and crossovers involving this point get wide intervals "
                    "(verdict \"unclear\" rather than a wrong \"faster\").";
    f.next_experiment = "Rerun with more repetitions or a longer minimum time, with other programs closed; check "
                        "whether the first repetitions are slower (warm-up).";
    return {f};
  }
};

class too_few_repetitions final : public rule {
public:
  too_few_repetitions()
      : rule({.name = "too-few-repetitions",
              .threshold = "a valid point measured fewer than 3 times: its median has no 95% interval, so no rule "
                           "judges its speedup, efficiency or roof",
              .summary = "too few repetitions for any verdict"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    const point_result& p = *ctx.point;
    if (p.wall.count == 0 || p.wall.count >= 3 || !(p.wall.median > 0)) return {};
    finding f = start(ctx, fmt::format("{} repetition{}: no interval, no verdict", p.wall.count,
                                       p.wall.count == 1 ? "" : "s"),
                      1);
    add(f, "repetitions", std::to_string(p.wall.count));
    add(f, "median", text::time(p.wall.median));
    if (!p.stop_reason.empty()) add(f, "stop reason", p.stop_reason);
    f.explanation = fmt::format("One repetition takes {}, so the time limit ended the measurement after {}: without "
                                "an interval no speedup, efficiency or roof of this point can be judged.",
                                text::time(p.wall.median), p.wall.count);
    f.next_experiment = fmt::format("Rerun with --max-time of at least {:.2g} s (5 repetitions) or a smaller size.",
                                    5.5 * p.wall.median / 1e9);
    return {f};
  }
};

class dropped_records final : public rule {
public:
  dropped_records()
      : rule({.name = "dropped-records",
              .threshold = "the profiler dropped at least one record",
              .summary = "the trace is incomplete: GPU figures undercount"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    std::uint64_t dropped = ctx.point->dropped_records;
    if (ctx.trace) dropped = std::max(dropped, ctx.trace->dropped_records);
    if (dropped == 0) return {};
    finding f = start(ctx, fmt::format("the profiler dropped {} records", dropped), 1);
    f.severity = severity::warning;
    add(f, "dropped records", std::to_string(dropped));
    if (!ctx.point->profiler.empty()) add(f, "profiler", ctx.point->profiler);
    f.explanation = "The activity buffers filled faster than they were flushed; kernels or copies are missing from "
                    "the trace, so the time split and GPU rules undercount.";
    f.next_experiment = "Rerun with larger profiler buffers or fewer repetitions per point.";
    return {f};
  }
};

// The efficiency interval of a threads point: its speedup interval over serial / threads.
struct efficiency {
  double median = 0, low = 0, high = 0;
};

efficiency efficiency_of(const speedup& s, double threads) {
  return {s.ratio / threads, s.ci_low / threads, s.ci_high / threads};
}

std::string efficiency_text(const efficiency& e) {
  return fmt::format("{} [{}, {}]", text::percent(e.median), text::percent(e.low), text::percent(e.high));
}

// How well a threads variant uses its threads, for every threads point poor-scaling leaves
// alone: so each one gets an answer, judged on the interval (never on one sample).
class parallel_efficiency final : public rule {
public:
  static constexpr double poor = 0.5;   // below: poor-scaling's
  static constexpr double target = 0.8; // near-linear from here
  parallel_efficiency()
      : rule({.name = "parallel-efficiency",
              .threshold =
                  "a threads variant poor-scaling leaves alone (the interval of its efficiency = speedup over serial / "
                  "threads reaches 50%), with a speedup interval (3 or more repetitions on both sides): no measurable "
                  "gain when that interval holds 1, near-linear when its low end is >= 80%, below 80% when its high "
                  "end is (gain projected to 80% from the high end), else undecided",
              .summary = "how much of its thread count a multithreaded variant turns into speed"}) {}
  std::string judges() const override { return threads_scope; }

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    const point_result& p = *ctx.point;
    if (p.kind != variant_kind::threads || p.threads < 2 || !ctx.serial || !ctx.vs_serial) return {};
    const speedup& s = *ctx.vs_serial;
    const double n = p.threads;
    if (s.method == "none" || !(s.ratio > 0)) return {};
    const efficiency e = efficiency_of(s, n);
    if (e.high < poor) return {};
    const std::string base = base_words(ctx);
    finding f = start(ctx, "", 1);
    f.compared_with = ctx.serial->id;
    add(f, base + " median", text::time(ctx.serial->wall.median));
    add(f, "threads median", text::time(p.wall.median));
    add(f, "speedup over " + base, speedup_text(s));
    add(f, "parallel efficiency (speedup / threads)", efficiency_text(e));
    if (p.cpu_utilization > 0) add(f, "CPU utilization (busy cores)", fmt::format("{:.2f} of {:.0f} threads", p.cpu_utilization, n));
    const ceiling* cores = find_ceiling(ctx.device.host, keys::cores);
    if (cores) add(f, "host cores", detail::ceiling_text(*cores));
    const crossover* c = serial_crossover(ctx);
    if (c) add(f, "crossover threads vs " + base, crossover_text(*c));
    if (s.verdict != verdict::faster) {
      f.title = fmt::format("{:.0f} threads are {} than {}: no clear gain", n, text::speed(s.ratio), base);
      f.explanation =
          fmt::format("The 95% interval of the speedup, {}, holds 1: at this size {:.0f} threads neither win nor lose "
                      "measurably against {}; their start-up and joining eat what they share.",
                      speedup_text(s), n, plain_words(ctx));
      f.next_experiment =
          c ? fmt::format("{} below {} and with threads above it.", run_serially_words(ctx), crossover_text(*c))
            : fmt::format("Sweep the size upward to where threads pay off (the crossover threads vs "
                          "{}), or rerun with more repetitions to narrow the interval.",
                          base);
      return {f};
    }
    f.title = fmt::format("{:.0f} threads are {} than {} ({} efficiency)", n, text::speed(s.ratio), base,
                          text::percent(e.median));
    if (e.low >= target) {
      f.explanation = fmt::format("Each thread adds nearly a full core: efficiency is at least {} within the "
                                  "interval, so neither a serial part nor memory limits this loop on {:.0f} threads.",
                                  text::percent(e.low), n);
      f.next_experiment = "Keep the threads; to go further run on more cores (sweep threads up to the core count) or "
                          "compare with the GPU variant, and watch the memory roof as threads grow.";
    } else if (e.high < target) {
      const scaling_limit lim = diagnose_scaling(ctx, f, s.ratio);
      f.estimated_gain = lim.memory_bound ? 1.0 : text::finite(target / e.high);
      f.severity = severity_for_gain(f.estimated_gain);
      if (const auto busy = machine_was_busy(ctx, n)) explain_busy(f, *busy, p, n, base);
      else explain_scaling(f, lim, p, n);
    } else {
      f.explanation = fmt::format("The interval of the efficiency, {}–{}, straddles the 80% of a near-linear loop: "
                                  "the data cannot tell whether something limits these {:.0f} threads.",
                                  text::percent(e.low), text::percent(e.high), n);
      f.next_experiment = "Rerun with more repetitions (a longer --max-time) on a quieter machine to narrow the "
                          "interval.";
    }
    return {f};
  }
};

// Where the threads start to beat serial along a sweep: one finding per sweep, on its
// largest size (the point the overview shows).
class threads_crossover final : public rule {
public:
  threads_crossover()
      : rule({.name = "threads-crossover",
              .threshold = "a threads variant's sweep crosses serial inside its swept sizes (the crossover of the "
                           "total time, with its interval from the cost fits); reported on the sweep's largest size",
              .summary = "the size above which the multithreaded variant beats serial"}) {}
  std::string judges() const override {
    return "threads-kind variants swept over a size, against the serial baseline of their own language (as "
           "poor-scaling)";
  }

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    const point_result& p = *ctx.point;
    if (p.kind != variant_kind::threads) return {};
    const crossover* c = serial_crossover(ctx);
    if (!c || !largest_of_sweep(ctx, *c)) return {};
    const std::string where = crossover_text(*c);
    finding f = start(ctx,
                      fmt::format("threads beat {} {} {} ≈ {}", base_words(ctx), c->faster_above ? "above" : "below",
                                  c->size_param, text::number(*c->size)),
                      1);
    f.compared_with = ctx.serial->id;
    add(f, "crossover", where);
    add(f, "beats", c->baseline);
    if (!c->method.empty()) add(f, "method", c->method);
    if (!c->note.empty()) add(f, "note", c->note);
    f.explanation = c->faster_above
                        ? fmt::format("Below {} ≈ {} {} is faster: the work is too small to pay "
                                      "for starting, waking and joining the threads; above it the threads win.",
                                      c->size_param, text::number(*c->size),
                                      is_python(p) ? c->baseline : "the plain loop (" + c->baseline + ")")
                        : fmt::format("The threads win only below {} ≈ {}; above it {} is faster.", c->size_param,
                                      text::number(*c->size), c->baseline);
    f.next_experiment = fmt::format("Choose by size: {} on one side of {}, threads on the other; a persistent "
                                    "worker pool (no start-up per call) moves the crossover down.",
                                    c->baseline, where);
    return {f};
  }

private:
  // The point is at the largest size its series swept (from the series' cost fit).
  static bool largest_of_sweep(const rule_context& ctx, const crossover& c) {
    for (const auto* fit : ctx.fits) {
      if (fit->size_param != c.size_param || fit->basis != "total") continue;
      const double size = c.size_param.find('*') != std::string::npos
                              ? ctx.point->size_product()
                              : std::strtod(ctx.point->params.at(c.size_param).c_str(), nullptr);
      return size >= fit->size_max * (1 - 1e-9);
    }
    return false;
  }
};

// A CPU variant's compute phase against the host roof that bounds it: the memory roof
// (measured by calibration: one thread's for serial, all cores' for threads) or the
// cores' share of the FP32/FP64 peak (an estimate from cpuinfo).
class cpu_roof final : public rule {
public:
  static constexpr double target = 60; // % of the roof a tuned loop reaches
  cpu_roof()
      : rule({.name = "cpu-roof",
              .threshold = "a serial or threads variant with declared work placed on the host roofline, judged on the "
                           "interval of its median (3 or more repetitions): at the roof when the low end reaches 60% "
                           "of it, below when the high end stays under 60% (gain projected to 60% only against a "
                           "measured memory roof with the working set past twice the last-level cache), from cache "
                           "when the working set fits in it, else undecided",
              .summary = "how close a CPU variant runs to the host's memory or compute roof"}) {}
  std::string judges() const override {
    return "serial- and threads-kind variants of either language, each against the host's roofs (no other variant)";
  }

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    const point_result& p = *ctx.point;
    if (p.kind != variant_kind::serial && p.kind != variant_kind::threads) return {};
    const roofline_point* r = nullptr;
    for (const auto* row : ctx.roofline)
      if (row->processor == "cpu" && row->kernel.empty() && row->level.empty()) r = row;
    const summary_stats& w = p.wall;
    if (!r || r->bound == "unknown" || !(r->time_ns > 0) || w.count < 3 || !(w.ci_low > 0) || !(w.median > 0))
      return {};
    // The placement's interval: its rate scales as 1 / time, so with the median's interval.
    const double pct = r->percent_of_bound, low = pct * w.median / w.ci_high, high = pct * w.median / w.ci_low;
    const bool memory = r->bound == "memory";
    const auto llc = property_number(ctx.device, keys::prop_llc_bytes);
    const double bytes = p.work.bytes();
    // Fits: the whole working set is no larger than the last-level cache (between one and two
    // caches neither "from cache" nor a DRAM gain is claimed).
    const bool in_cache = memory && llc && *llc > 0 && bytes <= *llc;
    finding f = start(ctx, "", 1);
    add_evidence(f, *r, low, high, in_cache ? &*llc : nullptr, bytes);
    const std::string roof = memory ? "memory roof" : "compute peak";
    const std::string figure = text::percent(pct / 100);
    if (memory && (in_cache || r->above_roof == "cache")) {
      f.title = fmt::format("{} of the memory roof, from cache", figure);
      f.explanation = fmt::format(
          "The working set, {}, fits in the {} last-level cache: DRAM bandwidth does not limit this loop at this "
          "size; the cache and the loop's instructions do.",
          text::bytes(bytes), text::bytes(llc.value_or(0)));
      f.next_experiment = "Sweep the size past twice the last-level cache to see the loop against the memory roof; "
                          "at this size, vectorize it (-O3 -march=native; -fopt-info-vec-missed says why not).";
    } else if (memory && r->above_roof == "calibration") {
      f.title = fmt::format("{} of the memory roof: above it", figure);
      f.explanation = "The loop moves more bytes per second than the calibrated memory roof allows: the roof was "
                      "measured low (a busy machine) or the declared bytes overcount.";
      f.next_experiment = "Recalibrate on a quiet machine (`speedlab calibrate --full`) and rerun.";
    } else if (low >= target) {
      f.title = fmt::format("{} of the {}: at the roof", figure, roof);
      f.explanation = memory ? memory_bound_words(p, *r, ctx.device)
                             : "The loop runs near the cores' arithmetic peak: only fewer operations per result "
                               "(a cheaper algorithm, lower precision) make it faster.";
      f.next_experiment = memory ? "Move fewer bytes: fuse passes over the data, use smaller types, keep blocks in "
                                   "cache; compare with the GPU variant, whose memory is several times faster."
                                 : "Count operations per result and cut them; compare with the GPU variant.";
    } else if (high < target) {
      below_roof(ctx, f, *r, high, figure, roof, bytes, llc);
    } else {
      f.title = fmt::format("{} of the {}, undecided", figure, roof);
      f.explanation = fmt::format("The interval, {:.1f}%–{:.1f}% of the roof, straddles the 60% a tuned loop "
                                  "reaches: the data cannot tell whether this loop is at its roof.",
                                  low, high);
      f.next_experiment = "Rerun with more repetitions (a longer --max-time) on a quieter machine.";
    }
    return {f};
  }

private:
  static void add_evidence(finding& f, const roofline_point& r, double low, double high, const double* llc,
                           double bytes) {
    add(f, "bound", r.bound + fmt::format(" (intensity {:.3g} flop/byte)", r.intensity));
    add(f, "achieved", r.bound == "memory" ? text::gbps(r.achieved_gbps) : text::gflops(r.achieved_gflops));
    add(f, "roof", fmt::format("{} ({}{})", r.bound == "memory" ? text::gbps(r.roof_gbps) : text::gflops(r.roof_gflops),
                               r.roof_measured ? "measured" : "estimate",
                               r.roof_source.empty() ? "" : ", " + r.roof_source));
    add(f, "percent of roof", fmt::format("{:.1f}% [{:.1f}%, {:.1f}%] (95% interval of the median)",
                                          r.percent_of_bound, low, high));
    add(f, "compute phase per repetition", text::time(r.time_ns));
    if (llc) add(f, "working set", text::bytes(bytes) + " (the last-level cache: " + text::bytes(*llc) + ")");
    if (!r.note.empty()) add(f, "placement", r.note);
  }

  static std::string memory_bound_words(const point_result& p, const roofline_point& r, const device_model& d) {
    std::string s = fmt::format("The loop moves {} of data, at least 60% of the {} roof: memory, not instructions, "
                                "limits it.",
                                text::gbps(r.achieved_gbps), text::gbps(r.roof_gbps));
    const ceiling* all = find_ceiling(d.host, keys::memory_bw);
    if (p.kind == variant_kind::serial && all && all->value > r.roof_gbps * 1.2)
      s += fmt::format(" All cores together reach {}: the threads variant can move more.", text::gbps(all->value));
    else
      s += " More threads cannot raise it.";
    return s;
  }

  static void below_roof(const rule_context& ctx, finding& f, const roofline_point& r, double high,
                         const std::string& figure, const std::string& roof, double bytes,
                         std::optional<double> llc) {
    const bool memory = r.bound == "memory";
    f.title = fmt::format("{} of the {}: far below it", figure, roof);
    if (memory) {
      f.explanation = "The loop keeps memory less than 60% busy: it waits on latency (dependent or strided loads) "
                      "or on its instructions (scalar code), not on bandwidth.";
      f.next_experiment = "Vectorize the loop (-O3 -march=native; -fopt-info-vec-missed says why not), access memory "
                          "contiguously, and use more threads where the serial variant runs.";
    } else {
      f.explanation = fmt::format("The loop is compute-bound but reaches under 60% of the {} peak, which assumes "
                                  "every SIMD lane and both FMA units busy: scalar or branchy code reaches a small "
                                  "fraction of it.",
                                  ctx.point->kind == variant_kind::serial ? "one core's" : "cores'");
      f.next_experiment = "Vectorize (-O3 -march=native, -fopt-info-vec-missed), replace libm calls by vectorizable "
                          "ones, and run on every core (the threads variant).";
    }
    // A gain only against a measured memory roof out of cache: estimated peaks are too rough.
    if (memory && r.roof_measured && !(llc && bytes < 2 * *llc)) {
      const double W = ctx.wall_ns();
      const double saved = r.time_ns * (1 - std::max(high, 1e-9) / target);
      f.estimated_gain = detail::gain_from_saving(W, saved);
      f.severity = severity_for_gain(f.estimated_gain);
    }
  }
};

} // namespace

void add_host_rules(rule_map& m) {
  detail::put<poor_scaling, problem_too_small, noisy_measurement, dropped_records, parallel_efficiency,
              threads_crossover, cpu_roof, too_few_repetitions>(m);
}

} // namespace speedlab::analysis
