// Test plugins that fail while being loaded or described, one way per build (BROKEN_WAY):
// the loader must report each with the reason and go on with the other plugins.
#include <chrono>
#include <cstdlib>
#include <thread>

#include <speedlab/plugin.hpp>

#define WAY_CRASH 1
#define WAY_ABORT 2
#define WAY_HANG 3
#define WAY_UNDEFINED 4
#define WAY_MISSING_DEP 5
#define WAY_EXIT 6

#if BROKEN_WAY == WAY_UNDEFINED
extern "C" int speedlab_test_symbol_nobody_defines(); // left undefined on purpose
#elif BROKEN_WAY == WAY_MISSING_DEP
extern "C" int speedlab_test_dependency_value(); // in a library that is not on the search path
#endif

namespace {

speedlab::workload_info describe() {
#if BROKEN_WAY == WAY_CRASH
  volatile int* null_pointer = nullptr;
  *null_pointer = 1;
#elif BROKEN_WAY == WAY_ABORT
  std::abort();
#elif BROKEN_WAY == WAY_HANG
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
#elif BROKEN_WAY == WAY_UNDEFINED
  if (speedlab_test_symbol_nobody_defines() == 42) return {"never", "never"};
#elif BROKEN_WAY == WAY_MISSING_DEP
  if (speedlab_test_dependency_value() == 42) return {"never", "never"};
#elif BROKEN_WAY == WAY_EXIT
  std::exit(3);
#endif
  return {"broken", "should not load"};
}

} // namespace

SPEEDLAB_REGISTER_WORKLOAD(describe)
