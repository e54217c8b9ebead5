/*
 * conformance/conform.h — the conformance runner behind `tilec conform`
 * (conformance/README.md).
 *
 * The runner loads one plugin file, builds the list of items to run — the
 * tile-program cases of conformance/cases/ (one item per parameter set),
 * the ABI cases (abi.c) and the loader's broken-plugin cases — and runs
 * each item in a forked child, so a crash or a hang fails that item only.
 * Results go to a progress line, JUnit XML, JSON and a certificate
 * (report.c).  Everything here is part of the CLI, not of libtilec; the
 * comparison rules are core/check.c's, shared with `tilec run --check`.
 */
#ifndef TILEC_CONFORM_H
#define TILEC_CONFORM_H

#include <stddef.h>
#include <stdint.h>

#include "../core/check.h"
#include "tilec/plugin.h"
#include "tilec/tilec.h"

/* Bumped whenever cases or their judgement change. */
#define TILEC_CONFORM_SUITE_VERSION "1.0"

typedef enum conform_status {
    CONFORM_PASS = 0,
    CONFORM_FAIL,
    CONFORM_NOT_SUPPORTED,
    CONFORM_CRASH,
    CONFORM_TIMEOUT,
    CONFORM_NSTATUS
} conform_status_t;

const char *conform_status_name(conform_status_t s); /* "pass" "fail" "not-supported" ... */

typedef enum conform_kind { CONFORM_KIND_CASE = 0, CONFORM_KIND_ABI, CONFORM_KIND_LOADER } conform_kind_t;

/* One runnable item. Strings are malloc'd and owned by the item. */
typedef struct conform_item {
    char *id;               /* "gemm_nn/0", "abi/negotiate_range", "loader/nosymbol" */
    conform_kind_t kind;
    /* CASE */
    char *file;
    char *entry;            /* NULL: default */
    int ndefs;
    tilec_define_kv_t *defs; /* names/values point into defs_buf */
    char *defs_buf;
    char *params_text;      /* the parameter line as written */
    uint64_t caps;          /* capabilities named in the header */
    check_tol_t tol;
    double timeout_s;       /* 0: the run's default */
    /* ABI / LOADER */
    int index;              /* which check */
    /* result */
    conform_status_t status;
    double time_s;
    char *message;          /* why (failures, not-supported); "" for pass */
    int known;              /* listed in the known-failures file */
    char *known_reason;
    int unexpected_pass;    /* listed, but passed */
} conform_item_t;

typedef struct conform_run {
    /* options */
    const char *plugin_path;    /* the file under test */
    const char *cases_dir;
    const char *known_file;     /* NULL: none */
    const char *junit, *json, *cert;
    const char *broken_dir;     /* NULL: no loader cases */
    const char *filter;         /* substring of ids to run; NULL: all */
    double timeout_s;
    int jobs;
    uint64_t seed;
    int progress;               /* a progress line on stderr */
    int verbose;
    int quiet;                  /* no per-item lines on stderr */
    /* --compile-only --arch A,B: no device; every case is compiled by the
     * plugin's compiler for each arch (compile with a NULL device), and the
     * certificate says "compile-only" and names the arches. NULL: run. */
    const char *compile_archs;
    /* the plugin */
    void *handle;
    const tilec_plugin_t *table;
    uint32_t abi;
    uint32_t device;
    tilec_pdevice_info_t info;
    char sha256[65];
    tilec_context_t *ctx;       /* frontend and interpreter; NULL: each case makes its own */
    /* the items */
    int n;
    conform_item_t *items;
    char suite_sha256[65];      /* digest of the case files */
    char results_sha256[65];
    int counts[CONFORM_NSTATUS];
    int nknown, nunexpected;
    double wall_s;
} conform_run_t;

/* `tilec conform ...`; argv[0] is "conform".  Returns the exit status. */
int conform_main(int argc, char **argv);

/* ---- runner.c ---- */
/* Parses one case file's header into items appended to run (one per
 * parameter set).  0, or -1 with *err malloc'd. */
int conform_load_case(conform_run_t *run, const char *path, char **err);
/* Loads every *.py of dir, sorted. */
int conform_load_cases(conform_run_t *run, const char *dir, char **err);
/* Applies a known-failures file ("ID reason..." per line, '#' comments). */
int conform_load_known(conform_run_t *run, const char *path, char **err);
/* Opens the plugin file and negotiates; 0 or -1 with *err. */
int conform_open_plugin(conform_run_t *run, const char *path, uint32_t device, char **err);
/* Runs every item (forks).  0 or -1 (fork/pipe failure). */
int conform_run_all(conform_run_t *run);
void conform_run_free(conform_run_t *run);
/* Capability names as `tilec devices` prints them: "fp16,atomic-float". */
void conform_caps_text(uint64_t caps, char *buf, size_t len);
int conform_caps_parse(const char *text, uint64_t *caps);
/* Appends an item (strings copied); NULL when out of memory. */
conform_item_t *conform_item_add(conform_run_t *run, const char *id, conform_kind_t kind);
void conform_item_free(conform_item_t *it);

/* ---- abi.c ---- */
int conform_abi_count(void);
const char *conform_abi_name(int i);
/* Runs ABI check i against run's plugin, in the current (child) process. */
conform_status_t conform_abi_run(const conform_run_t *run, int i, char *msg, size_t msglen);
int conform_loader_count(void);
const char *conform_loader_name(int i);
conform_status_t conform_loader_run(const conform_run_t *run, int i, char *msg, size_t msglen);

/* ---- report.c ---- */
int conform_write_junit(const conform_run_t *run, const char *path);
int conform_write_json(const conform_run_t *run, const char *path);
int conform_write_cert(const conform_run_t *run, const char *path);
/* 1 when the run certifies: no fail, crash, timeout or unexpected pass. */
int conform_certified(const conform_run_t *run);
/* Digest of "id\tstatus\n" over the items, in order, into hex[65]. */
void conform_results_digest(const conform_item_t *items, int n, char hex[65]);
/* SHA-256 of a file; 0 or -1. */
int conform_file_sha256(const char *path, char hex[65]);
/* Checks certificate cert against plugin file plugin: file hash, results
 * digest, counts.  0 when valid; else -1 and *why (malloc'd). */
int conform_verify(const char *cert, const char *plugin, char **why);
/* For `tilec devices`: 1 when PLUGIN.cert.json lies beside plugin, is a
 * certified certificate and its hash matches the file; 0 otherwise. */
int conform_is_certified(const char *plugin);
/* The default certificate path for a plugin file (malloc'd). */
char *conform_cert_path(const char *plugin);

#endif
