/*
 * tests/fuzz/fuzz_frontend.c — the frontend (frontend/: lexer, parser,
 * compile-time evaluation, IR construction) from source text to tile IR.
 *
 * Property: any text either gets a diagnostic or yields a module whose
 * printed IR reads back and prints identically (the IR text is what
 * crosses the plugin ABI).  The verifier runs on the module too.
 */
#include <string.h>

#include "frontend.h"
#include "fuzz.h"
#include "tilec/ir_verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tilec_arena_t a;
    tilec_diag_t d;
    tilec_frontend_result_t r;
    tilec_ir_module_t *m2 = NULL;
    char err[256];
    memset(&r, 0, sizeof r);
    tilec_arena_init(&a);
    tilec_diag_init(&d, "fuzz.py", (const char *)data, size);
    if (tilec_frontend_compile(&a, &d, "fuzz.py", (const char *)data, size, NULL, NULL, 0, &r) == 0 &&
        r.module && r.module->kernel) {
        (void)tilec_ir_verify(r.module, err, sizeof err);
        char *t1 = tilec_ir_print(r.module);
        if (t1) {
            if (tilec_ir_read(&a, t1, strlen(t1), &m2, err, sizeof err) != 0 || !m2)
                fuzz_fail("the frontend's IR does not read back: %s\n%s", err, t1);
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
