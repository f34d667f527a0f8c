/* The C API, compiled as C (no C++ in this file): results, errors, and the guarantee that no
 * C++ exception crosses the boundary whatever the input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmalign/cmalign.h>

static int failures = 0;

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond);                     \
            ++failures;                                                                            \
        }                                                                                          \
    } while (0)

static char data_path[4096];

static const char* data(const char* name) {
    snprintf(data_path, sizeof data_path, "%s/%s", CMALIGN_SOURCE_DIR, name);
    return data_path;
}

static void test_calc_16k(void) {
    char* error = (char*)"untouched";
    char* out = cmalign_calc_json("{\"arch\":\"arm64\",\"kernel_version\":\"6.16\",\"sets\":{"
                                  "\"CONFIG_ARM64_16K_PAGES\":\"y\"}}",
                                  &error);
    EXPECT(out != NULL);
    EXPECT(error == NULL);
    if (out) {
        /* PAGE_SIZE 16K << pageblock_order 11 (mm/Kconfig PAGE_BLOCK_MAX_ORDER, 6.16) */
        EXPECT(strstr(out, "\"cma_min_alignment_bytes\":33554432") != NULL);
        EXPECT(strstr(out, "\"page_size\":16384") != NULL);
    }
    cmalign_free(out);
}

static void test_check_seed(void) {
    char request[8192];
    snprintf(request, sizeof request,
             "{\"files\":[\"%s\"],\"sets\":{\"CONFIG_ARM64_16K_PAGES\":\"y\"},"
             "\"arch\":\"arm64\",\"kernel_version\":\"6.16\"}",
             CMALIGN_SEED_DTS);
    char* error = NULL;
    char* out = cmalign_check_json(request, &error);
    EXPECT(out != NULL);
    if (out) {
        EXPECT(strstr(out, "\"check\":\"cma-size-alignment\"") != NULL);
        EXPECT(strstr(out, "\"severity\":\"error\"") != NULL);
    }
    cmalign_free(out);
    cmalign_free(error);
}

static void test_bad_file_is_located(void) {
    char request[8192];
    snprintf(request, sizeof request, "{\"files\":[\"%s\"],\"arch\":\"arm64\"}",
             data("tests/capi/bad-syntax.dts"));
    char* error = NULL;
    char* out = cmalign_check_json(request, &error);
    EXPECT(out == NULL);
    EXPECT(error != NULL);
    if (error) {
        /* the unterminated node is reported where the file ends: file:line:col */
        char want[4200];
        snprintf(want, sizeof want, "%s:", data("tests/capi/bad-syntax.dts"));
        EXPECT(strncmp(error, want, strlen(want)) == 0);
        EXPECT(strstr(error, ": error: ") != NULL);
        int line = 0, column = 0;
        EXPECT(sscanf(error + strlen(want), "%d:%d:", &line, &column) == 2 && line > 0 &&
               column > 0);
    }
    cmalign_free(error);
}

static void test_bad_requests(void) {
    char* error = NULL;
    EXPECT(cmalign_calc_json("{\"arch\": \"arm64\",\n \"sets\": {", &error) == NULL);
    EXPECT(error && strncmp(error, "<request>:2:", 12) == 0);
    cmalign_free(error);

    EXPECT(cmalign_calc_json("{\"arhc\":\"arm64\"}", &error) == NULL);
    EXPECT(error && strstr(error, "unknown key 'arhc'") != NULL);
    cmalign_free(error);

    EXPECT(cmalign_calc_json("{\"arch\":64}", &error) == NULL);
    EXPECT(error && strstr(error, "'arch' must be a string") != NULL);
    cmalign_free(error);

    /* a bool symbol given a number is refused, never silently left at its default (4K) */
    EXPECT(cmalign_calc_json("{\"arch\":\"arm64\",\"kernel_version\":\"6.16\","
                             "\"sets\":{\"CONFIG_ARM64_16K_PAGES\":1}}",
                             &error) == NULL);
    EXPECT(error && strstr(error, "CONFIG_ARM64_16K_PAGES=1: a bool symbol takes y, m or n"));
    cmalign_free(error);

    EXPECT(cmalign_calc_json("{\"arhc\":\"arm64\"}", &error) == NULL);
    EXPECT(error && strstr(error, "valid keys: configs, sets, unsets, arch") != NULL);
    cmalign_free(error);

    EXPECT(cmalign_calc_json("[1,2]", &error) == NULL);
    cmalign_free(error);

    EXPECT(cmalign_run_json("no-such-command", "{}", &error) == NULL);
    EXPECT(error && strstr(error, "unknown command") != NULL);
    cmalign_free(error);

    EXPECT(cmalign_run_json(NULL, "{}", &error) == NULL);
    cmalign_free(error);

    /* error may be NULL: the caller only wants to know it failed */
    EXPECT(cmalign_check_json("{}", NULL) == NULL);

    /* contradictory configuration: the library reports it as an input error */
    EXPECT(cmalign_calc_json("{\"arch\":\"arm64\",\"sets\":{\"CONFIG_ARM64_4K_PAGES\":\"y\","
                             "\"CONFIG_ARM64_64K_PAGES\":\"y\"}}",
                             &error) == NULL);
    EXPECT(error != NULL);
    cmalign_free(error);
}

