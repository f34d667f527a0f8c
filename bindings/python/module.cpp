// Python bindings: the same results as the CLI's JSON, as plain dicts and lists.
// Bad input raises cmalign.Error (a ValueError) carrying "file:line:col: error: ...".
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "cmalign/api.hpp"
#include "cmalign/kernel/report.hpp"
#include "cmalign/report/report.hpp"
#include "cmalign/run_fix.hpp"
#include "cmalign/tune.hpp"
#include "cmalign/sweep.hpp"

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
    auto model =
        cmalign::load_model(config_options(std::move(configs), sets, std::move(arch),
                                           std::move(kernel_version), std::move(kernel_tree)),
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
               std::map<std::string, std::string> defines, std::optional<std::string> bootargs) {
    if (out && in_place) {
        PyErr_SetString(error_type, "cmalign: error: give either out or in_place, not both");
        throw py::error_already_set();
    }
    cmalign::FixRequest request;
    request.inputs = {file};
    request.config = config_options(std::move(configs), sets, std::move(arch),
                                    std::move(kernel_version), std::move(kernel_tree));
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

// cmalign.pcp(): the `cmalign pcp --format json` object. `zones` maps a zone name to its managed
// size ("3G" or bytes); `sysctls` maps "vm.NAME" (or "NAME") to its value on the board.
py::object pcp(std::optional<py::object> memory, std::map<std::string, py::object> zones,
               std::optional<std::string> zoneinfo, std::optional<unsigned> cpus,
               std::map<std::string, py::object> sysctls, std::optional<std::string> sysctl_file,
               std::optional<std::string> bootargs, std::optional<std::string> dt,
               std::vector<std::string> vendor_params, std::optional<py::object> memory_base,
               std::vector<std::string> configs, std::map<std::string, std::string> sets,
               std::optional<std::string> arch, std::optional<std::string> kernel_version,
               std::optional<std::string> kernel_tree) {
    cmalign::PcpRequest request;
    request.config = config_options(std::move(configs), sets, std::move(arch),
                                    std::move(kernel_version), std::move(kernel_tree));
    auto text = [](const py::object& o) { return py::str(o).cast<std::string>(); };
    if (memory) request.memory = text(*memory);
    if (memory_base) request.memory_base = text(*memory_base);
    for (const auto& [name, size] : zones)
        request.zones.push_back(name + "=" + text(size));
    request.zoneinfo = std::move(zoneinfo);
    request.cpus = cpus;
    for (const auto& [name, value] : sysctls) {
        std::string v;
        if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
            for (const auto& item : value)
                v += (v.empty() ? "" : " ") + py::str(item).cast<std::string>();
        } else {
            v = text(value);
        }
        request.sysctls.push_back(name + "=" + v);
    }
    request.sysctl_file = std::move(sysctl_file);
    request.bootargs = std::move(bootargs);
    request.dt = std::move(dt);
    request.vendor_params = std::move(vendor_params);
    cmalign::PcpOutcome outcome;
    {
        py::gil_scoped_release release;
        outcome = cmalign::run_pcp(request);
    }
    if (outcome.exit_code() == 2) raise_first_error(outcome.diags);
    return to_python(cmalign::pcp_json(outcome));
}

// cmalign.heap(): the `cmalign heap --format json` object.
py::object heap(py::object size, std::optional<int> available_order,
                std::vector<std::string> configs, std::map<std::string, std::string> sets,
                std::optional<std::string> arch, std::optional<std::string> kernel_version,
                std::optional<std::string> kernel_tree) {
    cmalign::HeapRequest request;
    request.config = config_options(std::move(configs), sets, std::move(arch),
                                    std::move(kernel_version), std::move(kernel_tree));
    request.size = py::str(size).cast<std::string>();
    request.available_order = available_order;
    auto outcome = cmalign::run_heap(request);
    if (outcome.exit_code() == 2) raise_first_error(outcome.diags);
    return to_python(cmalign::heap_json(outcome));
}

