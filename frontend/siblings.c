/*
 * frontend/siblings.c — `from NAME import a, b` of a sibling file.
 *
 * TileLang's examples share helpers between the files of one folder
 * (`from block_causal_attention import _check_dllm_block, LOG2_E`,
 * `from sparse_utils import get_e_factor`): Python finds NAME.py beside
 * the script.  tilec does the same: when NAME is no module it knows
 * (modules.c) and NAME.py lies in the program's directory, that file is
 * parsed and its module-level statements run once, in a global namespace
 * of its own (its functions see its names, as in Python), and the names
 * imported are taken from there.  A name the file does not define (host
 * code that was never in it, or was removed with the rest of the host
 * Python) binds the opaque stand-in modules.c gives unknown modules, so
 * only a use of it is a diagnostic, and it names `NAME.a`.  Locations in
 * the sibling carry its file number (ast_loc_t.file), so diagnostics show
 * its path and line.  Import cycles are a diagnostic.
 */
#include "eval_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NAME.py beside the program, read into the scratch arena; NULL when absent */
static char *read_sibling(ev_t *ev, const char *name, char **pathp, size_t *lenp)
{
    const char *slash;
    size_t dl, n;
    char *path, *buf;
    FILE *f;
    long sz;
    if (!ev->path || !*name) return NULL;
    for (n = 0; name[n]; n++)
        if (!((name[n] >= 'a' && name[n] <= 'z') || (name[n] >= 'A' && name[n] <= 'Z') || name[n] == '_' ||
              (n && name[n] >= '0' && name[n] <= '9')))
            return NULL;
    slash = strrchr(ev->path, '/');
    dl = slash ? (size_t)(slash - ev->path) + 1 : 0;
    path = ev_alloc(ev, dl + n + 4);
    memcpy(path, ev->path, dl);
    memcpy(path + dl, name, n);
    memcpy(path + dl + n, ".py", 4);
    if (!strcmp(path, ev->path)) return NULL;   /* the program itself */
    f = fopen(path, "rb");
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0 || (size_t)sz > TILEC_FRONTEND_MAX_BYTES ||
        fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    buf = ev_alloc(ev, (size_t)sz + 1);
    if (fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
        fclose(f);
        return NULL;
    }
    fclose(f);
    buf[sz] = 0;
    *pathp = path;
    *lenp = (size_t)sz;
    return buf;
}

/* The global namespace of sibling NAME.py, run on first use; NULL when there is no such file. */
static env_t *sibling_env(ev_t *ev, const char *name, ast_loc_t loc)
{
    struct sib *ns;
    tilec_diag_t pd;
    ast_module_t *m = NULL;
    env_t *saved_env;
    char *path = NULL;
    char *src;
    size_t len = 0;
    int i, saved_mod, k;
    for (i = 0; i < ev->nsibs; i++) {
        if (strcmp(ev->sibs[i].name, name)) continue;
        if (ev->sibs[i].loading)
            ev_fail(ev, loc, "import cycle: %s.py imports itself (through the files it imports)", name);
        return ev->sibs[i].env;
    }
    src = read_sibling(ev, name, &path, &len);
    if (!src) return NULL;
    if (ev->nsibs >= 64) ev_fail(ev, loc, "more than 64 sibling files imported");
    ns = ev_alloc(ev, sizeof *ns * (size_t)(ev->nsibs + 1));
    if (ev->nsibs) memcpy(ns, ev->sibs, sizeof *ns * (size_t)ev->nsibs);
    ev->sibs = ns;
    k = ev->nsibs++;
    ns[k].name = name;
    ns[k].path = path;
    ns[k].src = src;
    ns[k].len = len;
    ns[k].env = ev_env_new(ev, NULL);
    ns[k].loading = 1;
    tilec_diag_init(&pd, path, src, len);
    if (tilec_parse_file(&ev->s, &pd, path, src, len, k + 1, &m) < 0 || !m)
        ev_fail(ev, loc, "in %s, imported here: %s", path, pd.nerrors ? tilec_diag_text(&pd) : "it does not parse");
    env_set(ev, ns[k].env, "__name__", v_str(ev, name, strlen(name)));
    saved_env = ev->env;
    saved_mod = ev->at_module;
    ev->env = ns[k].env;
    ev->at_module = 1;
    ev_exec_block(ev, &m->body);
    ev->env = saved_env;
    ev->at_module = saved_mod;
    ev->sibs[k].loading = 0;
    return ev->sibs[k].env;
}

value_t *sib_import(ev_t *ev, const char *from, const char *name, ast_loc_t loc)
{
    env_t *e;
    int i;
    if (strchr(from, '.') || mod_lookup(ev, from)->kind == V_NS) return NULL;
    e = sibling_env(ev, from, loc);
    if (!e) return NULL;
    i = ev_env_find(e, name);
    if (i >= 0) return e->vals[i];
    {
        size_t n = strlen(from) + strlen(name) + 2;
        char *p = ev_alloc(ev, n);
        snprintf(p, n, "%s.%s", from, name);
        return mod_opaque(ev, p);
    }
}
