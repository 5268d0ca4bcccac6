// libspeedlab-exit.so: `speedlab profile` preloads it (LD_PRELOAD) into the program's
// processes, because _exit cannot be caught and CUDA dlopens the injection library, whose
// symbols therefore never interpose. It defines _exit, _Exit and kill (below); when the injection library
// of this process registered its hook (a process that initialized CUDA), the hook runs
// first: the flush thread writes the records and the closing chunk
// (termination.hpp), then the process leaves as it asked. Without a hook (no CUDA, or a
// forked child: the hook itself checks the pid) it is exit_group at once, as glibc's _exit.
// Nothing else of the program changes; no C++ runtime is used, so nothing else is loaded.
#include <sys/syscall.h>
#include <unistd.h>

namespace {
void (*g_hook)(int) = nullptr;
void (*g_kill_hook)(int) = nullptr;
} // namespace

extern "C" {

// exit_hook: before _exit(status); kill_hook: before the process signals itself (kill with
// its own pid or 0): Python leaves after an uncaught KeyboardInterrupt by resetting SIGINT
// to the default and kill(getpid(), SIGINT), after its finalization and without exit(), so
// no exit handler runs; the hook closes the stream when that signal will end the process.
__attribute__((visibility("default"))) void speedlab_exit_shim_set_hooks(void (*exit_hook)(int),
                                                                         void (*kill_hook)(int)) {
  __atomic_store_n(&g_hook, exit_hook, __ATOMIC_RELEASE);
  __atomic_store_n(&g_kill_hook, kill_hook, __ATOMIC_RELEASE);
}

__attribute__((visibility("default"))) int kill(pid_t pid, int sig) {
  if (void (*hook)(int) = __atomic_load_n(&g_kill_hook, __ATOMIC_ACQUIRE); hook && (pid == 0 || pid == ::getpid()))
    hook(sig);
  return static_cast<int>(::syscall(SYS_kill, pid, sig));
}

__attribute__((visibility("default"))) void _exit(int status) {
  if (void (*hook)(int) = __atomic_load_n(&g_hook, __ATOMIC_ACQUIRE)) hook(status);
  for (;;) ::syscall(SYS_exit_group, status);
}

__attribute__((visibility("default"))) void _Exit(int status) { _exit(status); }

} // extern "C"
