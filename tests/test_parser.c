/*
 * tests/test_parser.c — the parser of the tile-program subset.
 *
 * Trees are compared through a compact S-expression dump (dump_* below):
 *   expressions  x  42  1.5  "s"  True  None  (+ a b)  (neg a)  (not a)
 *                (cmp a < b)  (and a b)  (ifexp c a b)  (call f a k=v)
 *                (. v name)  ([] v i j)  (: lo hi step)  (tuple ..)
 *                (list ..)  (* v)  (dict k v ..)          ('_' = absent)
 *   statements   (expr e)  (= t.. v)  (+= t v)  (ann t a v)  (for t it [..])
 *                (while c [..])  (if c [..] [..])  (with c t [..])
 *                (def name (@ ..) ((p ann dflt) ..) [..])  (return v)
 *                pass break continue  (assert c m)  (import from a:as ..)
 * Errors are checked by the exact first line of the diagnostic.  The
 * robustness tests feed deep nesting, a 5 MB program, random bytes,
 * mutated and truncated programs.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"

/* ---- dumping -------------------------------------------------------------- */

typedef struct sbuf { char *p; size_t len, cap; } sbuf_t;

static void put(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = (b->len + (size_t)n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        cr_assert(b->p);
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static const char *op_name(int op)
{
    static char one[2];
    switch (op) {
    case AST_OP_FLOORDIV: return "//";
    case AST_OP_POW: return "**";
    case AST_OP_LSHIFT: return "<<";
    case AST_OP_RSHIFT: return ">>";
    case AST_OP_BITAND: return "&";
    case AST_OP_BITOR: return "|";
    case AST_OP_BITXOR: return "^";
    case AST_OP_EQ: return "==";
    case AST_OP_NE: return "!=";
    case AST_OP_LT: return "<";
    case AST_OP_LE: return "<=";
    case AST_OP_GT: return ">";
    case AST_OP_GE: return ">=";
    case AST_OP_IN: return "in";
    case AST_OP_NOTIN: return "not-in";
    case AST_OP_IS: return "is";
    case AST_OP_ISNOT: return "is-not";
    default:
        one[0] = (char)op;
        one[1] = '\0';
        return one;
    }
}

static void dump_expr(sbuf_t *b, const ast_expr_t *e);

static void dump_opt(sbuf_t *b, const ast_expr_t *e)
{
    if (e)
        dump_expr(b, e);
    else
        put(b, "_");
}

static void dump_list(sbuf_t *b, int n, ast_expr_t *const *items)
{
    for (int i = 0; i < n; i++) {
        put(b, " ");
        dump_expr(b, items[i]);
    }
}

static void dump_expr(sbuf_t *b, const ast_expr_t *e)
{
    switch (e->kind) {
    case AST_NAME: put(b, "%s", e->u.name); break;
    case AST_INT: put(b, "%lld", (long long)e->u.ival); break;
    case AST_FLOAT: put(b, "%g", e->u.fval); break;
    case AST_STR:
        put(b, "\"");
        for (size_t i = 0; i < e->u.str.len; i++) {
            unsigned char c = (unsigned char)e->u.str.s[i];
            if (c < 0x20 || c == '"' || c >= 0x7f)
                put(b, "\\x%02x", c);
            else
                put(b, "%c", c);
        }
        put(b, "\"");
        break;
    case AST_BOOL: put(b, e->u.ival ? "True" : "False"); break;
    case AST_NONE: put(b, "None"); break;
    case AST_BINOP:
        put(b, "(%s ", op_name(e->u.bin.op));
        dump_expr(b, e->u.bin.a);
        put(b, " ");
        dump_expr(b, e->u.bin.b);
        put(b, ")");
        break;
    case AST_BOOLOP:
        put(b, "(%s ", e->u.bin.op == AST_OP_AND ? "and" : "or");
        dump_expr(b, e->u.bin.a);
        put(b, " ");
        dump_expr(b, e->u.bin.b);
        put(b, ")");
        break;
    case AST_UNARY:
        put(b, "(%s ", e->u.un.op == '-' ? "neg" : e->u.un.op == '+' ? "pos" : e->u.un.op == '~' ? "inv" : "not");
        dump_expr(b, e->u.un.a);
        put(b, ")");
        break;
    case AST_COMPARE:
        put(b, "(cmp ");
        dump_expr(b, e->u.cmp.operands[0]);
        for (int i = 1; i < e->u.cmp.n; i++) {
            put(b, " %s ", op_name(e->u.cmp.ops[i - 1]));
            dump_expr(b, e->u.cmp.operands[i]);
        }
        put(b, ")");
        break;
    case AST_IFEXP:
        put(b, "(ifexp ");
        dump_expr(b, e->u.ifexp.cond);
        put(b, " ");
        dump_expr(b, e->u.ifexp.a);
        put(b, " ");
        dump_expr(b, e->u.ifexp.b);
        put(b, ")");
        break;
    case AST_CALL:
        put(b, "(call ");
        dump_expr(b, e->u.call.func);
        dump_list(b, e->u.call.nargs, e->u.call.args);
        for (int i = 0; i < e->u.call.nkw; i++) {
            put(b, " %s=", e->u.call.kw[i].name);
            dump_expr(b, e->u.call.kw[i].value);
        }
        put(b, ")");
        break;
    case AST_ATTR:
        put(b, "(. ");
        dump_expr(b, e->u.attr.value);
        put(b, " %s)", e->u.attr.name);
        break;
    case AST_SUBSCRIPT:
        put(b, "([] ");
        dump_expr(b, e->u.sub.value);
        dump_list(b, e->u.sub.n, e->u.sub.items);
        put(b, ")");
        break;
    case AST_SLICE:
        put(b, "(: ");
        dump_opt(b, e->u.slice.lo);
        put(b, " ");
        dump_opt(b, e->u.slice.hi);
        put(b, " ");
        dump_opt(b, e->u.slice.step);
        put(b, ")");
        break;
    case AST_TUPLE: put(b, "(tuple"); dump_list(b, e->u.seq.n, e->u.seq.items); put(b, ")"); break;
    case AST_LIST: put(b, "(list"); dump_list(b, e->u.seq.n, e->u.seq.items); put(b, ")"); break;
    case AST_DICT: put(b, "(dict"); dump_list(b, e->u.seq.n, e->u.seq.items); put(b, ")"); break;
    case AST_STARRED: put(b, "(* "); dump_expr(b, e->u.star.value); put(b, ")"); break;
    case AST_LAMBDA:
        put(b, "(lambda");
        for (int i = 0; i < e->u.lam.def->u.def.nparams; i++) {
            put(b, " ");
            put(b, "%s", e->u.lam.def->u.def.params[i].name);
        }
        if (e->u.lam.def->u.def.vararg)
            put(b, " *%s", e->u.lam.def->u.def.vararg);
        put(b, " ");
        dump_expr(b, e->u.lam.def->u.def.body.s[0]->u.ret.value);
        put(b, ")");
        break;
    case AST_FSTRING:
        put(b, "(fstr");
        for (int i = 0; i < e->u.fstr.n; i++) {
            put(b, " ");
            dump_expr(b, e->u.fstr.parts[i]);
            if (e->u.fstr.specs[i] && (e->u.fstr.specs[i][0] || e->u.fstr.convs[i])) {
                char cv[2] = {e->u.fstr.convs[i], 0};
                put(b, "!");
                put(b, "%s", cv);
                put(b, ":");
                put(b, "%s", e->u.fstr.specs[i]);
            }
        }
        put(b, ")");
        break;
    case AST_COMP: {
        char br[2] = {(char)e->u.comp.bracket, 0};
        put(b, "(comp");
        put(b, "%s", br);
        put(b, " ");
        dump_expr(b, e->u.comp.elt);
        if (e->u.comp.value) {
            put(b, " ");
            dump_expr(b, e->u.comp.value);
        }
        for (int i = 0; i < e->u.comp.nfor; i++) {
            put(b, " (for ");
            dump_expr(b, e->u.comp.fors[i].target);
            put(b, " ");
            dump_expr(b, e->u.comp.fors[i].iter);
            for (int j = 0; j < e->u.comp.fors[i].nifs; j++) {
                put(b, " (if ");
                dump_expr(b, e->u.comp.fors[i].ifs[j]);
                put(b, ")");
            }
            put(b, ")");
        }
        put(b, ")");
        break;
    }
    }
}

static void dump_block(sbuf_t *b, const ast_block_t *blk);

static void dump_stmt(sbuf_t *b, const ast_stmt_t *s)
{
    switch (s->kind) {
    case AST_S_EXPR: put(b, "(expr "); dump_expr(b, s->u.expr); put(b, ")"); break;
    case AST_S_ASSIGN:
        put(b, "(=");
        dump_list(b, s->u.assign.ntargets, s->u.assign.targets);
        put(b, " ");
        dump_expr(b, s->u.assign.value);
        put(b, ")");
        break;
    case AST_S_AUGASSIGN:
        put(b, "(%s= ", op_name(s->u.aug.op));
        dump_expr(b, s->u.aug.target);
        put(b, " ");
        dump_expr(b, s->u.aug.value);
        put(b, ")");
        break;
    case AST_S_ANNASSIGN:
        put(b, "(ann ");
        dump_expr(b, s->u.ann.target);
        put(b, " ");
        dump_expr(b, s->u.ann.annotation);
        put(b, " ");
        dump_opt(b, s->u.ann.value);
        put(b, ")");
        break;
    case AST_S_FOR:
        put(b, "(for ");
        dump_expr(b, s->u.loop.target);
        put(b, " ");
        dump_expr(b, s->u.loop.iter);
        put(b, " ");
        dump_block(b, &s->u.loop.body);
        put(b, ")");
        break;
    case AST_S_WHILE:
        put(b, "(while ");
        dump_expr(b, s->u.wloop.cond);
        put(b, " ");
        dump_block(b, &s->u.wloop.body);
        put(b, ")");
        break;
    case AST_S_IF:
        put(b, "(if ");
        dump_expr(b, s->u.cond.cond);
        put(b, " ");
        dump_block(b, &s->u.cond.body);
        put(b, " ");
        dump_block(b, &s->u.cond.orelse);
        put(b, ")");
        break;
    case AST_S_WITH:
        put(b, "(with ");
        dump_expr(b, s->u.with.ctx);
        put(b, " ");
        dump_opt(b, s->u.with.target);
        put(b, " ");
        dump_block(b, &s->u.with.body);
        put(b, ")");
        break;
    case AST_S_CLASS:
        put(b, "(class %s ", s->u.def.name);
        dump_block(b, &s->u.def.body);
        put(b, ")");
        break;
    case AST_S_DEF:
        put(b, "(def %s (@", s->u.def.name);
        dump_list(b, s->u.def.ndecorators, s->u.def.decorators);
        put(b, ") (");
        for (int i = 0; i < s->u.def.nparams; i++) {
            const ast_param_t *pm = &s->u.def.params[i];
            put(b, "%s(%s ", i ? " " : "", pm->name);
            dump_opt(b, pm->annotation);
            put(b, " ");
            dump_opt(b, pm->dflt);
            put(b, ")");
        }
        put(b, ") ");
        dump_block(b, &s->u.def.body);
        put(b, ")");
        break;
    case AST_S_RETURN: put(b, "(return "); dump_opt(b, s->u.ret.value); put(b, ")"); break;
    case AST_S_RAISE: put(b, "(raise "); dump_opt(b, s->u.ret.value); put(b, ")"); break;
    case AST_S_PASS: put(b, "pass"); break;
    case AST_S_BREAK: put(b, "break"); break;
    case AST_S_CONTINUE: put(b, "continue"); break;
    case AST_S_ASSERT:
        put(b, "(assert ");
        dump_expr(b, s->u.assert_.cond);
        put(b, " ");
        dump_opt(b, s->u.assert_.msg);
        put(b, ")");
        break;
    case AST_S_IMPORT:
        put(b, "(import %s", s->u.import.from ? s->u.import.from : "_");
        for (int i = 0; i < s->u.import.n; i++)
            put(b, " %s:%s", s->u.import.names[i].name,
                s->u.import.names[i].asname ? s->u.import.names[i].asname : "_");
        put(b, ")");
        break;
    }
}

static void dump_block(sbuf_t *b, const ast_block_t *blk)
{
    put(b, "[");
    for (int i = 0; i < blk->n; i++) {
        if (i)
            put(b, " ");
        dump_stmt(b, blk->s[i]);
    }
    put(b, "]");
}

/* ---- helpers -------------------------------------------------------------- */

typedef struct parsed {
    tilec_arena_t arena;
    tilec_diag_t diag;
    ast_module_t *m;
    int rc;
} parsed_t;

static void parse_len(parsed_t *P, const char *src, size_t len)
{
    tilec_arena_init(&P->arena);
    tilec_diag_init(&P->diag, "t.py", src, len);
    P->m = NULL;
    P->rc = tilec_parse(&P->arena, &P->diag, "t.py", src, len, &P->m);
}

static void parse(parsed_t *P, const char *src)
{
    parse_len(P, src, strlen(src));
}

static void done(parsed_t *P)
{
    tilec_arena_destroy(&P->arena);
}

/* Parses src, checks success and returns the dump of the module body
 * (malloc'd). */
static char *dump_src(const char *src)
{
    parsed_t P;
    parse(&P, src);
    cr_assert_eq(P.rc, 0, "parse of\n%s\nfailed: %s", src, tilec_diag_text(&P.diag));
    cr_assert(P.m);
    sbuf_t b = { 0 };
    put(&b, "%s", "");
    dump_block(&b, &P.m->body);
    done(&P);
    return b.p;
}

#define EXPECT_AST(src, want)                                                    \
    do {                                                                         \
        char *got_ = dump_src(src);                                              \
        cr_expect_str_eq(got_, want, "tree of %s: %s", #src, got_);                        \
        free(got_);                                                              \
    } while (0)

/* The tree of a single expression statement. */
#define EXPECT_EXPR(src, want) EXPECT_AST(src, "[(expr " want ")]")

static void expect_error_len(const char *src, size_t len, int line, int col, const char *msg)
{
    parsed_t P;
    parse_len(&P, src, len);
    cr_expect_eq(P.rc, -1, "expected an error parsing\n%s", src);
    char want[600];
    snprintf(want, sizeof want, "t.py:%d:%d: error: %s\n", line, col, msg);
    const char *text = tilec_diag_text(&P.diag);
    cr_expect(strncmp(text, want, strlen(want)) == 0, "diagnostic for\n%s\nis\n%s\nexpected to start with\n%s", src,
              text, want);
    done(&P);
}

static void expect_error(const char *src, int line, int col, const char *msg)
{
    expect_error_len(src, strlen(src), line, col, msg);
}

/* ---- expressions ---------------------------------------------------------- */

Test(parser, atoms)
{
    EXPECT_EXPR("x", "x");
    EXPECT_EXPR("42", "42");
    EXPECT_EXPR("1.5", "1.5");
    EXPECT_EXPR("'a' \"b\" '''c'''", "\"abc\"");
    EXPECT_EXPR("True", "True");
    EXPECT_EXPR("False", "False");
    EXPECT_EXPR("None", "None");
    EXPECT_EXPR("()", "(tuple)");
    EXPECT_EXPR("(a)", "a");
    EXPECT_EXPR("(a,)", "(tuple a)");
    EXPECT_EXPR("(a, b,)", "(tuple a b)");
    EXPECT_EXPR("[]", "(list)");
    EXPECT_EXPR("[1, 2,]", "(list 1 2)");
    EXPECT_EXPR("{}", "(dict)");
    EXPECT_EXPR("{1: 'a', k: v,}", "(dict 1 \"a\" k v)");
    EXPECT_EXPR("a, b", "(tuple a b)");
    EXPECT_EXPR("a,", "(tuple a)");
    EXPECT_EXPR("(\n  a,\n  b\n)", "(tuple a b)");
}

Test(parser, precedence)
{
    EXPECT_EXPR("a + b * c", "(+ a (* b c))");
    EXPECT_EXPR("a - b - c", "(- (- a b) c)");
    EXPECT_EXPR("a ** b ** c", "(** a (** b c))");
    EXPECT_EXPR("-x ** 2", "(neg (** x 2))");
    EXPECT_EXPR("2 ** -1", "(** 2 (neg 1))");
    EXPECT_EXPR("-a * b", "(* (neg a) b)");
    EXPECT_EXPR("~a + +b", "(+ (inv a) (pos b))");
    EXPECT_EXPR("a // b % c @ d / e", "(/ (@ (% (// a b) c) d) e)");
    EXPECT_EXPR("a | b ^ c & d << e + f", "(| a (^ b (& c (<< d (+ e f)))))");
    EXPECT_EXPR("a >> 1 << 2", "(<< (>> a 1) 2)");
    EXPECT_EXPR("not a == b", "(not (cmp a == b))");
    EXPECT_EXPR("a or b and not c", "(or a (and b (not c)))");
    EXPECT_EXPR("a and b and c", "(and (and a b) c)");
    EXPECT_EXPR("a < b <= c != d", "(cmp a < b <= c != d)");
    EXPECT_EXPR("a in b", "(cmp a in b)");
    EXPECT_EXPR("a not in b", "(cmp a not-in b)");
    EXPECT_EXPR("a is b", "(cmp a is b)");
    EXPECT_EXPR("a is not None", "(cmp a is-not None)");
    EXPECT_EXPR("a + 1 > b * 2", "(cmp (+ a 1) > (* b 2))");
    EXPECT_EXPR("a if c else b", "(ifexp c a b)");
    EXPECT_EXPR("a if c else b if d else e", "(ifexp c a (ifexp d b e))");
    EXPECT_EXPR("x or y if p and q else z", "(ifexp (and p q) (or x y) z)");
    EXPECT_EXPR("(a + b) * c", "(* (+ a b) c)");
    EXPECT_EXPR("-(-x)", "(neg (neg x))");
    EXPECT_EXPR("not not x", "(not (not x))");
}

Test(parser, primaries)
{
    EXPECT_EXPR("f()", "(call f)");
    EXPECT_EXPR("T.Kernel(a, b, threads=128)", "(call (. T Kernel) a b threads=128)");
    EXPECT_EXPR("f(a, *dims, k=1,)", "(call f a (* dims) k=1)");
    EXPECT_EXPR("T.Parallel(*extents)", "(call (. T Parallel) (* extents))");
    EXPECT_EXPR("a.b.c(d)(e)", "(call (call (. (. a b) c) d) e)");
    EXPECT_EXPR("A[i]", "([] A i)");
    EXPECT_EXPR("A[i, j]", "([] A i j)");
    EXPECT_EXPR("A[i, j,]", "([] A i j)");
    EXPECT_EXPR("A[(i, j)]", "([] A (tuple i j))");
    EXPECT_EXPR("A[a:b, c]", "([] A (: a b _) c)");
    EXPECT_EXPR("A[:, 0]", "([] A (: _ _ _) 0)");
    EXPECT_EXPR("A[1:]", "([] A (: 1 _ _))");
    EXPECT_EXPR("A[::2]", "([] A (: _ _ 2))");
    EXPECT_EXPR("A[a:b:c]", "([] A (: a b c))");
    EXPECT_EXPR("A[:n, k * bk:(k + 1) * bk]", "([] A (: _ n _) (: (* k bk) (* (+ k 1) bk) _))");
    EXPECT_EXPR("A[i][j].shape[0]", "([] (. ([] ([] A i) j) shape) 0)");
    EXPECT_EXPR("x.astype(T.float16)", "(call (. x astype) (. T float16))");
    EXPECT_EXPR("tilelang.jit(out_idx=[-1])", "(call (. tilelang jit) out_idx=(list (neg 1)))");
    EXPECT_EXPR("f(*a)", "(call f (* a))");
}

/* ---- statements ----------------------------------------------------------- */

Test(parser, assignments)
{
    EXPECT_AST("a = 1\n", "[(= a 1)]");
    EXPECT_AST("a = b = c\n", "[(= a b c)]");
    EXPECT_AST("a, b = b, a\n", "[(= (tuple a b) (tuple b a))]");
    EXPECT_AST("(a, b) = [c, d] = t\n", "[(= (tuple a b) (list c d) t)]");
    EXPECT_AST("A[i, j] = x.y = 0\n", "[(= ([] A i j) (. x y) 0)]");
    EXPECT_AST("a += 1\nb -= 2\nc *= 3\nd /= 4\ne //= 5\nf %= 6\ng **= 7\nh @= m\ni &= 1\nj |= 1\nk ^= 1\n"
               "l <<= 1\nm >>= 1\n",
               "[(+= a 1) (-= b 2) (*= c 3) (/= d 4) (//= e 5) (%= f 6) (**= g 7) (@= h m) (&= i 1) (|= j 1) "
               "(^= k 1) (<<= l 1) (>>= m 1)]");
    EXPECT_AST("C[i] += A[i] * B[i]\n", "[(+= ([] C i) (* ([] A i) ([] B i)))]");
    EXPECT_AST("x: int = 5\ny: T.float32\nself.z: int = 1\n",
               "[(ann x int 5) (ann y (. T float32) _) (ann (. self z) int 1)]");
    EXPECT_AST("shape = batch, seq, heads\n", "[(= shape (tuple batch seq heads))]");
    EXPECT_AST("a = 1; b = 2;\n", "[(= a 1) (= b 2)]");
    EXPECT_AST("x = *a, b\n", "[(= x (tuple (* a) b))]");
}

Test(parser, compound)
{
    EXPECT_AST("for i in range(10):\n    x = i\n", "[(for i (call range 10) [(= x i)])]");
    EXPECT_AST("for i, j in T.Parallel(M, N):\n    C[i, j] = 0\n",
               "[(for (tuple i j) (call (. T Parallel) M N) [(= ([] C i j) 0)])]");
    EXPECT_AST("for (i, j) in x: pass\n", "[(for (tuple i j) x [pass])]");
    EXPECT_AST("for k in T.Pipelined(n, num_stages=3):\n    pass\n",
               "[(for k (call (. T Pipelined) n num_stages=3) [pass])]");
    EXPECT_AST("while i < n:\n    i += 1\n    break\n    continue\n", "[(while (cmp i < n) [(+= i 1) break continue])]");
    EXPECT_AST("if a:\n    x\nelif b:\n    y\nelif c:\n    z\nelse:\n    w\n",
               "[(if a [(expr x)] [(if b [(expr y)] [(if c [(expr z)] [(expr w)])])])]");
    EXPECT_AST("if a: x = 1\nelse: x = 2\n", "[(if a [(= x 1)] [(= x 2)])]");
    EXPECT_AST("if a:\n    if b:\n        pass\n    else:\n        pass\nc\n",
               "[(if a [(if b [pass] [pass])] []) (expr c)]");
    EXPECT_AST("with T.Kernel(n, threads=128) as bx:\n    pass\n",
               "[(with (call (. T Kernel) n threads=128) bx [pass])]");
    EXPECT_AST("with T.Kernel(a, b) as (bx, by):\n    pass\n", "[(with (call (. T Kernel) a b) (tuple bx by) [pass])]");
    EXPECT_AST("with T.Kernel(a, b, c) as bx, by, bz:\n    pass\n",
               "[(with (call (. T Kernel) a b c) (tuple bx by bz) [pass])]");
    EXPECT_AST("with ctx():\n    pass\n", "[(with (call ctx) _ [pass])]");
    EXPECT_AST("class C(object):\n    x = 1\n    def f(self):\n        return self.x\n",
               "[(class C [(= x 1) (def f (@) ((self _ _)) [(return (. self x))])])]");
    /* several context managers: nested with statements */
    EXPECT_AST("with x as a, g():\n    pass\n", "[(with x a [(with (call g) _ [pass])])]");
    EXPECT_AST("with a, b, c:\n    pass\n", "[(with a _ [(with b _ [(with c _ [pass])])])]");
    EXPECT_AST("with T.Kernel(a, b) as bx, by, r():\n    pass\n",
               "[(with (call (. T Kernel) a b) (tuple bx by) [(with (call r) _ [pass])])]");
}

Test(parser, defs)
{
    EXPECT_AST("def f():\n    pass\n", "[(def f (@) () [pass])]");
    EXPECT_AST("def f(a, d: T.Tensor((M, K), dtype), b=2, c: int = 3,):\n    return a\n",
               "[(def f (@) ((a _ _) (d (call (. T Tensor) (tuple M K) dtype) _) (b _ 2) (c int 3)) [(return a)])]");
    EXPECT_AST("@tilelang.jit(out_idx=[-1])\n@T.prim_func\ndef main(A) -> None:\n    \"\"\"doc\"\"\"\n    return\n",
               "[(def main (@ (call (. tilelang jit) out_idx=(list (neg 1))) (. T prim_func)) ((A _ _)) "
               "[(expr \"doc\") (return _)])]");
    EXPECT_AST("def f(): ...\n", "[(def f (@) () [pass])]");
    EXPECT_AST("def f():\n    return a, b\n", "[(def f (@) () [(return (tuple a b))])]");
    EXPECT_AST("def outer(M):\n    @T.macro\n    def inner(x):\n        return x * M\n    return inner\n",
               "[(def outer (@) ((M _ _)) [(def inner (@ (. T macro)) ((x _ _)) [(return (* x M))]) (return inner)])]");
}

Test(parser, simple_statements)
{
    EXPECT_AST("pass\n", "[pass]");
    EXPECT_AST("assert x > 0\nassert y, 'msg'\n", "[(assert (cmp x > 0) _) (assert y \"msg\")]");
    EXPECT_AST("import tilelang\nimport tilelang.language as T, os.path\n",
               "[(import _ tilelang:_) (import _ tilelang.language:T os.path:_)]");
    EXPECT_AST("from tilelang import language as T, jit\n", "[(import tilelang language:T jit:_)]");
    EXPECT_AST("from a.b import (c,\n    d as e,)\n", "[(import a.b c:_ d:e)]");
    EXPECT_AST("from x import *\n", "[(import x *:_)]");
    EXPECT_AST("\"\"\"Module docstring.\"\"\"\nx = 1\n", "[(expr \"Module docstring.\") (= x 1)]");
    EXPECT_AST("T.clear(C)\n", "[(expr (call (. T clear) C))]");
}

/* ---- positions ------------------------------------------------------------ */

Test(parser, positions)
{
    const char *src = "x = 1\n"
                      "def f(a, b):\n"
                      "    y = T.copy(A[i, j], a + b * c)\n"
                      "    if y < 2 and z:\n"
                      "        return -y\n";
    parsed_t P;
    parse(&P, src);
    cr_assert_eq(P.rc, 0, "%s", tilec_diag_text(&P.diag));
    ast_stmt_t *def = P.m->body.s[1];
    cr_expect_eq(def->loc.line, 2);
    cr_expect_eq(def->loc.col, 1);
    cr_expect_eq(def->u.def.params[1].loc.line, 2);
    cr_expect_eq(def->u.def.params[1].loc.col, 10);
    ast_stmt_t *asg = def->u.def.body.s[0];
    cr_expect_eq(asg->loc.line, 3);
    cr_expect_eq(asg->loc.col, 5);
    ast_expr_t *call = asg->u.assign.value;
    cr_expect_eq(call->kind, AST_CALL);
    cr_expect_eq(call->loc.col, 9, "call at the start of its function expression");
    cr_expect_eq(call->u.call.func->loc.col, 11, "attribute at its name");
    ast_expr_t *sub = call->u.call.args[0];
    cr_expect_eq(sub->loc.col, 17, "subscript at '['");
    ast_expr_t *add = call->u.call.args[1];
    cr_expect_eq(add->loc.col, 27, "binop at its operator");
    cr_expect_eq(add->u.bin.a->loc.col, 25);
    cr_expect_eq(add->u.bin.b->loc.col, 31, "binop at its operator");
    ast_stmt_t *ifs = def->u.def.body.s[1];
    cr_expect_eq(ifs->loc.line, 4);
    cr_expect_eq(ifs->u.cond.cond->loc.col, 14, "boolop at 'and'");
    cr_expect_eq(ifs->u.cond.cond->u.bin.a->loc.col, 10, "compare at its operator");
    ast_stmt_t *ret = ifs->u.cond.body.s[0];
    cr_expect_eq(ret->loc.line, 5);
    cr_expect_eq(ret->loc.col, 9);
    cr_expect_eq(ret->u.ret.value->loc.col, 16);
    done(&P);
}

/* ---- errors --------------------------------------------------------------- */

Test(parser, syntax_errors)
{
    expect_error("for x in y\n    pass\n", 1, 11, "expected ':' after for clause, found NEWLINE");
    expect_error("if x\n", 1, 5, "expected ':' after if condition, found NEWLINE");
    expect_error("while x y:\n", 1, 9, "expected ':' after while condition, found name 'y'");
    expect_error("def f(a b):\n", 1, 9, "expected ',' or ')' in parameter list, found name 'b'");
    expect_error("def (a):\n", 1, 5, "expected function name after 'def', found '('");
    expect_error("def f:\n", 1, 6, "expected '(' after function name, found ':'");
    expect_error("x = \n", 1, 4, "expected expression, found NEWLINE");
    expect_error("x = 1 +\n", 1, 8, "expected expression, found NEWLINE");
    expect_error("x = (1 2)\n", 1, 8, "expected ',' or ')', found number '2'");
    expect_error("f(a b)\n", 1, 5, "expected ',' or ')' after argument, found name 'b'");
    expect_error("A[1 2]\n", 1, 5, "expected ',' or ']' in subscript, found number '2'");
    expect_error("A[]\n", 1, 3, "expected index or slice inside '[]', found ']'");
    expect_error("x = [1 2]\n", 1, 8, "expected ',' or ']' in list, found number '2'");
    expect_error("x = {1: 2 3}\n", 1, 11, "expected ',' or '}' in dict, found number '3'");
    expect_error("x = {1 2}\n", 1, 8, "expected ':' after dict key, found number '2'");
    expect_error("x = 1 y = 2\n", 1, 7, "expected NEWLINE or ';' after statement, found name 'y'");
    expect_error("if x:\npass\n", 2, 1, "expected an indented block after 'if' statement on line 1, found keyword 'pass'");
    expect_error("def f():\n", 1, 9, "expected an indented block after function definition on line 1, found end of file");
    expect_error("for i in x:\n    pass\nelse:\n    pass\n", 3, 1,
                 "'else' on a 'for' loop is not supported in tile programs");
    expect_error("while x:\n    pass\nelse:\n    pass\n", 3, 1,
                 "'else' on a 'while' loop is not supported in tile programs");
    expect_error("  x = 1\n", 1, 3, "unexpected indent");
    expect_error("x = 1\n    y = 2\n", 2, 5, "unexpected indent");
    expect_error("else:\n    pass\n", 1, 1, "'else' without a matching 'if' (check the indentation)");
    expect_error("x = a if b\n", 1, 11, "expected 'else' in conditional expression, found NEWLINE");
    expect_error("x = a not b\n", 1, 11, "expected 'in' after 'not' in comparison, found name 'b'");
    expect_error("x.1\n", 1, 2, "expected NEWLINE or ';' after statement, found number '.1'");
    expect_error("x. if\n", 1, 4, "expected attribute name after '.', found keyword 'if'");
    expect_error("x = f(a=1, b)\n", 1, 12, "positional argument follows keyword argument");
    expect_error("f(a.b=1)\n", 1, 6, "expected a parameter name before '=' in keyword argument");
    expect_error("def f(a=1, b):\n    pass\n", 1, 12,
                 "parameter 'b' without a default follows a parameter with a default");
    expect_error("@dec\nx = 1\n", 2, 1, "expected 'def' after decorator, found name 'x'");
    expect_error("if x: for y in z: pass\n", 1, 7,
                 "expected a simple statement on the same line as ':' (a compound statement must start a new line), "
                 "found keyword 'for'");
    expect_error("from . import x\n", 1, 6, "relative import is not supported in tile programs");
    expect_error("from a impor b\n", 1, 8, "expected 'import' after module name, found name 'impor'");
    expect_error("import\n", 1, 7, "expected module name after 'import', found NEWLINE");
    expect_error("x = 1 +\n", 1, 8, "expected expression, found NEWLINE");
    expect_error("f(x,\n  y\nz = 1\n", 3, 1,
                 "expected ',' or ')' after argument, found name 'z' (is the '(' on line 1 missing its ')'?)");
    /* no hint when the line is a continuation, indented further */
    expect_error("if a:\n    f(x,\n      y z)\n", 3, 9, "expected ',' or ')' after argument, found name 'z'");
    expect_error("if a:\n    T.clear(C\n    for k in x:\n", 3, 5,
                 "unexpected 'for' inside brackets (is the '(' on line 2 missing its ')'?)");
    expect_error("x = )\n", 1, 5, "unmatched ')'");
    expect_error("return return\n", 1, 8, "expected NEWLINE or ';' after statement, found keyword 'return'");
}

Test(parser, bad_targets)
{
    expect_error("f() = 1\n", 1, 1, "cannot assign to a function call in an assignment");
    expect_error("1 = x\n", 1, 1, "cannot assign to a literal in an assignment");
    expect_error("a + b = c\n", 1, 3, "cannot assign to an expression in an assignment");
    expect_error("a, f() = c\n", 1, 4, "cannot assign to a function call in an assignment");
    expect_error("None = 1\n", 1, 1, "cannot assign to None in an assignment");
    expect_error("for f() in x:\n    pass\n", 1, 5, "cannot assign to a function call in a for loop");
    expect_error("for a, *b in x:\n    pass\n", 1, 8, "starred targets are not supported in tile programs");
    expect_error("a, b += 1\n", 1, 1, "only a single target (not a tuple or list) is allowed in an augmented assignment");
    expect_error("f() += 1\n", 1, 1, "cannot assign to a function call in an augmented assignment");
    expect_error("a, b: int\n", 1, 1, "only a single target (not a tuple or list) is allowed in an annotated assignment");
    expect_error("with x as f():\n    pass\n", 1, 11, "cannot assign to a function call in a with statement");
    expect_error("with x as a, y as b:\n    pass\n", 1, 16,
                 "'as' after the first of several context managers is not supported in tile programs");
    expect_error("() = x\n", 1, 1, "cannot assign to () in an assignment");
}

Test(parser, comprehensions)
{
    EXPECT_EXPR("[i * 2 for i in y]", "(comp[ (* i 2) (for i y))");
    EXPECT_EXPR("(a for a, b in z if a if b)", "(comp( a (for (tuple a b) z (if a) (if b)))");
    EXPECT_EXPR("{k: v for k in a for v in b}", "(comp{ k v (for k a) (for v b))");
    EXPECT_EXPR("sum(x for x in r)", "(call sum (comp( x (for x r)))");
    EXPECT_EXPR("[\n    a\n    for a in b]", "(comp[ a (for a b))");
}

Test(parser, lambda_and_raise)
{
    EXPECT_EXPR("lambda: 1", "(lambda 1)");
    EXPECT_EXPR("sorted(c, key=lambda x, y=2: x * y)", "(call sorted c key=(lambda x y (* x y)))");
    EXPECT_EXPR("lambda *args: args", "(lambda *args args)");
    EXPECT_EXPR("lambda a, *rest,: rest", "(lambda a *rest rest)");
    EXPECT_AST("raise ValueError(f'bad {n}') from e\n", "[(raise (call ValueError (fstr \"bad \" n)))]");
    EXPECT_AST("raise\n", "[(raise _)]");
}

Test(parser, fstrings)
{
    EXPECT_EXPR("f'a{x}b'", "(fstr \"a\" x \"b\")");
    EXPECT_EXPR("f\"{x!r:>8} {{y}}\" 'z'", "(fstr x!r:>8 \" {y}\" \"z\")");
    EXPECT_EXPR("f'{d[\"k\"] + 1:.3f}'", "(fstr (+ ([] d \"k\") 1)!:.3f)");
    expect_error("x = f'{y'\n", 1, 7, "f-string: expected '}'");
    expect_error("x = f'a}'\n", 1, 8, "single '}' is not allowed in an f-string");
    expect_error("x = f'{y +}'\n", 1, 11, "expected expression, found NEWLINE");
}

Test(parser, unsupported_constructs)
{
    expect_error("class A(B):\n    pass\n", 1, 9, "a base class other than object is not supported in tile programs");
    expect_error("@d\nclass A:\n    pass\n", 2, 1, "a decorator on a class is not supported in tile programs");
    expect_error("f = lambda **a: a\n", 1, 12, "'**kwargs' in a lambda is not supported in tile programs");
    expect_error("f = lambda *a, b: a\n", 1, 16,
                 "parameters after '*args' in a lambda (keyword-only parameters) is not supported in tile programs");
    expect_error("f = lambda *: 1\n", 1, 13, "a bare '*' (keyword-only parameters) is not supported in tile programs");
    expect_error("try:\n    pass\nexcept E:\n    pass\n", 1, 1, "'try' is not supported in tile programs");
    expect_error("global x\n", 1, 1, "'global' is not supported in tile programs");
    expect_error("nonlocal x\n", 1, 1, "'nonlocal' is not supported in tile programs");
    expect_error("del x\n", 1, 1, "'del' is not supported in tile programs");
    expect_error("def f():\n    yield 1\n", 2, 5, "'yield' is not supported in tile programs");
    expect_error("x = yield\n", 1, 5, "'yield' is not supported in tile programs");
    expect_error("async def f():\n    pass\n", 1, 1, "'async' is not supported in tile programs");
    expect_error("x = await y\n", 1, 5, "'await' is not supported in tile programs");
    expect_error("x = {i for i in y}\n", 1, 8, "set comprehensions are not supported in tile programs");
    expect_error("x = [a, b for b in y]\n", 1, 11, "a comprehension must be the only item inside its brackets");
    expect_error("x = {1, 2}\n", 1, 6, "set literals are not supported in tile programs");
    expect_error("f(**kw)\n", 1, 3, "'**' argument unpacking is not supported in tile programs");
    expect_error("def f(*args, k):\n    pass\n", 1, 14,
                 "parameters after '*args' (keyword-only parameters) is not supported in tile programs");
    expect_error("def f(a, *, k):\n    pass\n", 1, 11, "a bare '*' (keyword-only parameters) is not supported in tile programs");
    expect_error("def f(**kw):\n    pass\n", 1, 7, "'**kwargs' is not supported in tile programs");
    expect_error("def f(a, /):\n    pass\n", 1, 10, "the positional-only marker '/' is not supported in tile programs");
    expect_error("with a, b as c:\n    pass\n", 1, 11,
                 "'as' after the first of several context managers is not supported in tile programs");
    expect_error("if (y := 1):\n    pass\n", 1, 7, "the walrus operator ':=' is not supported in tile programs");
}

/* ---- robustness ----------------------------------------------------------- */

static char *repeat(const char *prefix, const char *unit, int n, const char *suffix)
{
    size_t lp = strlen(prefix), lu = strlen(unit), ls = strlen(suffix);
    char *s = malloc(lp + lu * (size_t)n + ls + 1), *p = s;
    memcpy(p, prefix, lp);
    p += lp;
    for (int i = 0; i < n; i++, p += lu)
        memcpy(p, unit, lu);
    memcpy(p, suffix, ls + 1);
    return s;
}

static void expect_too_deep(const char *src)
{
    parsed_t P;
    parse(&P, src);
    cr_expect_eq(P.rc, -1);
    cr_expect(strstr(tilec_diag_text(&P.diag), "nesting too deep") != NULL, "diagnostic: %s", tilec_diag_text(&P.diag));
    done(&P);
}

Test(parser, deep_nesting_is_a_diagnostic)
{
    char *s = repeat("x = ", "(", 10000, "1\n");
    expect_too_deep(s);
    free(s);
    s = repeat("x = ", "[", 10000, "");
    expect_too_deep(s);
    free(s);
    s = repeat("x = ", "-", 100000, "1\n");
    expect_too_deep(s);
    free(s);
    s = repeat("x = ", "not ", 10000, "1\n");
    expect_too_deep(s);
    free(s);
    s = repeat("x = 2", " ** 2", 10000, "\n");
    expect_too_deep(s);
    free(s);
    s = repeat("x = 1", " if c else 1", 10000, "\n");
    expect_too_deep(s);
    free(s);
    s = repeat("x = ", "f(", 10000, "");
    expect_too_deep(s);
    free(s);
    s = repeat("x = a", "[b", 10000, "");
    expect_too_deep(s);
    free(s);
    /* one-line blocks nest without indentation */
    s = repeat("", "if x: ", 10000, "pass\n");
    parsed_t P;
    parse(&P, s);
    cr_expect_eq(P.rc, -1);
    done(&P);
    free(s);
}

Test(parser, moderate_nesting_parses)
{
    char *s = repeat("x = ", "(", 150, "1");
    size_t n = strlen(s);
    s = realloc(s, n + 152);
    memset(s + n, ')', 150);
    strcpy(s + n + 150, "\n");
    parsed_t P;
    parse(&P, s);
    cr_expect_eq(P.rc, 0, "%s", tilec_diag_text(&P.diag));
    done(&P);
    free(s);
    s = repeat("x = ", "-", 150, "1\n");
    parse(&P, s);
    cr_expect_eq(P.rc, 0, "%s", tilec_diag_text(&P.diag));
    done(&P);
    free(s);
    /* 50 nested blocks */
    sbuf_t b = { 0 };
    for (int i = 0; i < 50; i++)
        put(&b, "%*sif x%d:\n", i * 2, "", i);
    put(&b, "%*spass\n", 100, "");
    parse(&P, b.p);
    cr_expect_eq(P.rc, 0, "%s", tilec_diag_text(&P.diag));
    done(&P);
    free(b.p);
}

static const char *const kernel_src =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "@tilelang.jit(out_idx=[-1])          # optional; out_idx marks outputs\n"
    "def matmul(M, N, K, block_M=128, block_N=128, block_K=32,\n"
    "           dtype=\"float16\", accum_dtype=\"float32\"):\n"
    "    \"\"\"A GEMM.\"\"\"\n"
    "    scale = (1.0 / K) ** 0.5\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), dtype),\n"
    "             B: T.Tensor((K, N), dtype),\n"
    "             C: T.Tensor((M, N), dtype)):\n"
    "        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):\n"
    "            A_shared = T.alloc_shared((block_M, block_K), dtype)\n"
    "            B_shared = T.alloc_shared((block_K, block_N), dtype)\n"
    "            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)\n"
    "            T.clear(C_local)\n"
    "            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):\n"
    "                T.copy(A[by * block_M, k * block_K], A_shared)\n"
    "                T.copy(B[k * block_K, bx * block_N], B_shared)\n"
    "                T.gemm(A_shared, B_shared, C_local)\n"
    "            for i, j in T.Parallel(block_M, block_N):\n"
    "                C_local[i, j] = C_local[i, j] * scale if i > 0 else -C_local[i, j] ** 2\n"
    "            T.copy(C_local, C[by * block_M:(by + 1) * block_M, bx * block_N])\n"
    "    return main\n";

Test(parser, kernel_example)
{
    parsed_t P;
    parse(&P, kernel_src);
    cr_assert_eq(P.rc, 0, "%s", tilec_diag_text(&P.diag));
    cr_expect_eq(P.m->body.n, 3);
    ast_stmt_t *f = P.m->body.s[2];
    cr_assert_eq(f->kind, AST_S_DEF);
    cr_expect_str_eq(f->u.def.name, "matmul");
    cr_expect_eq(f->u.def.nparams, 8);
    cr_expect_eq(f->u.def.ndecorators, 1);
    cr_expect_eq(f->u.def.body.n, 4);
    cr_expect_str_eq(P.m->path, "t.py");
    done(&P);
}

Test(parser, five_megabytes_of_code)
{
    size_t unit = strlen(kernel_src);
    size_t copies = (5u << 20) / unit + 1;
    char *s = malloc(unit * copies + 1);
    for (size_t i = 0; i < copies; i++)
        memcpy(s + i * unit, kernel_src, unit);
    s[unit * copies] = '\0';
    parsed_t P;
    parse_len(&P, s, unit * copies);
    cr_expect_eq(P.rc, 0, "%s", tilec_diag_text(&P.diag));
    if (P.rc == 0)
        cr_expect_eq((size_t)P.m->body.n, 3 * copies);
    done(&P);
    free(s);
}

/* Parse must return 0, or -1 with exactly one diagnostic in the file. */
static void parse_checked(const char *src, size_t len, const char *what, unsigned seed)
{
    parsed_t P;
    parse_len(&P, src, len);
    if (P.rc != 0) {
        cr_expect_eq(P.rc, -1, "%s %u", what, seed);
        cr_expect_eq(P.diag.nerrors, 1, "%s %u: %d errors", what, seed, P.diag.nerrors);
        const char *t = tilec_diag_text(&P.diag);
        cr_expect(strncmp(t, "t.py:", 5) == 0, "%s %u: %s", what, seed, t);
        cr_expect(strchr(t, '\n') != NULL, "%s %u: %s", what, seed, t);
    } else {
        cr_expect(P.m != NULL);
    }
    done(&P);
}

Test(parser, random_bytes_never_crash)
{
    size_t n = 1u << 20;
    char *buf = malloc(n);
    srand(12345);
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)(rand() & 0xff);
    parse_checked(buf, n, "1 MB random", 12345);
    /* shorter runs of source-like noise get further into the parser */
    const char alphabet[] = "abxy_01 9()[]{}:,.=+-*/%'\"#\n\n\n    \tifdefor in@<>&|^~;";
    for (unsigned seed = 1; seed <= 300; seed++) {
        srand(seed);
        size_t len = (size_t)rand() % 4096;
        for (size_t i = 0; i < len; i++)
            buf[i] = alphabet[(size_t)rand() % (sizeof alphabet - 1)];
        parse_checked(buf, len, "noise seed", seed);
    }
    free(buf);
}

Test(parser, mutated_and_truncated_programs)
{
    size_t len = strlen(kernel_src);
    char *buf = malloc(len + 1);
    /* every prefix */
    for (size_t cut = 0; cut <= len; cut++) {
        memcpy(buf, kernel_src, cut);
        parse_checked(buf, cut, "prefix", (unsigned)cut);
    }
    /* random byte edits */
    const char pool[] = "()[]{}:,.=+-*'\"#\n \t\\\x00\xff\xc3" "abc1";
    for (unsigned seed = 1; seed <= 2000; seed++) {
        srand(seed);
        memcpy(buf, kernel_src, len);
        int edits = 1 + rand() % 4;
        for (int e = 0; e < edits; e++)
            buf[(size_t)rand() % len] = pool[(size_t)rand() % (sizeof pool - 1)];
        parse_checked(buf, len, "mutation seed", seed);
    }
    free(buf);
}

Test(parser, null_source)
{
    parsed_t P;
    tilec_arena_init(&P.arena);
    tilec_diag_init(&P.diag, "t.py", NULL, 0);
    P.rc = tilec_parse(&P.arena, &P.diag, "t.py", NULL, 0, &P.m);
    cr_expect_eq(P.rc, 0);
    cr_expect_eq(P.m->body.n, 0);
    done(&P);
}

/* Issue 11: the syntax tree counts against the compile's memory budget; a
 * file that needs more stops with a diagnostic that gives the file's size
 * (a budget of 64 KiB here stands for the real 256 MiB). */
Test(parser, syntax_tree_memory_budget)
{
    size_t n = 20000, len = 0, i;
    char *src = malloc(4 + 2 * n + 2);
    parsed_t P;
    cr_assert(src);
    memcpy(src, "x = ", 4);
    len = 4;
    for (i = 0; i < n; i++) {
        src[len++] = '1';
        src[len++] = i + 1 < n ? '+' : '\n';
    }
    tilec_arena_init(&P.arena);
    tilec_diag_init(&P.diag, "t.py", src, len);
    P.rc = tilec_parse_limited(&P.arena, &P.diag, "t.py", src, len, 64 << 10, &P.m);
    cr_expect_eq(P.rc, -1);
    cr_expect_eq(P.diag.nerrors, 1);
    cr_expect(strstr(P.diag.text, "too large to compile"), "got: %s", P.diag.text);
    cr_expect(strstr(P.diag.text, "the file has 40004 bytes"), "got: %s", P.diag.text);
    cr_expect_leq(P.arena.bytes, (size_t)(64 << 10) + 4096);
    done(&P);
    /* the same file within the default budget parses */
    tilec_arena_init(&P.arena);
    tilec_diag_init(&P.diag, "t.py", src, len);
    P.rc = tilec_parse(&P.arena, &P.diag, "t.py", src, len, &P.m);
    cr_expect_eq(P.rc, 0);
    done(&P);
    free(src);
}
