// trace.json: a Chrome Trace Event / Perfetto timeline in the shape PyTorch's Kineto writes,
// so ui.perfetto.dev and chrome://tracing open it and tools written for Kineto traces read it.
//
// Layout (docs/reports.md): every point keeps its real timestamps (all points share the host
// steady clock and ran one after another, so nothing overlaps); ts/dur are microseconds with
// nanosecond fractions.
//   - one host process per point: pid = the child's process id (a synthetic 1000000 + index
//     when unknown), named "point <i>: <id>"; one track per host thread with the NVTX ranges
//     (speedlab's phases, cat user_annotation) and the CUDA API calls (cat cuda_runtime /
//     cuda_driver); tid 0 shows the runner's repetition windows and phase boundaries, tid 1
//     the profiler's own overhead.
//   - one GPU process per device (pid = device id, shared by all points), one track per
//     stream (tid = stream id) with kernels, memcpys and memsets; tid 2000000000 holds the
//     CUDA synchronization records.
//   - flow arrows (cat/name ac2g, ph s on the API call, ph f with bp e on the GPU op) join
//     each launch to its GPU work; id = correlation id + (point index << 32), so ids stay
//     unique although every child process restarts CUPTI's numbering.
// Written only when some point has GPU activity.
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "model/atomic_file.hpp"
#include "reports/common/report_data.hpp"
#include "reports/common/trace_util.hpp"
#include "reports/reporter.hpp"

