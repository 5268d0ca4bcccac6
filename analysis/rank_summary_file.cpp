#include "analysis/rank_summary_file.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <atomic>
#include <exception>
#include <map>
#include <thread>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/json_support.hpp"
#include "model/saved_records.hpp"

namespace speedlab::analysis {

// The small tables of a process summary, field by field (integers checked as whole numbers).
SPEEDLAB_JSON_FIELDS(kernel_stats, name, launches, compute_phase_launches, total_ns, compute_phase_ns, median_ns,
                     min_ns, max_ns, grid, block, registers_per_thread, shared_bytes)
SPEEDLAB_JSON_FIELDS(copy_stats, count, async_count, pageable_count, bytes, ns, pageable_bytes, pageable_ns,
                     pinned_bytes, pinned_ns)
SPEEDLAB_JSON_FIELDS(program_range, domain, name, count, kernels, total_ns, gpu_ns, launched_kernels, launched_gpu_ns)
SPEEDLAB_JSON_FIELDS(program_stream, pid, device, stream, kernels, copies, memsets, kernel_ns, copy_ns, memset_ns)
SPEEDLAB_JSON_FIELDS(idle_cause, what, gaps, total_ns, largest_ns)
SPEEDLAB_JSON_FIELDS(gap_summary, count, total_ns, largest_ns, largest_at_ns, largest_inside, active_span_ns,
                     before_first_ns, causes)
SPEEDLAB_JSON_FIELDS(alloc_summary, allocs, frees, repeated, ns, repeated_ns, steady_span_ns)
SPEEDLAB_JSON_FIELDS(pageable_sync_copies, count, bytes, ns, call_ns)
SPEEDLAB_JSON_FIELDS(call_time, name, calls, total_ns)
SPEEDLAB_JSON_FIELDS(split_estimate, windows, unrecorded_calls, launch_share, moved_ns, low_ns, high_ns)
SPEEDLAB_JSON_FIELDS(launch_sampling, windows, covered_ns, kernels, kernels_with_call, launch_calls,
                     launch_calls_outside, kernels_sharing_a_call, range_instances, range_instances_measured,
                     api_lifetime, api_steady)
SPEEDLAB_JSON_FIELDS(startup_summary, known, to_first_kernel_ns, steady_start_ns, steady_method, idle_ns, calls)

namespace {

using json = nlohmann::json;

json info_json(const profile::process_info& p) {
  return {{"pid", p.pid},           {"parent_pid", p.parent_pid}, {"host", p.host},
          {"command_line", p.command_line}, {"start_ns", p.start_ns}, {"end_ns", p.end_ns},
          {"exit_code", p.exit_code}, {"signal", p.signal},       {"used_cuda", p.used_cuda},
          {"truncated", p.truncated}, {"last_flush_ns", p.last_flush_ns}, {"dropped_records", p.dropped_records},
          {"tags", p.tags},          {"notes", p.notes}};
}

json trace_json(const trace_summary& t) {
  json j{{"repetitions", t.repetitions}, {"has_windows", t.has_windows}, {"dropped_records", t.dropped_records},
         {"kernel_launches", t.kernel_launches}, {"kernel_ns", t.kernel_ns}, {"h2d", t.h2d}, {"d2h", t.d2h},
         {"other_copies", t.other_copies}, {"copy_kernel_overlap_ns", t.copy_kernel_overlap_ns},
         {"sync_count", t.sync_count}, {"sync_ns", t.sync_ns}, {"launch_calls", t.launch_calls},
         {"launch_call_ns", t.launch_call_ns}, {"kernels_total", t.kernels.size()}};
  // Sorted longest first by the accumulator: the top ones are what the tables show.
  auto& kernels = j["kernels"] = json::array();
  for (std::size_t i = 0; i < t.kernels.size() && i < summary_top_kernels; ++i) kernels.push_back(t.kernels[i]);
  return j;
}

json process_json(const process_summary& p) {
  json j{{"info", info_json(p.info)},   {"label", p.label},     {"window_start", p.window_start},
         {"window_end", p.window_end},  {"records", p.records}, {"split", p.split},
         {"trace", trace_json(p.trace)}, {"ranges", p.ranges},  {"streams", p.streams},
         {"gaps", p.gaps},              {"allocs", p.allocs},   {"pageable_sync", p.pageable_sync},
         {"launch_call_median_ns", p.launch_call_median_ns}, {"backend", p.backend}, {"note", p.note},
         {"steady_split", p.steady_split}, {"startup", p.startup}};
  if (p.counters) j["counters"] = *p.counters;
  if (p.source) j["source"] = *p.source;
  if (p.python) j["python_lines"] = *p.python;
  // Launch calls sampled (absent otherwise, as in summaries written before sampling).
  for (std::size_t i = 0; i < p.ranges.size(); ++i)
    if (p.ranges[i].launched_measured) j["ranges"][i]["launched_measured"] = *p.ranges[i].launched_measured;
  if (p.sampling) j["launch_sampling"] = *p.sampling;
  return j;
}

// A rank's steps as columns (six arrays of one length): half the size of rows of objects.
// A figure in nanoseconds as the JSON number that parses fastest: a whole number as an
// integer ("9502000", read with strtoull), not as a float ("9502000.0", strtod); read back
// as the same double (the schema takes either).
json fast_number(double d) {
  if (d >= 0 && d < 9007199254740992.0 && d == std::floor(d)) return static_cast<std::uint64_t>(d);
  return d;
}

json rank_json(const rank_summary& r) {
  json steps{{"start", json::array()},     {"end", json::array()},       {"compute_ns", json::array()},
             {"comm_ns", json::array()},   {"kernel_ns", json::array()}, {"kernels", json::array()}};
  for (const auto& s : r.steps) {
    steps["start"].push_back(s.start);
    steps["end"].push_back(s.end);
    steps["compute_ns"].push_back(fast_number(s.compute_ns));
    steps["comm_ns"].push_back(fast_number(s.comm_ns));
    steps["kernel_ns"].push_back(fast_number(s.kernel_ns));
    steps["kernels"].push_back(s.kernels);
  }
  return {{"pid", r.pid},
          {"host", r.host},
          {"gpu", r.gpu},
          {"rank", r.id.rank},
          {"local_rank", r.id.local_rank},
          {"world_size", r.id.world_size},
          {"rank_source", r.id.source},
          {"window_start", r.window_start},
          {"window_end", r.window_end},
          {"split", r.split},
          {"compute_ns", r.compute_ns},
          {"comm_ns", r.comm_ns},
          {"overlap_ns", r.overlap_ns},
          {"idle_ns", r.idle_ns},
          {"first_kernel_ns", r.first_kernel_ns},
          {"steady_start", r.steady_start},
          {"steady_end", r.steady_end},
          {"steady_idle_ns", r.steady_idle_ns},
          {"kernels", r.kernels},
          {"comm_kernels", r.comm_kernels},
          {"step_method", r.step_method},
          {"steps", std::move(steps)},
          {"comm_placed_by_start", r.comm_placed_by_start},
          {"comm_ends", r.comm_ends},
          {"realtime_minus_steady", r.realtime_minus_steady},
          {"truncated", r.truncated}};
}

// A rank summary's JSON, with how its steps were placed when its launch calls were sampled
// (absent otherwise, as in summaries written before sampling).
json rank_entry_json(const rank_summary& r) {
  json j = rank_json(r);
  if (r.launch_calls_sampled) j["placed_by_neighbours"] = r.placed_by_neighbours;
  return j;
}

// ---- reading: every field checked, the first problem named -------------------------------

const json& field(const json& j, const char* key) {
  if (!j.is_object()) throw std::invalid_argument(fmt::format("expected an object holding '{}'", key));
  auto it = j.find(key);
  if (it == j.end()) throw std::invalid_argument(fmt::format("'{}' is missing", key));
  return *it;
}

template <class T>
T whole(const json& j, const char* key) {
  return json_checked::whole<T>(field(j, key), key);
}

template <class T>
std::optional<T> maybe_whole(const json& j, const char* key) {
  const json& v = field(j, key);
  if (v.is_null()) return std::nullopt;
  return json_checked::whole<T>(v, key);
}

// A time or size: a finite number, not negative.
double amount(const json& v, const char* key) {
  if (!v.is_number()) throw std::invalid_argument(fmt::format("'{}' must be a number, found {}", key, v.dump()));
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) throw std::invalid_argument(fmt::format("'{}' must be finite and >= 0, found {}", key, v.dump()));
  return d;
}
double amount(const json& j, const char* key, int) { return amount(field(j, key), key); }

std::string text(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_string()) throw std::invalid_argument(fmt::format("'{}' must be a string, found {}", key, v.type_name()));
  return v.get<std::string>();
}

