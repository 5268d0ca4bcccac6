// A filesystem error in words, for a user's message: std::filesystem's what() reads
// "filesystem error: cannot create directories: Not a directory [out.txt]"; this says
// "cannot create the folder 'out.txt': 'out.txt' is a file, not a folder".
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace speedlab {

// The first part of `path` (itself included) that exists and is not a folder, the file
// that stops a folder from being made there; nullopt when there is none.
std::optional<std::filesystem::path> file_in_the_way(const std::filesystem::path& path);

// "<what was tried> '<path>': <why>", the why in words (a file in the way named).
std::string file_problem(const std::filesystem::filesystem_error& e);

} // namespace speedlab
