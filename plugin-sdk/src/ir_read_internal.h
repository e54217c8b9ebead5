/*
 * plugin-sdk/src/ir_read_internal.h — what the two files of the tile IR
 * text reader share: ir_read.c (lexer, expressions, the 1.0 statements, the
 * kernel and the module) and ir_read_11.c (the IR 1.1 attribute lists,
 * layouts, mbarriers and statements).  Not installed; the irr_ names are
 * hidden in libtilec.so and private to the SDK.
 */
#ifndef TILEC_IR_READ_INTERNAL_H
#define TILEC_IR_READ_INTERNAL_H

#include "tilec/ir.h"
#include "ir_internal.h"

typedef enum tok_kind { T_EOF, T_IDENT, T_INT, T_FLOAT, T_STRING, T_PUNCT, T_BAD } tok_kind_t;

typedef struct tok {
    tok_kind_t kind;
    const char *s; /* start in the text */
    size_t n;      /* length in the text */
    int line, col;
    uint64_t u;    /* T_INT: magnitude (<= 2^63) */
    double f;      /* T_FLOAT */
} tok_t;

typedef struct reader {
    const char *p, *end;
    int line, col;
    tok_t t;             /* current token */
    tilec_arena_t *a;
    tilec_ir_kernel_t *k;
    tilec_irx_map_t vars, bufs, mbars;
    int minor;           /* the header's minor version */
    const tilec_ir_layout_t *lay; /* layout whose expressions are being read */
    char *err;
    size_t errlen;
    int failed;
} reader_t;

/* Records the first error as "LINE:COL: message"; later ones are dropped. */
void irr_fail_at(reader_t *r, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#define FAIL(r, ...) irr_fail_at((r), (r)->t.line, (r)->t.col, __VA_ARGS__)

/* ir_read.c: tokens */
void irr_next_tok(reader_t *r);
const char *irr_tok_desc(const tok_t *t, char *buf, size_t len);
int irr_is_punct(const reader_t *r, const char *p);
int irr_is_word(const reader_t *r, const char *w);
int irr_expect_punct(reader_t *r, const char *p);
int irr_expect_word(reader_t *r, const char *w);
char *irr_take_ident(reader_t *r, const char *what);
int irr_read_int(reader_t *r, int64_t lo, int64_t hi, int64_t *out, const char *what);
int irr_read_int32(reader_t *r, int *out, const char *what);
int irr_read_attr(reader_t *r, const char *name, int *out);
int irr_read_enum(reader_t *r, int (*lookup)(const char *), const char *what, int *out);
int irr_read_ref(reader_t *r, const tilec_irx_map_t *map, const char *what);
const char *irr_read_string(reader_t *r);
int irr_need_11(reader_t *r, const char *what);
/* ir_read.c: expressions, regions, statements */
tilec_ir_expr_t *irr_oom(reader_t *r);
tilec_ir_expr_t *irr_read_expr(reader_t *r, int depth);
tilec_ir_expr_t **irr_read_index_list(reader_t *r, int n, const char *bufname, int depth);
int irr_read_region(reader_t *r, tilec_ir_region_t *rg);
tilec_ir_stmt_t *irr_new_stmt(reader_t *r, tilec_stmt_kind_t kind);

/* ir_read_11.c */
int irr_read_attrs_opt(reader_t *r, int *n, tilec_ir_attr_t **list);
int irr_read_layout(reader_t *r, tilec_ir_buffer_t *b);
int irr_read_mbarrier(reader_t *r);
int irr_read_gemm_lead(reader_t *r, const tilec_ir_buffer_t *b, tilec_ir_expr_t ***lead);
tilec_ir_stmt_t *irr_read_stmt_11(reader_t *r, const char *kw);

#endif
