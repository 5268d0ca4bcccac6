// trace.sqlite: the device traces in the Nsight Systems SQLite export schema (3.x, as
// nsys 2025.3 writes 3.20), so `nsys stats` reports, `nsys analyze` rules and users' own
// queries against nsys exports run on speedlab's data. Written only when some point has
// GPU activity. Tables and column lists follow Nsight's schema reference; columns speedlab
// does not record are NULL (or 0 where the schema says NOT NULL). See docs/reports.md for
// what maps to what.
//
// Conventions:
//   - times: nanoseconds since the session start, which is 1 µs before the first record
//     of the run (every start > 0, as the nsys rules expect);
//   - globalTid = (pid << 24) | (tid & 0xFFFFFF), globalPid = pid << 24; pid is the
//     point's child process id (1000000 + point index when unknown);
//   - correlation ids get (point index << 32) added so they stay unique across points
//     (each child process restarts CUPTI's numbering) and the rules' joins on
//     correlationId alone cannot pair a copy of one point with an API call of another;
//   - memory kinds are remapped from CUPTI to Nsight numbering (nsys = cupti - 1, unknown 7).
#include <ctime>
#include <map>
#include <set>

#include <sqlite3.h>

#include "model/atomic_file.hpp"
#include "reports/common/report_data.hpp"
#include "reports/common/trace_util.hpp"
#include "reports/reporter.hpp"

namespace speedlab::reports {

namespace {

constexpr std::int64_t nvtx_pushpop_range = 59;
constexpr std::int64_t nvtx_domain_create = 75;
constexpr std::int64_t event_class_runtime = 0;
constexpr std::int64_t event_class_driver = 1;

class sqlite_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// RAII around the connection and statements; every failure throws with SQLite's message.
class database {
public:
  explicit database(const std::filesystem::path& path) {
    if (sqlite3_open_v2(path.c_str(), &m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
      const std::string msg = m_db ? sqlite3_errmsg(m_db) : "out of memory";
      sqlite3_close(m_db);
      throw sqlite_error("cannot create " + path.string() + ": " + msg);
    }
  }
  ~database() { sqlite3_close(m_db); }
  database(const database&) = delete;
  database& operator=(const database&) = delete;

  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      throw sqlite_error("SQLite: " + msg + " in: " + sql.substr(0, 120));
    }
  }
  sqlite3* handle() const { return m_db; }

private:
  sqlite3* m_db = nullptr;
};

// A value for a column: integer, real, text or NULL.
struct value {
  enum class kind { null, integer, real, text } k = kind::null;
  std::int64_t i = 0;
  double d = 0;
  std::string s;
  value() = default;
  value(std::nullptr_t) {}
  template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  value(T v) : k(kind::integer), i(static_cast<std::int64_t>(v)) {}
  value(double v) : k(kind::real), d(v) {}
  value(std::string v) : k(kind::text), s(std::move(v)) {}
  value(const char* v) : k(kind::text), s(v) {}
};

class statement {
public:
  statement(database& db, const std::string& sql) : m_db(db.handle()) {
    if (sqlite3_prepare_v2(m_db, sql.c_str(), -1, &m_stmt, nullptr) != SQLITE_OK)
      throw sqlite_error(std::string("SQLite prepare: ") + sqlite3_errmsg(m_db) + " in: " + sql.substr(0, 120));
  }
  ~statement() { sqlite3_finalize(m_stmt); }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;

  void run(std::initializer_list<value> values) {
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
    int i = 1;
    for (const auto& v : values) {
      int rc = SQLITE_OK;
      switch (v.k) {
      case value::kind::null: rc = sqlite3_bind_null(m_stmt, i); break;
      case value::kind::integer: rc = sqlite3_bind_int64(m_stmt, i, v.i); break;
      case value::kind::real: rc = sqlite3_bind_double(m_stmt, i, v.d); break;
      case value::kind::text:
        rc = sqlite3_bind_text(m_stmt, i, v.s.data(), static_cast<int>(v.s.size()), SQLITE_TRANSIENT);
        break;
      }
      if (rc != SQLITE_OK) throw sqlite_error(std::string("SQLite bind: ") + sqlite3_errmsg(m_db));
      ++i;
    }
    if (sqlite3_step(m_stmt) != SQLITE_DONE) throw sqlite_error(std::string("SQLite insert: ") + sqlite3_errmsg(m_db));
  }
  // For single-value queries.
  std::optional<std::int64_t> scalar() {
    sqlite3_reset(m_stmt);
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW && sqlite3_column_type(m_stmt, 0) != SQLITE_NULL) return sqlite3_column_int64(m_stmt, 0);
    return std::nullopt;
  }

private:
  sqlite3* m_db;
  sqlite3_stmt* m_stmt = nullptr;
};

