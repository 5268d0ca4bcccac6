// Standalone timing of the Monte Carlo and Mandelbrot plugin kernels (issue 14): each kernel
// launched back to back `reps` times between CUDA events after 3 warm-up launches; prints one
// JSON line per kernel and case with the median, min and max kernel time, and its check
// (the plugin's statistical checks for Monte Carlo; escape counts against the lesson kernel's
// image, pixel by pixel, for Mandelbrot).
//   kernels_bench [--reps N] [--only SUBSTRING] [--once] [--timed-only]
// --once: one launch per kernel (for ncu); --timed-only: skip the small exactness cases.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "bench_api.hpp"
#include "montecarlo_problem.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
#define CK(x) check((x), #x)

int reps = 30;
bool once = false, timed_only = false;
std::string only;

struct timing {
  double median = 0, min = 0, max = 0;
};

template <class F>
timing time_kernel(F launch) {
  if (once) {
    launch();
    CK(cudaDeviceSynchronize());
    return {};
  }
  for (int w = 0; w < 3; ++w) launch();
  std::vector<cudaEvent_t> ev(2 * reps);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(ev[2 * r]));
    launch();
    CK(cudaEventRecord(ev[2 * r + 1]));
  }
  CK(cudaDeviceSynchronize());
  std::vector<double> ms(reps);
  for (int r = 0; r < reps; ++r) {
    float t = 0;
    CK(cudaEventElapsedTime(&t, ev[2 * r], ev[2 * r + 1]));
    ms[r] = t;
  }
  for (auto& e : ev) CK(cudaEventDestroy(e));
  std::sort(ms.begin(), ms.end());
  return {ms[reps / 2], ms.front(), ms.back()};
}

bool selected(const std::string& name) { return only.empty() || name.find(only) != std::string::npos; }

std::string esc(std::string s) {
  std::string o;
  for (char c : s) o += c == '"' ? std::string("\\\"") : std::string(1, c);
  return o;
}

void print(const char* bench, const std::string& kernel, const std::string& params, const timing& t, bool ok,
           const std::string& msg) {
  std::printf("{\"bench\": \"%s\", \"kernel\": \"%s\", \"params\": \"%s\", \"median_ms\": %.4f, \"min_ms\": %.4f, "
              "\"max_ms\": %.4f, \"reps\": %d, \"ok\": %s, \"check\": \"%s\"}\n",
              bench, esc(kernel).c_str(), params.c_str(), t.median, t.min, t.max, once ? 1 : reps,
              ok ? "true" : "false", esc(msg).c_str());
  std::fflush(stdout);
}

void montecarlo() {
  namespace mc = speedlab::plugins::montecarlo;
  void* partials = nullptr;
  unsigned* counter = nullptr;
  void* result = nullptr;
  CK(cudaMalloc(&partials, bench::mc_partial_bytes()));
  CK(cudaMalloc(&counter, sizeof(unsigned)));
  CK(cudaMalloc(&result, 4 * sizeof(double)));
  CK(cudaMemset(counter, 0, sizeof(unsigned)));

  const std::size_t samples = 2700000000ull;
  for (const auto& k : bench::pi_kernels()) {
    if (!selected(k.name)) continue;
    const timing t = time_kernel([&] { k.launch(0, samples, partials, counter, result); });
    unsigned long long hits = 0;
    CK(cudaMemcpy(&hits, result, sizeof hits, cudaMemcpyDeviceToHost));
    const auto v = mc::check_pi(samples, hits);
    print("montecarlo_pi", k.name, "M=2700000000", t, v.ok, v.message);
  }
  const std::size_t points = 512000000ull;
  const int dims = 8;
  for (const auto& k : bench::moment_kernels()) {
    if (!selected(k.name)) continue;
    const timing t = time_kernel([&] { k.launch(dims, points, partials, counter, result); });
    double r[4];
    CK(cudaMemcpy(r, result, sizeof r, cudaMemcpyDeviceToHost));
    const auto v = mc::check_moment(dims, points, r[2], r[3]);
    char sums[128];
    std::snprintf(sums, sizeof sums, "; sums %.17g %.17g", r[0], r[1]);
    print("montecarlo", k.name, "M=512000000,N=8", t, v.ok, v.message + sums);
  }
  // Small and odd sizes: every kernel's check, and the exact twins' equality with the plugin's.
  for (std::size_t m : {1ull, 3ull, 1001ull, 5120001ull}) {
    if (timed_only) break;
    unsigned long long first = 0;
    const auto kernels = bench::pi_kernels();
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      const auto& k = kernels[i];
      k.launch(0, m, partials, counter, result);
      CK(cudaDeviceSynchronize());
      unsigned long long hits = 0;
      CK(cudaMemcpy(&hits, result, sizeof hits, cudaMemcpyDeviceToHost));
      if (i == 0) first = hits;
      std::printf("{\"bench\": \"pi-small\", \"kernel\": \"%s\", \"M\": %zu, \"hits\": %llu, \"plugin_hits\": %llu, \"ok\": %s}\n",
                  esc(k.name).c_str(), m, hits, first, mc::check_pi(m, hits).ok ? "true" : "false");
    }
  }
  for (int n : {2, 5, 8, 32}) {
    if (timed_only) break;
    for (const auto& k : bench::moment_kernels()) {
      const std::size_t m = 1000003;
      k.launch(n, m, partials, counter, result);
      CK(cudaDeviceSynchronize());
      double r[4];
      CK(cudaMemcpy(r, result, sizeof r, cudaMemcpyDeviceToHost));
      std::printf("{\"bench\": \"moment-small\", \"kernel\": \"%s\", \"N\": %d, \"M\": %zu, \"sum\": %.17g, \"sum_sq\": %.17g, \"ok\": %s}\n",
                  esc(k.name).c_str(), n, m, r[0], r[1], mc::check_moment(n, m, r[2], r[3]).ok ? "true" : "false");
    }
  }
  cudaFree(partials);
  cudaFree(counter);
  cudaFree(result);
}

