// model/strings.hpp: trim takes the blanks off both ends and nothing inside.
#include "speedlab_catch.hpp"

#include "model/strings.hpp"

using namespace speedlab;

TEST_CASE("strings: trim takes spaces and tabs off both ends only", "[strings]") {
  CHECK(trim("  2^10..2^20 \t") == "2^10..2^20");
  CHECK(trim("a b") == "a b");
  CHECK(trim(" \t ").empty());
  CHECK(trim("").empty());
  CHECK(trim("x\r\n") == "x\r\n"); // only the blanks asked for
  CHECK(trim("\tmodel name\t: x\r\n", " \t\r\n") == "model name\t: x");
}
