// Readers of saved runs trust nothing: each record of results.jsonl, run.json,
// traces/*.json and device.json is checked (required fields, types, known status, no
// negative, non-finite or absurd numbers, schema version) before it becomes a model
// object. A record that fails throws bad_record with the first problem found, so the
// caller can say file:line and why; a record from a newer speedlab throws
// newer_schema_error, which callers must not read past (and never rewrite).
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "model/device_model.hpp"
#include "model/results.hpp"
#include "model/trace.hpp"

namespace speedlab {

class bad_record : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

class newer_schema_error : public bad_record {
public:
  using bad_record::bad_record;
};

// The version of run.json (written beside results.jsonl by the same speedlab).
inline constexpr int run_info_schema_version = 1;

// "schema_version" of a record (missing: 1, the version before the field was written).
// Throws newer_schema_error when its major version is above `ours`, bad_record when it is
// not a positive number.
int check_schema_version(const nlohmann::json& record, int ours);

// Why a point's trace_file may not be opened (empty when it may): it must name a file
// under traces/ of the same folder, nothing absolute and no "..".
std::string trace_path_problem(const std::string& trace_file);

// What is wrong with a JSON text or record, in words, for a user's message: nlohmann's parse
// errors become "not valid JSON at column 151: truncated, it ends in the middle of a value",
// its other errors lose their "[json.exception.type_error.302]" prefix, a filesystem error
// is said in words (model/file_problem.hpp); any other exception keeps its message. Never echoes the text it failed on.
std::string json_problem(const std::exception& e);

point_result read_point_record(const nlohmann::json& record);

// Whether `later` is the same point measured on from `earlier`, a point saved with some of
// its rounds (rounds < rounds_planned, status ok): `speedlab run --resume` appends the point
// again with more rounds, the earlier rounds' samples (and their round numbers) unchanged at
// the front. A reader keeps the later line and says nothing; any other repeated id is
// reported (docs/results-schema.md, "Reading saved runs").
bool extends_partial(const point_result& earlier, const point_result& later);
run_info read_run_record(const nlohmann::json& record);
trace::device_trace read_trace_record(const nlohmann::json& record);
device_model read_device_record(const nlohmann::json& record);

} // namespace speedlab
