// JSON helpers shared by the model serializers: std::optional as null (nlohmann-json 3.11
// has no built-in support), and SPEEDLAB_JSON_FIELDS, which defines out-of-line
// to_json/from_json for a struct whose functions are declared in a header (nlohmann's own
// macros define them inline, which breaks such declarations). Missing keys keep defaults;
// integer members must hold whole numbers in their type's range (json_checked).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

NLOHMANN_JSON_NAMESPACE_BEGIN
template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v) j = *v;
    else j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& v) {
    if (j.is_null()) v.reset();
    else v = j.get<T>();
  }
};
NLOHMANN_JSON_NAMESPACE_END

namespace speedlab::json_checked {

template <class T>
inline constexpr bool is_count = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T, class = void>
struct holds_counts : std::false_type {};
template <class T>
struct holds_counts<T, std::void_t<typename T::value_type>>
    : std::bool_constant<is_count<typename T::value_type> && !std::is_same_v<T, std::string>> {};

// v as T when it is a whole number in T's range (an integer, or a float with no fraction);
// nullopt otherwise. nlohmann would cast any float to T, which is undefined behaviour outside
// T's range (found by fuzzing: a float pid in a stream header, "threads": 2444444444.2 in a
// results line). Every reader of integers from untrusted JSON goes through this.
template <class T>
std::optional<T> whole_number(const nlohmann::json& v) {
  using limits = std::numeric_limits<T>;
  if (v.is_number_unsigned()) {
    if (const auto u = v.get<std::uint64_t>(); u <= static_cast<std::uint64_t>(limits::max())) return static_cast<T>(u);
  } else if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i >= static_cast<std::int64_t>(limits::min()) &&
        (i < 0 || static_cast<std::uint64_t>(i) <= static_cast<std::uint64_t>(limits::max())))
      return static_cast<T>(i);
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    // max() + 1 is exact in a double (a power of two; max() itself rounds up to it for 64 bits).
    if (std::isfinite(d) && d == std::trunc(d) && d >= static_cast<double>(limits::min()) &&
        d < static_cast<double>(limits::max()) + 1.0)
      return static_cast<T>(d);
  }
  return std::nullopt;
}

// whole_number or std::invalid_argument naming the key and the range.
template <class T>
T whole(const nlohmann::json& v, const char* key) {
  if (const auto n = whole_number<T>(v)) return *n;
  using limits = std::numeric_limits<T>;
  throw std::invalid_argument(std::string("'") + key + "' must be a whole number from " + std::to_string(limits::min()) +
                              " to " + std::to_string(limits::max()) + ", found " + v.dump());
}

// field = v, with integers (and arrays of them) checked as above.
template <class T>
void assign(const nlohmann::json& v, const char* key, T& field) {
  if constexpr (is_count<T>) {
    field = whole<T>(v, key);
  } else {
    if constexpr (holds_counts<T>::value)
      if (v.is_array())
        for (const auto& e : v) (void)whole<typename T::value_type>(e, key);
    v.get_to(field);
  }
}

// A struct member: its key if present (null included, as nlohmann reads it), else the default.
template <class T>
void member(const nlohmann::json& j, const char* key, T& field, const T& fallback) {
  if (!j.is_object()) throw std::invalid_argument(std::string("expected a JSON object holding '") + key + "'");
  if (auto it = j.find(key); it != j.end()) assign(*it, key, field);
  else field = fallback;
}

} // namespace speedlab::json_checked

#define SPEEDLAB_JSON_FROM_CHECKED(v1) \
  ::speedlab::json_checked::member(nlohmann_json_j, #v1, nlohmann_json_t.v1, nlohmann_json_default_obj.v1);

#define SPEEDLAB_JSON_FIELDS(Type, ...)                                                         \
  void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {                  \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                    \
  }                                                                                             \
  void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {                \
    const Type nlohmann_json_default_obj{};                                                     \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(SPEEDLAB_JSON_FROM_CHECKED, __VA_ARGS__))          \
  }
