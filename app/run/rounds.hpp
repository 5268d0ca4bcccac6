// Rounds: each point measured in several separate runs (a child process each when isolated),
// round-robin over the plan, so slow drift during the run (load, frequency) and what differs
// between processes (placement, memory layout) land inside every point's spread, where
// `speedlab compare` can see them. Each round gets 1/R of the point's measuring budget, so the
// suite takes about as long as with one round plus R-1 more set-ups and warm-ups per point.
#pragma once

#include <vector>

#include "app/suite/suite_config.hpp"
#include "model/results.hpp"

namespace speedlab::app {

// One round's share of a point's budget: times and sample counts divided by `rounds` (at
// least 2 samples a round, so a round has a median of its own, unless the point asks for
// fewer: a point with max_samples below 2 x rounds measures more than it); warm-up runs are
// per process and stay whole.
measure_options round_measure(const measure_options& point, int rounds);

// Adds round `round` (0-based) of `rounds_planned` to a point's record. The first round is
// the record; later ones add their samples (tagged with their round), splits and timings. A
// round that did not end "ok" ends the point: its status and reason (naming the round) win,
// and the samples of the earlier rounds stay in the record.
void merge_round(point_result& into, point_result round_result, int round, int rounds_planned);

// Whether a point needs no more rounds: all done, or one did not end ok.
bool point_finished(const point_result& p);

} // namespace speedlab::app
