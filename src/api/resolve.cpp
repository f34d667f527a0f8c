// resolve_config_options(): the kernel tree and arch a user did not name but gave away by where
// they stand or which files they passed ("found without asking").
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>

#include <fmt/format.h>

#include "cmalign/api.hpp"
#include "cmalign/internal/core/text_file.hpp"
#include "cmalign/internal/kconfig/version.hpp"
#include "cmalign/internal/kernel/arch.hpp"
#include "cmalign/internal/run_inputs.hpp"

namespace cmalign {

namespace fs = std::filesystem;

namespace {

// A kernel source tree's root: a top Makefile that sets VERSION and PATCHLEVEL (the first lines
// of every kernel's Makefile, read by the one reader, kconfig::read_tree_version()) next to the
// top Kconfig.
bool is_kernel_tree_root(const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_regular_file(dir / "Kconfig", ec) || !fs::is_regular_file(dir / "Makefile", ec))
        return false;
    Diagnostics quiet; // not a tree is an answer here, not an error
    return kconfig::read_tree_version(dir.string(), quiet).has_value();
}

fs::path absolute_of(const std::string& path, const std::string& cwd) {
    fs::path p(path);
    if (p.is_relative()) p = fs::path(cwd) / p;
    std::error_code ec;
    auto canonical = fs::weakly_canonical(p, ec);
    return ec ? p.lexically_normal() : canonical;
}

// "arch/<dir>/configs/…" or "arch/<dir>/boot/dts/…" anywhere in the path → the arch it names
// (the arch table's arch_of_dir(): arch/x86 holds both i386_defconfig and x86_64_defconfig).
std::optional<std::string> arch_from_path(const fs::path& path, bool config) {
    std::vector<std::string> parts;
    for (const auto& part : path)
        parts.push_back(part.string());
    for (std::size_t i = 0; i + 3 < parts.size(); ++i) {
        if (parts[i] != "arch") continue;
        auto arch = kernel::arch_of_dir(parts[i + 1], path.filename().string());
        if (!arch) continue;
        // A directory of boards (arch/<a>/boot/dts) counts as well as a file under it.
        bool match =
            config ? parts[i + 2] == "configs" : (parts[i + 2] == "boot" && parts[i + 3] == "dts");
        if (!match) continue;
        return std::string(kernel::to_string(*arch));
    }
    return std::nullopt;
}

// True when the file starts like a .config that kconfig wrote ("# Linux/<arch> <version> Kernel
// Configuration" within its first lines): such a header names the arch itself.
bool has_kconfig_header(const fs::path& path) {
    // Through the -c reader for a pipe (read once, kept for the evaluation); a file's first
    // lines only (a -c kernel image is tens of megabytes).
    std::string start;
    if (auto piped = anonymous_pipe_bytes(path.string(), InputLimits{}.file_bytes)) {
        start = piped->bytes.substr(0, 4096);
    } else {
        std::ifstream in(path, std::ios::binary);
        start.resize(4096);
        in.read(start.data(), static_cast<std::streamsize>(start.size()));
        start.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    }
    std::string_view rest = start;
    for (int n = 0; n < 5 && !rest.empty(); ++n) {
        auto end = rest.find('\n');
        auto line = rest.substr(0, end);
        if (line.starts_with("# Linux/") || line.starts_with("# Linux kernel version:"))
            return true;
        rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    }
    return false;
}

} // namespace

ResolveEnvironment ResolveEnvironment::current() {
    ResolveEnvironment env;
    std::error_code ec;
    env.cwd = fs::current_path(ec).string();
    return env;
}

std::optional<std::string> detail::find_kernel_tree(const std::string& path) {
    std::error_code ec;
    fs::path dir(path);
    if (!fs::is_directory(dir, ec)) dir = dir.parent_path();
    for (; !dir.empty(); dir = dir.parent_path()) {
        if (is_kernel_tree_root(dir)) return dir.string();
        if (dir == dir.root_path()) break;
    }
    return std::nullopt;
}

ConfigOptions resolve_config_options(const ConfigOptions& options,
                                     const std::vector<std::string>& inputs, Diagnostics& diags,
                                     const ResolveEnvironment& env) {
    ConfigOptions out = options;
    std::vector<std::string> said; // what we found, for the one note

    if (!out.kernel_tree) {
        // A config file's tree first (it is what is evaluated), then a device tree's, then the
        // directory the user stands in.
        std::vector<std::pair<std::string, std::string>> candidates; // path, how we name it
        for (const auto& c : options.config_files)
            candidates.emplace_back(absolute_of(c, env.cwd).string(), c);
        for (const auto& i : inputs)
            candidates.emplace_back(absolute_of(i, env.cwd).string(), i);
        if (!env.cwd.empty()) candidates.emplace_back(env.cwd, "the current directory");
        for (const auto& [path, name] : candidates) {
            if (auto tree = detail::find_kernel_tree(path)) {
                out.kernel_tree = *tree;
                said.push_back(fmt::format("kernel tree {} (holds {})", *tree, name));
                break;
            }
        }
    }

    if (!out.arch) {
        bool header =
            std::any_of(options.config_files.begin(), options.config_files.end(),
                        [&](const auto& c) { return has_kconfig_header(absolute_of(c, env.cwd)); });
        std::optional<std::pair<std::string, std::string>> found; // arch, from what
        if (!header) {
            for (const auto& c : options.config_files)
                if (auto a = arch_from_path(absolute_of(c, env.cwd), true)) {
                    found.emplace(*a, c);
                    break;
                }
            if (!found)
                for (const auto& i : inputs)
                    if (auto a = arch_from_path(absolute_of(i, env.cwd), false)) {
                        found.emplace(*a, i);
                        break;
                    }
            auto env_arch = env.arch ? env.arch : options.environment_arch;
            if (!found && env_arch && !env_arch->empty()) {
                if (kernel::parse_arch(*env_arch))
                    found.emplace(*env_arch, "ARCH in the environment");
                else
                    diags.note({}, fmt::format("ARCH={} in the environment is not an arch cmalign "
                                               "models; ignored",
                                               *env_arch));
            }
        }
        if (found) {
            out.arch = found->first;
            said.push_back(fmt::format("arch {} (from {})", found->first, found->second));
        }
    }

    if (!said.empty()) {
        std::string text = "using " + said.front();
        for (std::size_t i = 1; i < said.size(); ++i)
            text += " and " + said[i];
        diags.note({}, text + " (not given on the command line)");
    }
    return out;
}

} // namespace cmalign
