// Rules that compare variants or judge the measurement: poor-scaling, problem-too-small,
// noisy-measurement, dropped-records.
#include <algorithm>

#include "analysis/rule_support.hpp"
#include "analysis/rules.hpp"

namespace speedlab::analysis {

namespace {

using detail::add;

std::string speedup_text(const speedup& s) {
  return fmt::format("{} {} ({}, {})", text::speed(s.ratio), format::speed_interval(s.ci_low, s.ci_high), s.verdict,
                     s.method);
}

class poor_scaling final : public rule {
public:
  static constexpr double min_efficiency = 0.5;
  static constexpr double target_efficiency = 0.8;
  static constexpr double memory_bound_share = 0.7;
  static constexpr double startup_scale_ns = 100e3; // below this much serial work, thread start-up can explain a loss
  std::string name() const override { return "poor-scaling"; }
  std::string threshold() const override {
    return "parallel efficiency = serial time / (threads time x threads) below 50%, judged by the upper end of "
           "its interval (gain projected to 80% efficiency; when threads are slower than serial, to running "
           "serially)";
  }
  std::string summary() const override { return "the multithreaded variant gains far less than its thread count"; }

  std::vector<finding> evaluate(const rule_context& ctx) const override {
    const point_result& p = ctx.point;
    if (p.kind != "threads" || p.threads < 2 || !ctx.serial) return {};
    const double S = ctx.serial->wall.median, T = p.wall.median, n = p.threads;
    if (!(S > 0) || !(T > 0)) return {};
    const double speedup = S / T, eff = speedup / n;
    // Judge by the interval, not the medians: the best efficiency the data allow must be low.
    const double eff_high = ctx.vs_serial && ctx.vs_serial->method != "none" ? ctx.vs_serial->ci_high / n : eff;
    if (eff_high >= min_efficiency) return {};
    const ceiling* cores = find_ceiling(ctx.device.host, keys::cores);
    finding f = start(ctx, "", 1);
    add(f, "serial median", text::time(S));
    add(f, "threads median", text::time(T));
    add(f, "speedup over serial", ctx.vs_serial ? speedup_text(*ctx.vs_serial) : text::speed(speedup));
    add(f, "parallel efficiency", fmt::format("{} / ({} x {:.0f}) = {}", text::time(S), text::time(T), n, text::percent(eff)));
    if (p.cpu_utilization > 0) add(f, "CPU utilization (busy cores)", fmt::format("{:.2f} of {:.0f} threads", p.cpu_utilization, n));
    if (cores) add(f, "host cores", detail::ceiling_text(*cores));

    if (speedup < 1) {
      // Slower than the plain loop: the fix at this size is not to use threads.
      f.estimated_gain = text::finite(1 / speedup);
      f.severity = severity_for_gain(f.estimated_gain);
      f.title = fmt::format("{:.0f} threads are {} than serial", n, text::speed(speedup));
      if (S < startup_scale_ns)
        f.explanation = fmt::format(
            "At this size the threaded variant is slower than the plain loop: starting, waking and joining {:.0f} "
            "threads costs more than the {} of work they share.",
            n, text::time(S));
      else
        f.explanation = fmt::format(
            "The threaded variant is slower than the plain loop although there is {} of work to share, more than "
            "thread start-up costs. The threads waited{}: for cores taken by other programs, for each other "
            "(uneven chunks), or for memory.",
            text::time(S),
            p.cpu_utilization > 0 ? fmt::format(" (on average {:.2f} of {:.0f} were busy)", p.cpu_utilization, n)
                                  : std::string());
      f.next_experiment = "Sweep the size to find where threads start to pay off (the crossover threads vs serial in "
                          "the report) and run smaller inputs serially.";
      return {f};
    }

    // Karp-Flatt: the serial fraction that would explain this speedup on n threads.
    const double karp_flatt = (1 / speedup - 1 / n) / (1 - 1 / n);
    add(f, "Karp-Flatt serial fraction", fmt::format("{:.3f}", karp_flatt));
    const ceiling* bw = find_ceiling(ctx.device.host, keys::memory_bw);
    double compute_ns = detail::phase_ns(p, "compute");
    if (!(compute_ns > 0)) compute_ns = T;
    const double bytes = p.work.bytes();
    const double achieved = bytes > 0 ? bytes / compute_ns : 0;
    // Data that fits in the last-level cache is not limited by DRAM bandwidth.
    const auto llc = property_number(ctx.device, keys::prop_llc_bytes);
    const bool in_cache = llc && bytes < 2 * *llc;
    const bool memory_bound = bw && !in_cache && achieved >= memory_bound_share * bw->value;
    const bool oversubscribed = cores && n > cores->value;
    if (achieved > 0) add(f, "achieved memory bandwidth", text::gbps(achieved) + (bw ? " of " + detail::ceiling_text(*bw) : ""));
    if (in_cache) add(f, "working set", text::bytes(bytes) + " (fits in the " + text::bytes(*llc) + " last-level cache)");
    f.estimated_gain = memory_bound ? 1.0 : text::finite(target_efficiency / eff);
    f.severity = severity_for_gain(f.estimated_gain);
    f.title = fmt::format("{:.0f} threads are {} than serial ({} efficiency)", n, text::speed(speedup), text::percent(eff));
    if (memory_bound) {
      f.explanation = fmt::format(
          "The threads already move {} of data per second, {} of the host's memory bandwidth: memory, not cores, "
          "limits this loop, so more threads cannot make it faster.",
          text::gbps(achieved), text::percent(achieved / bw->value));
      f.next_experiment = "Raise arithmetic intensity (fuse passes over the data, use smaller types) rather than "
                          "threads; compare with the GPU variant, whose memory is several times faster.";
    } else if (oversubscribed) {
      f.explanation = fmt::format("{:.0f} threads share {:.0f} cores: they take turns instead of running in parallel.",
                                  n, cores->value);
      f.next_experiment = "Run with threads <= cores and sweep 1, 2, 4, ... to find where scaling stops.";
    } else if (p.cpu_utilization > 0 && p.cpu_utilization < 0.5 * n) {
      f.explanation = fmt::format(
          "Only {:.1f} of {:.0f} threads are busy on average: workers wait for each other (uneven chunks, a serial "
          "section, or thread start-up costs comparable to the work at this size). A serial fraction of {:.2f} "
          "explains this speedup (Amdahl).",
          p.cpu_utilization, n, karp_flatt);
      f.next_experiment = "Sweep the size: if efficiency rises with size, start-up costs dominate; for uneven work "
                          "use dynamic scheduling (smaller chunks handed out on demand).";
    } else {
      f.explanation = fmt::format(
          "The threads are busy but gain little: a serial fraction of {:.2f} (Karp-Flatt) or contention "
          "(false sharing, atomics, a shared lock) would explain this speedup.",
          karp_flatt);
      f.next_experiment = "Give each thread private partial results merged at the end, pad per-thread data to "
                          "cache lines, and sweep the thread count to see where scaling stops.";
    }
    return {f};
  }
};

class problem_too_small final : public rule {
public:
  std::string name() const override { return "problem-too-small"; }
  std::string threshold() const override {
    return "the GPU variant is slower than the serial variant at the same parameters (speedup interval below 1)";
  }
  std::string summary() const override { return "at this size the GPU's fixed costs outweigh its speed"; }

