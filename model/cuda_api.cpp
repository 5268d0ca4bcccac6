#include "model/cuda_api.hpp"

namespace speedlab::trace {

std::string_view strip_api_version(std::string_view name) {
  const auto pos = name.rfind("_v");
  if (pos == std::string_view::npos || pos + 2 >= name.size()) return name;
  for (std::size_t i = pos + 2; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return name;
  return name.substr(0, pos);
}

api_kind classify_api(std::string_view full_name) {
  const std::string_view name = strip_api_version(full_name);
  auto starts = [&](std::string_view p) { return name.starts_with(p); };
  auto has = [&](std::string_view p) { return name.find(p) != std::string_view::npos; };
  if (has("Synchronize")) return api_kind::synchronize;
  if (name == "cudaEventQuery" || name == "cudaStreamQuery" || name == "cuEventQuery" || name == "cuStreamQuery")
    return api_kind::poll;
  if (starts("cudaMemcpy") || starts("cuMemcpy"))
    return has("Async") ? api_kind::copy_async : api_kind::copy_sync;
  if (starts("cudaMemset") || starts("cuMemset")) return api_kind::memset;
  if (has("LaunchKernel") || starts("cuLaunch") || starts("cudaLaunch") || starts("cudaGraphLaunch") ||
      starts("cuGraphLaunch"))
    return api_kind::launch;
  if (starts("cudaMalloc") || starts("cudaHostAlloc") || starts("cuMemAlloc") || starts("cuMemHostAlloc") ||
      starts("cuMemCreate"))
    return api_kind::alloc;
  if (starts("cudaFree") || starts("cuMemFree") || starts("cuMemRelease")) return api_kind::free;
  return api_kind::other;
}

std::string_view to_string(api_kind k) {
  switch (k) {
  case api_kind::launch: return "launch";
  case api_kind::synchronize: return "synchronize";
  case api_kind::poll: return "poll";
  case api_kind::copy_sync: return "copy_sync";
  case api_kind::copy_async: return "copy_async";
  case api_kind::memset: return "memset";
  case api_kind::alloc: return "alloc";
  case api_kind::free: return "free";
  case api_kind::other: return "other";
  }
  return "other";
}

bool is_collective_kernel(std::string_view name) {
  // `| 0x20` lowers an ASCII letter and maps no other byte onto one.
  auto lower = [name](std::size_t i) { return static_cast<char>(name[i] | 0x20); };
  for (std::size_t i = 0; i + 4 <= name.size(); ++i)
    if (lower(i) == 'n' && lower(i + 1) == 'c' && lower(i + 2) == 'c' && lower(i + 3) == 'l') return true;
  return false;
}

} // namespace speedlab::trace
