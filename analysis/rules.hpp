// Rules turn measurements into findings. Each rule is a small class with a name, its
// threshold in words and evaluate(context); the registry holds one instance of each,
// keyed by name. A rule sees one point at a time with everything analysis knows about it
// (its trace summary, baselines at the same parameters, speedups, roofline placements, a
// recorded process's activity when the point is one, and a job's cross-rank analysis when
// the rules run on its ranks). Suite points, profiled processes and jobs build one
// rule_context and call run_rules; a rule that needs data one path lacks returns nothing.
//
// Adding a rule: derive from rule (a constructor giving its name, threshold and summary;
// override do_evaluate, and scope() for a job rule) in one of the rules_*.cpp files and add it to that file's
// add_*_rules() function (explicit registration: static registration objects in a static library would be dropped by
// the linker).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analysis/activity.hpp"
#include "analysis/analysis.hpp"
#include "analysis/analyze.hpp"
#include "analysis/trace_summary.hpp"
#include "model/results.hpp"

namespace speedlab::analysis {

struct rank_analysis;
struct rank_summary;

// What a rule judges: one point (a suite point or a profiled process: rule_context::point),
// or a job of several ranks (rule_context::ranks: the job as a whole, then each rank).
enum class rule_scope { point, job };

// Everything analysis knows about one subject, by name: points, processes and jobs build this
// one type (designated initializers, the rest left empty) and hand it to run_rules.
//
//   run_rules({.point = &p, .device = device, .options = options, .subject = p.id, .trace = ts},
//             result.findings, result.notes);
// A point's other_busy_cores is read on its own only over at least this many seconds of
// rounds: /proc/stat counts 10 ms ticks, so a shorter span reads too coarsely (the busy-machine
// rules and compare's load discount both use it).
inline constexpr double other_busy_min_span_s = 0.2;

struct rule_context {
  const point_result* point = nullptr; // the point judged (null for a job: there is no point)
  const device_model& device;
  const analysis_options& options;
  std::string subject = {};                    // what a failure note names: a point id, a process, "the ranks"
  const trace_summary* trace = nullptr;        // null: the point has no device trace
  // Baselines at the same parameters, of the point's own language (comparisons.hpp): a C++
  // variant's are C++, a Python variant's the lesson's Python baseline.
  const point_result* serial = nullptr;        // serial baseline
  const point_result* threads = nullptr;       // threads baseline
  const speedup* vs_serial = nullptr;          // this point over the serial baseline
  const speedup* vs_threads = nullptr;
  std::vector<const roofline_point*> roofline = {}; // this point's placements: phase first, then kernels
  // Crossovers of this point's sweep (its workload, variant and other parameters) against
  // a baseline: where the variant starts (or stops) beating serial along a size axis.
  std::vector<const crossover*> crossovers = {};
  std::vector<const cost_fit*> fits = {}; // the cost fits of the same series (their swept range)
  // A recorded process's whole lifetime (activity.hpp): start-up, idle gaps, allocations,
  // pageable copies, the measured launch cost. Null where the path has none (a suite point's
  // repetitions); the rules that need it return nothing then.
  const activity_summary* activity = nullptr;
  // A job of several ranks (rank_analysis.hpp), for the job rules (rules_ranks.cpp):
  // analyze_ranks runs the registry on the job as a whole (rank null), then on each of its
  // ranks (rank set). Null on every other path.
  const rank_analysis* ranks = nullptr;
  const rank_summary* rank = nullptr;
  // Cores other programs kept busy over the whole run (every point's other_busy_cores pooled
  // by its span: /proc/stat's coarse ticks even out); -1 unknown. For a point too short to
  // read on its own.
  double run_other_busy_cores = -1;

  rule_scope scope() const { return ranks ? rule_scope::job : rule_scope::point; }
  // Per-repetition wall time: the split's when present, else the wall median.
  double wall_ns() const;
  // The placement of one kernel (nullptr when none).
  const roofline_point* kernel_roofline(const std::string& kernel) const;
};

// A rule, in nvbench's manner: evaluate() is the one public entry and does what every rule
// shares (only contexts of the rule's scope reach it); do_evaluate() is the rule's own hook.
class rule {
public:
  // What a rule says of itself: constant text, given once by its constructor.
  struct about {
    std::string name;
    std::string threshold; // in words, as the docs and findings show it
    std::string summary;   // what the rule looks for, one line
  };
  explicit rule(about a) : m_about(std::move(a)) {}
  virtual ~rule() = default;
  const std::string& name() const { return m_about.name; }
  const std::string& threshold() const { return m_about.threshold; }
  const std::string& summary() const { return m_about.summary; }
  virtual rule_scope scope() const { return rule_scope::point; }
  // Which points it judges, and against which baselines, in words (docs/analysis.md, "Which
  // variants each rule judges"). A rule that compares variants compares like with like: a
  // point with baselines of its own language (rule_context::serial, threads).
  virtual std::string judges() const { return "every valid point it has the data for, on that point's own figures"; }
  // Nothing when the context is not of the rule's scope (a point rule on a job, a job rule
  // on a point), else the hook's findings.
  std::vector<finding> evaluate(const rule_context& ctx) const;

protected:
  // Called only with a context of scope(): a point rule's ctx.point is set.
  virtual std::vector<finding> do_evaluate(const rule_context& ctx) const = 0;
  // A finding with the rule's name, threshold and the point's identity filled in.
  finding start(const rule_context& ctx, std::string title, double gain) const;

private:
  about m_about;
};

// The one rule loop: every rule of the registry that ctx.options does not disable, in name
// order, on ctx; their findings are appended to `findings`, and a rule that throws becomes a
// note naming it and ctx.subject.
void run_rules(const rule_context& ctx, std::vector<finding>& findings, std::vector<std::string>& notes);

using rule_map = std::map<std::string, std::unique_ptr<rule>>;

// Every rule, keyed by name: the built-in ones (the add_*_rules below) and those registered.
const rule_map& rule_registry();
// A rule beside the built-in list (a test's, or one kept outside analysis/), under its
// name(): the same as a line in an add_*_rules; false when the name is taken. Call it before
// any analysis runs (registration is not synchronized).
bool register_rule(std::unique_ptr<rule> r);
const rule* find_rule(const std::string& name);
std::vector<std::string> rule_names();

// A finding of `rule` about `point`: its identity, the threshold, the gain (<= 0 reads as 1)
// and the severity that follows from it. Every rule starts its findings here.
finding start_finding(const std::string& rule, const std::string& threshold, const point_result& point,
                      std::string title, double gain);

// The point as the rules judge it: with an activity, its steady state's split (start-up is
// the start-up rule's); the point shown in the reports keeps the whole lifetime.
point_result steady_point(const point_result& point, const activity_summary* activity);

// Severity from the estimated gain: >= 2x critical, >= 1.1x warning, else info.
severity severity_for_gain(double gain);

// Filled by the rule files.
void add_transfer_rules(rule_map& m);
void add_gpu_rules(rule_map& m);
void add_host_rules(rule_map& m);
void add_counter_rules(rule_map& m); // rules_counters.cpp: from hardware counters
void add_activity_rules(rule_map& m); // rules_activity.cpp: from a process's activity (activity.hpp)
void add_rank_rules(rule_map& m);     // rules_ranks.cpp: across the ranks of a job (rank_analysis.hpp)
void add_python_rules(rule_map& m);   // rules_python.cpp: the lines of a Python program (python_lines.hpp)

} // namespace speedlab::analysis
