// Names in messages: did-you-mean for unknown names (the suite, the command line and the
// plugin loader share it) and a bounded echo of text the user gave, so a 10 MB bad name
// is not printed back whole.
#pragma once

#include <string>
#include <vector>

namespace speedlab::app {

// The closest of `valid` by edit distance, or "" when none is close enough to suggest.
std::string did_you_mean(const std::string& wrong, const std::vector<std::string>& valid);

// "unknown <what> 'x' (did you mean 'y'?); valid <what>s: a, b" with x shortened by echo().
std::string unknown_name_message(const std::string& what, const std::string& wrong,
                                 const std::vector<std::string>& valid);

// `text` as it may be printed back: at most `limit` bytes, control characters shown as
// '?', and "... (N bytes)" when it was cut.
std::string echo(const std::string& text, std::size_t limit = 80);

} // namespace speedlab::app
