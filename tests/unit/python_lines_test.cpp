// The lines of a Python program (analysis/python_lines.hpp): calls and the GPU work they
// launched given to the innermost frame of the program's own code, by correlation id.
#include <nlohmann/json.hpp>

#include "analysis/python_lines.hpp"
#include "model/trace.hpp"
#include "speedlab_catch.hpp"

using namespace speedlab;
using analysis::python_input;
using analysis::python_line_builder;
using gpu = python_line_builder::gpu_kind;

namespace {

// train.py: main() at line 10 calls step() at 57 (a torch call inside site-packages) and
// reads a value back at 60; the interpreter's own start-up code has no frame of the program.
python_input train_input() {
  python_input in;
  in.interpreter = "3.12.1";
  in.frames = {{"/usr/lib/python3.12/runpy.py", "_run_module_as_main", "", 198, false},
               {"train.py", "main", "step(x)", 10, true},
               {"train.py", "step", "y = model(x)", 57, true},
               {"/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", "_call_impl", "", 1736, false},
               {"train.py", "main", "loss.item()", 60, true}};
  in.stacks = {{0, 1, 2, 3}, {0, 1, 4}, {0, 3}};
  using how = python_input::how;
  in.calls = {{1, 0, how::own},      {2, 0, how::own}, {3, 1, how::own}, {4, 2, how::own},
              {5, 0, how::inferred}, {6, 0, how::own}, {8, 0, how::none}};
  return in;
}

analysis::python_lines train_lines() {
  const python_input in = train_input();
  python_line_builder b(in);
  using trace::api_kind;
  b.add_call(1, api_kind::launch, 7, 1000, 1100, "cudaLaunchKernel_v7000");
  b.add_call(2, api_kind::launch, 7, 1010, 1090, "cuLaunchKernel"); // inside the runtime call: the same call
  b.add_call(3, api_kind::copy_sync, 7, 2000, 52000, "cudaMemcpy_v3020");
  b.add_call(4, api_kind::alloc, 7, 10, 20, "cudaMalloc_v3020");
  b.add_call(5, api_kind::launch, 9, 3000, 3010, "cudaLaunchKernel_v7000"); // the autograd engine's thread
  b.add_call(6, api_kind::launch, 7, 60000, 60020, "cudaGraphLaunch_v10000");
  b.add_call(8, api_kind::synchronize, 7, 70000, 71000, "cudaDeviceSynchronize_v3020");
  b.add_gpu(1, {gpu::kernel, 10000, 0, 0, false});
  b.add_gpu(5, {gpu::kernel, 5000, 0, 0, false});
  for (int node = 0; node < 3; ++node) b.add_gpu(6, {gpu::kernel, 1000, 0, 0, false}); // a graph's nodes
  b.add_gpu(3, {gpu::copy, 500, 4, trace::copy_dtoh, true});
  b.add_gpu(7, {gpu::kernel, 700, 0, 0, false}); // no call recorded for it
  return b.finish();
}

const analysis::python_line* find(const analysis::python_lines& l, std::uint32_t line) {
  for (const auto& r : l.lines)
    if (r.line == line) return &r;
  return nullptr;
}

} // namespace

TEST_CASE("python lines: calls and what they launched go to the program's innermost line", "[python-lines]") {
  const analysis::python_lines l = train_lines();
  CHECK(l.interpreter == "3.12.1");
  REQUIRE(l.lines.size() == 2);
  const auto* step = find(l, 57);
  REQUIRE(step);
  CHECK(step->file == "train.py");
  CHECK(step->text == "y = model(x)");
  CHECK(step->calls == 3); // the runtime launch (its driver call not again), the inferred one, the graph launch
  CHECK(step->launches == 2);
  CHECK(step->graph_launches == 1);
  CHECK(step->kernels == 5); // its own, the inferred one, the graph's three nodes
  CHECK(step->kernel_ns == Approx(18000));
  CHECK(step->inferred_calls == 1);
  const auto* item = find(l, 60);
  REQUIRE(item);
  CHECK(item->syncs == 1);
  CHECK(item->sync_ns == Approx(50000));
  CHECK(item->d2h_bytes == Approx(4));
  CHECK(item->pageable_bytes == Approx(4));
  CHECK(item->copies == 1);
  // Sorted by GPU time launched plus time blocked: the .item() line waits longest.
  CHECK(l.lines.front().line == 60);
}

TEST_CASE("python lines: coverage says what reached a line and what did not", "[python-lines]") {
  const auto c = train_lines().coverage;
  CHECK(c.calls == 6); // the nested driver call is not a call of its own
  CHECK(c.calls_own == 3);
  CHECK(c.calls_inferred == 1);
  CHECK(c.calls_library == 1); // the allocation at start-up: no frame of the program
  CHECK(c.calls_unknown == 1); // the synchronize whose stack the capture did not know
  CHECK(c.kernel_ns == Approx(18700));
  CHECK(c.kernel_ns_own == Approx(13000));
  CHECK(c.kernel_ns_inferred == Approx(5000));
  CHECK(c.sync_ns == Approx(51000));
  CHECK(c.sync_ns_own == Approx(50000));
}

TEST_CASE("python lines: stacks folded to the program's frames for the flame graph", "[python-lines]") {
  const auto l = train_lines();
  REQUIRE(!l.stacks.empty());
  // The .item() stack weighs most (its blocked time); frames outermost first, program only.
  CHECK(l.stacks.front().frames == std::vector<std::string>{"train.py:10 main", "train.py:60 main"});
  bool step_stack = false;
  for (const auto& s : l.stacks)
    if (s.frames == std::vector<std::string>{"train.py:10 main", "train.py:57 step"}) {
      step_stack = true;
      CHECK(s.gpu_ns == Approx(18000));
    }
  CHECK(step_stack);
}

TEST_CASE("python lines: processes merge by file and line; JSON keeps every figure", "[python-lines]") {
  const auto one = train_lines();
  const auto merged = analysis::merge_python_lines({&one, &one});
  REQUIRE(merged.lines.size() == 2);
  const auto* step = find(merged, 57);
  REQUIRE(step);
  CHECK(step->kernels == 10);
  CHECK(step->processes == 2);
  CHECK(merged.coverage.calls == 12);
  const nlohmann::json j = merged;
  const auto back = j.get<analysis::python_lines>();
  CHECK(nlohmann::json(back) == j);
  CHECK(back.lines.front().sync_ns == Approx(100000));
}
