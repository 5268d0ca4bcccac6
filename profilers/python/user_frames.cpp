#include "profilers/python/user_frames.hpp"

#include <algorithm>
#include <cstdlib>

namespace speedlab::profiling::python {
namespace {

// `file` is `prefix` or inside it (a whole folder name: /usr/lib is not /usr/lib64).
bool under(std::string_view file, std::string_view prefix) {
  return file.starts_with(prefix) && (file.size() == prefix.size() || file[prefix.size()] == '/');
}

bool has_folder(std::string_view file, std::string_view folder) {
  for (std::size_t at = 0; (at = file.find(folder, at)) != std::string_view::npos; at += folder.size()) {
    const bool starts = at == 0 || file[at - 1] == '/';
    const bool ends = at + folder.size() == file.size() || file[at + folder.size()] == '/';
    if (starts && ends) return true;
  }
  return false;
}

bool generated(std::string_view file) {
  if (file.empty()) return true;
  if (file.front() == '<') return !(file == "<stdin>" || file.starts_with("<ipython-input-"));
  if (file.find("/torchinductor_") != std::string_view::npos) return true;
  const char* cache = std::getenv("TORCHINDUCTOR_CACHE_DIR");
  return cache && *cache && under(file, cache);
}

} // namespace

void fold_rule::add_prefix(std::vector<std::string>& to, std::string prefix) {
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  if (prefix.empty() || prefix == "/") return;
  if (std::find(to.begin(), to.end(), prefix) == to.end()) to.push_back(std::move(prefix));
}

bool fold_rule::is_user(std::string_view file) const {
  for (const auto& p : user_prefixes)
    if (under(file, p)) return true;
  if (generated(file)) return false;
  for (const auto& p : library_prefixes)
    if (under(file, p)) return false;
  return !has_folder(file, "site-packages") && !has_folder(file, "dist-packages");
}

std::vector<std::string> split_paths(std::string_view list) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t colon = std::min(list.find(':', at), list.size());
    if (colon > at) fold_rule::add_prefix(out, std::string(list.substr(at, colon - at)));
    at = colon + 1;
  }
  return out;
}

} // namespace speedlab::profiling::python
