// `speedlab profile [--out DIR] [options] -- PROGRAM [ARGS...]`: runs an unmodified program
// with speedlab's injection library (profilers/inject), then reads the per-process streams
// it wrote (model/profile_stream.hpp) and writes the program's facts and reports into DIR.
// Exits with PROGRAM's exit code (128+N for a signal), 127 when PROGRAM cannot start, 2 on
// a usage or output-folder problem.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "model/profile.hpp"
#include "model/profile_options.hpp"

namespace speedlab::app {

struct profile_options {
  std::string out = "speedlab-profile";
  bool force = false;                  // write into a non-empty DIR (an earlier profile's streams are removed)
  std::uint32_t flush_interval_ms = profile::default_flush_ms;
  // Hardware counters (--metrics): a metric set or names joined by commas; empty: none. Read
  // for the first K launches of each distinct (kernel, grid, block) by replaying them.
  std::string metrics;
  std::size_t counters_per_kernel = 2;
  // The device model for the kernels' roofs (--calibrate, as `run`): off, cached, quick, full.
  std::string calibrate = "cached";
  // Source lines (--source): PC sampling over the first N kernel launches, SASS metrics over
  // the next N (--source-launches N).
  bool source = false;
  std::size_t source_launches = 100;
  // Python stacks at every recorded CUDA call of a Python program (on unless
  // --no-python-lines; profilers/python): the line of the user's code behind each.
  bool python_lines = true;
  // Every CUDA call recorded, as CUPTI's activity records (--full), instead of the light
  // default: launch calls through callbacks in windows (docs/profile-format.md).
  bool full = false;
  // Record only (--no-report): the streams and the program's facts, no device model and no
  // report, so that nothing but the program's own run happens where it runs (a production
  // job, a benchmark); `speedlab report DIR` analyzes the folder later, anywhere.
  bool report = true;
  std::vector<std::string> program;    // argv of PROGRAM
  std::string command_line;            // speedlab's own
};
int command_profile(const profile_options& options);

// The device model for a profile's reports, the ceilings of its kernels' roofs: with GPU
// work, obtained as `run` obtains it (app/run/device_step: in a child, so CUDA stays out of
// speedlab's process; mode "cached": this GPU's cached calibration, else a quick one, saved)
// and written to dir/device.json, where `speedlab report DIR` reads it again. nullopt without
// GPU work (nothing to place under a roof) or when it could not be had (a warning says why).
std::optional<analysis::device_model> profile_device_model(const std::string& mode, const std::filesystem::path& dir,
                                                           bool gpu_work);

// speedlab profile started by a launcher as one of its ranks (`torchrun ... speedlab profile
// --out DIR -- ...`): every rank gets the same --out, so each writes DIR/rank-<R> and
// `speedlab report DIR` merges them. The rank is the first of RANK, OMPI_COMM_WORLD_RANK,
// PMI_RANK, PMIX_RANK, SLURM_PROCID that is a non-negative integer, when a world size
// (WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS) above 1 says there are several;
// nullopt otherwise (a single process, or speedlab outside the launcher). env: getenv.
std::optional<int> launcher_rank(const std::function<const char*(const char*)>& env);

} // namespace speedlab::app
