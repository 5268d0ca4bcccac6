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
//   - a profiled job's ranks (processes with a launcher's rank variable) instead get one
//     group each, named "rank R (host, pid N)" and sorted by rank: the rank's host threads
//     and its GPU work together (GPU d, stream s on tid 1000000000 + d * 1000000 + s, its
//     synchronization on tid 2000000000 + d), so a two-rank job reads as two groups; each
//     rank's times are moved onto the ranks' common clock (the per-host offsets of the rank
//     analysis, 0 on one host).
//   - flow arrows (cat/name ac2g, ph s on the API call, ph f with bp e on the GPU op) join
//     each launch to its GPU work; id = correlation id + (point index << 32), so ids stay
//     unique although every child process restarts CUPTI's numbering.
// Written only when some point has GPU activity.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "model/atomic_file.hpp"
#include "reports/common/process_ranks.hpp"
#include "reports/common/report_data.hpp"
#include "reports/common/trace_util.hpp"
#include "reports/reporter.hpp"

namespace speedlab::reports {

namespace {

using json = nlohmann::json;

constexpr std::int64_t repetition_tid = 0;
constexpr std::int64_t overhead_tid = 1;
constexpr std::int64_t sync_tid = 2000000000; // fits int32 for every viewer; stream ids stay far below
constexpr std::int64_t rank_gpu_tid = 1000000000; // a rank's GPU lanes, above any host thread id

double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }
double dur_us(std::uint64_t start, std::uint64_t end) { return end > start ? static_cast<double>(end - start) / 1000.0 : 0.0; }

class event_stream {
public:
  explicit event_stream(std::ofstream& out) : m_out(out) {}
  // Added to every timestamp that follows (a rank's clock offset).
  void set_offset(double ns) { m_offset = ns; }
  double at(std::uint64_t ns) const { return us(shift(ns)); }
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
    add(json{{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", pid}, {"tid", tid}, {"ts", at(start)},
             {"dur", dur_us(start, end)}, {"args", std::move(args)}});
  }

private:
  std::ofstream& m_out;
  bool m_first = true;
  double m_offset = 0;
  std::uint64_t shift(std::uint64_t ns) const {
    if (m_offset == 0) return ns;
    const double v = static_cast<double>(ns) + m_offset;
    return v > 0 ? static_cast<std::uint64_t>(std::llround(v)) : 0;
  }
};

struct device_info {
  bool named = false; // its process (a GPU shared by the points that are not ranks)
};

struct track {
  std::int64_t pid = 0, tid = 0;
};

class perfetto_writer {
public:
  perfetto_writer(const report_input& in, event_stream& events)
      : m_in(in), m_events(events), m_ids(identities_by_point(in.content.processes)) {}

  // Returns whether this trace had GPU activity.
  bool add_point(std::size_t index, const point_result& p, const trace::device_trace& t) {
    const std::int64_t pid = point_process(index, p, t);
    const json point_arg = p.id;
    const auto launches = host_events(pid, t, point_arg);
    device_events(index, pid, t, launches, point_arg);
    return t.has_gpu_activity();
  }

private:
  using launch_map = std::map<std::uint32_t, const trace::api_record*>;

  // What a copy and a memset show alike: where they ran, their bytes and bandwidth (json
  // objects keep their keys sorted, so the order here is not the output's).
  template <class Record>
  static json transfer_args(const Record& r, const json& point_arg) {
    const double ns = r.end > r.start ? static_cast<double>(r.end - r.start) : 0;
    return {{"device", r.device}, {"context", r.context},
            {"stream", r.stream}, {"correlation", r.correlation},
            {"bytes", r.bytes},   {"memory bandwidth (GB/s)", ns > 0 ? static_cast<double>(r.bytes) / ns : 0.0},
            {"point", point_arg}};
  }
  static json kernel_args(const trace::kernel_record& k, const json& point_arg) {
    return {{"device", k.device},
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
            {"point", point_arg}};
  }