bool flag(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_boolean()) throw std::invalid_argument(fmt::format("'{}' must be true or false, found {}", key, v.dump()));
  return v.get<bool>();
}

const json& array_of(const json& j, const char* key, std::size_t size = SIZE_MAX) {
  const json& v = field(j, key);
  if (!v.is_array()) throw std::invalid_argument(fmt::format("'{}' must be an array, found {}", key, v.type_name()));
  if (size != SIZE_MAX && v.size() != size)
    throw std::invalid_argument(fmt::format("'{}' holds {} values where the steps are {}", key, v.size(), size));
  return v;
}

// Every number in the split: finite and not negative (the split's own reader checks the types).
time_split checked_split(const json& v, const char* key) {
  for (auto it = v.begin(); it != v.end(); ++it)
    if (it->is_number()) amount(*it, key);
  return v.get<time_split>();
}

profile::process_info read_info(const json& j) {
  profile::process_info p;
  p.pid = whole<std::uint32_t>(j, "pid");
  p.parent_pid = whole<std::uint32_t>(j, "parent_pid");
  p.host = text(j, "host");
  p.command_line = field(j, "command_line").get<std::vector<std::string>>();
  p.start_ns = whole<std::uint64_t>(j, "start_ns");
  p.end_ns = whole<std::uint64_t>(j, "end_ns");
  p.exit_code = maybe_whole<int>(j, "exit_code");
  p.signal = maybe_whole<int>(j, "signal");
  p.used_cuda = flag(j, "used_cuda");
  p.truncated = flag(j, "truncated");
  p.last_flush_ns = whole<std::uint64_t>(j, "last_flush_ns");
  p.dropped_records = whole<std::uint64_t>(j, "dropped_records");
  p.tags = field(j, "tags").get<std::map<std::string, std::string>>();
  p.notes = field(j, "notes").get<std::vector<std::string>>();
  return p;
}

