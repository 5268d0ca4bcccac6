#include "app/run/isolation.hpp"

#include <sys/wait.h>

#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/process/child_process.hpp"
#include "model/saved_records.hpp"

namespace speedlab::app {

point_result failed_point(const run_request& req, point_status status, std::string reason) {
  point_result r = new_point_result(req);
  r.status = status;
  r.reason = std::move(reason);
  return r;
}

namespace {
std::optional<point_result> run_one(const run_request& request, double timeout_s);
}

// The point in one child; then, when a backend needs it (profiler::own_process), its own-process
// pass in a second child, whose findings join the point's result. A failing pass is a note:
// the point's measurements are kept as they are.
std::optional<point_result> run_isolated(const run_request& request, double timeout_s) {
  std::optional<point_result> r = run_one(request, timeout_s);
  // Only a point that ran to the end (valid or not) gets the pass.
  if (!r || (r->status != point_status::ok && r->status != point_status::invalid) || !wants_own_process_pass(request))
    return r;
  run_request pass_request = request;
  pass_request.own_process_pass = true;
  if (std::optional<point_result> pass = run_one(pass_request, timeout_s)) merge_own_process_pass(*r, *pass, request);
  return r;
}

namespace {

std::optional<point_result> run_one(const run_request& request, double timeout_s) {
  const child_outcome out = run_in_child(
      [&request](const heartbeat_function& heartbeat) {
        run_request child = request;
        child.progress = heartbeat; // each phase renews the per-run timeout
        // --devices: this child sees only its point's GPU, as device 0 (CUDA is not yet
        // initialized here: the parent never initializes it).
        if (!request.visible_devices.empty()) ::setenv("CUDA_VISIBLE_DEVICES", request.visible_devices.c_str(), 1);
        point_result r;
        try {
          r = measure_point(child);
        } catch (...) {
          r = failed_point(request, point_status::failed, "the runner failed outside the plugin");
        }
        return nlohmann::json(r).dump();
      },
      timeout_s);

  if (out.interrupted_by && !out.result) return std::nullopt; // abandoned: nothing true to record
  if (!out.error.empty()) return failed_point(request, point_status::failed, out.error);
  const std::string& phase = out.last_heartbeat;
  if (out.timed_out)
    return failed_point(request, point_status::timeout,
                        fmt::format("timed out: no progress for {} s (during {}); the run was killed", timeout_s, phase));
  if (out.result) {
    try {
      return nlohmann::json::parse(*out.result).get<point_result>();
    } catch (const std::exception& e) {
      return failed_point(request, point_status::failed, std::string("unreadable result from the child: ") + json_problem(e));
    }
  }
  if (WIFSIGNALED(out.wait_status))
    return failed_point(request, point_status::crashed, fmt::format("crashed during {}: {}", phase, describe_end(out.wait_status)));
  return failed_point(request, point_status::crashed,
                      fmt::format("{} during {} without a result", describe_end(out.wait_status), phase));
}

} // namespace

paired_outcome run_pair_isolated(const run_request& a, const run_request& b, int first, double timeout_s) {
  const child_outcome out = run_in_child(
      [&](const heartbeat_function& heartbeat) {
        run_request ca = a, cb = b;
        ca.progress = cb.progress = heartbeat;
        std::array<point_result, 2> r;
        try {
          r = measure_point_pair(ca, cb, first);
        } catch (...) {
          r = {failed_point(a, point_status::failed, "the runner failed outside the plugin"),
               failed_point(b, point_status::failed, "the runner failed outside the plugin")};
        }
        return nlohmann::json::array({nlohmann::json(r[0]), nlohmann::json(r[1])}).dump();
      },
      timeout_s);
  paired_outcome o;
  if (out.interrupted_by && !out.result) {
    o.abandoned = true;
    return o;
  }
  if (!out.error.empty())
    o.failure = out.error;
  else if (out.timed_out)
    o.failure = fmt::format("timed out: no progress for {} s (during {})", timeout_s, out.last_heartbeat);
  else if (!out.result)
    o.failure = fmt::format("{} during {} without a result", describe_end(out.wait_status), out.last_heartbeat);
  else {
    try {
      const auto j = nlohmann::json::parse(*out.result);
      o.results = std::array<point_result, 2>{j.at(0).get<point_result>(), j.at(1).get<point_result>()};
    } catch (const std::exception& e) {
      o.failure = std::string("unreadable result from the child: ") + json_problem(e);
    }
  }
  return o;
}

} // namespace speedlab::app
