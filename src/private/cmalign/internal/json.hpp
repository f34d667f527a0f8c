// JSON, the format of the C API, Python and `--format json`: each command's outcome as its JSON
// object (docs/json.md) and run_json() on a parsed request. Private: the installed C++ API has
// no nlohmann::json in it; its users get JSON as text (run_json_text(), json_api.hpp).
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp> // IWYU pragma: export (callers take the JSON apart)

#include "cmalign/boot_check.hpp"
#include "cmalign/explain.hpp"
#include "cmalign/run.hpp"
#include "cmalign/run_fix.hpp"
#include "cmalign/sweep.hpp"
#include "cmalign/tune.hpp"

namespace cmalign {

nlohmann::json boot_check_json(const BootCheckOutcome& outcome);

// {"kernel_version", "nodes": [{node, file, line, outcome, log: [{line_number, text}], check,
//   message, fix, findings}], "unmatched_log_lines": [{line_number, text}], "other_log_lines",
//   "unexplained_log_lines", "board_findings", "notes", "errors"}
nlohmann::json explain_json(const ExplainOutcome& outcome);

// run_json_text() on a parsed request, returning the parsed result.
nlohmann::json run_json(std::string_view command, const nlohmann::json& request);

// command_definitions_json_text(), parsed.
nlohmann::json command_definitions_json();

// What `check --format json` prints for an outcome with a model: report::check_json() whose
// summary also counts the boards, {errors, warnings, notes, boards} (boards checked), plus
// "unaffected" (left out by affected_by) when affected_by was given.
nlohmann::json check_json(const CheckOutcome& outcome, bool affected_by = false);
// report::pretty_json(check_json(outcome, affected_by)), byte for byte, written without holding
// the whole document and with the regions' text written on every core.
std::string check_json_text(const CheckOutcome& outcome, bool affected_by = false);
// The same text written to `out` as it is made (no copy of it all).
void write_check_json(std::ostream& out, const CheckOutcome& outcome, bool affected_by = false);

// {"edits": [{file, line, column, node, property, old, new, input, old_value, new_value}],
//  "diagnostics": [...], "written": [...], "alignment": bytes}. `old`/`new` are the text as
// written in the source ("0x400000" → "0x2000000"); for a DTB, the cell bytes as "<0x0 0x400000>".
nlohmann::json fix_json(const FixOutcome& outcome);

// {"suggestions": [{changes: {"CONFIG_…": value}, cma_min_alignment_bytes, note, pageblock_order,
//  page_size, upstream}], "needed_alignment_bytes", "current_alignment_bytes", "notes"}
nlohmann::json suggest_json(const SuggestOutcome& outcome);

// {"sweep": [{kernel_version, page_size, cma_min_alignment_bytes, summary, diagnostics,
//   alignment, regions, config_changes: {set: [...], unset: [...]}, notes, unavailable}]}
// Each entry's alignment/regions/diagnostics/summary are check_json() of that cell. Also
// "pools": [{input, node, file, line, first_rejected: {"<page size>": "6.3" or null}}].
nlohmann::json sweep_check_json(const SweepCheckOutcome& outcome);

// {"sweep": [{kernel_version, page_size, config_changes, notes, unavailable, + suggest_json}]}
nlohmann::json sweep_suggest_json(const SweepSuggestOutcome& outcome);

nlohmann::json pcp_json(const PcpOutcome& outcome);

nlohmann::json heap_json(const HeapOutcome& outcome);

} // namespace cmalign