trace_summary read_trace(const json& j) {
  trace_summary t;
  t.repetitions = whole<std::size_t>(j, "repetitions");
  t.has_windows = flag(j, "has_windows");
  t.dropped_records = whole<std::uint64_t>(j, "dropped_records");
  t.kernels = array_of(j, "kernels").get<std::vector<kernel_stats>>();
  for (const auto& k : t.kernels)
    for (double v : {k.total_ns, k.compute_phase_ns, k.median_ns, k.min_ns, k.max_ns}) amount(json(v), "kernels[].*_ns");
  t.kernel_launches = whole<std::size_t>(j, "kernel_launches");
  t.kernel_ns = amount(j, "kernel_ns", 0);
  t.h2d = field(j, "h2d").get<copy_stats>();
  t.d2h = field(j, "d2h").get<copy_stats>();
  t.other_copies = field(j, "other_copies").get<copy_stats>();
  t.copy_kernel_overlap_ns = amount(j, "copy_kernel_overlap_ns", 0);
  t.sync_count = whole<std::size_t>(j, "sync_count");
  t.sync_ns = amount(j, "sync_ns", 0);
  t.launch_calls = whole<std::size_t>(j, "launch_calls");
  t.launch_call_ns = amount(j, "launch_call_ns", 0);
  return t;
}

process_summary read_process(const json& j) {
  process_summary p;
  p.info = read_info(field(j, "info"));
  p.label = text(j, "label");
  p.window_start = whole<std::uint64_t>(j, "window_start");
  p.window_end = whole<std::uint64_t>(j, "window_end");
  p.records = whole<std::size_t>(j, "records");
  if (const json& s = field(j, "split"); !s.is_null()) p.split = checked_split(s, "split");
  p.trace = read_trace(field(j, "trace"));
  p.ranges = array_of(j, "ranges").get<std::vector<program_range>>();
  for (std::size_t i = 0; i < p.ranges.size(); ++i)
    if (auto it = j["ranges"][i].find("launched_measured"); it != j["ranges"][i].end())
      p.ranges[i].launched_measured = json_checked::whole<std::size_t>(*it, "ranges[].launched_measured");
  if (auto it = j.find("launch_sampling"); it != j.end()) p.sampling = it->get<launch_sampling>();
  p.streams = array_of(j, "streams").get<std::vector<program_stream>>();
  p.gaps = field(j, "gaps").get<gap_summary>();
  p.allocs = field(j, "allocs").get<alloc_summary>();
  p.pageable_sync = field(j, "pageable_sync").get<pageable_sync_copies>();
  p.launch_call_median_ns = amount(j, "launch_call_median_ns", 0);
  p.backend = text(j, "backend");
  p.note = text(j, "note");
  if (auto it = j.find("counters"); it != j.end() && !it->is_null()) p.counters = it->get<counters::counter_pass>();
  // Absent from summaries written before start-up was told apart from the steady state.
  if (auto it = j.find("steady_split"); it != j.end() && !it->is_null()) p.steady_split = checked_split(*it, "steady_split");
  if (auto it = j.find("startup"); it != j.end()) p.startup = it->get<startup_summary>();
  if (auto it = j.find("source"); it != j.end() && !it->is_null()) p.source = it->get<source::source_pass>();
  if (auto it = j.find("python_lines"); it != j.end() && it->is_object()) p.python = it->get<python_lines>();
  return p;
}

