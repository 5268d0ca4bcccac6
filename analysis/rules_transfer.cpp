// Rules about host<->device copies: transfer-bound, pageable-memory, copies-not-overlapped.
#include <algorithm>

#include "analysis/rule_support.hpp"
#include "analysis/rules.hpp"
#include "analysis/what_if.hpp"

namespace speedlab::analysis {

namespace {

using detail::add;
using detail::gain_from_saving;

class transfer_bound final : public rule {
public:
  static constexpr double min_share = 0.5;
  transfer_bound()
      : rule({.name = "transfer-bound",
              .threshold = "host<->device copies take at least 50% of a repetition's wall time",
              .summary = "copies dominate the run: the GPU mostly waits for data"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    const point_result& p = *ctx.point;
    double W = ctx.wall_ns(), H = 0, D = 0, K = 0;
    std::string source;
    if (p.split_median) {
      H = p.split_median->h2d;
      D = p.split_median->d2h;
      K = p.split_median->kernel;
      source = "median time split";
    } else if (p.kind == variant_kind::cuda) {
      H = detail::phase_ns(p, "transfer_in");
      D = detail::phase_ns(p, "transfer_out");
      K = detail::phase_ns(p, "compute");
      source = "phase timers (transfer_in, transfer_out)";
    }
    const double T = H + D;
    if (!(W > 0) || !(T > 0) || T / W < min_share) return {};
    const double gain = gain_from_saving(W, T);
    finding f = start(ctx, fmt::format("copies take {} of the run", text::percent(T / W)), gain);
    add(f, "wall per repetition", text::time(W));
    add(f, "host to device", text::time(H));
    add(f, "device to host", text::time(D));
    add(f, "copy share", text::percent(T / W) + " (" + source + ")");
    add(f, "kernels / compute", text::time(K));
    const double bytes = p.work.host_to_device_bytes + p.work.device_to_host_bytes;
    if (bytes > 0) add(f, "bytes copied per repetition", text::bytes(bytes));
    if (ctx.trace && ctx.trace->h2d.ns > 0) {
      std::string v = text::gbps(ctx.trace->h2d.gbps());
      if (const ceiling* c = find_ceiling(ctx.device.gpu, keys::h2d_pinned_bw)) v += " vs pinned ceiling " + detail::ceiling_text(*c);
      add(f, "achieved H2D bandwidth", v);
    }
    if (ctx.trace && ctx.trace->d2h.ns > 0) {
      std::string v = text::gbps(ctx.trace->d2h.gbps());
      if (const ceiling* c = find_ceiling(ctx.device.gpu, keys::d2h_pinned_bw)) v += " vs pinned ceiling " + detail::ceiling_text(*c);
      add(f, "achieved D2H bandwidth", v);
    }
    // The split also counts the host side of synchronous copy calls (pageable staging); when
    // that is a real part, the calls' own bandwidth tells more than the DMA's.
    if (ctx.trace && p.split_median) {
      const trace_summary& t = *ctx.trace;
      const auto effective = [&](const copy_stats& c, double split_ns, const char* what) {
        const double dma = t.per_rep(c.ns);
        if (split_ns > 1.1 * dma && split_ns > 0 && c.bytes > 0)
          add(f, what, fmt::format("{} ({} of the {} were the GPU copying)", text::gbps(t.per_rep(c.bytes) / split_ns),
                                   text::time(dma), text::time(split_ns)));
      };
      effective(t.h2d, H, "H2D bandwidth of the copy calls");
      effective(t.d2h, D, "D2H bandwidth of the copy calls");
    }
    const double kernel_limit = K > 0 ? W / std::max(W - K, 1.0) : 1;
    f.explanation = fmt::format(
        "Copying data between host and device takes {} of each repetition; the kernels take {}. "
        "Even infinitely fast kernels would make this run at most {} faster, while not copying at all "
        "would make it up to {} faster. A GPU pays off only when it does enough work per byte moved "
        "over the bus.",
        text::percent(T / W), text::time(K), text::factor(kernel_limit), text::factor(gain));
    f.next_experiment =
        "Keep the arrays on the device between calls (allocate and copy once, reuse device buffers) and "
        "compare with the device-resident variant; where copies must stay, use pinned memory and overlap "
        "them with kernels.";
    return {f};
  }
};

class pageable_memory final : public rule {
public:
  static constexpr double min_share = 0.05;
  pageable_memory()
      : rule({.name = "pageable-memory",
              .threshold = "copies from or to pageable host memory take at least 5% of a repetition's wall time and "
                           "pinned memory is faster",
              .summary = "copies use pageable host memory: slower and never asynchronous"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    if (!ctx.trace) return {};
    const trace_summary& t = *ctx.trace;
    const double W = ctx.wall_ns();
    time_split s;
    if (ctx.point->split_median)
      s = *ctx.point->split_median;
    else {
      s.h2d = t.per_rep(t.h2d.ns);
      s.d2h = t.per_rep(t.d2h.ns);
      s.wall_ns = W;
    }
    // The median repetition's copy time, times the pageable fraction of all copy time: a
    // mean over repetitions against a median wall could exceed 100% on skewed runs.
    const double copy_ns = t.h2d.ns + t.d2h.ns;
    const double pageable_fraction = copy_ns > 0 ? (t.h2d.pageable_ns + t.d2h.pageable_ns) / copy_ns : 0;
    const double pageable = (s.h2d + s.d2h) * pageable_fraction;
    if (!(W > 0) || pageable / W < min_share) return {};
    const pinned_projection pin = project_pinned(s, t, ctx.device);
    const double gain = pin.possible ? gain_from_saving(W, pin.saved_ns) : 1;
    if (pin.possible && gain < 1.02) return {}; // pinned memory would not help measurably here
    finding f = start(ctx, fmt::format("{} of the run is spent in pageable-memory copies", text::percent(pageable / W)), gain);
    add(f, "pageable copies per repetition",
        fmt::format("{} H2D, {} D2H", text::time(t.per_rep(t.h2d.pageable_ns)), text::time(t.per_rep(t.d2h.pageable_ns))));
    if (pageable > 1.1 * t.per_rep(t.h2d.pageable_ns + t.d2h.pageable_ns))
      add(f, "pageable copy calls per repetition", text::time(pageable) + " (time split: the staging through a bounce buffer included)");
    add(f, "pageable copy count", std::to_string(t.h2d.pageable_count + t.d2h.pageable_count));
    if (t.h2d.pageable_ns > 0) add(f, "achieved pageable H2D", text::gbps(t.h2d.pageable_bytes / t.h2d.pageable_ns));
    if (t.d2h.pageable_ns > 0) add(f, "achieved pageable D2H", text::gbps(t.d2h.pageable_bytes / t.d2h.pageable_ns));
    for (const char* k : {keys::h2d_pinned_bw, keys::h2d_pageable_bw, keys::d2h_pinned_bw, keys::d2h_pageable_bw})
      if (const ceiling* c = find_ceiling(ctx.device.gpu, k)) add(f, k, detail::ceiling_text(*c));
    if (pin.possible) {
      add(f, "projection", text::time(W) + " wall - " + pin.arithmetic);
      if (!pin.measured) add(f, "caution", "pinned/pageable bandwidths are estimates: run `speedlab calibrate`");
      f.explanation = fmt::format(
          "Copies from pageable (ordinary malloc/new) memory go through a staging buffer: the driver first "
          "copies into pinned memory, then DMAs from there. They take {} of each repetition; with pinned "
          "memory at the measured bandwidths the run would be up to {} faster.",
          text::percent(pageable / W), text::factor(gain));
    } else {
      add(f, "caution", "pinned and pageable bandwidths unknown: run `speedlab calibrate` for the projected gain");
      f.explanation = fmt::format(
          "Copies from pageable (ordinary malloc/new) memory go through a staging buffer and cannot run "
          "asynchronously. They take {} of each repetition; without calibrated bandwidths the gain of pinned "
          "memory cannot be projected.",
          text::percent(pageable / W));
    }
    f.next_experiment =
        "Allocate the host buffers with cudaMallocHost (or register them with cudaHostRegister) and rerun; "
        "compare the H2D/D2H times with the pageable run.";
    return {f};
  }
};

class copies_not_overlapped final : public rule {
public:
  static constexpr double min_share = 0.10;
  static constexpr double max_overlap = 0.10;
  copies_not_overlapped()
      : rule({.name = "copies-not-overlapped",
              .threshold = "copies and kernels each take at least 10% of the wall time, less than 10% of the copy time "
                           "overlaps kernels, and overlapping would gain at least 5%",
              .summary = "synchronous copies wait for kernels and kernels wait for copies"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    const point_result& p = *ctx.point;
    if (!p.split_median) return {};
    const time_split& s = *p.split_median;
    const double W = s.wall_ns, C = s.h2d + s.d2h, K = s.kernel;
    if (!(W > 0) || C / W < min_share || K / W < min_share) return {};
    double overlap = 0;
    if (ctx.trace) {
      const double copy_ns = ctx.trace->h2d.ns + ctx.trace->d2h.ns;
      overlap = copy_ns > 0 ? ctx.trace->copy_kernel_overlap_ns / copy_ns : 0;
      if (overlap >= max_overlap) return {};
    }
    const double gain = gain_from_saving(W, std::min(C, K));
    if (gain < 1.05) return {};
    finding f = start(ctx, "copies and kernels run one after the other", gain);
    add(f, "copies per repetition", text::time(C) + " (" + text::percent(C / W) + ")");
    add(f, "kernels per repetition", text::time(K) + " (" + text::percent(K / W) + ")");
    if (ctx.trace) {
      const auto& t = *ctx.trace;
      add(f, "copy time overlapping kernels", text::percent(overlap));
      add(f, "asynchronous copies", fmt::format("{} of {}", t.h2d.async_count + t.d2h.async_count, t.h2d.count + t.d2h.count));
    } else {
      add(f, "overlap", "unknown (no trace); the split counts only non-overlapped copy time");
    }
    add(f, "projection", fmt::format("{} / ({} - min({}, {})) = {}", text::time(W), text::time(W), text::time(C),
                                     text::time(K), text::factor(gain)));
    f.explanation = fmt::format(
        "Each repetition copies ({}) and computes ({}) in sequence, so the copy engines idle while kernels run "
        "and the SMs idle during copies. Perfect overlap hides the shorter of the two: up to {} faster.",
        text::time(C), text::time(K), text::factor(gain));
    f.next_experiment =
        "Split the data into chunks and pipeline them: cudaMemcpyAsync from pinned memory on two or more "
        "streams, so chunk i+1 copies while chunk i computes; check the overlap on the timeline.";
    return {f};
  }
};

} // namespace

void add_transfer_rules(rule_map& m) { detail::put<transfer_bound, pageable_memory, copies_not_overlapped>(m); }

} // namespace speedlab::analysis
