// Readers of saved runs: each class of bad record is refused with a message naming the
// problem; a record of a newer schema is its own error.
#include "speedlab_catch.hpp"

#include "model/saved_records.hpp"

using namespace speedlab;
using Catch::Contains;
using json = nlohmann::json;

namespace {
json good_point() {
  point_result p;
  p.id = "faulty/ok/n=1000";
  p.workload = "faulty";
  p.variant = "ok";
  p.kind = speedlab::variant_kind::serial;
  p.params = {{"n", "1000"}};
  p.samples_ns = {1200, 1100, 1300};
  p.wall.count = 3;
  p.wall.median = 1200;
  p.dropped_records = 3;
  return p;
}
void check_refused(const json& record, const std::string& why) {
  INFO(record.dump());
  CHECK_THROWS_AS(read_point_record(record), bad_record);
  CHECK_THROWS_WITH(read_point_record(record), Contains(why));
}
} // namespace

TEST_CASE("saved records: a valid point reads back as written", "[saved_records]") {
  const point_result p = read_point_record(good_point());
  CHECK(p.id == "faulty/ok/n=1000");
  CHECK(p.samples_ns.size() == 3);
  CHECK(p.dropped_records == 3);
  json with_version = good_point();
  with_version["schema_version"] = results_schema_version;
  CHECK(read_point_record(with_version).wall.median == 1200);
}

TEST_CASE("saved records: missing or unknown fields and types are refused", "[saved_records]") {
  json j = good_point();
  j.erase("status");
  check_refused(j, "'status' is missing"); // another tool's JSONL is not "ok"
  j = good_point();
  j["status"] = "fine";
  check_refused(j, "status 'fine' is not one of ok");
  j = good_point();
  j["kind"] = "gpu";
  check_refused(j, "unknown kind 'gpu' (one of serial, threads, cuda)");
  j = good_point();
  j.erase("id");
  check_refused(j, "'id' is missing");
  j = good_point();
  j["workload"] = 42;
  check_refused(j, "'workload' must be a string");
  j = good_point();
  j["samples_ns"] = "fast";
  check_refused(j, "wrong type");
  j = good_point();
  j["trace_file"] = "../../etc/passwd";
  check_refused(j, "trace_file '../../etc/passwd' is not under traces/");
  j["trace_file"] = "traces/../../x.json";
  check_refused(j, "is not under traces/");
  j["trace_file"] = "traces/faulty_ok.json";
  CHECK_NOTHROW(read_point_record(j));
  check_refused(json::array({1, 2}), "a JSON object was expected, found array");
  check_refused(json(3), "found number");
}

TEST_CASE("saved records: negative, absurd and empty measurements are refused", "[saved_records]") {
  json j = good_point();
  j["samples_ns"][1] = -10545;
  check_refused(j, "samples_ns[1]: -10545 is negative");
  j = good_point();
  j["dropped_records"] = 18446744073709551611ull; // -5 written as unsigned
  check_refused(j, "dropped_records: 18446744073709551611 is absurd");
  j = good_point();
  j["wall"]["median"] = -1.5;
  check_refused(j, "wall.median: -1.5 is negative");
  j = good_point();
  j["work"] = {{"bytes_read", 1e300}};
  check_refused(j, "work.bytes_read");
  j = good_point();
  j["samples_ns"] = json::array();
  check_refused(j, "status is ok but samples_ns is empty");
  j = good_point();
  j["samples_ns"] = {0, 0};
  check_refused(j, "samples_ns[0] is 0");
  j = good_point();
  j["wall"]["median"] = 0;
  check_refused(j, "wall.median is not positive");
  // A failed point has no measurements, and that is fine.
  j = good_point();
  j["status"] = "crashed";
  j["samples_ns"] = json::array();
  j["wall"]["median"] = 0;
  CHECK(read_point_record(j).status == point_status::crashed);
}

