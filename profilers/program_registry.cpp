// The backends a profiled program hosts (`speedlab profile`'s injection library), in start
// order: this list is the one place that names them (program_session.hpp). cupti first: it
// holds CUPTI's one subscription, which the others share. python (profilers/python: the Python
// stack at each CUDA call) after it.
#include "profilers/program_session.hpp"

namespace speedlab::profiling {

std::unique_ptr<program_session> make_cupti_program_session();
std::unique_ptr<program_session> make_source_program_session();
std::unique_ptr<program_session> make_counters_program_session();
std::unique_ptr<program_session> make_python_program_session();

const std::vector<program_backend>& program_registry() {
  static const std::vector<program_backend> registry{
      {"cupti", make_cupti_program_session},
      {"source", make_source_program_session},
      {"counters", make_counters_program_session},
      {"python", make_python_program_session},
  };
  return registry;
}

} // namespace speedlab::profiling