void read_steps(const json& j, rank_summary& r) {
  const json& start = array_of(j, "start");
  const std::size_t n = start.size();
  const json& end = array_of(j, "end", n);
  const json& compute = array_of(j, "compute_ns", n);
  const json& comm = array_of(j, "comm_ns", n);
  const json& kernel = array_of(j, "kernel_ns", n);
  const json& kernels = array_of(j, "kernels", n);
  r.steps.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    step_figures& s = r.steps[i];
    s.start = json_checked::whole<std::uint64_t>(start[i], "steps.start");
    s.end = json_checked::whole<std::uint64_t>(end[i], "steps.end");
    if (s.end < s.start) throw std::invalid_argument(fmt::format("step {} ends before it starts", i));
    s.compute_ns = amount(compute[i], "steps.compute_ns");
    s.comm_ns = amount(comm[i], "steps.comm_ns");
    s.kernel_ns = amount(kernel[i], "steps.kernel_ns");
    s.kernels = json_checked::whole<std::size_t>(kernels[i], "steps.kernels");
  }
}

rank_summary read_rank(const json& j) {
  rank_summary r;
  r.pid = whole<std::uint32_t>(j, "pid");
  r.host = text(j, "host");
  r.gpu = text(j, "gpu");
  r.id.rank = maybe_whole<int>(j, "rank");
  r.id.local_rank = maybe_whole<int>(j, "local_rank");
  r.id.world_size = maybe_whole<int>(j, "world_size");
  r.id.source = text(j, "rank_source");
  r.window_start = whole<std::uint64_t>(j, "window_start");
  r.window_end = whole<std::uint64_t>(j, "window_end");
  r.split = checked_split(field(j, "split"), "split");
  r.compute_ns = amount(j, "compute_ns", 0);
  r.comm_ns = amount(j, "comm_ns", 0);
  r.overlap_ns = amount(j, "overlap_ns", 0);
  r.idle_ns = amount(j, "idle_ns", 0);
  if (const json& f = field(j, "first_kernel_ns"); !f.is_null()) r.first_kernel_ns = amount(f, "first_kernel_ns");
  // Summaries written before the steady state was told apart: the whole window, as the idle
  // rule then judged it.
  r.steady_start = r.window_start;
  r.steady_end = r.window_end;
  r.steady_idle_ns = r.idle_ns;
  if (j.contains("steady_start")) {
    r.steady_start = whole<std::uint64_t>(j, "steady_start");
    r.steady_end = whole<std::uint64_t>(j, "steady_end");
    r.steady_idle_ns = amount(j, "steady_idle_ns", 0);
    if (r.steady_end < r.steady_start) throw std::invalid_argument("'steady_end' is before 'steady_start'");
  }
  r.kernels = whole<std::size_t>(j, "kernels");
  r.comm_kernels = whole<std::size_t>(j, "comm_kernels");
  r.step_method = text(j, "step_method");
  read_steps(field(j, "steps"), r);
  r.comm_placed_by_start = whole<std::size_t>(j, "comm_placed_by_start");
  const json& ends = array_of(j, "comm_ends");
  r.comm_ends.reserve(ends.size());
  for (const auto& e : ends) r.comm_ends.push_back(json_checked::whole<std::uint64_t>(e, "comm_ends"));
  if (!std::is_sorted(r.comm_ends.begin(), r.comm_ends.end())) throw std::invalid_argument("'comm_ends' is not in order");
  r.realtime_minus_steady = maybe_whole<std::int64_t>(j, "realtime_minus_steady");
  r.truncated = flag(j, "truncated");
  if (auto it = j.find("placed_by_neighbours"); it != j.end()) {
    r.launch_calls_sampled = true;
    r.placed_by_neighbours = json_checked::whole<std::size_t>(*it, "placed_by_neighbours");
  }
  if (!r.id.rank) throw std::invalid_argument("a rank summary without 'rank'");
  return r;
}

