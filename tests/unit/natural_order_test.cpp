// Points sort as numbers read: model/natural_order.hpp.
#include "speedlab_catch.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include "model/natural_order.hpp"

using speedlab::natural_less;

TEST_CASE("natural order sorts digit runs by value", "[natural-order]") {
  CHECK(natural_less("n=4096", "n=16384"));
  CHECK_FALSE(natural_less("n=16384", "n=4096"));
  CHECK(natural_less("cols=2,rows=10", "cols=10,rows=2"));
  CHECK(natural_less("a", "b"));
  CHECK(natural_less("n=7", "n=07x")); // same value, the longer text after
  CHECK_FALSE(natural_less("n=5", "n=5"));
  CHECK(natural_less("", "n=1"));
  std::vector<std::string> keys = {"rows=16384", "rows=4096", "rows=64", "rows=1024"};
  std::sort(keys.begin(), keys.end(), natural_less);
  CHECK(keys == std::vector<std::string>{"rows=64", "rows=1024", "rows=4096", "rows=16384"});
  std::map<std::string, int, speedlab::natural_order> m{{"x=100", 1}, {"x=20", 2}};
  CHECK(m.begin()->first == "x=20");
}
