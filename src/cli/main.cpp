// cmalign: will the kernel accept this device tree's CMA reservations?
#include "cmalign/version.hpp"
#include "common.hpp"

int main(int argc, char** argv) {
    CLI::App app{"cmalign: check device-tree CMA reservations against the kernel's alignment rules",
                 "cmalign"};
    app.set_version_flag("--version", std::string("cmalign ") + CMALIGN_VERSION);
    app.require_subcommand(1);

    auto exit_code = cmalign::ExitCode::clean;
    cmalign::cli::register_calc(app, exit_code);
    cmalign::cli::register_table(app, exit_code);
    cmalign::cli::register_config(app, exit_code);
    cmalign::cli::register_check(app, exit_code);
    cmalign::cli::register_tree(app, exit_code);
    cmalign::cli::register_fix(app, exit_code);
    cmalign::cli::register_suggest(app, exit_code);
    cmalign::cli::register_pcp(app, exit_code);
    cmalign::cli::register_heap(app, exit_code);
    cmalign::cli::register_map(app, exit_code);
    cmalign::cli::register_explain(app, exit_code);
    cmalign::cli::register_boot_check(app, exit_code);
    cmalign::cli::add_manual(app);

    return cmalign::cli::run_command_line(app, argc, argv, exit_code);
}
