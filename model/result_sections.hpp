// A point's results from one backend beyond what every point has (its timings and split):
// the backend's own section, a keyed extension of the point, not a field of a shared struct.
// A section type names its key (`static constexpr const char* section_key = "counters";`),
// which is also its member in the point's JSON (results.jsonl, results.json), written and
// read by the type's own to_json/from_json.
//
//   r.sections.set(std::move(pass));                                // a backend's session
//   if (const auto* c = r.sections.get<counters::counter_pass>()) ... // analysis, reports
//   into.sections.add_missing(std::move(later.sections));           // the runner: never replaces
//
// Reading a saved point needs the key's type: result_sections.cpp lists the section types
// (one line per backend that has a section); register_section<T>() adds one from elsewhere
// (a test's backend).
#pragma once

#include <any>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace speedlab {

class result_sections {
public:
  template <class T>
  const T* get() const {
    auto it = m_sections.find(T::section_key);
    return it == m_sections.end() ? nullptr : std::any_cast<T>(&it->second.value);
  }
  template <class T>
  T* get() {
    auto it = m_sections.find(T::section_key);
    return it == m_sections.end() ? nullptr : std::any_cast<T>(&it->second.value);
  }
  template <class T>
  bool has() const {
    return get<T>() != nullptr;
  }
  // Replaces the section of T's key.
  template <class T>
  void set(T value) {
    m_sections[T::section_key] = {std::any(std::move(value)),
                                  [](nlohmann::json& j, const std::any& v) { j = std::any_cast<const T&>(v); }};
  }
  void erase(const std::string& key) { m_sections.erase(key); }
  bool empty() const { return m_sections.empty(); }
  std::vector<std::string> keys() const;

  // Each section of `other` whose key this one lacks: a section once measured is never
  // replaced by a later round's or pass's.
  void add_missing(result_sections&& other);

  // Each section as a member of `point` named by its key.
  void write(nlohmann::json& point) const;
  // Each known section key present (and not null) in `point`; a malformed one throws as
  // the point's other fields do.
  void read(const nlohmann::json& point);

private:
  struct entry {
    std::any value;
    void (*to_json)(nlohmann::json&, const std::any&) = nullptr;
  };
  std::map<std::string, entry> m_sections;

  friend struct section_codec;
};

// How a saved section is read back: the key and the reader that set()s it (result_sections.cpp).
struct section_codec {
  const char* key;
  void (*read)(const nlohmann::json& value, result_sections& into);
};
const std::vector<section_codec>& section_codecs();
// Adds a codec beside the list; false when its key is taken. Before any point is read.
bool add_section_codec(section_codec codec);

// The codec of a section type T (T::section_key, T's from_json).
template <class T>
section_codec section_codec_of() {
  return {T::section_key, [](const nlohmann::json& value, result_sections& into) {
            T section;
            value.get_to(section);
            into.set(std::move(section));
          }};
}
template <class T>
bool register_section() {
  return add_section_codec(section_codec_of<T>());
}

} // namespace speedlab
