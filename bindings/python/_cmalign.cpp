// The native half of the `cmalign` Python package: one call into the library's run_json(), the
// same request → options mapping the C API uses. cmalign/__init__.py turns keyword arguments
// into the request and the error text into cmalign.Error.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <utility>

#include "cmalign/api.hpp"
#include "cmalign/core/error.hpp"
#include "cmalign/json_api.hpp"
#include "cmalign/version.hpp"

namespace py = pybind11;

namespace {

// (result JSON, None) or (None, "file:line:col: error: message"); runs without the GIL.
std::pair<std::optional<std::string>, std::optional<std::string>> run(const std::string& command,
                                                                      const std::string& request) {
    py::gil_scoped_release release;
    try {
        return {cmalign::run_json_text(command, request), std::nullopt};
    } catch (const cmalign::Error& e) {
        return {std::nullopt, std::string(e.what())};
    } catch (const std::exception& e) { // a bug: cmalign.Error naming the input, never a crash
        return {std::nullopt, cmalign::internal_error_message(e.what(), command + " " + request)};
    } catch (...) {
        return {std::nullopt, cmalign::internal_error_message("", command + " " + request)};
    }
}

} // namespace

PYBIND11_MODULE(_cmalign, m) {
    m.doc() = "native part of the cmalign package (use `import cmalign`)";
    m.attr("__version__") = CMALIGN_VERSION;
    m.def("run", &run, py::arg("command"), py::arg("request"),
          "Runs a command on a JSON request; returns (result JSON, None) or (None, error).");
    m.def("commands", &cmalign::json_commands, "The commands run() knows.");
    m.def("clear_caches", &cmalign::clear_caches,
          "Drops the parsed kernel trees the library keeps between calls.");
    m.def(
        "definitions", [] { return cmalign::command_definitions_json_text(); },
        "The command definitions (cmalign/internal/commands.hpp) as JSON text.");
}
