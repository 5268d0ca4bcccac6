// Every file speedlab writes into an output folder goes through here: the content goes to a
// temporary file in the same folder, is fsync'ed, then renamed over the target, so a crash
// or a full disk mid-write leaves the previous file whole and a reader never sees half a
// file. (results.jsonl is the exception: it is appended and fsync'ed line by line.)
#pragma once

#include <filesystem>
#include <fstream>
#include <string_view>

namespace speedlab {

class atomic_file {
public:
  // Creates the temporary file beside `target` (the folder must exist). Throws
  // std::runtime_error naming the file on failure.
  explicit atomic_file(std::filesystem::path target);
  ~atomic_file(); // removes the temporary file unless commit() succeeded
  atomic_file(const atomic_file&) = delete;
  atomic_file& operator=(const atomic_file&) = delete;

  // For writers that open the file by name themselves (SQLite); close it before commit().
  const std::filesystem::path& temp_path() const { return m_temp; }
  const std::filesystem::path& target() const { return m_target; }
  // For streamed writers; commit() closes it.
  std::ofstream& stream();
  // Flushes, fsyncs, renames over the target and syncs the folder; throws naming the file
  // when any step (including an earlier stream write) failed, and the target is untouched.
  void commit();

private:
  std::filesystem::path m_target, m_temp;
  std::ofstream m_stream;
  bool m_committed = false;
};

// The whole content at once.
void write_file_atomically(const std::filesystem::path& target, std::string_view content);

} // namespace speedlab
