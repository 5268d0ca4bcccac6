#include "model/file_problem.hpp"

#include <cctype>
#include <cerrno>

#include <fmt/format.h>

namespace speedlab {
namespace fs = std::filesystem;

namespace {

// libstdc++'s operation words, as a user reads them ("directory" is a folder in speedlab's messages).
std::string operation_words(const fs::filesystem_error& e) {
  std::string what = e.what();
  const std::string prefix = "filesystem error: ";
  if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
  const auto end = what.find(": " + e.code().message());
  if (end == std::string::npos) return "cannot use";
  what = what.substr(0, end);
  if (what.find("create director") != std::string::npos) return "cannot create the folder";
  if (what.find("cannot open directory") != std::string::npos) return "cannot open the folder";
  for (auto at = what.find("directory"); at != std::string::npos; at = what.find("directory", at))
    what.replace(at, 9, "folder");
  return what;
}

std::string reason_words(const fs::filesystem_error& e) {
  switch (e.code().value()) {
  case ENOTDIR:
    if (const auto file = file_in_the_way(e.path1()))
      return fmt::format("'{}' is a file, not a folder", file->string());
    return "a part of the path is a file, not a folder";
  case EACCES:
  case EPERM:
    return "permission denied";
  case ENOENT:
    return "no such file or folder";
  case EEXIST:
    return "it exists already";
  case EISDIR:
    return "it is a folder, not a file";
  case ENOTEMPTY:
    return "the folder is not empty";
  case ENOSPC:
    return "no space left on the disk";
  case EDQUOT:
    return "the disk quota is used up";
  case EROFS:
    return "the file system is read-only";
  case ENAMETOOLONG:
    return "a name in it is too long";
  case ELOOP:
    return "too many symbolic links (a loop?)";
  default:
    break;
  }
  std::string words = e.code().message();
  if (!words.empty()) words[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(words[0])));
  return words;
}

} // namespace

std::optional<fs::path> file_in_the_way(const fs::path& path) {
  fs::path part;
  for (const auto& name : path) {
    part /= name;
    std::error_code ec;
    const auto status = fs::status(part, ec);
    if (ec || !fs::exists(status)) return std::nullopt; // nothing further down exists
    if (!fs::is_directory(status)) return part;
  }
  return std::nullopt;
}

std::string file_problem(const fs::filesystem_error& e) {
  std::string text = operation_words(e);
  if (!e.path1().empty()) text += fmt::format(" '{}'", e.path1().string());
  if (!e.path2().empty()) text += fmt::format(" (and '{}')", e.path2().string());
  return text + ": " + reason_words(e);
}

} // namespace speedlab