// The schema: Nsight's column names and order (export schema 3.x). Columns added after
// 3.20 that reports do not read are left out.
constexpr const char* schema = R"SQL(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE META_DATA_CAPTURE (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs INTEGER);
CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER NOT NULL, duration INTEGER NOT NULL, startTime INTEGER NOT NULL, stopTime INTEGER NOT NULL);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, isDiscrete INTEGER,
  l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER,
  uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER, ctxswDevPath TEXT, ctrlDevPath TEXT, revision INTEGER,
  nodeMask INTEGER, constantMemory INTEGER, maxIPC INTEGER, maxRegistersPerBlock INTEGER, maxShmemPerBlock INTEGER,
  maxShmemPerBlockOptin INTEGER, maxShmemPerSm INTEGER, maxRegistersPerSm INTEGER, threadsPerWarp INTEGER,
  asyncEngines INTEGER, maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER, maxThreadsPerBlock INTEGER, maxBlockDimX INTEGER,
  maxBlockDimY INTEGER, maxBlockDimZ INTEGER, maxGridDimX INTEGER, maxGridDimY INTEGER, maxGridDimZ INTEGER,
  computeMajor INTEGER, computeMinor INTEGER, smMajor INTEGER, smMinor INTEGER);
CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_NSYS_EVENT_CLASS (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_KERNEL_LAUNCH_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_FUNC_CACHE_CONFIG (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUPTI_STREAM_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,
  registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,
  gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,
  srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER,
  graphNodeId INTEGER, virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  syncType INTEGER NOT NULL, eventId INTEGER NOT NULL, eventSyncId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER,
  uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL,
  jsonTextId INTEGER, jsonText TEXT, eventId INTEGER NOT NULL PRIMARY KEY);
)SQL";

// Tables whose start/end are shifted to session time at the end.
constexpr const char* timed_tables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                        "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
                                        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS"};

