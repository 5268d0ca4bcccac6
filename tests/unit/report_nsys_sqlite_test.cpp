// trace.sqlite in the Nsight Systems export schema: the tables, columns and joins that
// nsys stats reports and nsys analyze rules use, with totals exact to the nanosecond.
#include <cstdlib>
#include <map>

#include "speedlab_catch.hpp"
#include <sqlite3.h>

#include "reports/common/trace_util.hpp"
#include "reports/reporter.hpp"
#include "tests/golden/golden.hpp"
#include "tests/golden/report_fixture.hpp"

using namespace speedlab;

namespace {

struct db_handle {
  sqlite3* db = nullptr;
  explicit db_handle(const std::filesystem::path& p) { REQUIRE(sqlite3_open_v2(p.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK); }
  ~db_handle() { sqlite3_close(db); }
  // All rows of a query as strings (NULL as "NULL").
  std::vector<std::vector<std::string>> rows(const std::string& sql) const {
    sqlite3_stmt* st = nullptr;
    INFO(sql);
    REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
    std::vector<std::vector<std::string>> out;
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::vector<std::string> r;
      for (int i = 0; i < sqlite3_column_count(st); ++i) {
        auto* t = sqlite3_column_text(st, i);
        r.push_back(t ? reinterpret_cast<const char*>(t) : "NULL");
      }
      out.push_back(r);
    }
    sqlite3_finalize(st);
    return out;
  }
  std::string one(const std::string& sql) const {
    auto r = rows(sql);
    REQUIRE(r.size() == 1);
    return r[0][0];
  }
  long long num(const std::string& sql) const { return std::stoll(one(sql)); }
};

struct written {
  test_golden::temp_dir dir;
  std::filesystem::path file;
  explicit written(const test_fixture::report_fixture& f) {
    auto r = reports::make_reporter("nsys-sqlite");
    REQUIRE(r);
    const auto files = r->write(f.input(), dir.path);
    REQUIRE(files.size() == 1);
    file = files[0];
    REQUIRE(file.filename() == "trace.sqlite");
  }
};

} // namespace

TEST_CASE("nsys sqlite has the export schema metadata and enums", "[report][nsys]") {
  const auto f = test_fixture::make_report_fixture();
  written w(f);
  db_handle db(w.file);
  CHECK(db.one("SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'") == "3.20.3");
  CHECK(db.num("SELECT count(*) FROM ENUM_CUDA_MEMCPY_OPER") == 11);
  CHECK(db.one("SELECT label FROM ENUM_CUDA_MEMCPY_OPER WHERE id = 1") == "Host-to-Device");
  CHECK(db.one("SELECT label FROM ENUM_CUDA_MEM_KIND WHERE id = 0") == "Pageable");
  CHECK(db.one("SELECT label FROM ENUM_CUDA_MEM_KIND WHERE id = 7") == "Unknown");
  CHECK(db.one("SELECT name FROM ENUM_NSYS_EVENT_TYPE WHERE id = 59") == "NvtxPushPopRange");
  CHECK(db.one("SELECT name FROM TARGET_INFO_GPU WHERE id = 0") == "NVIDIA H100 80GB HBM3");
  CHECK(db.num("SELECT computeMajor FROM TARGET_INFO_GPU WHERE id = 0") == 9);
  CHECK(db.num("SELECT clockRate FROM TARGET_INFO_GPU WHERE id = 0") == 1980000000LL);
  CHECK(db.num("SELECT smCount FROM TARGET_INFO_GPU WHERE id = 0") == 132);
  CHECK(db.num("SELECT maxWarpsPerSm FROM TARGET_INFO_GPU WHERE id = 0") == 64);
  CHECK(db.num("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME") == 1795176000LL * 1000000000LL);
}

