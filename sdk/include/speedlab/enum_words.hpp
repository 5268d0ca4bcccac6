// speedlab plugin SDK: the words of an enum, in one table that both directions read (to the
// word, and back from it), instead of a switch and a parse kept in step by hand. C++17.
//
// Usage:
//
//   #include <speedlab/enum_words.hpp>
//
//   enum class color { red, green };
//   inline constexpr speedlab::enum_word<color> color_words[] = {{color::red, "red"}, {color::green, "green"}};
//   const char* w = speedlab::word_of(color::green, color_words, "?"); // "green"
//   std::optional<color> c = speedlab::enum_of("red", color_words);    // color::red
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace speedlab {

template <class E>
struct enum_word {
  E value;
  const char* word;
};

// The word of `value`; `otherwise` for a value the table lacks (a corrupted enum).
template <class E, std::size_t N>
constexpr const char* word_of(E value, const enum_word<E> (&words)[N], const char* otherwise) {
  for (const auto& w : words)
    if (w.value == value) return w.word;
  return otherwise;
}

// The value whose word is `word`; nullopt for a word the table lacks.
template <class E, std::size_t N>
constexpr std::optional<E> enum_of(std::string_view word, const enum_word<E> (&words)[N]) {
  for (const auto& w : words)
    if (word == w.word) return w.value;
  return std::nullopt;
}

} // namespace speedlab