void mandelbrot() {
  const auto kernels = bench::mandelbrot_kernels();
  struct mcase {
    int size, iterations;
    bool timed;
  };
  for (const mcase c : {mcase{8192, 256, true}, mcase{4096, 4096, true}, mcase{12, 256, false},
                        mcase{1000, 1000, false}, mcase{512, 256, false}, mcase{2047, 77, false}}) {
    if (timed_only && !c.timed) continue;
    const std::size_t n = std::size_t(c.size) * c.size;
    int* img = nullptr;
    CK(cudaMalloc(&img, n * sizeof(int)));
    std::vector<int> ref(n), got(n);
    char params[64];
    std::snprintf(params, sizeof params, "size=%d,iterations=%d", c.size, c.iterations);
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      const auto& k = kernels[i];
      if (i != 0 && !selected(k.name)) continue;
      CK(cudaMemset(img, 0xff, n * sizeof(int)));
      timing t;
      if (c.timed && (i == 0 || selected(k.name)))
        t = time_kernel([&] { k.launch(img, c.size, c.iterations); });
      else {
        k.launch(img, c.size, c.iterations);
        CK(cudaDeviceSynchronize());
      }
      CK(cudaGetLastError());
      CK(cudaMemcpy(i == 0 ? ref.data() : got.data(), img, n * sizeof(int), cudaMemcpyDeviceToHost));
      const std::vector<int>& mine = i == 0 ? ref : got;
      std::size_t differ = 0, members = 0;
      for (std::size_t p = 0; p < n; ++p) {
        differ += mine[p] != ref[p];
        members += mine[p] == c.iterations;
      }
      char msg[160];
      std::snprintf(msg, sizeof msg, "%zu of %zu counts differ from the plugin kernel's; %zu members", differ, n,
                    members);
      if (c.timed)
        print("mandelbrot", k.name, params, t, differ == 0, msg);
      else
        std::printf("{\"bench\": \"mandelbrot-exact\", \"kernel\": \"%s\", \"params\": \"%s\", \"ok\": %s, \"check\": \"%s\"}\n",
                    esc(k.name).c_str(), params, differ == 0 ? "true" : "false", msg);
    }
    cudaFree(img);
  }
}

} // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--once")) once = true;
    else if (!std::strcmp(argv[i], "--timed-only")) timed_only = true;
    else {
      std::fprintf(stderr, "usage: %s [--reps N] [--only SUBSTRING] [--once] [--timed-only]\n", argv[0]);
      return 2;
    }
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("{\"device\": \"%s\", \"sms\": %d}\n", prop.name, prop.multiProcessorCount);
  montecarlo();
  mandelbrot();
  return 0;
}
