// Small helpers for the kernel tests: build a Config from symbol/value pairs and derive.
#pragma once

#include <initializer_list>
#include <optional>
#include <utility>

#include "cmalign/kconfig/config.hpp"
#include "cmalign/kernel/model.hpp"

namespace cmalign::test {

inline kconfig::Config
make_config(std::initializer_list<std::pair<const char*, const char*>> symbols) {
    kconfig::Config cfg;
    int line = 1;
    for (const auto& [name, value] : symbols)
        cfg.set(kconfig::Entry{name, value, false, Location{"test.config", line++, 1}});
    return cfg;
}

// derive() with --arch and --kernel-version given; `diags` receives the sink's diagnostics.
inline std::optional<kernel::Model>
calc(const char* arch, const char* version,
     std::initializer_list<std::pair<const char*, const char*>> symbols,
     Diagnostics* diags = nullptr) {
    kconfig::Config cfg = make_config(symbols);
    kernel::Options options;
    options.arch = kernel::parse_arch(arch);
    options.version = KernelVersion::parse(version);
    Diagnostics local;
    return kernel::derive(cfg, options, diags ? *diags : local);
}

} // namespace cmalign::test
