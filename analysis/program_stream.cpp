// A profile folder's streams read one records chunk at a time into their summaries
// (program_stream.hpp), a few streams at once, then merged by analyze_program.
#include "analysis/program_stream.hpp"
#include "analysis/rank_accumulator.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>
#include <tuple>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "model/profile_stream.hpp"

namespace speedlab::analysis {

stream_summary summarize_stream(const std::filesystem::path& file, const program_options& options) {
  stream_summary out;
  std::optional<process_accumulator> acc;
  // A rank's stream (CUDA under a launcher's rank variable) also goes into its rank summary,
  // chunk by chunk as well (rank_accumulator keeps 16-24 bytes a record). One read either way.
  std::optional<bool> is_rank;
  std::optional<rank_accumulator> rank;
  profile::stream_read read =
      profile::read_stream(file, [&](const profile::process_info& info, profile::records_batch&& batch) {
        // Every record ends by the process's end (the reader makes it so), so the window
        // of the trace statistics is open-ended here; as summarize_process on the whole.
        if (!acc) {
          acc.emplace(std::vector<trace::repetition_window>{{info.start_ns, UINT64_MAX, 0, 0}}, options);
          if (is_python_process(info)) acc->track_python();
        }
        acc->add(batch.trace);
        if (!is_rank) is_rank = info.used_cuda && identify_rank(info).rank.has_value();
        if (*is_rank) {
          if (!rank) rank.emplace();
          rank->add(batch.trace);
        }
      });
  out.messages = std::move(read.messages);
  out.valid = read.valid;
  if (!read.valid) return out;
  if (!acc) acc.emplace(read.profile.trace.repetitions, options);
  out.summary = acc->finish(read.profile);
  const auto& p = read.profile;
  if (p.process.used_cuda && identify_rank(p.process).rank) {
    if (!rank) rank.emplace();
    out.rank = rank->finish(p, out.summary.split ? &*out.summary.split : nullptr);
  }
  return out;
}

stream_summaries summarize_streams(const std::vector<std::filesystem::path>& files, const program_options& options,
                                   std::size_t threads) {
  std::vector<stream_summary> done(files.size());
#ifdef __GLIBC__
  // The streams are read in turn, each allocating and then freeing its records: glibc keeps
  // the freed memory for the next stream instead of unmapping it and faulting fresh pages in
  // again (seen: 4 streams of 1M records, system time 1.0 s -> 0.4 s, user 2.7 s -> 2.4 s).
  if (files.size() > 1) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's largest
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_ARENA_MAX, 1);
  }
#endif
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < files.size(); i = next++) done[i] = summarize_stream(files[i], options);
  };
  if (threads == 0) {
    // SPEEDLAB_REPORT_THREADS caps the readers (default: the cores, at most 4; each holds one
    // chunk, or one rank's records, in memory while it reads).
    threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 4);
    if (const char* env = std::getenv("SPEEDLAB_REPORT_THREADS"); env && *env) {
      const long v = std::strtol(env, nullptr, 10);
      if (v >= 1 && v <= 64) threads = static_cast<std::size_t>(v);
    }
  }
  threads = std::min(threads, std::max<std::size_t>(files.size(), 1));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();

  stream_summaries out;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (auto& m : done[i].messages) out.messages.push_back(std::move(m));
    if (!done[i].valid) continue;
    order.push_back(i);
  }
  // As read_stream_folder orders the processes.
  std::stable_sort(order.begin(), order.end(), [&done](std::size_t x, std::size_t y) {
    const auto& a = done[x].summary.info;
    const auto& b = done[y].summary.info;
    return std::tie(a.start_ns, a.pid) < std::tie(b.start_ns, b.pid);
  });
  for (const std::size_t i : order) {
    if (done[i].rank) {
      out.rank_process.push_back(out.processes.size());
      out.ranks.push_back(std::move(*done[i].rank));
    }
    out.processes.push_back(std::move(done[i].summary));
    out.files.push_back(files[i]);
  }
  return out;
}

program_analysis analyze_stream_folder(const std::filesystem::path& dir, program_facts facts, const device_model& device,
                                       const program_options& options, std::vector<std::string>* messages) {
  std::vector<std::string> said;
  const std::vector<std::filesystem::path> files = profile::stream_files(dir, said);
  stream_summaries s = summarize_streams(files, options);
  program_analysis a =
      analyze_program(std::move(s.processes), std::move(s.ranks), std::move(facts), device, options);
  if (messages) {
    messages->insert(messages->end(), said.begin(), said.end());
    messages->insert(messages->end(), s.messages.begin(), s.messages.end());
  }
  return a;
}
} // namespace speedlab::analysis
