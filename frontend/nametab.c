/*
 * frontend/nametab.c — hashed name tables (nametab.h): FNV-1a over the
 * name, open addressing, the table doubled at 50% load.
 */
#include <stdint.h>
#include <string.h>

#include "eval_internal.h"

static uint32_t hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

int nt_get(const nametab_t *t, const char *name)
{
    uint32_t i, mask;
    if (!t->cap) return -1;
    mask = (uint32_t)t->cap - 1;
    for (i = hash(name) & mask; t->keys[i]; i = (i + 1) & mask)
        if (!strcmp(t->keys[i], name)) return t->vals[i];
    return -1;
}

static void insert(nametab_t *t, const char *name, int val)
{
    uint32_t mask = (uint32_t)t->cap - 1, i;
    for (i = hash(name) & mask; t->keys[i]; i = (i + 1) & mask)
        if (!strcmp(t->keys[i], name)) {
            t->vals[i] = val;
            return;
        }
    t->keys[i] = name;
    t->vals[i] = val;
    t->n++;
}

void nt_put(ev_t *ev, nametab_t *t, const char *name, int val)
{
    if ((t->n + 1) * 2 > t->cap) {
        nametab_t old = *t;
        int i;
        t->cap = old.cap ? old.cap * 2 : 32;
        t->n = 0;
        t->keys = ev_alloc(ev, (size_t)t->cap * sizeof *t->keys);
        t->vals = ev_alloc(ev, (size_t)t->cap * sizeof *t->vals);
        for (i = 0; i < old.cap; i++)
            if (old.keys[i]) insert(t, old.keys[i], old.vals[i]);
    }
    insert(t, name, val);
}
