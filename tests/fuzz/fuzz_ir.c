/*
 * tests/fuzz/fuzz_ir.c — the tile IR text reader (plugin-sdk/src/ir_read.c)
 * and, on what it accepts, the verifier and the printer.
 *
 * Property (docs/ir.md: print(read(print(m))) == print(m)): any text the
 * reader accepts prints to a text that reads back and prints identically.
 * The verifier runs on every accepted module; it may reject, never crash.
 */
#include <string.h>

#include "fuzz.h"
#include "tilec/ir.h"
#include "tilec/ir_verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tilec_arena_t a;
    tilec_ir_module_t *m = NULL, *m2 = NULL;
    char err[256];
    tilec_arena_init(&a);
    if (tilec_ir_read(&a, (const char *)data, size, &m, err, sizeof err) == 0 && m) {
        (void)tilec_ir_verify(m, err, sizeof err);
        char *t1 = tilec_ir_print(m);
        if (t1) {
            if (tilec_ir_read(&a, t1, strlen(t1), &m2, err, sizeof err) != 0 || !m2)
                fuzz_fail("printed IR does not read back: %s\n%s", err, t1);
            char *t2 = tilec_ir_print(m2);
            if (t2 && strcmp(t1, t2) != 0)
                fuzz_fail("print(read(print(m))) != print(m)\n--- first\n%s--- second\n%s", t1, t2);
            free(t2);
            free(t1);
        }
    }
    tilec_arena_destroy(&a);
    return 0;
}
