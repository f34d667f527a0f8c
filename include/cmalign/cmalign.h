/* cmalign's C API: every command as JSON in, JSON out, for C tools and other languages' FFI.
 *
 *   char *error = NULL;
 *   char *out = cmalign_calc_json("{\"arch\":\"arm64\",\"kernel_version\":\"6.16\","
 *                                 "\"sets\":{\"CONFIG_ARM64_16K_PAGES\":\"y\"}}", &error);
 *   if (!out) { fprintf(stderr, "%s\n", error); cmalign_free(error); return 2; }
 *   ... out holds the `cmalign calc --format json` object ...
 *   cmalign_free(out);
 *
 * The request is a JSON object whose keys are the Python module's keyword arguments (docs/json.md,
 * "Request keys");
 * NULL or "" is the empty object. The result is the CLI's JSON for that command (compact, UTF-8),
 * to be released with cmalign_free(). Findings (check's diagnostics) are part of the result.
 *
 * On a bad request (not JSON, an unknown or mistyped key, a contradictory configuration) or when
 * no input could be read, the result is NULL and, when `error` is not NULL, *error holds
 * "file:line:col: error: message" (also released with cmalign_free()). One unreadable input among
 * several is not a bad request: its error is in the result's "diagnostics", as the CLI's JSON. On
 * success *error is set to NULL. No C++ exception ever leaves these functions. They are
 * thread-safe: calls share no state.
 */
#ifndef CMALIGN_CMALIGN_H
#define CMALIGN_CMALIGN_H

#ifdef __cplusplus
extern "C" {
#endif

/* keys: configs, sets, unsets, arch, kernel_version, kernel_tree, kconfig_shell, limits
 * ({"node-depth": 1000}: --limit NAME=VALUE, names in docs/limits.md) */
char* cmalign_calc_json(const char* request, char** error);
/* keys: files (required), affected_by, switches ("-Wno-overlap", "-Eoverlap"), werror, bootargs,
 * include_dirs, defines, jobs, and calc's keys */
char* cmalign_check_json(const char* request, char** error);
/* keys: file (or files), out, in_place, diff (the result then has "diff"), bootargs,
 * include_dirs, defines, jobs, and calc's keys */
char* cmalign_fix_json(const char* request, char** error);
/* keys: files, target_alignment (bytes, or "32M"), include_dirs, defines, and calc's keys */
char* cmalign_suggest_json(const char* request, char** error);
/* keys: arch (default "arm64"), kernel_version */
char* cmalign_table_json(const char* request, char** error);
/* keys: calc's keys; result {"symbols": {...}} */
char* cmalign_config_json(const char* request, char** error);
/* keys: file (required), path (default "/"), format ("json", or "dts" → {"dts": text}),
 * include_dirs, defines, kernel_tree, limits */
char* cmalign_tree_json(const char* request, char** error);
/* keys: memory | zones ({"DMA32": "3G"}) | zoneinfo (path); memory_base, cpus, sysctls
 * ({"vm.x": value}), sysctl_file, bootargs, dt, vendor_params, and calc's keys */
char* cmalign_pcp_json(const char* request, char** error);
/* keys: size (required, "10M"), available_order, and calc's keys */
char* cmalign_heap_json(const char* request, char** error);
/* keys: log, board (both required), include_dirs, defines, bootargs, and calc's keys */
char* cmalign_explain_json(const char* request, char** error);
/* keys: board (required), bootargs, include_dirs, defines, overlays, and calc's keys; the result is
 * `cmalign map --format json` */
char* cmalign_map_json(const char* request, char** error);
/* keys: board, kernel (both required), qemu, timeout (seconds), save_log, save_dtb, overlays,
 * include_dirs, defines, bootargs, and calc's keys; result: the `boot-check --format json`
 * object (a boot that failed is an answer: its "errors" and "log_tail" say why) */
char* cmalign_boot_check_json(const char* request, char** error);

/* Any command by name ("calc", "check", ...), including ones newer than this header's
 * functions; an unknown name is an error. */
char* cmalign_run_json(const char* command, const char* request, char** error);

/* Drops what the library keeps between calls (parsed kernel trees; at most a few are kept). */
void cmalign_clear_cache(void);

/* Releases a result or an error message (NULL is allowed). */
void cmalign_free(void* p);

/* The library's version, "0.1.0" (static storage: do not free). */
const char* cmalign_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CMALIGN_CMALIGN_H */
