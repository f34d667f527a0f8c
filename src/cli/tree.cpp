// cmalign tree FILE: the resolved tree, as dtc builds it.
#include <iostream>

#include "cmalign/dt/write.hpp"
#include "common.hpp"

namespace cmalign::cli {

void register_tree(CLI::App& app, ExitCode& exit_code) {
    auto* cmd = app.add_subcommand("tree");
    auto file = std::make_shared<std::string>();
    auto options = std::make_shared<TreeOptions>();
    auto path = std::make_shared<std::string>("/");
    auto format = std::make_shared<std::string>("json");
    add_input(cmd, "file", *file, ".dts/.dtsi/.dtso/.dtb/.dtbo");
    add_tree_options(*cmd, *options);
    cmd->add_option("--kernel-tree", options->kernel_tree)->check(CLI::ExistingDirectory);
    cmd->add_option("--path", *path);
    add_format(cmd, *format);
    on_run(cmd, [=, &exit_code] {
        Diagnostics diags;
        dt::FileCache cache;
        auto pp = preprocess_options(*options);
        std::optional<dt::Tree> tree;
        if (options->overlays.empty()) {
            tree = load_tree(*file, pp, cache, diags);
        } else if (auto overlays = load_overlays(options->overlays, pp, cache, diags)) {
            tree = load_board(*file, pp, cache, diags, {}, *overlays);
        }
        print_diagnostics(diags);
        if (!tree || diags.has_errors()) {
            exit_code = ExitCode::input_error;
            return;
        }
        if (*format == "dts") {
            auto text = dt::tree_dts(*tree, *path);
            if (!text) {
                std::cerr << *file << ": error: no node at path '" << *path << "'\n";
                exit_code = ExitCode::input_error;
                return;
            }
            std::cout << *text;
        } else {
            auto j = dt::tree_json(*tree, *path);
            if (!j) {
                std::cerr << *file << ": error: no node at path '" << *path << "'\n";
                exit_code = ExitCode::input_error;
                return;
            }
            std::cout << j->dump(2) << '\n';
        }
        exit_code = ExitCode::clean;
    });
}

} // namespace cmalign::cli