TEST_CASE("nsys sqlite kernel and memcpy totals equal the traces to the nanosecond", "[report][nsys]") {
  const auto f = test_fixture::make_report_fixture();
  written w(f);
  db_handle db(w.file);
  long long kernel_ns = 0, kernels = 0;
  std::map<std::string, long long> copy_ns, copy_bytes;
  for (const auto& [id, t] : f.traces) {
    for (const auto& k : t.kernels) kernel_ns += static_cast<long long>(k.end - k.start), ++kernels;
    for (const auto& m : t.memcpys) {
      const std::string name = std::string("[CUDA memcpy ") + reports::copy_kind_label(m.copy_kind) + "]";
      copy_ns[name] += static_cast<long long>(m.end - m.start);
      copy_bytes[name] += static_cast<long long>(m.bytes);
    }
  }
  // cuda_gpu_kern_sum reads the kernel names through StringIds.
  CHECK(db.num("SELECT sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS s ON s.id = k.demangledName") == kernel_ns);
  CHECK(db.num("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS s ON s.id = k.shortName") == kernels);
  // cuda_gpu_mem_time_sum / cuda_gpu_mem_size_sum INNER JOIN the copy kind: nothing may drop.
  const auto rows = db.rows("SELECT '[CUDA memcpy ' || mos.label || ']', sum(mcpy.end - mcpy.start), sum(mcpy.bytes) "
                            "FROM CUPTI_ACTIVITY_KIND_MEMCPY AS mcpy INNER JOIN ENUM_CUDA_MEMCPY_OPER AS mos "
                            "ON mos.id == mcpy.copyKind GROUP BY 1");
  REQUIRE(rows.size() == copy_ns.size());
  for (const auto& r : rows) {
    INFO(r[0]);
    CHECK(std::stoll(r[1]) == copy_ns.at(r[0]));
    CHECK(std::stoll(r[2]) == copy_bytes.at(r[0]));
  }
}

TEST_CASE("nsys sqlite memory kinds use Nsight numbering", "[report][nsys]") {
  const auto f = test_fixture::make_report_fixture();
  written w(f);
  db_handle db(w.file);
  // The pageable-memcpy rule tests srcKind == 0 / dstKind == 0.
  CHECK(db.num("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 AND srcKind = 0 AND dstKind = 2") == 6);
  CHECK(db.num("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 2 AND srcKind = 2 AND dstKind = 1") == 3);
  CHECK(db.num("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE memKind = 2") == 3);
  // cuda_gpu_trace LEFT JOINs the memory kinds: every memcpy gets a label.
  CHECK(db.num("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m LEFT JOIN ENUM_CUDA_MEM_KIND AS k ON m.srcKind = k.id "
               "WHERE k.label IS NULL") == 0);
}

