// What a recorded stream file is made of, read from its bytes by the chunk layout of
// docs/profile-format.md ("SLP1", u32 type, u32 length, u32 CRC, payload), not through
// profile::read_stream: the fixture tests use it to hold each committed stream to the format
// it claims (format 2: binary records chunks, type 5), so a writer that fell back to JSON
// records chunks would fail them even though the reader reads both.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "model/profile_stream.hpp"
#include "test_support.hpp"

namespace speedlab::testing {

struct stream_census {
  int format = 0;                              // the header chunk's "format"
  std::map<std::uint32_t, std::size_t> chunks; // chunk type -> how many
  bool whole = false;                          // the file ends exactly at a chunk's end

  std::size_t count(profile::chunk_type t) const {
    const auto it = chunks.find(static_cast<std::uint32_t>(t));
    return it == chunks.end() ? 0 : it->second;
  }
};

inline std::uint32_t le32(const std::string& data, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(data[at + static_cast<std::size_t>(i)]);
  return v;
}

// Walks the chunks from the start; stops at the first thing that is no whole chunk.
inline stream_census census_of(const std::filesystem::path& file) {
  const std::string data = read_text(file);
  stream_census c;
  std::size_t at = 0;
  while (at + profile::chunk_header_bytes <= data.size() && data.compare(at, 4, "SLP1") == 0) {
    const std::uint32_t type = le32(data, at + 4);
    const std::size_t length = le32(data, at + 8);
    if (at + profile::chunk_header_bytes + length > data.size()) break;
    if (type == static_cast<std::uint32_t>(profile::chunk_type::header)) {
      const auto header = nlohmann::json::parse(data.substr(at + profile::chunk_header_bytes, length), nullptr, false);
      if (header.is_object() && header.contains("format")) c.format = header["format"].get<int>();
    }
    ++c.chunks[type];
    at += profile::chunk_header_bytes + length;
  }
  c.whole = at == data.size();
  return c;
}

} // namespace speedlab::testing