  // The point's host process (a rank's, when it is one): its pid, named once, and its entry.
  std::int64_t point_process(std::size_t index, const point_result& p, const trace::device_trace& t) {
    std::int64_t pid = t.process ? static_cast<std::int64_t>(t.process) : 1000000 + static_cast<std::int64_t>(index);
    const process_identity* id = nullptr;
    if (auto it = m_ids.find(p.id); it != m_ids.end() && it->second->rank) id = it->second;
    m_rank_pid.reset();
    m_events.set_offset(id ? id->clock_offset_ns : 0.0);
    if (id) {
      // One group per rank: ranks on different hosts may share a pid.
      if (m_host_pids.count(pid)) pid = 1000000 + static_cast<std::int64_t>(index);
      m_rank_pid = pid;
    }
    if (m_host_pids.insert(pid).second) {
      if (id) {
        m_events.metadata("process_name", pid, std::nullopt, {{"name", process_group_name(*id)}});
        std::string labels = "host " + id->host;
        if (id->local_rank) labels += ", local rank " + std::to_string(*id->local_rank);
        if (id->world_size) labels += ", world size " + std::to_string(*id->world_size);
        m_events.metadata("process_labels", pid, std::nullopt, {{"labels", labels}});
        m_events.metadata("process_sort_index", pid, std::nullopt, {{"sort_index", static_cast<std::int64_t>(*id->rank) - 1000000}});
      } else {
        m_events.metadata("process_name", pid, std::nullopt, {{"name", "point " + std::to_string(index) + ": " + p.id}});
        m_events.metadata("process_labels", pid, std::nullopt, {{"labels", p.workload + "/" + p.variant + " " + p.params_key()}});
        m_events.metadata("process_sort_index", pid, std::nullopt, {{"sort_index", 100 + static_cast<std::int64_t>(index)}});
      }
      m_events.metadata("thread_name", pid, repetition_tid, {{"name", "runner repetitions (steady clock)"}});
      m_events.metadata("thread_sort_index", pid, repetition_tid, {{"sort_index", -2}});
    }
    json point_entry = {{"index", index}, {"id", p.id}, {"host_pid", pid}};
    if (id) {
      point_entry["rank"] = *id->rank;
      point_entry["host"] = id->host;
      point_entry["pid"] = id->pid;
      point_entry["clock_offset_ns"] = id->clock_offset_ns;
    }
    m_points.push_back(std::move(point_entry));
    return pid;
  }

  // Host threads, repetitions and phases, NVTX ranges, API calls, profiler overhead; returns
  // each correlation id's launch call (the runtime's over the driver's).
  launch_map host_events(std::int64_t pid, const trace::device_trace& t, const json& point_arg) {
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
    launch_map launch_by_correlation;
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

    return launch_by_correlation;
  }