TEST_CASE("nsys sqlite API calls join their GPU work like cuda_kern_exec does", "[report][nsys]") {
  const auto f = test_fixture::make_report_fixture();
  written w(f);
  db_handle db(w.file);
  CHECK(db.num("SELECT count(*) FROM StringIds WHERE value = 'cudaLaunchKernel_v7000'") == 1);
  // Names keep CUPTI's version suffix; reports strip it with this expression.
  CHECK(db.num("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r JOIN StringIds AS s ON s.id = r.nameId "
               "WHERE CASE substr(s.value, -6, 2) WHEN '_v' THEN substr(s.value, 1, length(s.value) - 6) ELSE s.value END "
               "= 'cudaLaunchKernel'") == 9);
  const long long kernels = db.num("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
  CHECK(db.num("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r "
               "ON k.correlationId == r.correlationId AND k.globalPid == (r.globalTid & 0xFFFFFFFFFF000000)") == kernels);
  // globalTid = (pid << 24) | tid.
  CHECK(db.num("SELECT count(DISTINCT globalTid) FROM CUPTI_ACTIVITY_KIND_RUNTIME") == 3);
  CHECK(db.num("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE globalTid = (4242 << 24) | 4242") == 18);
  CHECK(db.num("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 1") == 3);
  // The memcpy rules join on correlationId alone: each copy must find exactly one call.
  CHECK(db.num("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r "
               "ON r.correlationId == m.correlationId") == db.num("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY"));
  CHECK(db.num("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 4") == 3);
}

TEST_CASE("nsys sqlite times are session-relative and positive", "[report][nsys]") {
  const auto f = test_fixture::make_report_fixture();
  written w(f);
  db_handle db(w.file);
  // gpustats-based rules only look at GPU work with start > 0.
  CHECK(db.num("SELECT min(start) FROM (SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT start FROM "
               "CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT start FROM CUPTI_ACTIVITY_KIND_MEMSET)") > 0);
  CHECK(db.num("SELECT min(start) FROM NVTX_EVENTS") == 1000);
  CHECK(db.num("SELECT count(*) FROM NVTX_EVENTS WHERE end < start") == 0);
  CHECK(db.num("SELECT stopTime FROM ANALYSIS_DETAILS") > 2'000'000'000LL);
}

TEST_CASE("nsys sqlite NVTX ranges carry their domain as nvtx_sum expects", "[report][nsys]") {
  const auto f = test_fixture::make_report_fixture();
  written w(f);
  db_handle db(w.file);
  // The domains CTE of the NVTX reports, then the range tags they build.
  const auto tags = db.rows(
      "WITH domains AS (SELECT min(ne.start), ne.domainId AS id, ne.globalTid AS globalTid, coalesce(sid.value, ne.text) AS name "
      "FROM NVTX_EVENTS AS ne LEFT JOIN StringIds AS sid ON ne.textId == sid.id WHERE ne.eventType == 75 GROUP BY 2, 3) "
      "SELECT DISTINCT coalesce(d.name, '') || ':' || coalesce(sid.value, ne.text, '') FROM NVTX_EVENTS AS ne "
      "LEFT JOIN domains AS d ON ne.domainId == d.id AND (ne.globalTid & 0x0000FFFFFF000000) == (d.globalTid & 0x0000FFFFFF000000) "
      "LEFT JOIN StringIds AS sid ON ne.textId == sid.id WHERE ne.eventType == 59 ORDER BY 1");
  REQUIRE(tags.size() == 9);
  CHECK(tags[0][0] == "speedlab:histogram/cuda_atomic bins=10,samples=16777216: compute");
}

TEST_CASE("nsys sqlite is not written without GPU data", "[report][nsys]") {
  auto f = test_fixture::make_report_fixture();
  f.traces.clear();
  auto r = reports::make_reporter("nsys-sqlite");
  test_golden::temp_dir dir;
  CHECK(r->write(f.input(), dir.path).empty());
  CHECK(std::filesystem::is_empty(dir.path));
}

TEST_CASE("nsys_totals.py prints the same kernel total", "[report][nsys]") {
  if (std::system("python3 --version > /dev/null 2>&1") != 0) {
    WARN("SKIPPED: python3 not found, nsys_totals.py not exercised");
    return;
  }
  const auto f = test_fixture::make_report_fixture();
  written w(f);
  const auto script = speedlab::testing::test_root() / "tests" / "tools" / "nsys_totals.py";
  REQUIRE(std::filesystem::exists(script)); // linked into the build folder, copied into .device-carry
  const auto out = w.dir.path / "totals.txt";
  REQUIRE(std::system(("python3 '" + script.string() + "' '" + w.file.string() + "' > '" + out.string() + "'").c_str()) == 0);
  const auto text = test_golden::read_file(out);
  long long kernel_ns = 0;
  for (const auto& [id, t] : f.traces)
    for (const auto& k : t.kernels) kernel_ns += static_cast<long long>(k.end - k.start);
  CHECK(text.find(std::to_string(kernel_ns)) != std::string::npos);
  CHECK(text.find("[CUDA memcpy Host-to-Device]") != std::string::npos);
  CHECK(text.find("cudaLaunchKernel") != std::string::npos);
}