summarized_stream read_entry(const json& j) {
  summarized_stream s;
  s.file = text(j, "file");
  if (s.file.empty() || s.file.find('/') != std::string::npos || s.file == "..")
    throw std::invalid_argument(fmt::format("'file' must name a stream in the folder, found \"{}\"", s.file));
  s.bytes = whole<std::uint64_t>(j, "bytes");
  s.process = read_process(field(j, "process"));
  if (const json& r = field(j, "rank"); !r.is_null()) s.rank = read_rank(r);
  return s;
}

json parse_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw bad_record(fmt::format("{}: cannot be read", file.string()));
  // Read whole, then parsed from memory: nlohmann's stream input goes a character at a time
  // through the stream buffer (a tenth fewer samples in perf on 1,024 rank summaries).
  std::string text;
  in.seekg(0, std::ios::end);
  if (const auto size = in.tellg(); size > 0) text.resize(static_cast<std::size_t>(size));
  in.seekg(0, std::ios::beg);
  if (!in.read(text.data(), static_cast<std::streamsize>(text.size())))
    throw bad_record(fmt::format("{}: cannot be read", file.string()));
  if (text.empty()) throw bad_record(fmt::format("{}: empty (0 bytes)", file.string()));
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw bad_record(
        fmt::format("{}: damaged at byte offset {}: {}", file.string(), e.byte ? e.byte - 1 : 0, json_problem(e)));
  } catch (const json::exception& e) {
    throw bad_record(fmt::format("{}: not JSON: {}", file.string(), json_problem(e)));
  }
}

} // namespace

json summary_file_json(const stream_summaries& s) {
  json streams = json::array();
  // processes[i] was read from files[i]; ranks[k] is the rank summary of processes[rank_process[k]].
  std::map<std::size_t, const rank_summary*> rank_of;
  for (std::size_t k = 0; k < s.ranks.size() && k < s.rank_process.size(); ++k) rank_of.emplace(s.rank_process[k], &s.ranks[k]);
  for (std::size_t i = 0; i < s.processes.size() && i < s.files.size(); ++i) {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(s.files[i], ec);
    const auto it = rank_of.find(i);
    streams.push_back({{"file", s.files[i].filename().string()},
                       {"bytes", ec ? 0 : bytes},
                       {"process", process_json(s.processes[i])},
                       {"rank", it == rank_of.end() ? json(nullptr) : rank_entry_json(*it->second)}});
  }
  return {{"format", summary_file_format}, {"schema_version", summary_file_schema_version},
          {"streams", std::move(streams)}, {"messages", s.messages}};
}

saved_summary read_summary_file(const std::filesystem::path& file) {
  const json j = parse_file(file);
  saved_summary out;
  try {
    if (!j.is_object() || j.value("format", "") != summary_file_format)
      throw bad_record(fmt::format("not a summary file ('format' must be \"{}\")", summary_file_format));
    check_schema_version(j, summary_file_schema_version);
    out.messages = field(j, "messages").get<std::vector<std::string>>();
  } catch (const newer_schema_error& e) {
    throw newer_schema_error(fmt::format("{}: {}", file.string(), e.what()));
  } catch (const std::exception& e) {
    throw bad_record(fmt::format("{}: {}", file.string(), e.what()));
  }
  if (!j.contains("streams") || !j["streams"].is_array())
    throw bad_record(fmt::format("{}: 'streams' must be an array", file.string()));
  const json& streams = j["streams"];
  for (std::size_t i = 0; i < streams.size(); ++i) {
    try {
      out.streams.push_back(read_entry(streams[i]));
    } catch (const std::exception& e) {
      throw bad_record(fmt::format("{}: streams[{}]: {}", file.string(), i, e.what()));
    }
  }
  return out;
}

