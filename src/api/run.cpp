#include "cmalign/run.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <memory>
#include <ostream>
#include <thread>

#include <fmt/format.h>

#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/core/work_queue.hpp"
#include "cmalign/internal/dt/dts.hpp"
#include "cmalign/internal/dt/overlay.hpp"
#include "cmalign/internal/dt/tree_json.hpp"
#include "cmalign/internal/dt/write.hpp"
#include "cmalign/internal/json.hpp"
#include "cmalign/internal/kernel/report.hpp"
#include "cmalign/internal/report/json.hpp"
#include "cmalign/internal/report/json_text.hpp"
#include "cmalign/internal/run_inputs.hpp"

namespace cmalign {

namespace fs = std::filesystem;

namespace {
bool is_board_file(const fs::path& p) {
    auto ext = p.extension().string();
    return ext == ".dts" || ext == ".dtso" || ext == ".dtb" || ext == ".dtbo";
}
} // namespace

std::vector<std::string> expand_inputs(const std::vector<std::string>& paths, Diagnostics& diags) {
    std::vector<std::string> out;
    for (const auto& path : paths) {
        std::error_code ec;
        auto status = fs::status(path, ec);
        if (ec || !fs::exists(status)) {
            diags.error({path, 0, 0}, "no such file or directory");
            continue;
        }
        if (!fs::is_directory(status)) {
            out.push_back(path);
            continue;
        }
        std::vector<std::string> found;
        for (auto it = fs::recursive_directory_iterator(
                 path, fs::directory_options::skip_permission_denied, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
            if (it->is_regular_file(ec) && is_board_file(it->path()))
                found.push_back(it->path().string());
        }
        if (ec) diags.error({path, 0, 0}, fmt::format("cannot read directory: {}", ec.message()));
        std::sort(found.begin(), found.end());
        out.insert(out.end(), found.begin(), found.end());
    }
    // A gate must not pass by checking nothing: paths that all exist but hold no board (an empty
    // directory, a wrong path in CI) are an input error naming them.
    if (out.empty() && !paths.empty() && !diags.has_errors()) {
        std::string names;
        for (const auto& path : paths)
            names += (names.empty() ? "'" : ", '") + path + "'";
        diags.error({paths.front(), 0, 0},
                    fmt::format("no board (.dts, .dtso, .dtb, .dtbo) under {}", names));
    }
    return out;
}

void detail::add_input_result(CheckOutcome& outcome, std::optional<checks::Result> result,
                              std::vector<Diagnostic> read_diagnostics) {
    // Warnings from reading an input (e.g. preprocessor #warning) travel with its result.
    bool failed = std::any_of(read_diagnostics.begin(), read_diagnostics.end(),
                              [](const auto& d) { return d.severity == Severity::error; });
    if (failed) {
        outcome.input_errors.insert(outcome.input_errors.end(), read_diagnostics.begin(),
                                    read_diagnostics.end());
    } else if (result) {
        result->diagnostics.insert(result->diagnostics.begin(), read_diagnostics.begin(),
                                   read_diagnostics.end());
        outcome.results.push_back(std::move(*result));
    }
}

ExitCode CheckOutcome::exit_code(bool werror) const {
    if (unusable_input()) return ExitCode::input_error;
    for (const auto& r : results)
        if (r.failed(werror)) return ExitCode::findings;
    return ExitCode::clean;
}

nlohmann::json check_json(const CheckOutcome& outcome, bool affected_by) {
    auto j =
        report::check_json(kernel::to_json(*outcome.model), outcome.results, outcome.input_errors);
    j["summary"]["boards"] = outcome.inputs;
    if (affected_by) j["summary"]["unaffected"] = outcome.unaffected_inputs;
    return j;
}

namespace {

// check_json_text() in pieces, to be joined or written out in order.
std::vector<std::string> check_json_pieces(const CheckOutcome& outcome, bool affected_by) {
    // The object's keys in nlohmann's (sorted) order, each value written as pretty_json() writes
    // it there. The regions (thousands for a whole tree) are never held as JSON values all at
    // once, and their text is written on every core: on one, after every worker had finished,
    // building and printing them took a tenth of a whole arm64 tree's time.
    std::vector<Diagnostic> all = outcome.input_errors;
    std::vector<const reserved::Region*> regions;
    for (const auto& result : outcome.results) {
        for (const auto& r : result.reservations.regions)
            regions.push_back(&r);
        all.insert(all.end(), result.diagnostics.begin(), result.diagnostics.end());
    }
    auto summary = report::summary_json(all);
    summary["boards"] = outcome.inputs;
    if (affected_by) summary["unaffected"] = outcome.unaffected_inputs;

    // In document order, as pretty_json() would meet them: what cannot be written (a string that
    // is not UTF-8) throws the same error at the same place.
    std::string out = "{\n  \"alignment\": ";
    report::pretty_json_to(out, kernel::to_json(*outcome.model), 2);
    out += ",\n  \"default_cma_areas\": ";
    report::pretty_json_to(out, report::default_cma_areas_json(outcome.results), 2);
    out += ",\n  \"diagnostics\": ";
    report::pretty_json_to(out, report::diagnostics_json(all), 2);
    out += ",\n  \"regions\": ";

    constexpr std::size_t per_thread_from = 512;
    const std::size_t threads =
        regions.size() < per_thread_from
            ? 1
            : std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 8);
    std::vector<std::string> parts(threads);
    std::vector<std::exception_ptr> failures(threads);
    auto write_part = [&](std::size_t t) {
        try {
            for (std::size_t i = regions.size() * t / threads,
                             to = regions.size() * (t + 1) / threads;
                 i < to; ++i) {
                parts[t] += "    ";
                report::pretty_json_to(parts[t], report::to_json(*regions[i]), 4);
                parts[t] += i + 1 < regions.size() ? ",\n" : "\n";
            }
        } catch (...) {
            failures[t] = std::current_exception();
        }
    };
    {
        std::vector<std::jthread> helpers;
        for (std::size_t t = 1; t < threads; ++t)
            helpers.emplace_back(write_part, t);
        write_part(0);
    }
    for (const auto& failure : failures)
        if (failure) std::rethrow_exception(failure);
    std::vector<std::string> pieces;
    pieces.reserve(parts.size() + 3);
    if (regions.empty()) {
        out += "[]";
    } else {
        out += "[\n";
        pieces.push_back(std::move(out));
        out.clear();
        for (auto& part : parts)
            pieces.push_back(std::move(part));
        out += "  ]";
    }
    out += ",\n  \"summary\": ";
    report::pretty_json_to(out, summary, 2);
    out += "\n}";
    pieces.push_back(std::move(out));
    return pieces;
}

} // namespace

std::string check_json_text(const CheckOutcome& outcome, bool affected_by) {
    const auto pieces = check_json_pieces(outcome, affected_by);
    std::size_t bytes = 0;
    for (const auto& piece : pieces)
        bytes += piece.size();
    std::string text;
    text.reserve(bytes);
    for (const auto& piece : pieces)
        text += piece;
    return text;
}

void write_check_json(std::ostream& out, const CheckOutcome& outcome, bool affected_by) {
    for (const auto& piece : check_json_pieces(outcome, affected_by))
        out << piece;
}

namespace {

// One board of a check run: read by a worker, and checked then or, when it was read before the
// configuration's model was ready, once it is.
struct BoardRun {
    std::optional<checks::Result> result;
    std::vector<Diagnostic> errors;
    std::optional<std::vector<std::string>> sources;
    std::optional<dt::Tree> unchecked; // read before the model was ready
};

// Reads the board `input` for `board` (its diagnostics, named after the input, and the files it
// was read from): its tree, or nullopt when it cannot be checked.
std::optional<dt::Tree> read_board(BoardRun& board, const std::string& input,
                                   const dt::PreprocessOptions& pp, dt::FileCache& cache,
                                   const dt::ResolveOptions& resolve,
                                   const std::vector<dt::Tree>& overlays) {
    Diagnostics diags;
    auto tree = detail::load_board(input, pp, cache, diags, resolve, overlays);
    const bool readable = tree && !diags.has_errors();
    if (readable) board.sources = std::move(tree->sources);
    for (auto& d : diags.items()) {
        if (d.input.empty()) d.input = input;
        board.errors.push_back(std::move(d));
    }
    if (!readable) return std::nullopt;
    return tree;
}

// The files a check's outcome was computed from, gathered part by part: unknown as soon as one
// part's are.
class SourceList {
public:
    void add(const std::optional<std::vector<std::string>>& files) {
        if (!files) files_.reset();
        if (files_) files_->insert(files_->end(), files->begin(), files->end());
    }
    // Sorted, each file once.
    std::optional<std::vector<std::string>> take() {
        if (files_) {
            std::sort(files_->begin(), files_->end());
            files_->erase(std::unique(files_->begin(), files_->end()), files_->end());
        }
        return std::move(files_);
    }

private:
    std::optional<std::vector<std::string>> files_{std::in_place};
};

// The outcome of a run whose configuration is unusable: its diagnostics and nothing else, as if
// no board had been read.
CheckOutcome config_failure(CheckOutcome& outcome) {
    CheckOutcome failed;
    failed.config_diagnostics = std::move(outcome.config_diagnostics);
    return failed;
}

} // namespace

CheckOutcome run_check(const CheckRequest& request) {
    const RunScope run_scope; // pipes read once, files stamped once
    CheckOutcome outcome;
    // The configuration is evaluated on a thread of its own while the boards are read (it is
    // the run's longest serial step, and reading a board does not depend on it); a board read
    // before the model is ready is checked afterwards.
    detail::CommandModel command = detail::command_config(request.config, request.inputs);
    const ConfigOptions config = command.config;
    detail::AwaitedTask model_task([&command] { detail::evaluate_command_model(command); });
    auto finish_model = [&] {
        model_task.wait();
        outcome.model = std::move(command.model);
        outcome.config_diagnostics = std::move(command.diagnostics);
        return outcome.model.has_value();
    };

    Diagnostics expand_diags;
    auto inputs = expand_inputs(request.inputs, expand_diags);
    outcome.input_errors = expand_diags.items();
    // Shared .dtsi and headers are read once for all inputs. Their include memos are most of
    // a whole tree's memory: freed when the run's outermost scope closes (never, in the program).
    const FreedAtClose<dt::FileCache> shared_cache;
    dt::FileCache& cache = *shared_cache;
    if (!request.affected_by.empty()) {
        TreeOptions tree = request.tree;
        if (!tree.kernel_tree) tree.kernel_tree = request.config.kernel_tree;
        auto affected = detail::inputs_affected_by(inputs, request.affected_by, tree, request.jobs,
                                                   request.config.config_files,
                                                   request.config.cache_dir.value_or(""), cache);
        outcome.unaffected_inputs = inputs.size() - affected.size();
        inputs = std::move(affected);
    }
    outcome.inputs = inputs.size();

    auto pp = detail::preprocess_options(request.tree);
    if (!pp.kernel_tree && config.kernel_tree) pp.kernel_tree = config.kernel_tree;
    auto resolve = detail::reservation_resolve_options();
    Diagnostics overlay_diags;
    auto overlays = detail::load_overlays(request.tree.overlays, pp, cache, overlay_diags);
    if (!overlays) {
        if (!finish_model()) return config_failure(outcome);
        outcome.input_errors.insert(outcome.input_errors.end(), overlay_diags.items().begin(),
                                    overlay_diags.items().end());
        return outcome;
    }
    SourceList sources;
    for (const auto& overlay : *overlays)
        sources.add(overlay.sources);

    // A board read before the model is ready waits with its tree kept. Once it is, each worker
    // checks one waiting board after each board of its own, so their trees are freed while the
    // run goes on: a whole tree reads a third of its boards before its Kconfig is evaluated,
    // and checking them all on one thread at the end, then freeing them, was its serial tail.
    std::vector<BoardRun> boards(inputs.size());
    auto check_waiting = [&](std::size_t i, const kernel::Model& model) {
        boards[i].result = checks::run(*boards[i].unchecked, model, request.checks);
        boards[i].unchecked.reset();
    };
    detail::ProgressCounter progress(request.progress, inputs.size());
    detail::for_each_input(inputs.size(), request.jobs, [&](std::size_t i) {
        if (model_task.done() && !command.model) return; // unusable: no board is checked
        if (auto tree = read_board(boards[i], inputs[i], pp, cache, resolve, *overlays)) {
            if (!model_task.done()) {
                boards[i].unchecked = std::move(tree);
                model_task.defer(i);
            } else if (command.model) {
                boards[i].result = checks::run(*tree, *command.model, request.checks);
            }
        }
        progress.step();
        if (model_task.done() && command.model)
            if (auto waiting = model_task.take_deferred()) check_waiting(*waiting, *command.model);
    });

    if (!finish_model()) return config_failure(outcome);
    sources.add(command.sources);
    const auto waiting = model_task.take_all_deferred();
    detail::for_each_input(waiting.size(), request.jobs,
                           [&](std::size_t k) { check_waiting(waiting[k], *outcome.model); });
    for (auto& board : boards) {
        sources.add(board.sources);
        detail::add_input_result(outcome, std::move(board.result), std::move(board.errors));
    }
    if (outcome.input_errors.empty()) outcome.sources = sources.take();
    return outcome;
}

TreeOutcome run_tree(const TreeRequest& request) {
    const RunScope run_scope; // pipes read once, files stamped once
    TreeOutcome out;
    dt::FileCache cache;
    auto pp = detail::preprocess_options(request.tree);
    std::optional<dt::Tree> tree;
    if (request.tree.overlays.empty())
        tree = detail::load_tree(request.file, pp, cache, out.diags);
    else if (auto overlays = detail::load_overlays(request.tree.overlays, pp, cache, out.diags))
        tree = detail::load_board(request.file, pp, cache, out.diags, {}, *overlays);
    if (!tree || out.diags.has_errors()) return out;
    if (request.format == TreeFormat::dts)
        out.dts = dt::tree_dts(*tree, request.path);
    else if (auto json = dt::tree_json(*tree, request.path))
        out.json = report::pretty_json(*json);
    if (!out.dts && !out.json)
        out.diags.error({request.file}, fmt::format("no node at path '{}'", request.path));
    return out;
}

ExitCode TreeOutcome::exit_code() const {
    return (json || dts) && !diags.has_errors() ? ExitCode::clean : ExitCode::input_error;
}

} // namespace cmalign