static void test_other_commands(void) {
    char* error = NULL;
    char* out = cmalign_table_json("{\"arch\":\"arm64\",\"kernel_version\":\"6.16\"}", &error);
    EXPECT(out && strncmp(out, "{\"rows\":[", 9) == 0);
    cmalign_free(out);

    out = cmalign_config_json("{\"sets\":{\"CONFIG_CMA\":true}}", &error);
    EXPECT(out && strstr(out, "\"CONFIG_CMA\":\"y\"") != NULL);
    cmalign_free(out);

    out = cmalign_suggest_json("{\"arch\":\"arm64\",\"kernel_version\":\"6.16\",\"sets\":{"
                               "\"CONFIG_ARM64_16K_PAGES\":\"y\"},\"target_alignment\":\"4M\"}",
                               &error);
    EXPECT(out && strstr(out, "\"suggestions\":[{") != NULL);
    cmalign_free(out);

    char request[8192];
    snprintf(request, sizeof request, "{\"file\":\"%s\",\"path\":\"/reserved-memory\"}",
             CMALIGN_SEED_DTS);
    out = cmalign_tree_json(request, &error);
    EXPECT(out && strstr(out, "\"path\":\"/reserved-memory/cma_test_reserve\"") != NULL);
    cmalign_free(out);

    snprintf(request, sizeof request,
             "{\"file\":\"%s\",\"diff\":true,\"sets\":{\"CONFIG_ARM64_16K_PAGES\":\"y\"},"
             "\"arch\":\"arm64\",\"kernel_version\":\"6.16\"}",
             CMALIGN_SEED_DTS);
    out = cmalign_fix_json(request, &error);
    EXPECT(out && strstr(out, "\"new\":\"0x2000000\"") != NULL);
    EXPECT(out && strstr(out, "+\\t\\t\\tsize = <0x0 0x2000000>;") != NULL);
    cmalign_free(out);

    /* NULL request = {}: no architecture to go on, said as the CLI says it */
    out = cmalign_run_json("calc", NULL, &error);
    EXPECT(out == NULL);
    EXPECT(error && strstr(error, "cannot tell the architecture") != NULL);
    cmalign_free(error);

    EXPECT(strcmp(cmalign_version(), CMALIGN_EXPECTED_VERSION) == 0);
}

/* One unreadable board beside a readable one: a result with the readable board's findings and
 * the other's input error, not NULL (as the CLI's JSON). */
static void test_one_bad_board_among_two(void) {
    char request[16384];
    snprintf(request, sizeof request,
             "{\"files\":[\"%s\",\"%s\"],\"sets\":{\"CONFIG_ARM64_16K_PAGES\":\"y\"},"
             "\"arch\":\"arm64\",\"kernel_version\":\"6.16\"}",
             CMALIGN_SEED_DTS, data("tests/capi/bad-syntax.dts"));
    char* error = NULL;
    char* out = cmalign_check_json(request, &error);
    EXPECT(out != NULL);
    EXPECT(error == NULL);
    if (out) {
        EXPECT(strstr(out, "\"check\":\"cma-size-alignment\"") != NULL);
        EXPECT(strstr(out, "bad-syntax.dts") != NULL);
        EXPECT(strstr(out, "\"boards\":2") != NULL);
    }
    cmalign_free(out);
    cmalign_free(error);
    cmalign_clear_cache(); /* callable at any time */
}

int main(void) {
    test_calc_16k();
    test_check_seed();
    test_bad_file_is_located();
    test_bad_requests();
    test_other_commands();
    test_one_bad_board_among_two();
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
