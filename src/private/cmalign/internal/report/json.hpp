// The report layer's JSON: diagnostics, regions, the check object, SARIF, sweep cells and the
// calc/table objects of a Model (docs/json.md). Private, as every JSON of the library.
#pragma once

#include <nlohmann/json.hpp> // IWYU pragma: export (callers take the JSON apart)

#include "cmalign/internal/kernel/report.hpp"
#include "cmalign/kernel/versions.hpp"
#include "cmalign/report/boot_check.hpp"
#include "cmalign/report/explain.hpp"
#include "cmalign/report/report.hpp"
#include "cmalign/report/sweep.hpp"

namespace cmalign::report {

// {"kernel_version", "kernel_version_source", "alignment", "nodes": [{node, name, file, line,
//   outcome, log: [{line_number, text, matched_by?}], check, message, fix, findings}],
//   "unmatched_log_lines", "other_log_lines", "unexplained_log_lines", "board_findings", "notes",
//   "errors"}
nlohmann::json explain_json(const Explanation& explanation);
// The default CMA area of explain and boot-check (null without CONFIG_DMA_CMA).
nlohmann::json default_area_json(const std::optional<DefaultAreaExplanation>& area);

// boot-check's JSON object (docs/json.md): image, config, qemu, graft, reservations, explain, …
nlohmann::json boot_check_json(const BootCheckReport& report);

nlohmann::json to_json(const reserved::Region& region);

nlohmann::json to_json(const Diagnostic& d, DiagnosticKeys keys = DiagnosticKeys::finding);

// [to_json(d) for each diagnostic, in order]
nlohmann::json diagnostics_json(std::span<const Diagnostic> diagnostics,
                                DiagnosticKeys keys = DiagnosticKeys::finding);

nlohmann::json summary_json(std::span<const Diagnostic> diagnostics);

// check's `default_cma_areas`: per board with CONFIG_DMA_CMA, in board order, where the checks put
// the default CMA area on it ({input, outcome, source, asked, size_bytes, aligned_size_bytes,
// alignment, base, fixed, arch_limit, limit, limit_words, dt_pool, reason, lines}).
nlohmann::json default_cma_areas_json(std::span<const checks::Result> results);

// The whole `check` object: {alignment, default_cma_areas, regions, diagnostics, summary}.
// `alignment` is the calc object (kernel::to_json(model)); `input_errors` are diagnostics of inputs
// that could not be read.
nlohmann::json check_json(const nlohmann::json& alignment, std::span<const checks::Result> results,
                          std::span<const Diagnostic> input_errors = {});

nlohmann::json sarif(std::span<const Diagnostic> diagnostics, const SarifOptions& options = {});

} // namespace cmalign::report

namespace cmalign::report {

// The keys every entry of a sweep's JSON starts with: the cell's version, page size (nullopt:
// not known), configuration changes and CMA alignment.
nlohmann::json sweep_cell_json(const KernelVersion& version, std::optional<std::uint64_t> page_size,
                               const kernel::Retarget& change,
                               std::optional<std::uint64_t> cma_alignment);

// Per pool, the first version (of those swept) that rejects it, per page size.
nlohmann::json first_rejected_json(const SweepMatrix& m);

} // namespace cmalign::report

namespace cmalign::kernel {

// The `calc` object of docs/json.md: kernel_version, arch, page_size, max_page_order,
// pageblock_order, pageblock_order_range (only when pageblock_order is null),
// cma_min_alignment_bytes, derivation, assumptions, diagnostics.
nlohmann::json to_json(const Model& model);

// {"rows": [{page_size, max_page_order, pageblock_order, cma_min_alignment_bytes, hugetlb, thp,
//            page_block_max_order, ...}]}
nlohmann::json to_json(const std::vector<TableRow>& rows);

} // namespace cmalign::kernel
