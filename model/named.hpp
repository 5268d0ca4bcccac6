// What an entry of a registry says of itself (a report format, a profiler backend): its name
// in the registry and one line describing it, constant, given by its constructor.
//
//   class json_reporter final : public reporter {
//   public:
//     json_reporter() : reporter("json", "results.json: every point and the analysis") {}
//   };
#pragma once

#include <string>
#include <utility>

namespace speedlab {

class named {
public:
  named(std::string name, std::string description)
      : m_name(std::move(name)), m_description(std::move(description)) {}
  const std::string& name() const { return m_name; }
  const std::string& description() const { return m_description; }

protected:
  ~named() = default; // owned through the registry's own base (reporter, profiler)

private:
  std::string m_name, m_description;
};

} // namespace speedlab
