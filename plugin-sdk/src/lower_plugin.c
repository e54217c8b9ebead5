/*
 * plugin-sdk/src/lower_plugin.c — the plugin side of `tilec compile ...
 * --emit lowered`: what a GPU plugin's lower entry does with its target
 * description, in one call, so that every plugin answers alike: read the
 * IR, run the lowering passes (verified after each), print the result, map
 * a failure to an ABI status with the SDK's last-error message, and trace
 * each pass through the host's log when TILEC_LOG names "ir".  And the
 * module such a plugin's compile prints (tilec_lower_shell_module): the
 * same lowering, kept as a module for the SIMT kit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/lower.h"
#include "tilec/sdk.h"
#include "tilec/shell.h"

typedef struct plog {
    const char *name;
    void (*log)(void *, const char *, const char *);
    void *user;
} plog_t;

static void trace(void *user, const char *pass, const char *text)
{
    plog_t *p = user;
    tilec_sdk_str_t b = {0};
    tilec_sdk_str_printf(&b, "%s: ir after %s:\n%s", p->name, pass, text);
    if (!b.oom && b.s)
        p->log(p->user, "ir", b.s);
    tilec_sdk_str_free(&b);
}

static void shell_log(void *user, const char *topic, const char *text)
{
    (void)user;
    tilec_shell_log(topic, "%s", text);
}

static tilec_pstatus_t map_code(tilec_lower_code_t code)
{
    switch (code) {
    case TILEC_LOWER_OK: return TILEC_PS_OK;
    case TILEC_LOWER_E_INVALID: return TILEC_PS_INVALID_ARGUMENT;
    case TILEC_LOWER_E_UNSUPPORTED: return TILEC_PS_UNSUPPORTED;
    case TILEC_LOWER_E_NOMEM: return TILEC_PS_OUT_OF_MEMORY;
    default: return TILEC_PS_INTERNAL;
    }
}

static void lower_opts(tilec_lower_options_t *o, plog_t *pl)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    if (pl->log && tilec_lower_log_wanted()) {
        o->log = trace;
        o->log_user = pl;
    }
}

char *tilec_lower_plugin_text(const char *name, const char *ir, size_t len, const tilec_target_desc_t *t,
                              void (*log)(void *, const char *, const char *), void *log_user,
                              size_t *out_len, tilec_pstatus_t *st)
{
    plog_t pl = {name ? name : "plugin", log, log_user};
    tilec_lower_options_t o;
    lower_opts(&o, &pl);
    tilec_lower_status_t ls;
    char *text = NULL;
    if (!t) {
        ls.code = TILEC_LOWER_E_UNSUPPORTED;
        snprintf(ls.msg, sizeof ls.msg, "lower: no target description for this arch");
    } else {
        text = tilec_lower_text(ir, len, t, &o, &ls);
    }
    if (text) {
        *out_len = strlen(text);
        *st = TILEC_PS_OK;
        return text;
    }
    *st = map_code(ls.code);
    tilec_sdk_error_set("%s: %s", pl.name, ls.msg);
    *out_len = 0;
    return NULL;
}

tilec_pstatus_t tilec_lower_shell(const char *name, const tilec_target_desc_t *t, tilec_shell_module_t *mod)
{
    tilec_pstatus_t st;
    mod->lowered = tilec_lower_plugin_text(name, mod->ir_text, mod->ir_len, t, shell_log, NULL,
                                           &mod->lowered_len, &st);
    return st;
}

/* 1 when an on-chip buffer of m has a layout: the lowering already ran */
static int has_layouts(const tilec_ir_module_t *m)
{
    const tilec_ir_kernel_t *k = m->kernel;
    for (int i = k ? k->nparams : 0; k && i < k->nbufs; i++)
        if (k->bufs[i]->layout)
            return 1;
    return 0;
}

const tilec_ir_module_t *tilec_lower_shell_module(const char *name, const tilec_target_desc_t *t,
                                                  const tilec_shell_module_t *mod, tilec_arena_t *a,
                                                  tilec_pstatus_t *st)
{
    plog_t pl = {name ? name : "plugin", shell_log, NULL};
    *st = TILEC_PS_OK;
    if (has_layouts(mod->ir))
        return mod->ir; /* a lowered .tir: printed as it is */
    tilec_ir_module_t *m = NULL;
    char err[512];
    if (tilec_ir_read(a, mod->ir_text, mod->ir_len, &m, err, sizeof err) != 0) {
        *st = TILEC_PS_INVALID_ARGUMENT;
        tilec_sdk_error_set("%s: lower: %s", pl.name, err);
        return NULL;
    }
    tilec_lower_options_t o;
    lower_opts(&o, &pl);
    tilec_lower_status_t ls;
    if (!t) {
        ls.code = TILEC_LOWER_E_UNSUPPORTED;
        snprintf(ls.msg, sizeof ls.msg, "lower: no target description for this arch");
    } else {
        tilec_lower_module(a, m, t, &o, &ls);
    }
    if (ls.code != TILEC_LOWER_OK) {
        *st = map_code(ls.code);
        tilec_sdk_error_set("%s: %s", pl.name, ls.msg);
        return NULL;
    }
    return m;
}
