/*
 * plugin-sdk/src/lower_plugin.c — the plugin side of `tilec compile ...
 * --emit lowered`: what a GPU plugin's lower entry does with its target
 * description, in one call, so that every plugin answers alike: read the
 * IR, run the lowering passes (verified after each), print the result, map
 * a failure to an ABI status with the SDK's last-error message, and trace
 * each pass through the host's log when TILEC_LOG names "ir".
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

char *tilec_lower_plugin_text(const char *name, const char *ir, size_t len, const tilec_target_desc_t *t,
                              void (*log)(void *, const char *, const char *), void *log_user,
                              size_t *out_len, tilec_pstatus_t *st)
{
    plog_t pl = {name ? name : "plugin", log, log_user};
    tilec_lower_options_t o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    if (log && tilec_lower_log_wanted()) {
        o.log = trace;
        o.log_user = &pl;
    }
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
    switch (ls.code) {
    case TILEC_LOWER_E_INVALID: *st = TILEC_PS_INVALID_ARGUMENT; break;
    case TILEC_LOWER_E_UNSUPPORTED: *st = TILEC_PS_UNSUPPORTED; break;
    case TILEC_LOWER_E_NOMEM: *st = TILEC_PS_OUT_OF_MEMORY; break;
    default: *st = TILEC_PS_INTERNAL; break;
    }
    tilec_sdk_error_set("%s: %s", pl.name, ls.msg);
    *out_len = 0;
    return NULL;
}

static void shell_log(void *user, const char *topic, const char *text)
{
    (void)user;
    tilec_shell_log(topic, "%s", text);
}

tilec_pstatus_t tilec_lower_shell(const char *name, const tilec_target_desc_t *t, tilec_shell_module_t *mod)
{
    tilec_pstatus_t st;
    mod->lowered = tilec_lower_plugin_text(name, mod->ir_text, mod->ir_len, t, shell_log, NULL,
                                           &mod->lowered_len, &st);
    return st;
}
