// Catch2 for the tests: v2 (Debian 12) or v3 (Ubuntu 24.04) behind one include, with the
// v2 names the tests use.
#pragma once

#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#include <string>
namespace Catch {
inline auto Contains(const std::string& s, CaseSensitive cs = CaseSensitive::Yes) {
  return Matchers::ContainsSubstring(s, cs);
}
using Matchers::EndsWith;
using Matchers::StartsWith;
} // namespace Catch
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
