#include "profilers/python/stack_table.hpp"

#include <algorithm>
#include <array>

namespace speedlab::profiling::python {
namespace {

std::uint64_t next_serial() {
  static std::atomic<std::uint64_t> n{0};
  return ++n;
}

// A thread's direct-mapped cache of the chains it captured: 256 slots by hash.
struct thread_cache {
  struct slot {
    std::uint64_t hash = 0, epoch = 0, serial = 0;
    const void* stack = nullptr;
  };
  std::array<slot, 256> slots{};
};
thread_local thread_cache t_cache;

} // namespace

std::uint64_t chain_hash(const frame_ref* frames, std::size_t n) noexcept {
  // One multiply per frame (a byte-wise FNV cost 0.7 us at depth 50): the offset goes into the
  // pointer's unused high bits; a collision only costs a cache miss (the chain is compared).
  constexpr std::uint64_t k = 0x9e3779b97f4a7c15ull;
  std::uint64_t h = n * k;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t v = reinterpret_cast<std::uintptr_t>(frames[i].code) ^
                            (static_cast<std::uint64_t>(static_cast<std::uint32_t>(frames[i].offset)) << 40);
    h = ((h << 23 | h >> 41) ^ v) * k;
  }
  return h ^ (h >> 29);
}

std::size_t stack_table::ref_hash::operator()(const frame_ref& f) const noexcept {
  return std::hash<const void*>()(f.code) * 31 + static_cast<std::size_t>(f.offset);
}

std::size_t stack_table::ids_hash::operator()(const std::vector<std::uint32_t>& v) const noexcept {
  std::size_t h = v.size();
  for (std::uint32_t x : v) h = h * 1000003u ^ x;
  return h;
}

stack_table::stack_table() : m_serial(next_serial()) {}

const stack_table::stored_stack* stack_table::cached(const frame_ref* frames, std::size_t n,
                                                     std::uint64_t hash) const noexcept {
  const auto& s = t_cache.slots[hash & 255];
  if (s.hash != hash || s.serial != m_serial || s.epoch != m_epoch.load(std::memory_order_acquire)) return nullptr;
  const auto* st = static_cast<const stored_stack*>(s.stack);
  if (st->raw.size() != n) return nullptr;
  for (std::size_t i = 0; i < n; ++i) // field by field: frame_ref's padding is never compared
    if (!(st->raw[i] == frames[i])) return nullptr;
  return st;
}

void stack_table::remember(const stored_stack* st, std::uint64_t epoch) const noexcept {
  auto& s = t_cache.slots[st->hash & 255];
  s = {st->hash, epoch, m_serial, st};
}

std::uint32_t stack_table::intern(const frame_ref* frames, std::size_t n) noexcept {
  if (n == 0) return 0;
  const std::uint64_t hash = chain_hash(frames, n);
  if (const stored_stack* s = cached(frames, n, hash)) return s->id;
  // The epoch read before the lookup: a forget_code() meanwhile leaves this slot void.
  const std::uint64_t epoch = m_epoch.load(std::memory_order_acquire);
  try {
    const stored_stack* s = insert(frames, n, hash);
    remember(s, epoch);
    return s->id;
  } catch (...) {
    return 0; // no memory: the call goes without a stack
  }
}

// Under the mutex: each frame's id (new ones appended for the resolver), then the chain's.
const stack_table::stored_stack* stack_table::insert(const frame_ref* frames, std::size_t n, std::uint64_t hash) {
  std::vector<std::uint32_t> ids(n);
  std::lock_guard lock(m_mutex);
  for (std::size_t i = 0; i < n; ++i) {
    auto [it, added] = m_frame_ids.try_emplace(frames[i], 0);
    if (added) {
      it->second = static_cast<std::uint32_t>(m_frames.size() + 1);
      m_frames.push_back({it->second, frames[i]});
    }
    ids[n - 1 - i] = it->second; // outermost first
  }
  if (auto it = m_stack_ids.find(ids); it != m_stack_ids.end()) return it->second;
  stored_stack& s = m_stacks.emplace_back();
  s.hash = hash;
  s.id = static_cast<std::uint32_t>(m_stacks.size());
  s.raw.assign(frames, frames + n);
  m_chains.push_back(ids);
  m_stack_ids.emplace(std::move(ids), &s);
  return &s;
}

void stack_table::take_new_stacks(std::vector<stack_chain>& out) {
  std::lock_guard lock(m_mutex);
  for (; m_stacks_taken < m_chains.size(); ++m_stacks_taken)
    out.push_back({static_cast<std::uint32_t>(m_stacks_taken + 1), m_chains[m_stacks_taken]});
}

void stack_table::take_new_frames(std::vector<frame_key>& out) {
  std::lock_guard lock(m_mutex);
  for (; m_frames_taken < m_frames.size(); ++m_frames_taken) out.push_back(m_frames[m_frames_taken]);
}

void stack_table::forget_code(const void* code) {
  std::lock_guard lock(m_mutex);
  bool any = false;
  for (auto it = m_frame_ids.begin(); it != m_frame_ids.end();) {
    if (it->first.code == code) {
      it = m_frame_ids.erase(it);
      any = true;
    } else {
      ++it;
    }
  }
  if (!any) return;
  // Chains through those frames keep their ids; a new capture builds new frame ids, and so new
  // chains, since the old ids are no longer found. Every thread's cache is void from now on.
  m_epoch.fetch_add(1, std::memory_order_acq_rel);
}

call_stack attribute_call(const interpreter& py, stack_table& table, frame_ref* scratch, std::size_t max,
                          std::atomic<std::uint32_t>& last) noexcept {
  const capture_result got = capture(py, scratch, max);
  if (got.what == thread_frames::not_now) return {}; // Python is ending: no line is the caller's
  if (got.count) {
    if (const std::uint32_t id = table.intern(scratch, got.count)) {
      last.store(id, std::memory_order_relaxed);
      return {id, call_how::own};
    }
  }
  if (const std::uint32_t id = last.load(std::memory_order_relaxed)) return {id, call_how::other_thread};
  return {};
}

std::size_t stack_table::stack_count() const {
  std::lock_guard lock(m_mutex);
  return m_stacks.size();
}

std::size_t stack_table::frame_count() const {
  std::lock_guard lock(m_mutex);
  return m_frames.size();
}

} // namespace speedlab::profiling::python
