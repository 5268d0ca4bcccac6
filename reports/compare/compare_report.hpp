// Renders a comparison of two runs (analysis/compare.hpp) as Markdown (a pull-request
// comment), one self-contained HTML page, or JSON. Rendering only: the verdicts come from
// analysis::compare_runs.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/compare.hpp"

namespace speedlab::reports {

std::string compare_markdown(const analysis::comparison& c);
std::string compare_html(const analysis::comparison& c);
nlohmann::json compare_json(const analysis::comparison& c);

} // namespace speedlab::reports
