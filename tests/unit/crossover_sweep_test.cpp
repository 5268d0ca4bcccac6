// Cost fits and crossover sizes on synthetic sweeps with known answers.
#include "speedlab_catch.hpp"

#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "analysis_test_support.hpp"
#include "analysis/crossover.hpp"

using namespace speedlab;
using namespace speedlab::analysis_test;

namespace {

const std::vector<double> sizes = {1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216};

// perturb(i): a multiplicative disturbance of the i-th size's median (1 = exact).
std::vector<point_result> sweep(const std::string& variant, const std::string& kind, std::function<double(double)> cost,
                                const std::vector<double>& at = sizes,
                                std::function<double(std::size_t)> perturb = [](std::size_t) { return 1.0; },
                                int threads = 1) {
  std::vector<point_result> out;
  for (std::size_t i = 0; i < at.size(); ++i) {
    const double n = at[i];
    out.push_back(make_point("vector", variant, kind, {{"n", fmt::format("{:.0f}", n)}},
                             spread(cost(n) * perturb(i), 0.01), threads));
  }
  return out;
}

// The lesson-style CUDA variant: 20 us fixed, 0.49 ns/element of copies, 0.01 ns/element of kernel.
std::vector<point_result> cuda_lesson(const std::vector<double>& at = sizes) {
  std::vector<point_result> out;
  for (double n : at) {
    const auto s = make_split(5000 + 0.01 * n, 0.3 * n, 0.19 * n, 5000, 5000, 5000);
    out.push_back(cuda_point("vector", "cuda", {{"n", fmt::format("{:.0f}", n)}}, s));
  }
  return out;
}

const analysis::crossover* find(const analysis::analysis_result& r, const std::string& variant,
                                const std::string& baseline, bool with_transfers) {
  for (const auto& c : r.crossovers)
    if (c.variant == variant && c.baseline == baseline && c.with_transfers == with_transfers) return &c;
  return nullptr;
}

const analysis::cost_fit* fit(const analysis::analysis_result& r, const std::string& variant, const std::string& basis) {
  for (const auto& f : r.fits)
    if (f.variant == variant && f.basis == basis) return &f;
  return nullptr;
}

std::vector<point_result> join(std::initializer_list<std::vector<point_result>> parts) {
  std::vector<point_result> all;
  for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

} // namespace

TEST_CASE("fits recover fixed and per-unit costs", "[crossover]") {
  const auto r = run(join({sweep("serial", "serial", [](double n) { return 100 + n; }), cuda_lesson()}), h100());
  const auto* s = fit(r, "serial", "total");
  REQUIRE(s);
  CHECK(s->per_unit_ns == Approx(1.0).epsilon(1e-6));
  CHECK(s->fixed_ns == Approx(100).epsilon(1e-3));
  CHECK(s->points == sizes.size());
  CHECK(s->r2 == Approx(1.0));
  const auto* t = fit(r, "cuda", "transfers");
  REQUIRE(t);
  CHECK(t->per_unit_ns == Approx(0.49).epsilon(1e-6));
  const auto* k = fit(r, "cuda", "kernel");
  REQUIRE(k);
  CHECK(k->fixed_ns == Approx(5000).epsilon(1e-3));
  CHECK(k->per_unit_ns == Approx(0.01).epsilon(1e-4));
  REQUIRE(fit(r, "cuda", "without_transfers"));
  CHECK(fit(r, "serial", "kernel") == nullptr); // no splits, no part fits
}

TEST_CASE("crossover of a GPU variant vs serial, with and without transfers", "[crossover]") {
  const auto r = run(join({sweep("serial", "serial", [](double n) { return 100 + n; }), cuda_lesson()}), h100());
  const auto* with = find(r, "cuda", "serial", true);
  REQUIRE(with);
  REQUIRE(with->size);
  // 20000 + 0.5 n = 100 + n  ->  n = 39800, between the measured 16384 and 65536.
  CHECK(*with->size == Approx(39800).epsilon(1e-3));
  CHECK(with->in_range);
  CHECK_FALSE(with->extrapolated);
  CHECK(with->faster_above);
  CHECK(with->method == "bracket+fit");
  CHECK(with->size_low <= *with->size);
  CHECK(with->size_high >= *with->size);
  CHECK(with->size_low >= 16384);
  CHECK(with->size_high <= 65536);

  const auto* without = find(r, "cuda", "serial", false);
  REQUIRE(without);
  REQUIRE(without->size);
  // 20000 + 0.01 n - 0.49 n... without copies: 20000 + 0.01 n = 100 + n -> n = 20101.
  CHECK(*without->size == Approx(19900 / 0.99).epsilon(1e-3));
  CHECK(*without->size < *with->size);
}

TEST_CASE("a variant that wins only below a size is reported as such", "[crossover]") {
  const auto r = run(join({sweep("serial", "serial", [](double n) { return 100 + n; }),
                           sweep("threads", "threads", [](double n) { return 30000 + 0.15 * n; }, sizes,
                                 [](std::size_t) { return 1.0; }, 8),
                           cuda_lesson()}),
                     h100());
  const auto* ts = find(r, "threads", "serial", true);
  REQUIRE(ts);
  REQUIRE(ts->size);
  CHECK(*ts->size == Approx(29900 / 0.85).epsilon(1e-3));
  // cuda with copies (20000 + 0.5 n) beats threads (30000 + 0.15 n) only below n = 28571.
  const auto* ct = find(r, "cuda", "threads", true);
  REQUIRE(ct);
  REQUIRE(ct->size);
  CHECK(*ct->size == Approx(10000 / 0.35).epsilon(1e-3));
  CHECK_FALSE(ct->faster_above);
  CHECK(ct->note.find("faster below") != std::string::npos);
  // Without copies cuda is faster everywhere and the fits never cross at a positive size.
  const auto* ct0 = find(r, "cuda", "threads", false);
  REQUIRE(ct0);
  CHECK_FALSE(ct0->size);
  CHECK(ct0->note.find("no crossover in the swept range") != std::string::npos);
  CHECK(ct0->note.find("faster at every swept size") != std::string::npos);
}

TEST_CASE("noisy sweeps: the true crossover lies inside the interval", "[crossover]") {
  const auto wobble = [](std::size_t i) { return i % 2 ? 1.03 : 0.97; };
  const auto r = run(join({sweep("serial", "serial", [](double n) { return 100 + n; }, sizes, wobble),
                           sweep("cuda", "cuda", [](double n) { return 20000 + 0.5 * n; }, sizes,
                                 [](std::size_t i) { return i % 3 ? 0.98 : 1.02; })}),
                     h100());
  const auto* c = find(r, "cuda", "serial", true);
  REQUIRE(c);
  REQUIRE(c->size);
  CHECK(c->in_range);
  CHECK(c->size_low <= 39800);
  CHECK(c->size_high >= 39800);
  CHECK(*c->size == Approx(39800).epsilon(0.25));
}

TEST_CASE("no crossover in range: slower everywhere, extrapolated or not at all", "[crossover]") {
  // Slower at every size and dearer per element: no crossover expected.
  auto r = run(join({sweep("serial", "serial", [](double n) { return 100 + n; }),
                     sweep("cuda", "cuda", [](double n) { return 50000 + 2 * n; })}),
               h100());
  const auto* none = find(r, "cuda", "serial", true);
  REQUIRE(none);
  CHECK_FALSE(none->size);
  CHECK_FALSE(none->in_range);
  CHECK(none->note.find("no crossover in the swept range") != std::string::npos);
  CHECK(none->note.find("slower at every swept size") != std::string::npos);

  // Only small sizes swept: the crossover at 39800 lies beyond them.
  const std::vector<double> small = {1024, 2048, 4096, 8192};
  r = run(join({sweep("serial", "serial", [](double n) { return 100 + n; }, small), cuda_lesson(small)}), h100());
  const auto* ex = find(r, "cuda", "serial", true);
  REQUIRE(ex);
  REQUIRE(ex->size);
  CHECK(ex->extrapolated);
  CHECK_FALSE(ex->in_range);
  CHECK(ex->method == "fit-extrapolation");
  CHECK(*ex->size == Approx(39800).epsilon(1e-3));
  CHECK(ex->note.find("extrapolated") != std::string::npos);
}

TEST_CASE("fieller interval brackets the root of two exact lines", "[crossover]") {
  analysis::cost_curve v, b;
  for (double n : sizes) {
    v.size.push_back(n);
    v.cost.push_back(20000 + 0.5 * n);
    v.sigma.push_back(0.01 * (20000 + 0.5 * n));
    b.size.push_back(n);
    b.cost.push_back(100 + n);
    b.sigma.push_back(0.01 * (100 + n));
  }
  v.refit();
  b.refit();
  const auto iv = analysis::fieller_interval(v.fit, b.fit);
  REQUIRE(iv);
  CHECK(iv->low < 39800);
  CHECK(iv->high > 39800);
  analysis::crossover c;
  analysis::locate_crossover(v, b, c);
  REQUIRE(c.size);
  CHECK(*c.size == Approx(39800).epsilon(1e-6));
}

TEST_CASE("a single size is no sweep", "[crossover]") {
  const auto r = run({make_point("vector", "serial", "serial", {{"n", "1024"}}, spread(1e6, 0.01)),
                      make_point("vector", "cuda", "cuda", {{"n", "1024"}}, spread(2e6, 0.01))},
                     h100());
  CHECK(r.fits.empty());
  CHECK(r.crossovers.empty());
}

// Two declared size axes (rows, cols): fits along each with the other fixed and along
// rows*cols, and a crossover along each. serial: 2 ns/element; gpu: 20 us + 0.1 ns/element.
TEST_CASE("declared size axes: fits and crossovers along each axis and their product", "[crossover][axes]") {
  std::vector<point_result> points;
  const std::vector<double> axis = {16, 64, 256, 1024, 4096};
  auto add = [&](double rows, double cols) {
    const std::map<std::string, std::string> params{{"rows", fmt::format("{:.0f}", rows)},
                                                    {"cols", fmt::format("{:.0f}", cols)}};
    const double n = rows * cols;
    points.push_back(make_point("softmax", "serial", "serial", params, spread(2 * n, 0.01)));
    points.push_back(make_point("softmax", "cuda", "cuda", params, spread(20000 + 0.1 * n, 0.01)));
  };
  for (double r : axis) add(r, 64);  // along rows, cols = 64
  for (double c : axis) add(16, c);  // along cols, rows = 16 (the point 16 x 64 twice)
  for (auto& p : points) p.size_axes = {"rows", "cols"};
  const auto r = run(points, h100());

  auto fit_along = [&](const std::string& variant, const std::string& axis_name) -> const analysis::cost_fit* {
    for (const auto& f : r.fits)
      if (f.variant == variant && f.basis == "total" && f.size_param == axis_name) return &f;
    return nullptr;
  };
  const auto* rows_fit = fit_along("serial", "rows");
  REQUIRE(rows_fit);
  CHECK(rows_fit->params_key == "cols=64");
  CHECK(rows_fit->per_unit_ns == Approx(128).epsilon(1e-3)); // 2 ns x 64 columns per row
  const auto* cols_fit = fit_along("serial", "cols");
  REQUIRE(cols_fit);
  CHECK(cols_fit->params_key == "rows=16");
  CHECK(cols_fit->per_unit_ns == Approx(32).epsilon(1e-3)); // 2 ns x 16 rows per column
  const auto* product_fit = fit_along("serial", "rows*cols");
  REQUIRE(product_fit);
  CHECK(product_fit->per_unit_ns == Approx(2).epsilon(1e-3));

  // 20000 + 0.1 n = 2 n at n = 10526: rows = 164.5 at 64 columns, cols = 657.9 at 16 rows.
  auto crossover_along = [&](const std::string& axis_name) -> const analysis::crossover* {
    for (const auto& c : r.crossovers)
      if (c.variant == "cuda" && c.baseline == "serial" && c.size_param == axis_name) return &c;
    return nullptr;
  };
  const auto* along_rows = crossover_along("rows");
  REQUIRE(along_rows);
  REQUIRE(along_rows->size);
  CHECK(*along_rows->size == Approx(20000 / 1.9 / 64).epsilon(0.02));
  const auto* along_cols = crossover_along("cols");
  REQUIRE(along_cols);
  REQUIRE(along_cols->size);
  CHECK(*along_cols->size == Approx(20000 / 1.9 / 16).epsilon(0.02));
}

TEST_CASE("without declared axes the size is guessed from the usual names", "[crossover][axes]") {
  point_result p = make_point("vector", "serial", "serial", {{"n", "1024"}, {"op", "mul"}}, spread(1000, 0.01));
  CHECK(p.size_params() == std::vector<std::string>{"n"});
  p.params = {{"rows", "8"}, {"cols", "4"}};
  CHECK(p.size_params().empty()); // "size -": what declared axes are for
  p.size_axes = {"rows", "cols"};
  CHECK(p.size_params() == std::vector<std::string>{"rows", "cols"});
  CHECK(p.size_product() == 32);
  CHECK(p.params_key_without({"rows"}) == "cols=4");
}
