#include "model/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace speedlab {
namespace {

std::runtime_error file_error(const std::string& what, const std::filesystem::path& file, int error) {
  return std::runtime_error(file.string() + ": " + what + ": " + std::strerror(error));
}

// fsync of a file or folder by name; returns errno, 0 on success.
int sync_path(const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return errno;
  const int rc = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return rc;
}

} // namespace

atomic_file::atomic_file(std::filesystem::path target) : m_target(std::move(target)) {
  // A hidden name that no reader mistakes for a result; O_EXCL so two writers (two
  // processes, or two threads) never share one temporary file.
  static std::atomic<unsigned> counter{0};
  const auto folder = m_target.has_parent_path() ? m_target.parent_path() : std::filesystem::path(".");
  for (;;) {
    m_temp = folder / fmt::format(".{}.tmp.{}.{}", m_target.filename().string(), ::getpid(), counter++);
    const int fd = ::open(m_temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      break;
    }
    if (errno != EEXIST) throw file_error("cannot create a temporary file", m_temp, errno);
  }
}

atomic_file::~atomic_file() {
  if (m_committed) return;
  if (m_stream.is_open()) m_stream.close();
  ::unlink(m_temp.c_str()); // the target keeps its previous content
}

std::ofstream& atomic_file::stream() {
  if (!m_stream.is_open()) {
    m_stream.open(m_temp, std::ios::binary | std::ios::trunc);
    if (!m_stream) throw file_error("cannot write", m_temp, errno);
  }
  return m_stream;
}

void atomic_file::commit() {
  if (m_committed) return;
  if (m_stream.is_open()) {
    m_stream.flush();
    const bool ok = static_cast<bool>(m_stream);
    const int error = errno;
    m_stream.close();
    if (!ok || !m_stream) throw file_error("writing failed", m_target, error ? error : EIO);
  }
  if (const int e = sync_path(m_temp, O_RDONLY)) throw file_error("fsync failed", m_temp, e);
  if (::rename(m_temp.c_str(), m_target.c_str()) != 0) throw file_error("cannot replace", m_target, errno);
  m_committed = true;
  // The rename itself is durable only once the folder is synced; failing that is not worth
  // an error (the new file is whole either way).
  sync_path(m_target.has_parent_path() ? m_target.parent_path() : std::filesystem::path("."), O_RDONLY | O_DIRECTORY);
}

void write_file_atomically(const std::filesystem::path& target, std::string_view content) {
  atomic_file file(target);
  file.stream().write(content.data(), static_cast<std::streamsize>(content.size()));
  file.commit();
}

} // namespace speedlab
