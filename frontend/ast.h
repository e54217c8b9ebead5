/*
 * frontend/ast.h — syntax tree of the tile-program subset of Python.
 *
 * The parser (parser.c) builds it from tokens (lexer.c); the evaluator
 * (eval.c) walks it to run the compile-time factory code and to build the
 * tile IR of the kernel.  Nodes carry their source position for diagnostics.
 * Ownership: all nodes, arrays and strings live in the arena passed to the
 * parser and die with it.
 */
#ifndef TILEC_FRONTEND_AST_H
#define TILEC_FRONTEND_AST_H

#include <stdint.h>
#include "tilec/ir.h"
#include "diag.h"

typedef struct ast_expr ast_expr_t;
typedef struct ast_stmt ast_stmt_t;

typedef struct ast_loc { int line, col, file; } ast_loc_t; /* 1-based; file: 0 the program, k the k-th imported sibling file (siblings.c) */

typedef enum ast_expr_kind {
    AST_NAME,       /* name */
    AST_INT,        /* ival (Python ints beyond int64 are a diagnostic) */
    AST_FLOAT,      /* fval */
    AST_STR,        /* str (escapes decoded) */
    AST_BOOL,       /* ival 0/1 */
    AST_NONE,
    AST_BINOP,      /* op: '+','-','*','/','%','@' or AST_OP_* below */
    AST_UNARY,      /* op: '-','+','~', AST_OP_NOT */
    AST_COMPARE,    /* chain: a0 op0 a1 op1 a2 ... (n operands, n-1 ops) */
    AST_BOOLOP,     /* op: AST_OP_AND / AST_OP_OR, two operands */
    AST_IFEXP,      /* a if cond else b */
    AST_CALL,       /* func(args..., kw=...) */
    AST_ATTR,       /* value.name */
    AST_SUBSCRIPT,  /* value[items...] (items may be AST_SLICE) */
    AST_SLICE,      /* lo:hi:step, each may be NULL */
    AST_TUPLE,      /* (a, b, ...) or a, b */
    AST_LIST,       /* [a, b, ...] */
    AST_STARRED,    /* *value (in calls and tuples) */
    AST_DICT,       /* {k: v, ...}: seq.items alternate key, value; seq.n = 2 * pairs */
    AST_COMP,       /* [elt for t in it if c ...], (elt for ...), {k: v for ...}: comp */
    AST_FSTRING,    /* f"...{x!r:>8}...": fstr (literal parts are AST_STR) */
    AST_LAMBDA      /* lambda params: body, as lam.def: a def "<lambda>" whose body returns it */
} ast_expr_kind_t;

enum {
    AST_OP_FLOORDIV = 256, /* // */
    AST_OP_POW,            /* ** */
    AST_OP_LSHIFT, AST_OP_RSHIFT, AST_OP_BITAND, AST_OP_BITOR, AST_OP_BITXOR,
    AST_OP_NOT, AST_OP_AND, AST_OP_OR,
    AST_OP_EQ, AST_OP_NE, AST_OP_LT, AST_OP_LE, AST_OP_GT, AST_OP_GE,
    AST_OP_IN, AST_OP_NOTIN, AST_OP_IS, AST_OP_ISNOT
};

/* One `for target in iter if c1 if c2` clause of a comprehension. */
typedef struct ast_comp_for { ast_expr_t *target, *iter; int nifs; ast_expr_t **ifs; } ast_comp_for_t;

typedef struct ast_keyword { const char *name; ast_expr_t *value; ast_loc_t loc; } ast_keyword_t;

struct ast_expr {
    ast_expr_kind_t kind;
    ast_loc_t loc;
    union {
        const char *name;                                        /* NAME */
        int64_t ival;                                            /* INT, BOOL */
        double fval;                                             /* FLOAT */
        struct { const char *s; size_t len; } str;               /* STR */
        struct { int op; ast_expr_t *a, *b; } bin;               /* BINOP, BOOLOP */
        struct { int op; ast_expr_t *a; } un;                    /* UNARY */
        struct { int n; ast_expr_t **operands; int *ops; } cmp;  /* COMPARE */
        struct { ast_expr_t *cond, *a, *b; } ifexp;              /* IFEXP */
        struct { ast_expr_t *func; int nargs; ast_expr_t **args;
                 int nkw; ast_keyword_t *kw; } call;             /* CALL */
        struct { ast_expr_t *value; const char *name; } attr;    /* ATTR */
        struct { ast_expr_t *value; int n; ast_expr_t **items; } sub; /* SUBSCRIPT */
        struct { ast_expr_t *lo, *hi, *step; } slice;            /* SLICE */
        struct { int n; ast_expr_t **items; } seq;               /* TUPLE, LIST, DICT */
        struct { ast_expr_t *value; } star;                      /* STARRED */
        struct { int bracket;            /* '[' list, '(' generator, '{' dict */
                 ast_expr_t *elt, *value; /* value: dict comprehensions only */
                 int nfor; ast_comp_for_t *fors; } comp;         /* COMP */
        struct { ast_stmt_t *def; } lam;                         /* LAMBDA */
        struct { int n; ast_expr_t **parts;
                 const char **specs;     /* [n]: format spec of an expression part, NULL for literals */
                 char *convs; } fstr;    /* [n]: 'r', 's', 'a' or 0 */     /* FSTRING */
    } u;
};

