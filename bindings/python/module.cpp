// Python bindings: the same results as the CLI's JSON, as plain dicts and lists.
// Bad input raises cmalign.Error (a ValueError) carrying "file:line:col: error: ...".
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "cmalign/api.hpp"
#include "cmalign/kernel/report.hpp"
#include "cmalign/run_fix.hpp"

namespace py = pybind11;

namespace {

py::object to_python(const nlohmann::json& j) {
    switch (j.type()) {
    case nlohmann::json::value_t::null:
        return py::none();
    case nlohmann::json::value_t::boolean:
        return py::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
        return py::int_(j.get<long long>());
    case nlohmann::json::value_t::number_unsigned:
        return py::int_(j.get<unsigned long long>());
    case nlohmann::json::value_t::number_float:
        return py::float_(j.get<double>());
    case nlohmann::json::value_t::string:
        return py::str(j.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
        py::list out;
        for (const auto& item : j)
            out.append(to_python(item));
        return out;
    }
    case nlohmann::json::value_t::object: {
        py::dict out;
        for (const auto& [key, value] : j.items())
            out[py::str(key)] = to_python(value);
        return out;
    }
    default:
        return py::none();
    }
}

std::vector<std::string> sets_from_dict(const std::map<std::string, std::string>& sets) {
    std::vector<std::string> out;
    for (const auto& [name, value] : sets)
        out.push_back(name + "=" + value);
    return out;
}

cmalign::ConfigOptions config_options(std::vector<std::string> configs,
                                      const std::map<std::string, std::string>& sets,
                                      std::optional<std::string> arch,
                                      std::optional<std::string> kernel_version,
                                      std::optional<std::string> kernel_tree, bool kconfig_shell) {
    cmalign::ConfigOptions options;
    options.kconfig_shell = kconfig_shell;
    options.config_files = std::move(configs);
    options.sets = sets_from_dict(sets);
    options.arch = std::move(arch);
    options.kernel_version = std::move(kernel_version);
    options.kernel_tree = std::move(kernel_tree);
    return options;
}

PyObject* error_type = nullptr;

[[noreturn]] void raise_first_error(const cmalign::Diagnostics& diags) {
    std::string message = "cmalign: error: invalid input";
    for (const auto& d : diags.items()) {
        if (d.severity == cmalign::Severity::error) {
            message = cmalign::format_gcc(d);
            break;
        }
    }
    PyErr_SetString(error_type, message.c_str());
    throw py::error_already_set();
}

py::object calc(std::vector<std::string> configs, std::map<std::string, std::string> sets,
                std::optional<std::string> arch, std::optional<std::string> kernel_version,
                std::optional<std::string> kernel_tree, bool kconfig_shell) {
    cmalign::Diagnostics diags;
    auto model = cmalign::load_model(config_options(std::move(configs), sets, std::move(arch),
                                                    std::move(kernel_version),
                                                    std::move(kernel_tree), kconfig_shell),
                                     diags);
    if (!model || diags.has_errors()) raise_first_error(diags);
    return to_python(cmalign::kernel::to_json(*model));
}

// cmalign.fix(): the `cmalign fix --format json` object. Without `out` or `in_place` it only
// plans (nothing written). Input, configuration and write errors raise cmalign.Error; problems
// fix cannot repair (a macro-written size, a misaligned base) are in "diagnostics".
py::object fix(const std::string& file, std::optional<std::string> out, bool in_place,
               std::vector<std::string> configs, std::map<std::string, std::string> sets,
               std::optional<std::string> arch, std::optional<std::string> kernel_version,
               std::optional<std::string> kernel_tree, std::vector<std::string> include_dirs,
               std::map<std::string, std::string> defines, std::optional<std::string> bootargs,
               bool kconfig_shell) {
    if (out && in_place) {
        PyErr_SetString(error_type, "cmalign: error: give either out or in_place, not both");
        throw py::error_already_set();
    }
    cmalign::FixRequest request;
    request.inputs = {file};
    request.config =
        config_options(std::move(configs), sets, std::move(arch), std::move(kernel_version),
                       std::move(kernel_tree), kconfig_shell);
    request.tree.include_dirs = std::move(include_dirs);
    for (const auto& [name, value] : defines)
        request.tree.defines.push_back(value.empty() ? name : name + "=" + value);
    request.bootargs = std::move(bootargs);
    if (in_place) request.mode = cmalign::FixMode::in_place;
    if (out) {
        request.mode = cmalign::FixMode::output;
        request.out_path = std::move(out);
    }
    cmalign::FixOutcome outcome;
    {
        py::gil_scoped_release release;
        outcome = cmalign::run_fix(request);
    }
    if (outcome.exit_code() == 2) {
        cmalign::Diagnostics errors;
        for (const auto* list :
             {&outcome.config_diagnostics, &outcome.input_errors, &outcome.io_errors})
            for (const auto& d : *list)
                errors.add(d);
        raise_first_error(errors);
    }
    return to_python(cmalign::fix_json(outcome));
}

} // namespace

PYBIND11_MODULE(cmalign, m) {
    m.doc() = "cmalign: will the kernel accept this device tree's CMA reservations?";
    m.attr("__version__") = CMALIGN_VERSION;
    error_type = PyErr_NewException("cmalign.Error", PyExc_ValueError, nullptr);
    m.attr("Error") = py::handle(error_type);

    m.def("calc", &calc, py::arg("configs") = std::vector<std::string>{},
          py::arg("sets") = std::map<std::string, std::string>{}, py::arg("arch") = py::none(),
          py::arg("kernel_version") = py::none(), py::arg("kernel_tree") = py::none(),
          py::arg("kconfig_shell") = false,
          "What the kernel computes for this configuration (the `cmalign calc` JSON object).");
    m.def("fix", &fix, py::arg("file"), py::arg("out") = py::none(), py::arg("in_place") = false,
          py::arg("configs") = std::vector<std::string>{},
          py::arg("sets") = std::map<std::string, std::string>{}, py::arg("arch") = py::none(),
          py::arg("kernel_version") = py::none(), py::arg("kernel_tree") = py::none(),
          py::arg("include_dirs") = std::vector<std::string>{},
          py::arg("defines") = std::map<std::string, std::string>{},
          py::arg("bootargs") = py::none(), py::arg("kconfig_shell") = false,
          "CMA pool sizes rounded up where they are written (the `cmalign fix` JSON object).");
}