TEST_CASE("saved records: a newer schema version is its own error; a bad one is refused", "[saved_records]") {
  json j = good_point();
  j["schema_version"] = results_schema_version + 1;
  CHECK_THROWS_AS(read_point_record(j), newer_schema_error);
  CHECK_THROWS_WITH(read_point_record(j), Contains("newer speedlab (schema version 2"));
  j["schema_version"] = 1.7; // a minor version of ours
  CHECK_NOTHROW(read_point_record(j));
  j["schema_version"] = "one";
  CHECK_THROWS_WITH(read_point_record(j), Contains("not a positive number"));
  CHECK_THROWS_AS(read_run_record(json{{"schema_version", 9}}), newer_schema_error);
}

TEST_CASE("saved records: run, device and trace records are checked too", "[saved_records]") {
  CHECK(read_run_record(json{{"cpu_cores", 8}, {"wall_s", 1.5}}).cpu_cores == 8);
  CHECK_THROWS_WITH(read_run_record(json{{"wall_s", -3}}), Contains("wall_s: -3 is negative"));
  CHECK_THROWS_WITH(read_run_record(json{{"cpu_cores", "many"}}), Contains("'cpu_cores' must be a whole number") && Contains("\"many\""));
  CHECK_THROWS_WITH(read_device_record(json{{"gpu", {{"dram_bw", {{"value", -1}}}}}}), Contains("gpu.dram_bw.value: -1 is negative"));
  CHECK_THROWS_WITH(read_device_record(json("H100")), Contains("a JSON object was expected"));

  trace::device_trace t;
  t.backend = "cupti";
  trace::kernel_record k;
  k.start = 100;
  k.end = 200;
  k.name = "axpy";
  t.kernels.push_back(k);
  json j = t;
  CHECK(read_trace_record(j).kernels.size() == 1);
  t.kernels[0].end = 50;
  CHECK_THROWS_WITH(read_trace_record(json(t)), Contains("kernels[0] ends (50) before it starts (100)"));
  j["version"] = trace::trace_format_version + 1;
  CHECK_THROWS_AS(read_trace_record(j), newer_schema_error);
  j = json(t);
  j["dropped_records"] = -4;
  CHECK_THROWS_WITH(read_trace_record(j), Contains("dropped_records: -4 is negative"));
}

TEST_CASE("saved records: JSON problems are said in words, without the parser's internals", "[saved_records]") {
  const auto problem = [](const std::string& text) {
    try {
      [[maybe_unused]] const json parsed = json::parse(text); // GCC ignores a (void) cast here
    } catch (const std::exception& e) {
      return json_problem(e);
    }
    return std::string("parsed");
  };
  CHECK(problem("{\"id\": \"a\", \"samples_ns\": [1, 2") ==
        "not valid JSON at column 32: truncated: it ends in the middle of a value");
  CHECK(problem("{\"id\": \"abc") == "not valid JSON at column 12: truncated: a string has no closing quote");
  CHECK_THAT(problem("garbage"), Contains("column 1") && Contains("bare word"));
  CHECK_THAT(problem("{\"a\": 1}\n{\"a\": 2}"), Contains("line 2, column 1") && Contains("more text after the value"));
  CHECK_THAT(problem("{\"a\": 1,, }"), Contains("column 9") && Contains("object"));
  CHECK_THAT(problem("[\"\xff\"]"), Contains("not UTF-8"));
  for (const char* text : {"{\"id\": \"a\"", "garbage", "[1 2]", "{\"a\" 1}", "\"\\u12\""}) {
    INFO(text);
    CHECK_THAT(problem(text), !Contains("json.exception") && !Contains("parse_error") && !Contains("last read"));
  }
  // A type error loses its prefix; other exceptions keep their message.
  try {
    (void)json("text").get<int>();
  } catch (const std::exception& e) {
    CHECK(json_problem(e) == "type must be number, but is string");
  }
  CHECK(json_problem(std::runtime_error("plain")) == "plain");
}

TEST_CASE("saved records: a record nested a million deep is refused, not a stack overflow", "[saved_records]") {
  json record = good_point();
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  record["extra"] = json::parse(deep);
  CHECK_THROWS_WITH(read_point_record(record), Contains("extra: lists or objects nested more than 64 deep"));
  json shallow = good_point();
  shallow["extra"] = json::parse("[[[1]]]");
  CHECK_NOTHROW(read_point_record(shallow));
}
