// Runs a function in a forked child and brings back its one-line result, with a deadline
// that each heartbeat from the child renews. Used for every point (isolation.hpp) and for
// the device model (device_step.hpp), so CUDA never initializes in the parent, which forks.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace speedlab::app {

struct child_outcome {
  std::optional<std::string> result; // what the child's function returned
  bool timed_out = false;            // no heartbeat or result within the timeout: killed
  int interrupted_by = 0;            // a stop signal arrived (interrupt.hpp): killed, result dropped
  std::string last_heartbeat = "start";
  int wait_status = 0;               // from waitpid
  std::string error;                 // pipe()/fork() failed: nothing ran
};

using heartbeat_function = std::function<void(const std::string&)>;

// `body` runs in the child and returns the result (one line: no '\n'); it may call the
// heartbeat with a short text (no '\n') to say it is still making progress.
child_outcome run_in_child(const std::function<std::string(const heartbeat_function&)>& body, double timeout_s);

// How a child without a result ended: "Segmentation fault (SIGSEGV)", "exit code 3".
std::string describe_end(int wait_status);

} // namespace speedlab::app
