// What a run was measured under, and what in it weakens a verdict: a plugin built without
// optimization (every speedup over it is inflated), and, between two runs, any setting that
// differs (host, CPU, GPU, driver, threads, the suite's measurement settings, speedlab
// version, a plugin's build), named with the points it affects. `speedlab compare` lists
// these at the top of compare.md/html/json and on stderr; reports and the console warn
// about unoptimized plugins.
#pragma once

#include <string>
#include <vector>

#include "model/results.hpp"

namespace speedlab::analysis {

// "plugin of workload 'vector' (libspeedlab-vector.so) was built without optimization
// (not optimized, assertions on): timings may be affected ...". `where` may be empty.
std::string unoptimized_plugin_warning(const std::string& workload, const std::string& where,
                                       const plugin_build& build);

// One warning per workload whose C++ points were measured from an unoptimized plugin, in
// workload order.
std::vector<std::string> unoptimized_plugin_warnings(const std::vector<point_result>& points);

// Every setting that differs between BASE and NEW, each with the compared points it affects
// ("threads: BASE 1, NEW 2; affects the 4 threads points (vector/threads/n=1024, ...)").
// `compared` are the ids present on both sides; a setting one run did not record (written by
// an older speedlab) is said once, not guessed.
std::vector<std::string> settings_differences(const run_info& base_run, const std::vector<point_result>& base,
                                              const run_info& new_run, const std::vector<point_result>& next);

} // namespace speedlab::analysis
