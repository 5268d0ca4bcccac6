#include "model/result_sections.hpp"

#include <string_view>

#include "model/counters.hpp"
#include "model/python_lines.hpp"
#include "model/source_view.hpp"

namespace speedlab {
namespace {

// The section types a saved point may hold: one line per backend with a section of its own.
std::vector<section_codec>& codecs() {
  static std::vector<section_codec> list{
      section_codec_of<counters::counter_pass>(), // the counters backend's pass
      section_codec_of<source::source_pass>(),    // the source backend's pass
      section_codec_of<pylines::python_lines>(),  // a Python worker's lines (app/python/python_variants.cpp)
  };
  return list;
}

} // namespace

const std::vector<section_codec>& section_codecs() { return codecs(); }

bool add_section_codec(section_codec codec) {
  for (const auto& c : codecs())
    if (std::string_view(c.key) == codec.key) return false;
  codecs().push_back(codec);
  return true;
}

std::vector<std::string> result_sections::keys() const {
  std::vector<std::string> out;
  for (const auto& [key, e] : m_sections) out.push_back(key);
  return out;
}

void result_sections::add_missing(result_sections&& other) {
  for (auto& [key, e] : other.m_sections) m_sections.try_emplace(key, std::move(e));
}

void result_sections::write(nlohmann::json& point) const {
  for (const auto& [key, e] : m_sections) e.to_json(point[key], e.value);
}

void result_sections::read(const nlohmann::json& point) {
  for (const auto& c : section_codecs())
    if (auto it = point.find(c.key); it != point.end() && !it->is_null()) c.read(*it, *this);
}

} // namespace speedlab