  // GPU work, one process per device, with a flow arrow from each launch call.
  void device_events(std::size_t index, std::int64_t pid, const trace::device_trace& t, const launch_map& launch_by_correlation,
                     const json& point_arg) {
    std::map<std::uint32_t, std::uint32_t> device_of_context;
    const std::uint64_t flow_base = static_cast<std::uint64_t>(index) << 32;
    auto flow = [&](std::uint32_t correlation, const track& gpu, std::uint64_t start) {
      auto it = launch_by_correlation.find(correlation);
      if (correlation == 0 || it == launch_by_correlation.end()) return;
      const std::uint64_t flow_id = flow_base + correlation;
      m_events.add(json{{"ph", "s"}, {"id", flow_id}, {"pid", pid}, {"tid", it->second->thread},
                        {"ts", m_events.at(it->second->start)}, {"cat", "ac2g"}, {"name", "ac2g"}});
      m_events.add(json{{"ph", "f"}, {"id", flow_id}, {"pid", gpu.pid}, {"tid", gpu.tid}, {"ts", m_events.at(start)},
                        {"cat", "ac2g"}, {"name", "ac2g"}, {"bp", "e"}});
    };
    // One GPU record on its device's lane, with the arrow from its launch call.
    auto gpu_event = [&](const auto& r, const std::string& name, const char* cat, json args) {
      const track lane = device_lane(r.device, r.stream);
      device_of_context.emplace(r.context, r.device);
      m_events.complete(name, cat, lane.pid, lane.tid, r.start, r.end, std::move(args));
      flow(r.correlation, lane, r.start);
    };
    for (const auto& k : t.kernels) gpu_event(k, k.name, "kernel", kernel_args(k, point_arg));
    for (const auto& m : t.memcpys) {
      json args = transfer_args(m, point_arg);
      args["async"] = m.async;
      gpu_event(m, memcpy_event_name(m), "gpu_memcpy", std::move(args));
    }
    for (const auto& m : t.memsets) {
      json args = transfer_args(m, point_arg);
      args["value"] = m.value;
      gpu_event(m, memset_event_name(m), "gpu_memset", std::move(args));
    }
    for (const auto& s : t.syncs) {
      // Synchronization records name a context, not a device: take the device that context ran work on.
      auto it = device_of_context.find(s.context);
      const std::uint32_t dev = it == device_of_context.end() ? 0 : it->second;
      const track lane = sync_lane(dev);
      json args = {{"context", s.context}, {"correlation", s.correlation}, {"point", point_arg}};
      if (s.stream != 0xFFFFFFFFu) args["stream"] = s.stream;
      m_events.complete(sync_type_label(s.type), "cuda_sync", lane.pid, lane.tid, s.start, s.end, std::move(args));
    }
  }

public:
  json device_properties() const {
    json list = json::array();
    for (const auto& [id, info] : m_devices) {
      json d = {{"id", id}, {"name", gpu_name()}};
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
  std::set<std::pair<std::int64_t, std::int64_t>> m_named_tracks;
  std::map<std::string, const process_identity*> m_ids; // the points' processes by point id (none in a suite run)
  std::optional<std::int64_t> m_rank_pid;        // the group of the point being added, when a rank
  json m_points = json::array();

  std::string gpu_name() const {
    return m_in.analysis.device.gpu_name.empty() ? m_in.run.gpu_name : m_in.analysis.device.gpu_name;
  }
  // The process of a GPU shared by the points that are not ranks.
  void name_device(std::uint32_t dev) {
    auto& d = m_devices[dev];
    if (m_rank_pid || d.named) return;
    d.named = true;
    const std::string gpu = gpu_name();
    m_events.metadata("process_name", dev, std::nullopt, {{"name", "GPU " + std::to_string(dev) + (gpu.empty() ? "" : " (" + gpu + ")")}});
    m_events.metadata("process_sort_index", dev, std::nullopt, {{"sort_index", static_cast<std::int64_t>(dev)}});
  }
  void name_track(const track& t, const std::string& name, std::int64_t sort_index) {
    if (!m_named_tracks.insert({t.pid, t.tid}).second) return;
    m_events.metadata("thread_name", t.pid, t.tid, {{"name", name}});
    m_events.metadata("thread_sort_index", t.pid, t.tid, {{"sort_index", sort_index}});
  }
  // Where a GPU stream's work goes: its rank's group, else the GPU's process.
  track device_lane(std::uint32_t dev, std::uint32_t stream) {
    name_device(dev);
    if (m_rank_pid) {
      const track t{*m_rank_pid, rank_gpu_tid + static_cast<std::int64_t>(dev % 1000) * 1000000 + stream % 1000000};
      name_track(t, "GPU " + std::to_string(dev) + ", stream " + std::to_string(stream), t.tid);
      return t;
    }
    const track t{dev, stream};
    name_track(t, "stream " + std::to_string(stream), stream);
    return t;
  }
  track sync_lane(std::uint32_t dev) {
    name_device(dev);
    if (m_rank_pid) {
      const track t{*m_rank_pid, sync_tid + static_cast<std::int64_t>(dev % 1000)};
      name_track(t, "GPU " + std::to_string(dev) + ", CUDA synchronization", t.tid);
      return t;
    }
    const track t{dev, sync_tid};
    if (m_named_tracks.insert({t.pid, t.tid}).second) m_events.metadata("thread_name", dev, sync_tid, {{"name", "CUDA synchronization"}});
    return t;
  }
};

class perfetto_reporter final : public reporter {
public:
  perfetto_reporter()
      : reporter("perfetto",
                 "trace.json: Chrome Trace Event / Perfetto timeline of every traced point (only with GPU data)") {}
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
                       {"rank_groups", "a profiled job's ranks: one process each, named rank R (host, pid N), its GPU "
                                       "lanes on tid 1000000000 + device * 1000000 + stream, times on the ranks' common clock"},
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
