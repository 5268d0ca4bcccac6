#include "analysis/python_lines.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "model/trace.hpp"

namespace speedlab::analysis {

namespace {

bool is_sync(trace::api_kind k) { return k == trace::api_kind::synchronize || k == trace::api_kind::copy_sync; }

std::string frame_label(const python_input::frame& f) {
  return f.file + ":" + std::to_string(f.line) + (f.function.empty() ? "" : " " + f.function);
}

} // namespace

python_line_builder::python_line_builder(const python_input& input) : m_in(input) {
  std::map<std::pair<std::string, std::uint32_t>, std::int64_t> row_of_line;
  m_line_of_stack.assign(m_in.stacks.size(), -1);
  for (std::size_t s = 0; s < m_in.stacks.size(); ++s) {
    const auto& frames = m_in.stacks[s];
    // The innermost frame of the program's own code: the line the user can change.
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
      if (*it >= m_in.frames.size() || !m_in.frames[*it].user) continue;
      const auto& f = m_in.frames[*it];
      auto [at, added] = row_of_line.try_emplace({f.file, f.line}, static_cast<std::int64_t>(m_out.lines.size()));
      if (added) {
        python_line l;
        l.file = f.file, l.line = f.line, l.function = f.function, l.text = f.text;
        m_out.lines.push_back(std::move(l));
      }
      m_line_of_stack[s] = at->second;
      break;
    }
  }
  m_sites.reserve(m_in.calls.size());
  for (const auto& c : m_in.calls) {
    site s;
    s.stack = c.stack;
    s.attributed = c.attributed;
    if (c.attributed != python_input::how::none && c.stack < m_line_of_stack.size()) s.line = m_line_of_stack[c.stack];
    m_sites.emplace_back(c.correlation, s);
  }
  std::stable_sort(m_sites.begin(), m_sites.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  m_stack_gpu.assign(m_in.stacks.size(), 0);
  m_stack_sync.assign(m_in.stacks.size(), 0);
  m_stack_kernel.assign(m_in.stacks.size(), 0);
  m_stack_calls.assign(m_in.stacks.size(), 0);
  m_out.interpreter = m_in.interpreter;
}

const python_line_builder::site* python_line_builder::site_of(std::uint32_t correlation) const {
  if (correlation == 0) return nullptr;
  auto it = std::lower_bound(m_sites.begin(), m_sites.end(), correlation,
                             [](const auto& e, std::uint32_t c) { return e.first < c; });
  return it != m_sites.end() && it->first == correlation ? &it->second : nullptr;
}

python_line* python_line_builder::row(const site& s) {
  return s.line >= 0 ? &m_out.lines[static_cast<std::size_t>(s.line)] : nullptr;
}

void python_line_builder::add_call(std::uint32_t correlation, trace::api_kind kind, std::uint32_t thread,
                                   std::uint64_t start, std::uint64_t end, const std::string& name) {
  // Queries, polls and the like carry no stack (the capture takes only the calls a line is
  // charged with): with every API call recorded (`run`'s worker) they are not the lines' calls.
  if ((kind == trace::api_kind::other || kind == trace::api_kind::poll) && !site_of(correlation)) return;
  const bool driver = name.rfind("cu", 0) == 0 && name.rfind("cuda", 0) != 0;
  const bool graph = trace::is_graph_launch(name);
  m_calls.push_back({start, std::max(start, end), thread, correlation, kind, driver, graph});
}

void python_line_builder::add_gpu(std::uint32_t correlation, const gpu_work& w) {
  if (w.kind == gpu_kind::copy && w.pageable) m_pageable_copies.push_back(correlation);
  const site* s = site_of(correlation);
  python_line* l = s ? row(*s) : nullptr;
  if (w.kind == gpu_kind::kernel) {
    m_out.coverage.kernel_ns += w.ns;
    if (s) m_out.coverage.kernel_ns_captured += w.ns;
    if (s && s->attributed != python_input::how::none && s->stack < m_stack_kernel.size())
      m_stack_kernel[s->stack] += w.ns;
    if (l && s->attributed == python_input::how::own) m_out.coverage.kernel_ns_own += w.ns;
    if (l && s->attributed == python_input::how::inferred) m_out.coverage.kernel_ns_inferred += w.ns;
  }
  if (s && s->attributed != python_input::how::none && s->stack < m_stack_gpu.size()) m_stack_gpu[s->stack] += w.ns;
  if (!l) return;
  switch (w.kind) {
  case gpu_kind::kernel:
    ++l->kernels;
    l->kernel_ns += w.ns;
    break;
  case gpu_kind::copy:
    ++l->copies;
    l->copy_ns += w.ns;
    (w.copy_kind == trace::copy_htod   ? l->h2d_bytes
     : w.copy_kind == trace::copy_dtoh ? l->d2h_bytes
                                       : l->other_copy_bytes) += w.bytes;
    if (w.pageable) l->pageable_bytes += w.bytes;
    break;
  case gpu_kind::memset:
    ++l->memsets;
    l->memset_ns += w.ns;
    break;
  }
}

void python_line_builder::count_call(const pending_call& c) {
  const double ns = static_cast<double>(c.end - c.start);
  // cudaMemcpyAsync through pageable host memory returns only once the copy is done: the
  // host waits there as in a synchronous copy.
  const bool blocks =
      is_sync(c.kind) || (c.kind == trace::api_kind::copy_async &&
                          std::binary_search(m_pageable_copies.begin(), m_pageable_copies.end(), c.correlation));
  auto& cov = m_out.coverage;
  ++cov.calls;
  if (blocks) cov.sync_ns += ns;
  const site* s = site_of(c.correlation);
  python_line* l = s ? row(*s) : nullptr;
  if (!s || s->attributed == python_input::how::none)
    ++cov.calls_unknown;
  else if (!l)
    ++cov.calls_library;
  else
    ++(s->attributed == python_input::how::own ? cov.calls_own : cov.calls_inferred);
  if (s && s->attributed != python_input::how::none && s->stack < m_stack_calls.size()) {
    ++m_stack_calls[s->stack];
    if (blocks) m_stack_sync[s->stack] += ns;
  }
  if (!l) return;
  ++l->calls;
  if (s->attributed == python_input::how::inferred) ++l->inferred_calls;
  if (blocks) {
    ++l->syncs;
    l->sync_ns += ns;
    if (s->attributed == python_input::how::own) cov.sync_ns_own += ns;
  }
  if (c.kind == trace::api_kind::launch) ++(c.graph ? l->graph_launches : l->launches);
  if (c.kind == trace::api_kind::alloc || c.kind == trace::api_kind::free) {
    ++(c.kind == trace::api_kind::alloc ? l->allocs : l->frees);
    l->alloc_ns += ns;
  }
}

python_lines python_line_builder::finish() {
  // A driver call made inside a runtime call of the same thread (cudaLaunchKernel calls
  // cuLaunchKernel) is the same call of the program: counted once, by the outer one.
  std::sort(m_pageable_copies.begin(), m_pageable_copies.end());
  std::sort(m_calls.begin(), m_calls.end(), [](const auto& a, const auto& b) {
    return std::tie(a.thread, a.start, b.end) < std::tie(b.thread, b.start, a.end);
  });
  std::uint32_t thread = 0;
  std::uint64_t open_until = 0;
  bool open = false;
  for (const auto& c : m_calls) {
    if (!open || c.thread != thread || c.start >= open_until) {
      thread = c.thread, open_until = c.end, open = true;
      count_call(c);
    }
  }
  std::vector<pending_call>().swap(m_calls);
  if (m_windowed) scale_to_windows();
  std::map<std::vector<std::string>, python_stack_weight> folded;
  for (std::size_t s = 0; s < m_in.stacks.size(); ++s) {
    if (m_stack_calls[s] == 0 && m_stack_gpu[s] == 0) continue;
    std::vector<std::string> frames;
    for (const std::uint32_t f : m_in.stacks[s])
      if (f < m_in.frames.size() && m_in.frames[f].user) frames.push_back(frame_label(m_in.frames[f]));
    if (frames.empty()) frames.push_back("(no frame of the program)");
    auto& w = folded[frames];
    w.frames = frames;
    w.gpu_ns += m_stack_gpu[s], w.sync_ns += m_stack_sync[s], w.calls += m_stack_calls[s];
  }
  for (auto& [k, w] : folded) m_out.stacks.push_back(std::move(w));
  std::stable_sort(m_out.stacks.begin(), m_out.stacks.end(),
                   [](const auto& a, const auto& b) { return a.gpu_ns + a.sync_ns > b.gpu_ns + b.sync_ns; });
  std::erase_if(m_out.lines, [](const python_line& l) { return l.calls == 0 && l.gpu_ns() == 0; });
  std::stable_sort(m_out.lines.begin(), m_out.lines.end(),
                   [](const auto& a, const auto& b) { return a.cost_ns() > b.cost_ns(); });
  return std::move(m_out);
}

// Launch stacks taken in windows: the kernels launched in them stand for all (a ratio
// estimate), so each line's kernel figures and its launch calls grow by the same factor.
void python_line_builder::scale_to_windows() {
  auto& cov = m_out.coverage;
  cov.windowed_processes = 1;
  if (!(cov.kernel_ns_captured > 0) || cov.kernel_ns_captured >= cov.kernel_ns) return;
  const double f = cov.kernel_ns / cov.kernel_ns_captured;
  const auto times = [f](std::size_t n) { return static_cast<std::size_t>(std::llround(static_cast<double>(n) * f)); };
  for (auto& l : m_out.lines) {
    const std::size_t launches = l.launches + l.graph_launches;
    l.kernel_ns *= f;
    l.kernels = times(l.kernels);
    l.launches = times(l.launches);
    l.graph_launches = times(l.graph_launches);
    l.calls += l.launches + l.graph_launches - launches;
  }
  cov.kernel_ns_own *= f;
  cov.kernel_ns_inferred *= f;
  for (std::size_t s = 0; s < m_stack_gpu.size(); ++s) m_stack_gpu[s] += (f - 1) * m_stack_kernel[s];
}

python_lines merge_python_lines(const std::vector<const python_lines*>& parts) {
  python_lines out;
  std::map<std::pair<std::string, std::uint32_t>, python_line> by_line;
  std::map<std::vector<std::string>, python_stack_weight> by_stack;
  for (const python_lines* p : parts) {
    if (!p) continue;
    if (out.interpreter.empty()) out.interpreter = p->interpreter;
    for (const auto& l : p->lines) {
      auto [it, added] = by_line.try_emplace({l.file, l.line}, l);
      if (!added) it->second.add(l);
    }
    for (const auto& s : p->stacks) {
      auto& w = by_stack[s.frames];
      w.frames = s.frames;
      w.gpu_ns += s.gpu_ns, w.sync_ns += s.sync_ns, w.calls += s.calls;
    }
    out.coverage.add(p->coverage);
  }
  for (auto& [k, l] : by_line) out.lines.push_back(std::move(l));
  for (auto& [k, s] : by_stack) out.stacks.push_back(std::move(s));
  std::stable_sort(out.lines.begin(), out.lines.end(),
                   [](const auto& a, const auto& b) { return a.cost_ns() > b.cost_ns(); });
  std::stable_sort(out.stacks.begin(), out.stacks.end(),
                   [](const auto& a, const auto& b) { return a.gpu_ns + a.sync_ns > b.gpu_ns + b.sync_ns; });
  return out;
}

} // namespace speedlab::analysis
