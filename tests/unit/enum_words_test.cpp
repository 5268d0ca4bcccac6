// The SDK's enum word tables (<speedlab/enum_words.hpp>): a value reads as its word and a word
// as its value; what the table lacks reads as the fallback word, or as no value.
#include "speedlab_catch.hpp"

#include <speedlab/enum_words.hpp>

using namespace speedlab;

namespace {
enum class shade { light, dark, unlisted };
constexpr enum_word<shade> shade_words[] = {{shade::light, "light"}, {shade::dark, "dark grey"}};
} // namespace

TEST_CASE("enum words: each value reads as its word and back", "[enum_words]") {
  for (const auto& w : shade_words) {
    CHECK(std::string(word_of(w.value, shade_words, "?")) == w.word);
    CHECK(enum_of(w.word, shade_words) == w.value);
  }
  static_assert(enum_of("dark grey", shade_words) == shade::dark, "usable at compile time");
}

TEST_CASE("enum words: a value or a word the table lacks", "[enum_words]") {
  CHECK(std::string(word_of(shade::unlisted, shade_words, "?")) == "?");
  CHECK_FALSE(enum_of("dark", shade_words)); // whole words only
  CHECK_FALSE(enum_of("", shade_words));
}
