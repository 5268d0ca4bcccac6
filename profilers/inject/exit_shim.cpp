// libspeedlab-exit.so: `speedlab profile` preloads it (LD_PRELOAD) into the program's
// processes, because _exit cannot be caught and CUDA dlopens the injection library, whose
// symbols therefore never interpose. It defines _exit and _Exit; when the injection library
// of this process registered its hook (a process that initialized CUDA), the hook runs
// first: the flush thread writes the records and the closing chunk
// (termination.hpp), then the process leaves as it asked. Without a hook (no CUDA, or a
// forked child: the hook itself checks the pid) it is exit_group at once, as glibc's _exit.
// Nothing else of the program changes; no C++ runtime is used, so nothing else is loaded.
#include <sys/syscall.h>
#include <unistd.h>

namespace {
void (*g_hook)(int) = nullptr;
} // namespace

extern "C" {

__attribute__((visibility("default"))) void speedlab_exit_shim_set_hook(void (*hook)(int)) {
  __atomic_store_n(&g_hook, hook, __ATOMIC_RELEASE);
}

__attribute__((visibility("default"))) void _exit(int status) {
  if (void (*hook)(int) = __atomic_load_n(&g_hook, __ATOMIC_ACQUIRE)) hook(status);
  for (;;) ::syscall(SYS_exit_group, status);
}

__attribute__((visibility("default"))) void _Exit(int status) { _exit(status); }

} // extern "C"
