/* A BSP tool's check step in C, through the JSON API of <cmalign/cmalign.h>.
 * Usage: bsp_check_c REQUEST_JSON
 *   bsp_check_c '{"files": ["boards"], "configs": ["configs/acme_defconfig"]}'
 * Prints the CMA alignment and the number of errors; exit 1 with errors, 2 on bad input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmalign/cmalign.h>

/* The integer after "key": in a compact JSON text (enough for this example). */
static long long json_integer(const char* json, const char* key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char* at = strstr(json, pattern);
    return at ? strtoll(at + strlen(pattern), NULL, 10) : -1;
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: bsp_check_c REQUEST_JSON\n");
        return 2;
    }
    char* error = NULL;
    char* result = cmalign_check_json(argv[1], &error);
    if (!result) {
        fprintf(stderr, "%s\n", error); /* file:line:col: error: message */
        cmalign_free(error);
        return 2;
    }
    long long alignment = json_integer(result, "cma_min_alignment_bytes");
    long long errors = json_integer(result, "errors");
    printf("cmalign %s: CMA alignment %lld bytes, %lld error(s)\n", cmalign_version(), alignment,
           errors);
    cmalign_free(result);
    return errors > 0 ? 1 : 0;
}
