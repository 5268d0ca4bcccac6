// Orders text as a reader expects numbers in it to sort: "n=4096" before "n=16384",
// "rows=2,cols=10" before "rows=10,cols=2". Runs of digits compare by value (a decimal part
// or exponent compares digit run by digit run, which keeps 1e+06 after 9e+05); other
// characters compare as bytes. Used wherever points are listed (console table, reports).
#pragma once

#include <cstddef>
#include <string>

namespace speedlab {

inline bool natural_less(const std::string& a, const std::string& b) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      std::size_t is = i, js = j; // skip leading zeros
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js;
      for (; is < ie; ++is, ++js)
        if (a[is] != b[js]) return a[is] < b[js];
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

// A comparator for ordered containers keyed by such text.
struct natural_order {
  bool operator()(const std::string& a, const std::string& b) const { return natural_less(a, b); }
};

} // namespace speedlab
