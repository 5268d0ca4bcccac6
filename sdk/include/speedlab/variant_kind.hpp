// speedlab plugin SDK: what a variant runs on, the kind every point of it carries into the
// results and reports. Included by <speedlab/plugin.hpp>; on its own by speedlab's results
// model, which needs the kind and nothing else of the plugin interface.
//
// Usage:
//
//   #include <speedlab/variant_kind.hpp>
//
//   speedlab::variant_kind k = speedlab::variant_kind::cuda;
//   std::string word = speedlab::to_string(k); // "cuda"
#pragma once

namespace speedlab {

enum class variant_kind { serial, threads, cuda };

inline const char* to_string(variant_kind k) {
  switch (k) {
  case variant_kind::serial:
    return "serial";
  case variant_kind::threads:
    return "threads";
  case variant_kind::cuda:
    return "cuda";
  }
  return "unknown";
}

} // namespace speedlab
