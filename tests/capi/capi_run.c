/* cmalign_run_json() as a program, for the parity test (tests/python/test_parity.py):
 *   capi_run COMMAND REQUEST_JSON
 * prints the result and exits 0, or prints the error on stderr and exits 2. */
#include <stdio.h>

#include <cmalign/cmalign.h>

int main(int argc, char** argv) {
    if (argc != 3) {
        fputs("usage: capi_run COMMAND REQUEST_JSON\n", stderr);
        return 64;
    }
    char* error = NULL;
    char* out = cmalign_run_json(argv[1], argv[2], &error);
    if (!out) {
        fprintf(stderr, "%s\n", error ? error : "(no message)");
        cmalign_free(error);
        return 2;
    }
    puts(out);
    cmalign_free(out);
    return 0;
}