void fill_enums(database& db) {
  statement ins_type(db, "INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (?, ?, ?)");
  ins_type.run({34, "NvtxMark", "NVTX mark"});
  ins_type.run({nvtx_pushpop_range, "NvtxPushPopRange", "NVTX push/pop range"});
  ins_type.run({60, "NvtxStartEndRange", "NVTX start/end range"});
  ins_type.run({nvtx_domain_create, "NvtxDomainCreate", "NVTX domain create"});
  statement ins_class(db, "INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES (?, ?, ?)");
  ins_class.run({event_class_runtime, "TRACE_PROCESS_EVENT_CUDA_RUNTIME", "CUDA runtime"});
  ins_class.run({event_class_driver, "TRACE_PROCESS_EVENT_CUDA_DRIVER", "CUDA driver"});
  statement ins_oper(db, "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)");
  const char* opers[] = {"UNKNOWN", "HTOD", "DTOH", "HTOA", "ATOH", "ATOA", "ATOD", "DTOA", "DTOD", "HTOH", "PTOP"};
  for (int i = 0; i <= 10; ++i)
    ins_oper.run({i, std::string("CUDA_MEMCPY_KIND_") + opers[i], copy_kind_label(static_cast<std::uint8_t>(i))});
  statement ins_kind(db, "INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?, ?, ?)");
  const char* kinds[] = {"PAGEABLE", "PINNED", "DEVICE", "ARRAY", "MANAGED", "DEVICE_STATIC", "MANAGED_STATIC", "UNKNOWN"};
  const char* labels[] = {"Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static", "Unknown"};
  for (int i = 0; i < 8; ++i) ins_kind.run({i, std::string("CUDA_MEMOPR_MEMORY_KIND_") + kinds[i], labels[i]});
  statement ins_launch(db, "INSERT INTO ENUM_CUDA_KERNEL_LAUNCH_TYPE VALUES (?, ?, ?)");
  ins_launch.run({0, "CUDA_KERNEL_LAUNCH_TYPE_UNKNOWN", "Unknown"});
  ins_launch.run({1, "CUDA_KERNEL_LAUNCH_TYPE_REGULAR", "Regular"});
  ins_launch.run({2, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE", "Coop Single Device"});
  ins_launch.run({3, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE", "Coop Multi Device"});
  statement ins_cache(db, "INSERT INTO ENUM_CUDA_FUNC_CACHE_CONFIG VALUES (?, ?, ?)");
  ins_cache.run({0, "CU_FUNC_CACHE_PREFER_NONE", "None"});
  ins_cache.run({1, "CU_FUNC_CACHE_PREFER_SHARED", "Shared"});
  ins_cache.run({2, "CU_FUNC_CACHE_PREFER_L1", "L1"});
  ins_cache.run({3, "CU_FUNC_CACHE_PREFER_EQUAL", "Equal"});
  statement ins_shmem(db, "INSERT INTO ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG VALUES (?, ?, ?)");
  ins_shmem.run({0, "CUDA_SHARED_MEM_LIMIT_DEFAULT", "Default"});
  ins_shmem.run({1, "CUDA_SHARED_MEM_LIMIT_OPTIN", "Opt in"});
  statement ins_sync(db, "INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (?, ?, ?)");
  ins_sync.run({0, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN", "Unknown"});
  ins_sync.run({1, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE", "Event sync"});
  ins_sync.run({2, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT", "Stream wait sync"});
  ins_sync.run({3, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE", "Stream sync"});
  ins_sync.run({4, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE", "Context sync"});
  statement ins_stream(db, "INSERT INTO ENUM_CUPTI_STREAM_TYPE VALUES (?, ?, ?)");
  ins_stream.run({0, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_UNKNOWN", "Unknown"});
  ins_stream.run({1, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT", "Default stream"});
  ins_stream.run({2, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING", "Non-blocking stream"});
  ins_stream.run({3, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL", "Null stream"});
}

// "2026-11-20T12:00:00Z" (or with fractional seconds) as Unix epoch nanoseconds.
std::optional<std::int64_t> parse_utc(const std::string& iso) {
  std::tm tm{};
  int y, mo, d, h, mi;
  double s;
  if (std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%lf", &y, &mo, &d, &h, &mi, &s) != 6) return std::nullopt;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = 0;
  const std::time_t t = timegm(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<std::int64_t>(t) * 1'000'000'000LL + static_cast<std::int64_t>(s * 1e9);
}

// A device property from the device model under any of a few plausible keys.
value property(const analysis::device_model& d, std::initializer_list<const char*> keys, bool integer = true) {
  for (const char* k : keys) {
    if (auto it = d.properties.find(k); it != d.properties.end() && !it->second.empty()) {
      if (!integer) return value(it->second);
      try {
        return value(static_cast<std::int64_t>(std::stoll(it->second)));
      } catch (...) {
      }
    }
    if (auto it = d.gpu.find(k); it != d.gpu.end() && integer) return value(static_cast<std::int64_t>(it->second.value));
  }
  return value();
}

class nsys_writer {
public:
  explicit nsys_writer(database& db)
      : m_string(db, "INSERT INTO StringIds VALUES (?, ?)"),
        m_kernel(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
        m_memcpy(db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
        m_memset(db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"),
        m_runtime(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?,?)"),
        m_sync(db, "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?,?,?,?,?,?,?,?,?,?,?)"),
        m_nvtx(db, "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,?,?,?,?)"),
        m_thread(db, "INSERT INTO ThreadNames VALUES (?, ?, ?)") {}

  std::set<std::uint32_t> devices;

  bool add_point(std::size_t index, const point_result& p, const trace::device_trace& t) {
    const std::int64_t pid = t.process ? t.process : 1000000 + static_cast<std::int64_t>(index);
    const std::int64_t global_pid = pid << 24;
    auto global_tid = [&](std::uint32_t tid) { return global_pid | (tid & 0xFFFFFF); };
    const std::int64_t corr_base = static_cast<std::int64_t>(index) << 32;
    auto corr = [&](std::uint32_t c) { return value(corr_base + c); };

    std::set<std::uint32_t> threads;
    for (const auto& a : t.api_calls) threads.insert(a.thread);
    for (const auto& r : t.ranges) threads.insert(r.thread);
    for (auto tid : threads)
      if (m_named_threads.insert(global_tid(tid)).second)
        m_thread.run({string_id((tid & 0xFFFFFF) == (pid & 0xFFFFFF) ? "speedlab " + p.id : "thread " + std::to_string(tid)), 0,
                      global_tid(tid)});

    std::map<std::uint32_t, std::uint32_t> device_of_context;
    for (const auto& k : t.kernels) {
      device_of_context.emplace(k.context, k.device);
      devices.insert(k.device);
      m_kernel.run({k.start, k.end, k.device, k.context, 0, k.stream, corr(k.correlation), global_pid,
                    string_id(k.name), string_id(kernel_short_name(k.name)),
                    k.mangled_name.empty() ? value() : value(string_id(k.mangled_name)), 0, value(),
                    k.registers_per_thread, k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2],
                    k.static_shared_bytes, k.dynamic_shared_bytes, k.local_bytes_per_thread, 0, ++m_grid_id, value(),
                    value(), value()});
    }
    for (const auto& m : t.memcpys) {
      device_of_context.emplace(m.context, m.device);
      devices.insert(m.device);
      m_memcpy.run({m.start, m.end, m.device, m.context, 0, m.stream, corr(m.correlation), global_pid,
                    static_cast<std::int64_t>(m.bytes), m.copy_kind <= 10 ? m.copy_kind : 0, value(),
                    nsys_memory_kind(m.src_kind), nsys_memory_kind(m.dst_kind), m.device, m.context, m.device, m.context,
                    value(), value(), value()});
    }
    for (const auto& m : t.memsets) {
      device_of_context.emplace(m.context, m.device);
      devices.insert(m.device);
      m_memset.run({m.start, m.end, m.device, m.context, 0, m.stream, corr(m.correlation), global_pid, m.value,
                    static_cast<std::int64_t>(m.bytes), value(), nsys_memory_kind(m.memory_kind)});
    }
    for (const auto& a : t.api_calls)
      m_runtime.run({a.start, a.end, a.driver ? event_class_driver : event_class_runtime, global_tid(a.thread),
                     corr(a.correlation), string_id(a.name), a.return_value, value()});
    for (const auto& s : t.syncs) {
      auto it = device_of_context.find(s.context);
      m_sync.run({s.start, s.end, it == device_of_context.end() ? 0u : it->second, s.context, 0,
                  static_cast<std::int64_t>(s.stream), corr(s.correlation), global_pid, s.type, 0, value()});
    }
    for (const auto& r : t.ranges) {
      std::int64_t domain = 0; // the default domain needs no creation record
      if (!r.domain.empty()) {
        auto [it, inserted] = m_domains.try_emplace({pid, r.domain}, static_cast<std::int64_t>(m_domains.size()) + 1);
        domain = it->second;
        if (inserted) m_nvtx.run({r.start, value(), nvtx_domain_create, r.domain, global_tid(r.thread), domain});
      }
      m_nvtx.run({r.start, r.end, nvtx_pushpop_range, r.name, global_tid(r.thread), domain});
    }
    return t.has_gpu_activity();
  }

  std::int64_t string_id(const std::string& s) {
    auto [it, inserted] = m_strings.try_emplace(s, static_cast<std::int64_t>(m_strings.size()));
    if (inserted) m_string.run({it->second, s});
    return it->second;
  }

private:
  statement m_string, m_kernel, m_memcpy, m_memset, m_runtime, m_sync, m_nvtx, m_thread;
  std::map<std::string, std::int64_t> m_strings;
  std::map<std::pair<std::int64_t, std::string>, std::int64_t> m_domains;
  std::set<std::int64_t> m_named_threads;
  std::int64_t m_grid_id = 0;
};

class nsys_sqlite_reporter final : public reporter {
public:
  nsys_sqlite_reporter()
      : reporter(
            "nsys-sqlite",
            "trace.sqlite: device traces in the Nsight Systems SQLite export schema, for nsys stats / nsys analyze") {}
  std::vector<std::filesystem::path> write(const report_input& in, const std::filesystem::path& dir) override {
    const auto path = dir / "trace.sqlite";
    atomic_file file(path);
    const auto& partial = file.temp_path();
    bool any_gpu = false;
    {
      database db(partial);
      db.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;");
      db.exec("BEGIN TRANSACTION");
      db.exec(schema);
      fill_enums(db);
      nsys_writer writer(db);
      std::vector<std::string> unreadable;
      for (std::size_t i = 0; i < in.points.size(); ++i) {
        std::string error;
        auto t = load_trace_safely(in.load_trace, in.points[i], error);
        if (!error.empty()) unreadable.push_back(in.points[i].id + ": " + error);
        if (!t) continue;
        any_gpu |= writer.add_point(i, in.points[i], *t);
      }
      if (any_gpu) {
        finish(db, writer, in);
        statement note(db, "INSERT INTO META_DATA_EXPORT VALUES ('SPEEDLAB_UNREADABLE_TRACE', ?)");
        for (const auto& u : unreadable) note.run({u});
      }
      db.exec("COMMIT");
    }
    if (!any_gpu) return {}; // the temporary file goes, an earlier trace.sqlite stays
    file.commit();
    return {path};
  }

private:
  static void finish(database& db, nsys_writer& writer, const report_input& in) {
    // Session time: shift everything so the session starts 1 µs before the first record.
    std::string min_sql = "SELECT min(m) FROM (";
    std::string max_sql = "SELECT max(m) FROM (";
    bool first = true;
    for (const char* t : timed_tables) {
      min_sql += std::string(first ? "" : " UNION ALL ") + "SELECT min(start) AS m FROM " + t;
      max_sql += std::string(first ? "" : " UNION ALL ") + "SELECT max(coalesce(end, start)) AS m FROM " + t;
      first = false;
    }
    const std::int64_t first_ns = statement(db, min_sql + ")").scalar().value_or(0);
    const std::int64_t last_ns = statement(db, max_sql + ")").scalar().value_or(first_ns);
    const std::int64_t origin = first_ns - 1000;
    for (const char* t : timed_tables)
      db.exec(std::string("UPDATE ") + t + " SET start = start - " + std::to_string(origin) + ", end = end - " +
              std::to_string(origin));

    statement meta(db, "INSERT INTO META_DATA_EXPORT VALUES (?, ?)");
    meta.run({"EXPORT_SCHEMA_VERSION", "3.20.3"});
    meta.run({"EXPORT_SCHEMA_VERSION_MAJOR", "3"});
    meta.run({"EXPORT_SCHEMA_VERSION_MINOR", "20"});
    meta.run({"EXPORT_SCHEMA_VERSION_MICRO", "3"});
    meta.run({"EXPORTER", "speedlab " + in.run.speedlab_version + " (nsys-sqlite reporter)"});
    meta.run({"SESSION_ORIGIN_STEADY_CLOCK_NS", std::to_string(origin)});
    statement capture(db, "INSERT INTO META_DATA_CAPTURE VALUES (?, ?)");
    capture.run({"COMMAND_LINE", in.run.command_line});
    capture.run({"HOSTNAME", in.run.hostname});

    const auto utc = parse_utc(in.run.started_at);
    statement(db, "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, ?, ?, ?)")
        .run({utc ? value(*utc) : value(), in.run.started_at, in.run.started_at, origin});
    statement(db, "INSERT INTO ANALYSIS_DETAILS VALUES (?, ?, ?, ?)").run({0, last_ns - origin, 0, last_ns - origin});

    const auto& d = in.analysis.device;
    const std::string gpu = d.gpu_name.empty() ? in.run.gpu_name : d.gpu_name;
    int major = 0, minor = 0;
    bool have_cc = false;
    if (auto it = d.properties.find("compute_capability"); it != d.properties.end())
      have_cc = std::sscanf(it->second.c_str(), "%d.%d", &major, &minor) == 2;
    statement gpu_row(db, "INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, totalMemory, clockRate, smCount, uuid, "
                          "chipName, cuDevice, computeMajor, computeMinor, l2CacheSize, asyncEngines, threadsPerWarp, "
                          "maxRegistersPerSm, maxRegistersPerBlock, maxBlocksPerSm, maxWarpsPerSm, maxShmemPerSm, "
                          "maxShmemPerBlockOptin, smMajor, smMinor) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    // Property names as device/'s probe writes them (a few alternatives for older models).
    value clock = property(d, {"clock_hz", "sm_clock_hz"});
    if (clock.k == value::kind::null)
      if (auto khz = property(d, {"clock_khz", "sm_clock_khz"}); khz.k == value::kind::integer) clock = value(khz.i * 1000);
    if (clock.k == value::kind::null)
      if (auto mhz = property(d, {"clock_mhz", "sm_clock_mhz"}); mhz.k == value::kind::integer) clock = value(mhz.i * 1000000);
    value warps;
    if (auto threads = property(d, {"max_threads_per_sm"}); threads.k == value::kind::integer) warps = value(threads.i / 32);
    const value major_v = have_cc ? value(major) : value(), minor_v = have_cc ? value(minor) : value();
    for (auto dev : writer.devices)
      gpu_row.run({0, dev, gpu.empty() ? value() : value(gpu), property(d, {"pci_bus_id", "bus_location"}, false),
                   property(d, {"global_memory_bytes", "total_memory_bytes"}), clock, property(d, {"sm_count"}),
                   property(d, {"uuid"}, false), property(d, {"chip_name"}, false), dev, major_v, minor_v,
                   property(d, {"l2_bytes", "l2_cache_bytes"}), property(d, {"async_engines"}),
                   property(d, {"warp_size"}), property(d, {"regs_per_sm"}), property(d, {"regs_per_block"}),
                   property(d, {"max_blocks_per_sm"}), warps, property(d, {"smem_per_sm"}),
                   property(d, {"smem_per_block_optin"}), major_v, minor_v});
  }
};

} // namespace

std::unique_ptr<reporter> make_nsys_sqlite_reporter() { return std::make_unique<nsys_sqlite_reporter>(); }

} // namespace speedlab::reports