typedef struct ast_param {
    const char *name;
    ast_expr_t *annotation;   /* may be NULL */
    ast_expr_t *dflt;         /* default value, may be NULL */
    ast_loc_t loc;
} ast_param_t;

typedef struct ast_block { int n; ast_stmt_t **s; } ast_block_t;

typedef enum ast_stmt_kind {
    AST_S_EXPR,      /* expr */
    AST_S_ASSIGN,    /* targets[0] = targets[1] = ... = value */
    AST_S_AUGASSIGN, /* target op= value */
    AST_S_ANNASSIGN, /* target: annotation [= value] */
    AST_S_FOR,       /* for target in iter: body [else forbidden] */
    AST_S_WHILE,     /* parsed so the evaluator can reject it with a clear message */
    AST_S_IF,        /* if cond: body else: orelse (elif = nested IF in orelse) */
    AST_S_WITH,      /* with ctx as target: body (target may be NULL) */
    AST_S_CLASS,     /* class name[(bases)]: body, as def (no parameters, no decorators) */
    AST_S_DEF,       /* [decorators] def name(params): body */
    AST_S_RETURN,    /* return [value] */
    AST_S_PASS,
    AST_S_BREAK,
    AST_S_CONTINUE,
    AST_S_ASSERT,    /* assert cond [, msg] */
    AST_S_IMPORT,    /* import a.b [as c], ... ; from a import b [as c], ... */
    AST_S_RAISE,     /* raise [exc] (ret.value); a compile-time error with the exception's message */
} ast_stmt_kind_t;

typedef struct ast_import_name { const char *name; const char *asname; ast_loc_t loc; } ast_import_name_t;

struct ast_stmt {
    ast_stmt_kind_t kind;
    ast_loc_t loc;
    union {
        ast_expr_t *expr;                                             /* EXPR */
        struct { int ntargets; ast_expr_t **targets; ast_expr_t *value; } assign;
        struct { int op; ast_expr_t *target, *value; } aug;          /* op as in BINOP */
        struct { ast_expr_t *target, *annotation, *value; } ann;     /* value may be NULL */
        struct { ast_expr_t *target, *iter; ast_block_t body; } loop; /* FOR */
        struct { ast_expr_t *cond; ast_block_t body; } wloop;        /* WHILE */
        struct { ast_expr_t *cond; ast_block_t body, orelse; } cond; /* IF */
        struct { ast_expr_t *ctx, *target; ast_block_t body; } with; /* WITH, one item */
        struct { const char *name; int ndecorators; ast_expr_t **decorators;
                 int nparams; ast_param_t *params; ast_block_t body;
                 const char *vararg; } def;   /* vararg: the *NAME parameter, or NULL */
        struct { ast_expr_t *value; } ret;                           /* may be NULL */
        struct { ast_expr_t *cond, *msg; } assert_;                  /* msg may be NULL */
        struct { const char *from; /* NULL for plain import */
                 int n; ast_import_name_t *names; } import;
    } u;
};

typedef struct ast_module {
    const char *path;          /* as given, for diagnostics */
    ast_block_t body;
} ast_module_t;

/* Parse a whole file.  Returns 0 and *out on success; on error reports one
 * diagnostic to d (FILE:LINE:COL: error: ...) and returns -1.  Never
 * crashes on any input: binary data, invalid UTF-8, deep nesting (a depth
 * limit turns it into a diagnostic) and huge files included. */
int tilec_parse(tilec_arena_t *a, tilec_diag_t *d, const char *path,
                const char *src, size_t len, ast_module_t **out);
/* The memory budget of one compilation: the syntax tree and the evaluator's
 * compile-time values share it (both live in the evaluator's scratch
 * arena).  tilec_parse stops with a diagnostic that gives the file's size
 * when the arena a passes max_bytes (tilec_parse: TILEC_FRONTEND_MAX_BYTES). */
#ifdef TILEC_FUZZ_BUDGETS /* the fuzz build's smaller budget (eval_internal.h) */
#define TILEC_FRONTEND_MAX_BYTES ((size_t)32 << 20)
#else
#define TILEC_FRONTEND_MAX_BYTES ((size_t)256 << 20)
#endif
/* tilec_parse for an imported sibling file: every location it records carries file. */
int tilec_parse_file(tilec_arena_t *a, tilec_diag_t *d, const char *path, const char *src, size_t len, int file,
                     ast_module_t **out);
int tilec_parse_limited(tilec_arena_t *a, tilec_diag_t *d, const char *path,
                        const char *src, size_t len, size_t max_bytes, ast_module_t **out);

#endif
