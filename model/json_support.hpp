// JSON helpers shared by the model serializers: std::optional as null (nlohmann-json 3.11
// has no built-in support), and SPEEDLAB_JSON_FIELDS, which defines out-of-line
// to_json/from_json for a struct whose functions are declared in a header (nlohmann's own
// macros define them inline, which breaks such declarations). Missing keys keep defaults.
#pragma once

#include <optional>

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

#define SPEEDLAB_JSON_FIELDS(Type, ...)                                                         \
  void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {                  \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                    \
  }                                                                                             \
  void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {                \
    const Type nlohmann_json_default_obj{};                                                     \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_FROM_WITH_DEFAULT, __VA_ARGS__))     \
  }
