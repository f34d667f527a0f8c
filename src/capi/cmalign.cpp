// The C API (cmalign/cmalign.h): each function is run_json_text() behind a wall that no C++
// exception crosses; results and messages are malloc'd so cmalign_free() is free().
#include "cmalign/cmalign.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "cmalign/api.hpp"
#include "cmalign/core/error.hpp"
#include "cmalign/json_api.hpp"
#include "cmalign/version.hpp"

namespace {

char* copy_out(const std::string& text) noexcept {
    auto* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (out) std::memcpy(out, text.c_str(), text.size() + 1);
    return out;
}

// Names the input of a failed call in an internal-error message: the command and its request.
void set_internal_error(char** error, const char* command, const char* request,
                        const char* what) noexcept {
    try {
        std::string input = std::string(command ? command : "") + " " + (request ? request : "");
        auto message = cmalign::internal_error_message(what, input);
        if (error) *error = copy_out(message);
    } catch (...) {
        if (error) *error = copy_out("cmalign: internal error");
    }
}

void set_error(char** error, const char* message) noexcept {
    if (!error) return;
    try {
        *error = copy_out(message);
    } catch (...) {
        *error = nullptr;
    }
}

char* run(const char* command, const char* request, char** error) noexcept {
    if (error) *error = nullptr;
    try {
        if (!command) {
            set_error(error, "cmalign: error: no command given");
            return nullptr;
        }
        auto result = cmalign::run_json_text(command, request ? request : "");
        auto* out = copy_out(result);
        if (!out) set_error(error, "cmalign: error: out of memory");
        return out;
    } catch (const std::bad_alloc&) {
        set_error(error, "cmalign: error: out of memory");
    } catch (const cmalign::Error& e) {
        set_error(error, e.what()); // "file:line:col: error: message"
    } catch (const std::exception& e) {
        set_internal_error(error, command, request, e.what()); // a bug: say which input
    } catch (...) {
        set_internal_error(error, command, request, "");
    }
    return nullptr;
}

} // namespace

extern "C" {

// One line per command: the name is the run_json() table's.
#define CMALIGN_C_COMMAND(name)                                                                    \
    char* cmalign_##name##_json(const char* request, char** error) {                               \
        return run(#name, request, error);                                                         \
    }
CMALIGN_C_COMMAND(calc)
CMALIGN_C_COMMAND(check)
CMALIGN_C_COMMAND(fix)
CMALIGN_C_COMMAND(suggest)
CMALIGN_C_COMMAND(table)
CMALIGN_C_COMMAND(config)
CMALIGN_C_COMMAND(tree)
CMALIGN_C_COMMAND(pcp)
CMALIGN_C_COMMAND(heap)
CMALIGN_C_COMMAND(explain)
CMALIGN_C_COMMAND(map)
CMALIGN_C_COMMAND(boot_check)
#undef CMALIGN_C_COMMAND

char* cmalign_run_json(const char* command, const char* request, char** error) {
    return run(command, request, error);
}

void cmalign_clear_cache(void) {
    try {
        cmalign::clear_caches();
    } catch (...) { // nothing to report: the cache is simply kept
    }
}

void cmalign_free(void* p) {
    std::free(p);
}

const char* cmalign_version(void) {
    return CMALIGN_VERSION;
}

} // extern "C"
