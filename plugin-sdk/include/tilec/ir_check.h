/*
 * tilec/ir_check.h — the checks and the trace that run after every pass,
 * for the core's passes and the SDK's lowering passes alike (Mesa NIR's
 * validate-after-each-pass and NIR_DEBUG=serialize, TileLang's lower
 * trace):
 *  - tilec_ir_verify (tilec/ir_verify.h) after every pass, always;
 *  - with TILEC_IR_ROUNDTRIP=1 in the environment (the test suite sets
 *    it), the module is printed, read back and printed again, and the two
 *    texts must be equal;
 *  - with TILEC_LOG=ir (or all), the module is printed to stderr after
 *    every pass as "tilec[ir]: == after PASS" followed by the text.
 * tilec_ir_check_pass does all three in that order.
 */
#ifndef TILEC_IR_CHECK_H
#define TILEC_IR_CHECK_H

#include <stddef.h>
#include "tilec/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

int tilec_ir_log_wanted(void);       /* TILEC_LOG names ir (or all) */
int tilec_ir_roundtrip_wanted(void); /* TILEC_IR_ROUNDTRIP=1 */
/* "tilec[ir]: == WHAT\n<module text>" on stderr (what: "after simplify"). */
void tilec_ir_log_module(const char *what, const tilec_ir_module_t *m);
/* print -> read -> print: 0 when both texts are equal, else -1 and why. */
int tilec_ir_roundtrip(const tilec_ir_module_t *m, char *err, size_t errlen);
/* After pass `pass` (NULL: the input): verify, round trip when wanted, log
 * when wanted.  0, or -1 with "after pass PASS: message" in err. */
int tilec_ir_check_pass(const char *pass, const tilec_ir_module_t *m, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
