// speedlab_signal_probe: a program the unit tests run under `speedlab profile` and end by a
// signal or _exit, without a GPU. It starts the injection library by hand, as CUDA would
// (dlopen CUDA_INJECTION64_PATH, InitializeInjection), records RANGES NVTX ranges (NVTX
// loads the same library as its tool through NVTX_INJECTION64_PATH), creates READY_FILE and
// then, by MODE:
//   wait            sleeps until a signal ends it (the default action)
//   exit            leaves through _exit(7)
//   handler-before  installs its own SIGTERM handler before the library starts, then waits
//   handler-after   installs it after the library started, then waits until the library
//                   has put its handler back in front (as a program that sets its handler
//                   late sees), then waits
//   busy            loops forever taking, for 20 ms at a time, the lock the library's
//                   termination flush needs (speedlab_inject_test_hold): a thread busy
//                   inside CUDA calls when the signal comes
//   stuck           takes that lock and never lets it go, spinning
//   restore-plain   saves the SIGTERM and SIGINT dispositions (the library's), puts in its
//                   own and then restores the saved ones as plain one-argument handlers, as a
//                   library did under CuPy on the GPU machine; waits until the library has
//                   put its handler back in front, then waits
// The handler writes "handled SIGTERM" to HANDLER_FILE and leaves through _exit(42).
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include <nvtx3/nvToolsExt.h>

namespace {

const char* g_handler_file = nullptr;

void on_term(int) {
  const int fd = ::open(g_handler_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const char text[] = "handled SIGTERM\n";
  if (fd >= 0) {
    (void)!::write(fd, text, sizeof text - 1);
    ::close(fd);
  }
  _exit(42);
}

void install_handler() {
  struct sigaction sa{};
  sa.sa_handler = &on_term;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
}

bool ours_in_front() {
  struct sigaction now{};
  ::sigaction(SIGTERM, nullptr, &now);
  return (now.sa_flags & SA_SIGINFO) || now.sa_handler != &on_term;
}

// What a library that saves only sa_handler does: ours comes back without SA_SIGINFO.
void restore_as_plain_handlers() {
  for (int sig : {SIGTERM, SIGINT}) {
    struct sigaction saved{}, temporary{};
    ::sigaction(sig, nullptr, &saved);
    temporary.sa_handler = &on_term;
    sigemptyset(&temporary.sa_mask);
    ::sigaction(sig, &temporary, nullptr);
    struct sigaction plain{};
    plain.sa_handler = reinterpret_cast<void (*)(int)>(saved.sa_sigaction);
    sigemptyset(&plain.sa_mask);
    ::sigaction(sig, &plain, nullptr);
  }
}

bool siginfo_in_front(int sig) {
  struct sigaction now{};
  ::sigaction(sig, nullptr, &now);
  return now.sa_flags & SA_SIGINFO;
}

void (*g_hold)(int) = nullptr;

void spin_ms(long ms) {
  timespec start{}, now{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  do clock_gettime(CLOCK_MONOTONIC, &now);
  while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

int start_library() {
  const char* lib = std::getenv("CUDA_INJECTION64_PATH");
  void* handle = lib ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : nullptr;
  auto init = handle ? reinterpret_cast<int (*)()>(dlsym(handle, "InitializeInjection")) : nullptr;
  if (!init) {
    std::fprintf(stderr, "signal_probe: cannot start the injection library (%s)\n", lib ? dlerror() : "no CUDA_INJECTION64_PATH");
    return 1;
  }
  init();
  g_hold = reinterpret_cast<void (*)(int)>(dlsym(handle, "speedlab_inject_test_hold"));
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: speedlab_signal_probe RANGES READY_FILE wait|exit|handler-before|handler-after|busy|stuck|restore-plain [HANDLER_FILE]\n");
    return 2;
  }
  const long ranges = std::strtol(argv[1], nullptr, 10);
  const std::string mode = argv[3];
  g_handler_file = argc > 4 ? argv[4] : "/dev/null";
  if (mode == "handler-before") install_handler();
  if (start_library() != 0) return 1;
  if (mode == "handler-after") {
    install_handler();
    for (int i = 0; i < 600 && !ours_in_front(); ++i) ::usleep(50000); // the library rechecks every 250 ms
  }
  if (mode == "restore-plain") {
    restore_as_plain_handlers();
    for (int i = 0; i < 600 && !(siginfo_in_front(SIGTERM) && siginfo_in_front(SIGINT)); ++i) ::usleep(50000);
  }
  for (long i = 0; i < ranges; ++i) {
    nvtxRangePushA("step");
    nvtxRangePop();
  }
  const int fd = ::open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) ::close(fd);
  if (mode == "exit") _exit(7);
  if ((mode == "busy" || mode == "stuck") && g_hold) {
    if (mode == "stuck") g_hold(1);
    for (;;) { // the signal lands while the lock is held, in the middle of a "call"
      if (mode == "busy") g_hold(1);
      spin_ms(20);
      if (mode == "busy") {
        g_hold(0);
        // A thread between two driver calls: without a gap std::mutex (unfair) can hand the
        // lock straight back to this loop and starve the flush (seen on a loaded machine).
        spin_ms(5);
      }
    }
  }
  for (;;) ::pause();
}
