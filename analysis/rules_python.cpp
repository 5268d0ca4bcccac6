// Rules that read the lines of a Python program (python_lines.hpp, activity_summary::python):
// a finding names the line of the user's code to change.
//
//   python-line-sync   a line of the program keeps the host waiting on the GPU, call after call
#include <fmt/format.h>

#include "analysis/rule_support.hpp"
#include "analysis/rules.hpp"
#include "analysis/text.hpp"

namespace speedlab::analysis {

using detail::add;
using detail::gain_from_saving;
using detail::put;

namespace {

std::string where(const python_line& l) { return fmt::format("{}:{}", l.file, l.line); }

// python-line-sync's threshold: a share of the steady state blocked (start-up, imports and
// compilation, is the start-up rule's), a few synchronizations at
// least (one slow start-up read is not a pattern), the longest few lines each a finding.
constexpr double sync_min_share = 0.05;
constexpr std::size_t sync_min_count = 3;
constexpr std::size_t sync_max_lines = 3;

class python_line_sync final : public rule {
public:
  python_line_sync()
      : rule({.name = "python-line-sync",
              .threshold = "a line of the Python program blocks the host in at least 3 synchronizations (synchronize "
                           "calls, blocking copies such as .item() or cp.asnumpy) for at least 5% of the process's "
                           "steady state (from the first step, else the first kernel, to the end)",
              .summary = "a line of the Python program waits for the GPU, call after call"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    if (!ctx.activity || !ctx.activity->python) return {};
    const double life = ctx.activity->steady_wall_ns();
    if (!(life > 0)) return {};
    std::vector<const python_line*> lines;
    for (const auto& l : ctx.activity->python->lines)
      if (l.syncs >= sync_min_count && l.sync_ns / life >= sync_min_share) lines.push_back(&l);
    std::stable_sort(lines.begin(), lines.end(), [](auto* a, auto* b) { return a->sync_ns > b->sync_ns; });
    if (lines.size() > sync_max_lines) lines.resize(sync_max_lines);
    std::vector<finding> out;
    for (const python_line* l : lines) out.push_back(line_finding(ctx, *l, life));
    return out;
  }

private:
  finding line_finding(const rule_context& ctx, const python_line& l, double life) const {
    // Waiting is worth removing only where the GPU then idles: the host queues nothing while
    // it waits, so the steady state's GPU idle gaps bound what this line's waits can give.
    const double recoverable = std::min(l.sync_ns, ctx.activity->gaps.total_ns);
    const double gain = gain_from_saving(life, recoverable);
    finding f =
        start(ctx, fmt::format("{} blocks {} in {} synchronizations", where(l), text::time(l.sync_ns), l.syncs), gain);
    add(f, "line", fmt::format("{}  {}", where(l), l.text));
    if (!l.function.empty()) add(f, "function", l.function);
    add(f, "blocked",
        fmt::format("{} in {} synchronizations ({} each, {} of the steady state)", text::time(l.sync_ns), l.syncs,
                    text::time(l.sync_ns / static_cast<double>(l.syncs)), text::percent(l.sync_ns / life)));
    add(f, "GPU idle gaps in the steady state", text::time(ctx.activity->gaps.total_ns));
    if (l.inferred_calls > 0)
      add(f, "inferred", fmt::format("{} of its calls came from threads without Python frames", l.inferred_calls));
    add(f, "projection",
        fmt::format("at most the GPU's idle time comes back: {} / ({} - {}) = {}", text::time(life), text::time(life),
                    text::time(recoverable), text::factor(gain)));
    f.explanation = fmt::format(
        "Each time {} runs, the host stops until the GPU has finished everything queued before it: a "
        "synchronize call, or a copy back to the host (.item(), .cpu(), .tolist(), cp.asnumpy, print of a device "
        "value) that must wait for the result. While it waits it queues nothing, so the GPU starts the next work "
        "only after the host has run again.",
        where(l));
    f.next_experiment =
        "Keep the value on the device and read it back less often (every N steps, or once at the end: accumulate "
        "a loss in a device tensor), or make the copy asynchronous into pinned memory; profile again and compare "
        "this line's blocked time and the GPU idle gaps.";
    return f;
  }
};

} // namespace

void add_python_rules(rule_map& m) { put<python_line_sync>(m); }

} // namespace speedlab::analysis
