// The generated parts of the docs match the definitions; the CLI, completions and man page come
// from them; the friendly edges of the command line.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "cmalign/internal/commands.hpp"
#include "support/cli.hpp"

using namespace cli_test;

namespace {

// The span of `doc` from the generated block's first line to its end marker.
std::string generated_block(const std::string& doc, const std::string& first_line) {
    auto begin = doc.find(first_line);
    const std::string end_marker = "<!-- end of generated reference -->\n";
    auto end = doc.find(end_marker, begin == std::string::npos ? 0 : begin);
    if (begin == std::string::npos || end == std::string::npos) return {};
    return doc.substr(begin, end + end_marker.size() - begin);
}

Run cli(const std::string& args) {
    return run_shell(std::string(CMALIGN_CLI) + " " + args);
}

} // namespace

TEST_CASE("the option references of docs/cli.md and docs/json.md are the generated ones") {
    for (std::string which : {"cli", "json"}) {
        CAPTURE(which);
        auto generated = run_cli("--help-reference " + which);
        REQUIRE(generated.exit_code == 0);
        auto first_line = generated.out.substr(0, generated.out.find('\n'));
        auto committed = generated_block(
            read_file(std::string(CMALIGN_SOURCE_DIR) + "/docs/" + which + ".md"), first_line);
        INFO("stale: run scripts/regen-reference");
        CHECK(committed == generated.out);
    }
}

TEST_CASE("every command and option of the definitions is on the command line, with its help") {
    auto reference = run_cli("--help-reference cli").out;
    for (const auto& command : cmalign::command_definitions()) {
        CAPTURE(command.name);
        auto help = cli(std::string(command.name) + " --help");
        REQUIRE(help.exit_code == 0);
        for (const auto& option : command.options) {
            if (option.surface == cmalign::Surface::api || option.flags.empty()) continue;
            CAPTURE(option.key);
            std::string first_flag(option.flags.substr(0, option.flags.find(',')));
            CHECK(help.out.find(first_flag) != std::string::npos);
            // The help text is the definition's (CLI11 may wrap it: compare its first words).
            CHECK(help.out.find(std::string(option.help.substr(0, 20))) != std::string::npos);
        }
    }
    // Completion scripts and the man page name every command.
    for (const char* generator : {"--help-bash-completion", "--help-zsh-completion",
                                  "--help-fish-completion", "--help-man"}) {
        CAPTURE(generator);
        auto out = cli(generator);
        CHECK(out.exit_code == 0);
        for (const auto& command : cmalign::command_definitions()) {
            // roff writes a hyphen as "\-" (boot-check).
            std::string name(command.name), escaped;
            for (char c : name)
                escaped += c == '-' ? std::string("\\-") : std::string(1, c);
            CHECK((out.out.find(name) != std::string::npos ||
                   out.out.find(escaped) != std::string::npos));
        }
    }
}

TEST_CASE("every command of the program has a definition") {
    // CLI11 2.3/2.4 head the list "Subcommands:", 2.6 "SUBCOMMANDS:" and wraps long
    // descriptions onto lines indented further: a command is a line indented by two spaces.
    auto help = cli("--help").out;
    auto at = help.find("Subcommands:");
    if (at == std::string::npos) at = help.find("SUBCOMMANDS:");
    REQUIRE(at != std::string::npos);
    std::istringstream lines(help.substr(at));
    std::string line;
    std::getline(lines, line);
    std::size_t commands = 0;
    while (std::getline(lines, line) && !line.empty()) {
        if (line.size() < 3 || line.compare(0, 2, "  ") != 0 || line[2] == ' ') continue;
        auto name = line.substr(2, line.find(' ', 2) - 2);
        CAPTURE(name);
        CHECK(cmalign::find_command(name) != nullptr);
        ++commands;
    }
    CHECK(commands == cmalign::command_definitions().size());
}