namespace {

// Why the summary file of dir does not stand for its streams now ("" when it does).
std::string stale(const saved_summary& s, const std::vector<std::filesystem::path>& streams) {
  if (streams.empty()) return ""; // the streams were moved away: the summary is all there is
  std::map<std::string, std::uint64_t> now;
  for (const auto& f : streams) {
    std::error_code ec;
    now[f.filename().string()] = std::filesystem::file_size(f, ec);
  }
  std::map<std::string, std::uint64_t> then;
  for (const auto& e : s.streams) then[e.file] = e.bytes;
  for (const auto& [name, bytes] : now) {
    auto it = then.find(name);
    if (it == then.end()) return fmt::format("{} is not in it", name);
    if (it->second != bytes) return fmt::format("{} has {} bytes now, {} when summarized", name, bytes, it->second);
  }
  if (then.size() != now.size()) return "it names streams that are not in the folder";
  return "";
}

// One folder: its summary when usable; else why not (messages) and nullopt. Damaged with no
// stream beside it, the folder is left out (a message says so) and the others are merged;
// one from a newer speedlab and no stream stops the merge (never read past a newer schema).
std::optional<saved_summary> usable_summary(const profile_folder& f, std::vector<std::string>& messages) {
  const auto file = f.dir / summary_file_name;
  const std::string instead =
      f.streams.empty() ? fmt::format("; {} has no stream to read instead: nothing of it is merged", f.dir.string())
                        : std::string("; the streams were read instead");
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::nullopt;
  if (!std::filesystem::is_regular_file(file, ec)) {
    messages.push_back(fmt::format("{}: not a regular file{}", file.string(), instead));
    return std::nullopt;
  }
  try {
    saved_summary s = read_summary_file(file);
    const std::string why = stale(s, f.streams);
    if (why.empty()) return s;
    messages.push_back(fmt::format("{}: not used, the streams changed since it was written ({}); the streams were read",
                                   file.string(), why));
  } catch (const std::exception& e) {
    if (f.streams.empty() && dynamic_cast<const newer_schema_error*>(&e)) throw;
    messages.push_back(fmt::format("{}{}", e.what(), instead));
  }
  return std::nullopt;
}

// b after a, then every process in (start, pid) order as read_stream_folder gives them.
void append(stream_summaries& a, stream_summaries b) {
  for (auto& m : b.messages) a.messages.push_back(std::move(m));
  for (std::size_t k = 0; k < b.ranks.size(); ++k) {
    a.rank_process.push_back(a.processes.size() + b.rank_process[k]);
    a.ranks.push_back(std::move(b.ranks[k]));
  }
  for (std::size_t i = 0; i < b.processes.size(); ++i) {
    a.processes.push_back(std::move(b.processes[i]));
    a.files.push_back(std::move(b.files[i]));
  }
}

void order_by_start(stream_summaries& s) {
  std::vector<std::size_t> order(s.processes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&s](std::size_t x, std::size_t y) {
    const auto& a = s.processes[x].info;
    const auto& b = s.processes[y].info;
    return std::tie(a.start_ns, a.pid) < std::tie(b.start_ns, b.pid);
  });
  std::vector<std::size_t> new_index(order.size());
  std::vector<process_summary> processes;
  std::vector<std::filesystem::path> files;
  processes.reserve(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    new_index[order[i]] = i;
    processes.push_back(std::move(s.processes[order[i]]));
    files.push_back(std::move(s.files[order[i]]));
  }
  for (auto& k : s.rank_process) k = new_index[k];
  s.processes = std::move(processes);
  s.files = std::move(files);
}

} // namespace

folders_read summarize_folders(const std::vector<profile_folder>& folders, std::size_t threads) {
  std::vector<std::optional<saved_summary>> saved(folders.size());
  std::vector<std::vector<std::string>> said(folders.size());
  std::vector<std::exception_ptr> failed(folders.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < folders.size(); i = next++) {
      try {
        saved[i] = usable_summary(folders[i], said[i]);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    }
  };
  threads = std::clamp<std::size_t>(threads ? threads : std::thread::hardware_concurrency(), 1, 8);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < std::min(threads, folders.size()); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (auto& e : failed)
    if (e) std::rethrow_exception(e);

  folders_read out;
  std::vector<std::filesystem::path> to_read;
  for (std::size_t i = 0; i < folders.size(); ++i) {
    for (auto& m : said[i]) out.read.messages.push_back(std::move(m));
    if (!saved[i]) {
      to_read.insert(to_read.end(), folders[i].streams.begin(), folders[i].streams.end());
      continue;
    }
    ++out.from_summaries;
    for (auto& m : saved[i]->messages) out.read.messages.push_back(std::move(m));
    for (auto& e : saved[i]->streams) {
      if (e.rank) {
        out.read.rank_process.push_back(out.read.processes.size());
        out.read.ranks.push_back(std::move(*e.rank));
      }
      out.read.files.push_back(folders[i].dir / e.file);
      out.read.processes.push_back(std::move(e.process));
    }
  }
  if (!to_read.empty()) append(out.read, summarize_streams(to_read));
  order_by_start(out.read);
  return out;
}

} // namespace speedlab::analysis
