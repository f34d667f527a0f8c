// The boot-log reader and `explain`: the input is split at "@@@" lines into boot.log and board.dts
// (a seed board when there is no second part). The log goes through bootlog::parse() directly and
// through run_explain() with the arm64 16K example configuration, read from the file as the CLI
// reads it (the bounded text reader). Property: nothing throws or crashes; the rendered text and
// JSON are produced for every outcome.
#include <cstdint>
#include <string_view>

#include "cmalign/bootlog/bootlog.hpp"
#include "cmalign/explain.hpp"
#include "cmalign/internal/json.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    auto paths = cmalign::fuzz::write_named_parts(input, {"boot.log", "board.dts"});
    (void)cmalign::bootlog::parse(input.substr(0, input.find("\n@@@\n")));

    cmalign::ExplainRequest request;
    request.log_path = paths[0];
    request.board = paths.size() > 1 ? paths[1] : "examples/boards/seed-board.dts";
    request.config.config_files = {"examples/configs/arm64-16k.config"};
    request.config.arch = "arm64";
    request.config.limits.file_bytes = 1u << 20;
    request.tree.limits.expanded_bytes = 4u << 20;
    auto outcome = cmalign::run_explain(request);
    // As the CLI and run_json() write it: invalid UTF-8 from the log replaced, never a throw.
    (void)cmalign::explain_json(outcome).dump(2, ' ', false,
                                              nlohmann::json::error_handler_t::replace);
    if (outcome.errors.empty()) (void)cmalign::explain_text(outcome);
    return 0;
}
