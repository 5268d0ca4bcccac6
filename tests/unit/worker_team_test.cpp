// The persistent team behind the `threads` variants: every chunk exactly once per run,
// back-to-back runs (late workers must not join a finished run), exceptions rethrown.
#include <atomic>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "speedlab_catch.hpp"
#include "worker_team.hpp"

using speedlab::parallel::worker_team;

TEST_CASE("worker team: every chunk once per run, over many back-to-back runs", "[parallel]") {
  for (int threads : {1, 3, 8}) {
    worker_team team(threads);
    REQUIRE(team.size() == static_cast<std::size_t>(threads));
    for (std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{6}, std::size_t{7}, std::size_t{1000}, std::size_t{10007}}) {
      const std::size_t grain = 7;
      const std::size_t chunks = (n + grain - 1) / grain;
      for (int round = 0; round < 200; ++round) {
        std::vector<std::atomic<int>> seen(chunks);
        std::vector<std::size_t> sums(chunks, 0);
        team.run(n, grain, [&](std::size_t chunk, std::size_t lo, std::size_t hi) {
          seen[chunk].fetch_add(1);
          for (std::size_t i = lo; i < hi; ++i) sums[chunk] += i;
        });
        std::size_t total = std::accumulate(sums.begin(), sums.end(), std::size_t{0});
        bool once = true;
        for (auto& s : seen) once = once && s.load() == 1;
        REQUIRE(once);
        REQUIRE(total == (n == 0 ? 0 : n * (n - 1) / 2));
      }
    }
  }
}

TEST_CASE("worker team: an exception in a chunk reaches the caller and the team stays usable", "[parallel]") {
  worker_team team(4);
  CHECK_THROWS_WITH(team.run(100, 1,
                             [](std::size_t chunk, std::size_t, std::size_t) {
                               if (chunk == 57) throw std::runtime_error("chunk 57 failed");
                             }),
                    "chunk 57 failed");
  std::atomic<std::size_t> count{0};
  team.run(100, 1, [&](std::size_t, std::size_t lo, std::size_t hi) { count += hi - lo; });
  CHECK(count == 100);
}
