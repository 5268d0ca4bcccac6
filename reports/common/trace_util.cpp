#include "reports/common/trace_util.hpp"

namespace speedlab::reports {

const char* copy_kind_short(std::uint8_t k) {
  switch (k) {
  case 1: return "HtoD";
  case 2: return "DtoH";
  case 3: return "HtoA";
  case 4: return "AtoH";
  case 5: return "AtoA";
  case 6: return "AtoD";
  case 7: return "DtoA";
  case 8: return "DtoD";
  case 9: return "HtoH";
  case 10: return "PtoP";
  default: return "Unknown";
  }
}

const char* copy_kind_label(std::uint8_t k) {
  switch (k) {
  case 1: return "Host-to-Device";
  case 2: return "Device-to-Host";
  case 3: return "Host-to-Array";
  case 4: return "Array-to-Host";
  case 5: return "Array-to-Array";
  case 6: return "Array-to-Device";
  case 7: return "Device-to-Array";
  case 8: return "Device-to-Device";
  case 9: return "Host-to-Host";
  case 10: return "Peer-to-Peer";
  default: return "Unknown";
  }
}

const char* memory_kind_label(std::uint8_t k) {
  switch (k) {
  case 1: return "Pageable";
  case 2: return "Pinned";
  case 3: return "Device";
  case 4: return "Array";
  case 5: return "Managed";
  case 6: return "Device Static";
  case 7: return "Managed Static";
  default: return "Unknown";
  }
}

int nsys_memory_kind(std::uint8_t k) { return k == 0 || k > 7 ? 7 : k - 1; }

std::string memcpy_event_name(const trace::memcpy_record& m) {
  return std::string("Memcpy ") + copy_kind_short(m.copy_kind) + " (" + memory_kind_label(m.src_kind) + " -> " +
         memory_kind_label(m.dst_kind) + ")";
}

std::string memset_event_name(const trace::memset_record& m) {
  return std::string("Memset (") + memory_kind_label(m.memory_kind) + ")";
}

const char* sync_type_label(std::uint8_t t) {
  switch (t) {
  case 1: return "Event sync";
  case 2: return "Stream wait event";
  case 3: return "Stream sync";
  case 4: return "Context sync";
  default: return "Sync";
  }
}

std::string kernel_short_name(const std::string& demangled) {
  // Cut the parameter list: the last '(' at template depth 0.
  std::string s = demangled;
  int depth = 0;
  std::size_t paren = std::string::npos;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>' && depth > 0) --depth;
    else if (s[i] == '(' && depth == 0) {
      paren = i;
      break;
    }
  }
  if (paren != std::string::npos) s.erase(paren);
  // Drop template arguments at the end ("k<float>" -> "k").
  while (!s.empty() && s.back() == '>') {
    int d = 0;
    std::size_t i = s.size();
    while (i-- > 0) {
      if (s[i] == '>') ++d;
      else if (s[i] == '<' && --d == 0) break;
    }
    if (i == std::string::npos || i >= s.size()) break;
    s.erase(i);
  }
  // Drop the return type and namespaces: keep what follows the last space or "::".
  if (auto sp = s.find_last_of(' '); sp != std::string::npos) s.erase(0, sp + 1);
  if (auto ns = s.rfind("::"); ns != std::string::npos) s.erase(0, ns + 2);
  return s.empty() ? demangled : s;
}

} // namespace speedlab::reports