namespace speedlab::reports {

namespace {

using json = nlohmann::json;

constexpr std::int64_t repetition_tid = 0;
constexpr std::int64_t overhead_tid = 1;
constexpr std::int64_t sync_tid = 2000000000; // fits int32 for every viewer; stream ids stay far below

double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }
double dur_us(std::uint64_t start, std::uint64_t end) { return end > start ? static_cast<double>(end - start) / 1000.0 : 0.0; }

class event_stream {
public:
  explicit event_stream(std::ofstream& out) : m_out(out) {}
  void add(const json& e) {
    m_out << (m_first ? "\n" : ",\n") << e.dump(-1, ' ', false, json::error_handler_t::replace);
    m_first = false;
  }
  void metadata(const char* what, std::int64_t pid, std::optional<std::int64_t> tid, const json& args) {
    json e = {{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", args}};
    if (tid) e["tid"] = *tid;
    add(e);
  }
  void complete(const std::string& name, const char* cat, std::int64_t pid, std::int64_t tid, std::uint64_t start,
                std::uint64_t end, json args) {
    add(json{{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", pid}, {"tid", tid}, {"ts", us(start)},
             {"dur", dur_us(start, end)}, {"args", std::move(args)}});
  }

private:
  std::ofstream& m_out;
  bool m_first = true;
};

struct device_info {
  std::set<std::uint32_t> streams;
  bool has_sync = false;
};

class perfetto_writer {
public:
  perfetto_writer(const report_input& in, event_stream& events) : m_in(in), m_events(events) {}

  // Returns whether this trace had GPU activity.
  bool add_point(std::size_t index, const point_result& p, const trace::device_trace& t) {
    const std::int64_t pid = t.process ? static_cast<std::int64_t>(t.process) : 1000000 + static_cast<std::int64_t>(index);
    if (m_host_pids.insert(pid).second) {
      m_events.metadata("process_name", pid, std::nullopt, {{"name", "point " + std::to_string(index) + ": " + p.id}});
      m_events.metadata("process_labels", pid, std::nullopt, {{"labels", p.workload + "/" + p.variant + " " + p.params_key()}});
      m_events.metadata("process_sort_index", pid, std::nullopt, {{"sort_index", 100 + static_cast<std::int64_t>(index)}});
      m_events.metadata("thread_name", pid, repetition_tid, {{"name", "runner repetitions (steady clock)"}});
      m_events.metadata("thread_sort_index", pid, repetition_tid, {{"sort_index", -2}});
    }
    m_points.push_back({{"index", index}, {"id", p.id}, {"host_pid", pid}});
    const json point_arg = p.id;

    // Host threads.
    std::set<std::uint32_t> threads;
    for (const auto& a : t.api_calls) threads.insert(a.thread);
    for (const auto& r : t.ranges) threads.insert(r.thread);
    for (auto tid : threads)
      if (m_host_threads.insert({pid, tid}).second)
        m_events.metadata("thread_name", pid, tid,
                          {{"name", static_cast<std::int64_t>(tid) == pid ? "main thread" : "thread " + std::to_string(tid)}});

    int rep = 0;
    for (const auto& w : t.repetitions) {
      m_events.complete("repetition " + std::to_string(rep++), "speedlab_repetition", pid, repetition_tid, w.start, w.end,
                        {{"point", point_arg}});
      if (w.transfer_in_end >= w.start && w.compute_end >= w.transfer_in_end && w.end >= w.compute_end &&
          w.compute_end > 0) {
        if (w.transfer_in_end > w.start)
          m_events.complete("transfer_in", "speedlab_phase", pid, repetition_tid, w.start, w.transfer_in_end, json::object());
        m_events.complete("compute", "speedlab_phase", pid, repetition_tid, w.transfer_in_end, w.compute_end, json::object());
        if (w.end > w.compute_end)
          m_events.complete("transfer_out", "speedlab_phase", pid, repetition_tid, w.compute_end, w.end, json::object());
      }
    }
    for (const auto& r : t.ranges)
      m_events.complete(r.name, "user_annotation", pid, r.thread, r.start, r.end, {{"domain", r.domain}});
    std::map<std::uint32_t, const trace::api_record*> launch_by_correlation;
    for (const auto& a : t.api_calls) {
      m_events.complete(a.name, a.driver ? "cuda_driver" : "cuda_runtime", pid, a.thread, a.start, a.end,
                        {{"correlation", a.correlation}, {"cbid", a.callback_id}, {"return value", a.return_value}});
      auto [it, inserted] = launch_by_correlation.emplace(a.correlation, &a);
      if (!inserted && it->second->driver && !a.driver) it->second = &a; // prefer the runtime call
    }
    if (!t.overheads.empty() && m_overhead_lanes.insert(pid).second)
      m_events.metadata("thread_name", pid, overhead_tid, {{"name", "profiler overhead"}});
    for (const auto& o : t.overheads)
      m_events.complete("profiler overhead: " + o.kind, "overhead", pid, overhead_tid, o.start, o.end, json::object());

    // GPU work, one process per device.
    std::map<std::uint32_t, std::uint32_t> device_of_context;
    const std::uint64_t flow_base = static_cast<std::uint64_t>(index) << 32;
    auto flow = [&](std::uint32_t correlation, std::int64_t dev, std::int64_t stream, std::uint64_t start) {
      auto it = launch_by_correlation.find(correlation);
      if (correlation == 0 || it == launch_by_correlation.end()) return;
      const std::uint64_t id = flow_base + correlation;
      m_events.add(json{{"ph", "s"}, {"id", id}, {"pid", pid}, {"tid", it->second->thread}, {"ts", us(it->second->start)},
                        {"cat", "ac2g"}, {"name", "ac2g"}});
      m_events.add(json{{"ph", "f"}, {"id", id}, {"pid", dev}, {"tid", stream}, {"ts", us(start)}, {"cat", "ac2g"},
                        {"name", "ac2g"}, {"bp", "e"}});
    };
    for (const auto& k : t.kernels) {
      device_lane(k.device, k.stream);
      device_of_context.emplace(k.context, k.device);
      m_events.complete(k.name, "kernel", k.device, k.stream, k.start, k.end,
                        {{"device", k.device},
                         {"context", k.context},
                         {"stream", k.stream},
                         {"correlation", k.correlation},
                         {"registers per thread", k.registers_per_thread},
                         {"shared memory", k.static_shared_bytes + k.dynamic_shared_bytes},
                         {"static shared memory", k.static_shared_bytes},
                         {"dynamic shared memory", k.dynamic_shared_bytes},
                         {"local memory per thread", k.local_bytes_per_thread},
                         {"grid", {k.grid[0], k.grid[1], k.grid[2]}},
                         {"block", {k.block[0], k.block[1], k.block[2]}},
                         {"mangled name", k.mangled_name},
                         {"point", point_arg}});
      flow(k.correlation, k.device, k.stream, k.start);
    }
    for (const auto& m : t.memcpys) {
      device_lane(m.device, m.stream);
      device_of_context.emplace(m.context, m.device);
      const double ns = m.end > m.start ? static_cast<double>(m.end - m.start) : 0;
      m_events.complete(memcpy_event_name(m), "gpu_memcpy", m.device, m.stream, m.start, m.end,
                        {{"device", m.device},
                         {"context", m.context},
                         {"stream", m.stream},
                         {"correlation", m.correlation},
                         {"bytes", m.bytes},
                         {"memory bandwidth (GB/s)", ns > 0 ? static_cast<double>(m.bytes) / ns : 0.0},
                         {"async", m.async},
                         {"point", point_arg}});
      flow(m.correlation, m.device, m.stream, m.start);
    }
    for (const auto& m : t.memsets) {
      device_lane(m.device, m.stream);
      device_of_context.emplace(m.context, m.device);
      const double ns = m.end > m.start ? static_cast<double>(m.end - m.start) : 0;
      m_events.complete(memset_event_name(m), "gpu_memset", m.device, m.stream, m.start, m.end,
                        {{"device", m.device},
                         {"context", m.context},
                         {"stream", m.stream},
                         {"correlation", m.correlation},
                         {"bytes", m.bytes},
                         {"value", m.value},
                         {"memory bandwidth (GB/s)", ns > 0 ? static_cast<double>(m.bytes) / ns : 0.0},
                         {"point", point_arg}});
      flow(m.correlation, m.device, m.stream, m.start);
    }
    for (const auto& s : t.syncs) {
      // Synchronization records name a context, not a device: take the device that context ran work on.
      auto it = device_of_context.find(s.context);
      const std::uint32_t dev = it == device_of_context.end() ? 0 : it->second;
      auto& d = m_devices[dev];
      if (!d.has_sync) {
        d.has_sync = true;
        m_events.metadata("thread_name", dev, sync_tid, {{"name", "CUDA synchronization"}});
      }
      json args = {{"context", s.context}, {"correlation", s.correlation}, {"point", point_arg}};
      if (s.stream != 0xFFFFFFFFu) args["stream"] = s.stream;
      m_events.complete(sync_type_label(s.type), "cuda_sync", dev, sync_tid, s.start, s.end, std::move(args));
    }
    return t.has_gpu_activity();
  }

  json device_properties() const {
    json list = json::array();
    for (const auto& [id, info] : m_devices) {
      json d = {{"id", id}, {"name", m_in.analysis.device.gpu_name.empty() ? m_in.run.gpu_name : m_in.analysis.device.gpu_name}};
      for (const auto& [k, v] : m_in.analysis.device.properties) d[k] = v;
      list.push_back(d);
    }
    return list;
  }
  const json& points() const { return m_points; }

private:
  const report_input& m_in;
  event_stream& m_events;
  std::set<std::int64_t> m_host_pids, m_overhead_lanes;
  std::set<std::pair<std::int64_t, std::uint32_t>> m_host_threads;
  std::map<std::uint32_t, device_info> m_devices;
  json m_points = json::array();

  void device_lane(std::uint32_t dev, std::uint32_t stream) {
    auto [it, inserted] = m_devices.try_emplace(dev);
    if (inserted) {
      const std::string gpu = m_in.analysis.device.gpu_name.empty() ? m_in.run.gpu_name : m_in.analysis.device.gpu_name;
      m_events.metadata("process_name", dev, std::nullopt, {{"name", "GPU " + std::to_string(dev) + (gpu.empty() ? "" : " (" + gpu + ")")}});
      m_events.metadata("process_sort_index", dev, std::nullopt, {{"sort_index", static_cast<std::int64_t>(dev)}});
    }
    if (it->second.streams.insert(stream).second) {
      m_events.metadata("thread_name", dev, stream, {{"name", "stream " + std::to_string(stream)}});
      m_events.metadata("thread_sort_index", dev, stream, {{"sort_index", static_cast<std::int64_t>(stream)}});
    }
  }
};

class perfetto_reporter final : public reporter {
public:
  std::string name() const override { return "perfetto"; }
  std::string description() const override {
    return "trace.json: Chrome Trace Event / Perfetto timeline of every traced point (only with GPU data)";
  }
  std::vector<std::filesystem::path> write(const report_input& in, const std::filesystem::path& dir) override {
    const auto path = dir / "trace.json";
    atomic_file file(path);
    bool any_gpu = false;
    {
      std::ofstream& out = file.stream();
      out << "{\"schemaVersion\": 1, \"displayTimeUnit\": \"ns\", \"traceEvents\": [";
      event_stream events(out);
      perfetto_writer writer(in, events);
      json unreadable = json::array();
      for (std::size_t i = 0; i < in.points.size(); ++i) {
        std::string error;
        auto t = load_trace_safely(in.load_trace, in.points[i], error);
        if (!error.empty()) unreadable.push_back({{"id", in.points[i].id}, {"error", error}});
        if (!t) continue;
        any_gpu |= writer.add_point(i, in.points[i], *t);
      }
      json speedlab = {{"generator", "speedlab " + in.run.speedlab_version},
                       {"clock", "host steady clock (CLOCK_MONOTONIC); ts and dur in microseconds"},
                       {"flow_id", "correlation id + (point index << 32)"},
                       {"points", writer.points()},
                       {"unreadable_traces", unreadable}};
      out << "\n],\n\"deviceProperties\": " << writer.device_properties().dump(-1, ' ', false, json::error_handler_t::replace)
          << ",\n\"speedlab\": " << speedlab.dump(-1, ' ', false, json::error_handler_t::replace) << "\n}\n";
    }
    if (!any_gpu) return {}; // the temporary file goes, an earlier trace.json stays
    file.commit();
    return {path};
  }
};

} // namespace

std::unique_ptr<reporter> make_perfetto_reporter() { return std::make_unique<perfetto_reporter>(); }

} // namespace speedlab::reports