  std::vector<finding> evaluate(const rule_context& ctx) const override {
    const point_result& p = ctx.point;
    if (p.kind != "cuda" || !ctx.serial || !ctx.vs_serial || ctx.vs_serial->verdict != "slower") return {};
    const speedup& s = *ctx.vs_serial;
    const double gain = s.ratio > 0 ? 1 / s.ratio : 1;
    finding f = start(ctx, fmt::format("the GPU variant is {} than serial at this size", text::speed(s.ratio > 0 ? s.ratio : 1)), gain);
    add(f, "GPU median", text::time(p.wall.median));
    add(f, "serial median", text::time(ctx.serial->wall.median));
    add(f, "speedup over serial", speedup_text(s));
    if (!p.size_param().empty()) add(f, "size", p.size_param() + " = " + p.params.at(p.size_param()));
    std::string where;
    if (p.split_median && p.split_median->wall_ns > 0) {
      const time_split& t = *p.split_median;
      add(f, "GPU time split", fmt::format("kernels {}, copies {}, sync {}, API {}, host {}", text::time(t.kernel),
                                           text::time(t.h2d + t.d2h), text::time(t.sync), text::time(t.api),
                                           text::time(t.host)));
      where = fmt::format(" Kernels are only {} of the GPU variant's time.", text::percent(t.kernel / t.wall_ns));
    }
    f.explanation = fmt::format(
        "At this size the plain serial loop is faster. A GPU run pays fixed costs (copies, launches, "
        "synchronization) that only enough work can amortize.{}",
        where);
    f.next_experiment = "Sweep the size upward and read the crossover size in the report; batch more work per "
                        "call or keep data on the device to lower the fixed cost.";
    return {f};
  }
};

class noisy_measurement final : public rule {
public:
  static constexpr double max_noise = 0.05;
  std::string name() const override { return "noisy-measurement"; }
  std::string threshold() const override {
    return "the 95% interval of the median is wider than +-5% of the median (warning above +-20%)";
  }
  std::string summary() const override { return "the measurement is too noisy to compare small differences"; }

  std::vector<finding> evaluate(const rule_context& ctx) const override {
    const point_result& p = ctx.point;
    const double noise = p.wall.relative_noise();
    if (p.wall.count < 3 || noise <= max_noise) return {};
    finding f = start(ctx, fmt::format("median known only to +-{}", text::percent(noise)), 1);
    f.severity = noise > 0.2 ? "warning" : "info";
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

class dropped_records final : public rule {
public:
  std::string name() const override { return "dropped-records"; }
  std::string threshold() const override { return "the profiler dropped at least one record"; }
  std::string summary() const override { return "the trace is incomplete: GPU figures undercount"; }

  std::vector<finding> evaluate(const rule_context& ctx) const override {
    std::uint64_t dropped = ctx.point.dropped_records;
    if (ctx.trace) dropped = std::max(dropped, ctx.trace->dropped_records);
    if (dropped == 0) return {};
    finding f = start(ctx, fmt::format("the profiler dropped {} records", dropped), 1);
    f.severity = "warning";
    add(f, "dropped records", std::to_string(dropped));
    if (!ctx.point.profiler.empty()) add(f, "profiler", ctx.point.profiler);
    f.explanation = "The activity buffers filled faster than they were flushed; kernels or copies are missing from "
                    "the trace, so the time split and GPU rules undercount.";
    f.next_experiment = "Rerun with larger profiler buffers or fewer repetitions per point.";
    return {f};
  }
};

} // namespace

void add_host_rules(rule_map& m) {
  detail::put<poor_scaling>(m);
  detail::put<problem_too_small>(m);
  detail::put<noisy_measurement>(m);
  detail::put<dropped_records>(m);
}

} // namespace speedlab::analysis
