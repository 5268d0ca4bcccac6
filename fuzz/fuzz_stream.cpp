// libFuzzer target: the profile stream reader (model/profile_stream.hpp) on hostile bytes.
// The first byte picks what the rest is:
//   0: a stream file as it is, read whole and through a sink;
//   1: one binary records payload (decode_records_binary), past the checksum that guards it
//      in a stream;
//   2: chunks to frame with right checksums: repeated (u8 type, u16 length, bytes), so the
//      payload decoders and the reader's state (header first, close, notes) are reached.
// Seeds: fuzz/corpus/stream (one of each form).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "model/profile_stream.hpp"

namespace {

using namespace speedlab;

void read_both(std::string_view data) {
  (void)profile::read_stream_bytes(data, "fuzz");
  std::size_t records = 0;
  (void)profile::read_stream_bytes(data, "fuzz", [&](const profile::process_info&, profile::records_batch&& b) {
    records += b.trace.kernels.size() + b.trace.api_calls.size();
  });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(bytes) + 1, size - 1);
  try {
    switch (bytes[0] % 3) {
    case 0: read_both(rest); break;
    case 1: (void)profile::decode_records_binary(rest); break;
    default: {
      std::string stream;
      std::size_t i = 0;
      while (i + 3 <= rest.size()) {
        const auto type = static_cast<std::uint32_t>(static_cast<unsigned char>(rest[i]) % 10); // 0..9: every chunk type and one unknown
        std::size_t n = static_cast<unsigned char>(rest[i + 1]) | std::size_t{static_cast<unsigned char>(rest[i + 2])} << 8;
        i += 3;
        n = std::min(n, rest.size() - i);
        stream += profile::encode_chunk(static_cast<profile::chunk_type>(type), rest.substr(i, n));
        i += n;
      }
      read_both(stream);
    }
    }
  } catch (const std::exception&) {
  }
  return 0;
}
