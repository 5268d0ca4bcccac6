// Which Python frames are the user's own: the one statement of the folding rule (a
// process's python chunk carries the prefixes it used, docs/profile-format.md).
//
// A frame is the user's unless its file
//   - is under one of the interpreter's prefixes (sys.prefix, base_prefix, exec_prefix,
//     base_exec_prefix: the standard library and anything installed with it) or an extra
//     library prefix (option python_library_paths),
//   - has a site-packages or dist-packages folder in its path (installed packages anywhere),
//   - is generated code: a name in angle brackets (<frozen importlib._bootstrap>, <string>,
//     torch.fx's <eval_with_key>.N), except <stdin> and <ipython-input-...> (typed by the
//     user), or a file under an Inductor cache folder (torchinductor_<user>, or
//     $TORCHINDUCTOR_CACHE_DIR), or is empty.
// An extra user prefix (option python_user_paths) wins over all of these.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace speedlab::profiling::python {

struct fold_rule {
  std::vector<std::string> library_prefixes; // the interpreter's prefixes and the extra ones
  std::vector<std::string> user_prefixes;    // win over every other test
  bool is_user(std::string_view file) const;
  // A prefix added once, without a trailing slash; "" and "/" are ignored (they would take everything).
  static void add_prefix(std::vector<std::string>& to, std::string prefix);
};

// "a:b:c" (the path separator) as prefixes.
std::vector<std::string> split_paths(std::string_view list);

} // namespace speedlab::profiling::python
