// profilers/python without an interpreter: the folding rule (user_frames.hpp) and the
// interning of captured chains (stack_table.hpp), also from several threads at once and
// after a code object is forgotten. The capture and the resolver run in real CPythons in
// tests/python.
#include <thread>
#include <vector>

#include "profilers/python/stack_table.hpp"
#include "profilers/python/user_frames.hpp"
#include "speedlab_catch.hpp"

using namespace speedlab::profiling::python;

namespace {

// Distinct fake code objects: only their addresses matter to the table.
const void* code(int i) {
  static char codes[64];
  return &codes[i];
}

} // namespace

TEST_CASE("python folding: the user's frames are neither the interpreter's, installed nor generated", "[python]") {
  fold_rule rule;
  fold_rule::add_prefix(rule.library_prefixes, "/usr/");
  fold_rule::add_prefix(rule.library_prefixes, "/venv");
  fold_rule::add_prefix(rule.library_prefixes, "/"); // would take everything: ignored
  fold_rule::add_prefix(rule.library_prefixes, "");
  CHECK(rule.library_prefixes == std::vector<std::string>{"/usr", "/venv"});
  CHECK(rule.is_user("/home/u/train.py"));
  CHECK_FALSE(rule.is_user("/usr/lib/python3.11/threading.py"));
  CHECK(rule.is_user("/usrdata/train.py")); // a whole folder name, not a string prefix
  CHECK_FALSE(rule.is_user("/venv/lib/python3.12/site-packages/torch/nn/modules/module.py"));
  CHECK_FALSE(rule.is_user("/home/u/.local/lib/python3.12/site-packages/cupy/_core/core.py"));
  CHECK_FALSE(rule.is_user("/opt/x/dist-packages/numba/cuda/dispatcher.py"));
  CHECK(rule.is_user("/home/u/my-site-packages-notes/a.py"));
  CHECK_FALSE(rule.is_user("<frozen importlib._bootstrap>"));
  CHECK_FALSE(rule.is_user("<string>"));
  CHECK_FALSE(rule.is_user("<eval_with_key>.12"));
  CHECK_FALSE(rule.is_user("/tmp/torchinductor_u/ab/cabc123.py"));
  CHECK_FALSE(rule.is_user(""));
  CHECK(rule.is_user("<stdin>"));
  CHECK(rule.is_user("<ipython-input-3-0123456789ab>"));
  // An extra user prefix wins over every other test.
  rule.user_prefixes = split_paths("/venv/src/mine/:/opt/x");
  CHECK(rule.user_prefixes == std::vector<std::string>{"/venv/src/mine", "/opt/x"});
  CHECK(rule.is_user("/venv/src/mine/model.py"));
  CHECK(rule.is_user("/opt/x/dist-packages/numba/cuda/dispatcher.py"));
  CHECK_FALSE(rule.is_user("/venv/src/other/model.py"));
}

TEST_CASE("python stacks: one id per distinct chain and per distinct frame, outermost first", "[python]") {
  stack_table table;
  const frame_ref a[] = {{code(1), 10}, {code(2), 20}, {code(3), 30}}; // innermost first
  const frame_ref b[] = {{code(1), 12}, {code(2), 20}, {code(3), 30}}; // another line, same callers
  const std::uint32_t sa = table.intern(a, 3);
  CHECK(sa == 1);
  CHECK(table.intern(a, 3) == sa); // the thread's cache
  const std::uint32_t sb = table.intern(b, 3);
  CHECK(sb == 2);
  CHECK(table.intern(a, 2) == 3); // a prefix is another chain
  CHECK(table.intern(a, 0) == 0);
  CHECK(table.frame_count() == 4);
  std::vector<stack_chain> stacks;
  table.take_new_stacks(stacks);
  REQUIRE(stacks.size() == 3);
  CHECK(stacks[0].frames == std::vector<std::uint32_t>{3, 2, 1}); // outermost (code 3) first
  CHECK(stacks[1].frames == std::vector<std::uint32_t>{3, 2, 4});
  std::vector<frame_key> frames;
  table.take_new_frames(frames);
  REQUIRE(frames.size() == 4);
  CHECK(frames[3].id == 4);
  CHECK(frames[3].frame == frame_ref{code(1), 12});
  stacks.clear();
  table.take_new_stacks(stacks);
  CHECK(stacks.empty()); // each chain handed over once
}

TEST_CASE("python stacks: threads interning the same chains agree on their ids", "[python]") {
  stack_table table;
  constexpr int chains = 40, threads = 4;
  std::vector<std::vector<std::uint32_t>> ids(threads, std::vector<std::uint32_t>(chains));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round)
        for (int c = 0; c < chains; ++c) {
          const frame_ref chain[] = {{code(c % 7), c}, {code(10 + c % 3), 5}, {code(20), 1}};
          ids[t][c] = table.intern(chain, 3);
        }
    });
  for (auto& th : pool) th.join();
  for (int t = 1; t < threads; ++t) CHECK(ids[t] == ids[0]);
  CHECK(table.stack_count() == chains);
}

TEST_CASE("python stacks: a forgotten code object's address gets new ids", "[python]") {
  stack_table table;
  const frame_ref chain[] = {{code(5), 8}, {code(6), 2}};
  const std::uint32_t before = table.intern(chain, 2);
  table.forget_code(code(5)); // freed (3.12+ code watcher); a new code object may take its address
  const std::uint32_t after = table.intern(chain, 2);
  CHECK(after != before);
  CHECK(table.frame_count() == 3); // code(5)'s frame again, under a new id; code(6)'s kept
  CHECK(table.intern(chain, 2) == after);
  table.forget_code(code(40)); // never seen: nothing changes
  CHECK(table.intern(chain, 2) == after);
}
