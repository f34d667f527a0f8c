// The JSON request layer (cmalign_run_json, the C API every binding uses). The first byte picks a
// command from json_commands(); the rest is the request. Requests that parse as JSON objects get
// the keys that reach outside the input removed (kernel_tree: a whole tree; kconfig_shell: runs
// the toolchain probes; out/in_place: writes files), and paths point into the scratch directory
// where the input's own "@@@" parts are written as a.dts, b.config, c.log. Property: every call
// returns a result or a message, never both, never neither, and never crashes.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cmalign/cmalign.h"
#include "cmalign/json_api.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    static const auto commands = cmalign::json_commands();
    const std::string& command = commands[data[0] % commands.size()];
    std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
    auto cut = rest.find("\n@@@\n");
    std::string request(rest.substr(0, cut));
    if (cut != std::string_view::npos)
        cmalign::fuzz::write_named_parts(rest.substr(cut + 5), {"a.dts", "b.config", "c.log"});
    auto parsed = nlohmann::json::parse(request, nullptr, false);
    if (parsed.is_object()) {
        for (const char* key : {"kernel_tree", "kconfig_shell", "out", "in_place", "jobs"})
            parsed.erase(key);
        request = parsed.dump();
    }
    const auto dir = cmalign::fuzz::scratch_dir().string();
    if (::chdir(dir.c_str()) != 0) return 0; // relative paths name the parts written above
    char* error = nullptr;
    char* result = cmalign_run_json(command.c_str(), request.c_str(), &error);
    if ((result == nullptr) == (error == nullptr)) __builtin_trap();
    cmalign_free(result);
    cmalign_free(error);
    return 0;
}
