/*
 * frontend/nametab.h — hashed name tables of the evaluator.
 *
 * Environments, the module-constant list and the kernel's taken names are
 * looked up once per name use; a linear scan made 100k module constants or
 * 20k kernel locals quadratic (issue 11).  A nametab maps a NUL-terminated
 * name to an int (an index into the owner's own arrays) by open addressing
 * with linear probing; its memory comes from the evaluator's scratch arena
 * and so counts against the compile-time memory budget.  Keys are not
 * copied: they must outlive the table (they live in the same arena).
 */
#ifndef TILEC_FRONTEND_NAMETAB_H
#define TILEC_FRONTEND_NAMETAB_H

typedef struct nametab {
    int cap, n;              /* cap: 0 or a power of two */
    const char **keys;       /* [cap], NULL = empty slot */
    int *vals;               /* [cap] */
} nametab_t;

struct ev;
/* The value stored for name, or -1 when there is none. */
int nt_get(const nametab_t *t, const char *name);
/* Sets name's value (adds it, or replaces the value it had). */
void nt_put(struct ev *ev, nametab_t *t, const char *name, int val);

#endif