TEST_CASE("completion completes arches, check names and formats") {
    auto bash = cli("--help-bash-completion").out;
    CHECK(bash.find("--arch) values='arm64 arm") != std::string::npos);
    CHECK(bash.find("cma-size-alignment no-cma-size-alignment") != std::string::npos);
    CHECK(bash.find("--format) values='text json sarif github'") != std::string::npos);
    auto zsh = cli("--help-zsh-completion").out;
    CHECK(zsh.find("--arch[") != std::string::npos);
    CHECK(zsh.find(":value:(arm64 arm") != std::string::npos);
    auto fish = cli("--help-fish-completion").out;
    CHECK(fish.find("-l format -r -f -a 'text json sarif github'") != std::string::npos);
}

TEST_CASE("a friendly command line: bare cmalign, help, did you mean, valid values listed") {
    auto bare = cli("");
    CHECK(bare.exit_code == 2);
    for (const auto& command : cmalign::command_definitions())
        CHECK(bare.out.find(std::string(command.name)) != std::string::npos);
    auto help = cli("help");
    CHECK(help.exit_code == 0);
    CHECK(help.out.find("explain") != std::string::npos);
    CHECK(cli("help check").out.find("--affected-by") != std::string::npos);

    auto typo = cli("chek board.dts");
    CHECK(typo.exit_code == 2);
    CHECK(typo.err.find("unknown command 'chek' (did you mean 'check'?)") != std::string::npos);
    auto option = cli("check --formt json x.dts");
    CHECK(option.exit_code == 2);
    CHECK(option.err.find("unknown option '--formt' (did you mean '--format'?)") !=
          std::string::npos);
    auto value = cli("check --format xml x.dts");
    CHECK(value.exit_code == 2);
    CHECK(value.err.find("text") != std::string::npos);
    CHECK(value.err.find("github") != std::string::npos);
    auto arch = cli("calc --arch sparc --kernel-version 6.12");
    CHECK(arch.exit_code == 2);
    CHECK(arch.err.find("unknown architecture 'sparc'") != std::string::npos);
    CHECK(arch.err.find("arm64") != std::string::npos); // the valid ones are listed
}

TEST_CASE(
    "a bad value is a usage error naming the flag (the JSON request reader's, in CLI words)") {
    auto jobs = cli("check x.dts --jobs many");
    CHECK(jobs.exit_code == 2);
    CHECK(jobs.err.find("cmalign check: error: --jobs must be an integer from 0 to 4096\nRun with "
                        "--help for more information.") != std::string::npos);
    auto sweep = cli("suggest --sweep-page-sizes 4K");
    CHECK(sweep.exit_code == 2);
    CHECK(sweep.err.find("cmalign suggest: error: --sweep-page-sizes needs --sweep-versions") !=
          std::string::npos);
    auto modes = cli("fix x.dts --in-place --diff");
    CHECK(modes.exit_code == 2);
    CHECK(modes.err.find("give at most one of --output, --in-place and --diff") !=
          std::string::npos);
    auto size = cli("suggest --target-alignment lots");
    CHECK(size.exit_code == 2);
    CHECK(size.err.find("--target-alignment must be a size") != std::string::npos);
    auto tree = cli("calc --kernel-tree /no/such/tree");
    CHECK(tree.exit_code == 2);
    CHECK(tree.err.find("--kernel-tree: no such directory: /no/such/tree") != std::string::npos);
    auto kernel = cli("boot-check board.dts");
    CHECK(kernel.exit_code == 2);
    CHECK(kernel.err.find("cmalign boot-check: error: --kernel is required") != std::string::npos);
}

TEST_CASE("a usage error comes before any note") {
    // heap without a usable size: the error is the first thing on stderr.
    auto r = cli("heap --size wombat --arch arm64 --kernel-version 6.12");
    CHECK(r.exit_code == 2);
    auto first = r.err.substr(0, r.err.find('\n'));
    CHECK(first.find("error") != std::string::npos);
}
