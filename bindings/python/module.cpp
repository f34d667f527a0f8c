// Python bindings: the same results as the CLI's JSON, as plain dicts and lists.
// Bad input raises cmalign.Error (a ValueError) carrying "file:line:col: error: ...".
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "cmalign/api.hpp"
#include "cmalign/kernel/report.hpp"

namespace py = pybind11;

namespace {

py::object to_python(const nlohmann::json& j) {
    switch (j.type()) {
    case nlohmann::json::value_t::null: return py::none();
    case nlohmann::json::value_t::boolean: return py::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return py::int_(j.get<long long>());
    case nlohmann::json::value_t::number_unsigned: return py::int_(j.get<unsigned long long>());
    case nlohmann::json::value_t::number_float: return py::float_(j.get<double>());
    case nlohmann::json::value_t::string: return py::str(j.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
        py::list out;
        for (const auto& item : j) out.append(to_python(item));
        return out;
    }
    case nlohmann::json::value_t::object: {
        py::dict out;
        for (const auto& [key, value] : j.items()) out[py::str(key)] = to_python(value);
        return out;
    }
    default: return py::none();
    }
}

std::vector<std::string> sets_from_dict(const std::map<std::string, std::string>& sets) {
    std::vector<std::string> out;
    for (const auto& [name, value] : sets) out.push_back(name + "=" + value);
    return out;
}

cmalign::ConfigOptions config_options(std::vector<std::string> configs,
                                      const std::map<std::string, std::string>& sets,
                                      std::optional<std::string> arch,
                                      std::optional<std::string> kernel_version,
                                      std::optional<std::string> kernel_tree) {
    cmalign::ConfigOptions options;
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
                std::optional<std::string> kernel_tree) {
    cmalign::Diagnostics diags;
    auto model = cmalign::load_model(
        config_options(std::move(configs), sets, std::move(arch), std::move(kernel_version),
                       std::move(kernel_tree)),
        diags);
    if (!model || diags.has_errors()) raise_first_error(diags);
    return to_python(cmalign::kernel::to_json(*model));
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
          "What the kernel computes for this configuration (the `cmalign calc` JSON object).");
}
