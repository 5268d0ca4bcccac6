// A profiler backend's own options block: the section of a suite file named after it
// ("cupti:", "counters:") and how each of its keys lands in profiler_options. The backend says
// what its keys are and checks what they mean; the host reads the suite (YAML, positions in
// the file, the one number parser) through a section_reader, so no backend sees YAML and the
// host names no backend's keys.
//
//   void read_mine(section_reader& r, profiler_options& o) {
//     if (r.has("depth")) o.depth = r.count("depth", {1, 64, true, "levels"});
//   }
#pragma once

#include <string>
#include <vector>

namespace speedlab::profiling {

class profiler_options;

// A number's range, whether it counts something (whole numbers only) and its unit for
// messages: the host's number rule (app/suite/checked_number.hpp) for every number a user gives.
struct number_bounds {
  double min, max;
  bool integer;
  const char* unit; // "seconds", "MiB", ...; "" for none
};

// One section of the suite, read by the host. Each reader names the key ("<section>.<key>")
// and its place in the file in every message, and throws the host's configuration error.
class section_reader {
public:
  virtual ~section_reader() = default;
  virtual bool has(const std::string& key) const = 0;
  virtual double number(const std::string& key, const number_bounds& bounds) = 0;
  virtual bool boolean(const std::string& key) = 0;
  virtual std::string choice(const std::string& key, const std::vector<std::string>& choices) = 0;
  // A name or a list of names.
  virtual std::vector<std::string> names(const std::string& key) = 0;
  // A problem with the value of `key` (the whole section when `key` is empty), at its place.
  [[noreturn]] virtual void fail(const std::string& key, const std::string& problem) = 0;

  std::size_t count(const std::string& key, const number_bounds& bounds) {
    return static_cast<std::size_t>(number(key, bounds));
  }
};

struct options_section {
  std::vector<std::string> keys; // the only keys the section takes
  void (*read)(section_reader& reader, profiler_options& out);
  // A line for the run's notes ("" for none); `selected`: the run uses this backend.
  std::string (*note)(const profiler_options& options, bool selected);
};

} // namespace speedlab::profiling