// cmalign.check(): the `cmalign check --format json` object, or with sweep_versions the
// `--sweep-versions` object ({"sweep": [...]}). Input and configuration errors raise.
py::object check(std::vector<std::string> files, std::vector<std::string> configs,
                 std::map<std::string, std::string> sets, std::optional<std::string> arch,
                 std::optional<std::string> kernel_version, std::optional<std::string> kernel_tree,
                 std::vector<std::string> include_dirs, std::map<std::string, std::string> defines,
                 std::optional<std::string> bootargs, std::optional<std::string> sweep_versions,
                 std::optional<std::string> sweep_page_sizes) {
    if (sweep_page_sizes && !sweep_versions) {
        PyErr_SetString(error_type, "cmalign: error: sweep_page_sizes needs sweep_versions");
        throw py::error_already_set();
    }
    cmalign::CheckRequest request;
    request.inputs = std::move(files);
    request.config = config_options(std::move(configs), sets, std::move(arch),
                                    std::move(kernel_version), std::move(kernel_tree));
    request.tree.include_dirs = std::move(include_dirs);
    for (const auto& [name, value] : defines)
        request.tree.defines.push_back(value.empty() ? name : name + "=" + value);
    request.checks.bootargs = std::move(bootargs);
    if (sweep_versions) {
        cmalign::SweepSpec spec{*sweep_versions, std::move(sweep_page_sizes)};
        cmalign::SweepCheckOutcome outcome;
        {
            py::gil_scoped_release release;
            outcome = cmalign::run_check_sweep(request, spec);
        }
        cmalign::Diagnostics errors;
        for (const auto& d : outcome.errors)
            errors.add(d);
        for (const auto& c : outcome.cells)
            if (c.cell.change.unavailable.empty() && c.outcome.unusable_input()) {
                for (const auto& d : c.outcome.config_diagnostics)
                    errors.add(d);
                for (const auto& d : c.outcome.input_errors)
                    errors.add(d);
            }
        if (errors.has_errors()) raise_first_error(errors);
        return to_python(cmalign::sweep_check_json(outcome));
    }
    cmalign::CheckOutcome outcome;
    {
        py::gil_scoped_release release;
        outcome = cmalign::run_check(request);
    }
    if (outcome.unusable_input()) {
        cmalign::Diagnostics errors;
        for (const auto* list : {&outcome.config_diagnostics, &outcome.input_errors})
            for (const auto& d : *list)
                errors.add(d);
        raise_first_error(errors);
    }
    return to_python(cmalign::report::check_json(cmalign::kernel::to_json(*outcome.model),
                                                 outcome.results, outcome.input_errors));
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
    m.def("check", &check, py::arg("files"), py::arg("configs") = std::vector<std::string>{},
          py::arg("sets") = std::map<std::string, std::string>{}, py::arg("arch") = py::none(),
          py::arg("kernel_version") = py::none(), py::arg("kernel_tree") = py::none(),
          py::arg("include_dirs") = std::vector<std::string>{},
          py::arg("defines") = std::map<std::string, std::string>{},
          py::arg("bootargs") = py::none(), py::arg("sweep_versions") = py::none(),
          py::arg("sweep_page_sizes") = py::none(),
          "Every reservation the kernel will reject (the `cmalign check` JSON object); with "
          "sweep_versions (\"6.1..6.18\") and sweep_page_sizes (\"4K,16K\", \"all\") the "
          "`--sweep-versions` object.");
    m.def("fix", &fix, py::arg("file"), py::arg("out") = py::none(), py::arg("in_place") = false,
          py::arg("configs") = std::vector<std::string>{},
          py::arg("sets") = std::map<std::string, std::string>{}, py::arg("arch") = py::none(),
          py::arg("kernel_version") = py::none(), py::arg("kernel_tree") = py::none(),
          py::arg("include_dirs") = std::vector<std::string>{},
          py::arg("defines") = std::map<std::string, std::string>{},
          py::arg("bootargs") = py::none(),
          "CMA pool sizes rounded up where they are written (the `cmalign fix` JSON object).");
    m.def("pcp", &pcp, py::arg("memory") = py::none(),
          py::arg("zones") = std::map<std::string, py::object>{}, py::arg("zoneinfo") = py::none(),
          py::arg("cpus") = py::none(), py::arg("sysctls") = std::map<std::string, py::object>{},
          py::arg("sysctl_file") = py::none(), py::arg("bootargs") = py::none(),
          py::arg("dt") = py::none(), py::arg("vendor_params") = std::vector<std::string>{},
          py::arg("memory_base") = py::none(), py::arg("configs") = std::vector<std::string>{},
          py::arg("sets") = std::map<std::string, std::string>{}, py::arg("arch") = py::none(),
          py::arg("kernel_version") = py::none(), py::arg("kernel_tree") = py::none(),
          "PCP batch/high, watermarks and min_free_kbytes (the `cmalign pcp` JSON object).");
    m.def("heap", &heap, py::arg("size"), py::arg("available_order") = py::none(),
          py::arg("configs") = std::vector<std::string>{},
          py::arg("sets") = std::map<std::string, std::string>{}, py::arg("arch") = py::none(),
          py::arg("kernel_version") = py::none(), py::arg("kernel_tree") = py::none(),
          "Chunk plan of one dma-buf system heap allocation (the `cmalign heap` JSON object).");
}
