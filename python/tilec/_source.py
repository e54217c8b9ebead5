"""The kernel source handed to libtilec's frontend, built from Python objects.

tilec never runs a kernel in Python.  A factory (or a top-level
@T.prim_func) is turned back into text: its own source (inspect), with the
jit/autotune decorators blanked out, preceded by what it needs from its
module -- the import of tilelang.language under the alias it uses, the
module-level constants it reads (their current Python values, written as
literals), and the T.macro helpers and plain helper functions it calls (their
source, recursively).  Everything else in the user's file (numpy, torch, the
host code) is left out, so the frontend sees only the tile program.

Each line of the text remembers where it came from, so a diagnostic's
"FILE:LINE:COL" is rewritten to point into the user's file.
"""
import ast
import builtins
import inspect
import re
import types

from . import language


class Source:
    """text: the program; entry: the function to compile; defs: the factory
    arguments as -D strings; filename: the user's file; origin[i]: (line,
    column offset) in filename of line i + 1 of text, or None."""

    def __init__(self, text, entry, defs, filename, origin):
        self.text, self.entry, self.defs = text, entry, defs
        self.filename, self.origin = filename, origin

    def key(self):
        return (self.text, self.entry, tuple(self.defs))

    def remap(self, message):
        """message with FILE:LINE:COL of the text turned into the user's; the
        echoed source line and caret under such a header are re-indented."""
        if not self.filename:
            return message
        pat = re.compile(re.escape(self.filename) + r":(\d+):(\d+)")
        out, pad = [], 0
        for line in message.split("\n"):
            m = pat.search(line)
            if m:
                ln, col = int(m.group(1)), int(m.group(2))
                pad = 0
                if 1 <= ln <= len(self.origin) and self.origin[ln - 1]:
                    oline, pad = self.origin[ln - 1]
                    line = "%s%s:%d:%d%s" % (line[:m.start()], self.filename, oline, col + pad,
                                             line[m.end():])
                out.append(line)
                left = 2
            elif pad and left > 0 and line:
                out.append(" " * pad + line)
                left -= 1
            else:
                out.append(line)
                left = 0
        return "\n".join(out)


def _is_language(mod):
    return mod is language or getattr(mod, "__name__", "") in ("tilec.language",
                                                               "tilelang.language")


def _is_tilec_top(mod):
    return getattr(mod, "__name__", "") in ("tilec", "tilelang")


def literal(v):
    """v as a Python literal the frontend reads, or None when it has none."""
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            return None
        return repr(v)
    if isinstance(v, str):
        return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (tuple, list)):
        items = [literal(x) for x in v]
        if any(x is None for x in items):
            return None
        if isinstance(v, tuple):
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    if v is None:
        return "None"
    name = _dtype_name(v)
    return literal(name) if name else None


def _dtype_name(v):
    """"float16" for torch.float16, numpy.float16 or numpy.dtype("float16")."""
    mod = getattr(type(v), "__module__", "") or ""
    if mod.startswith("torch") and type(v).__name__ == "dtype":
        return str(v).split(".")[-1]
    if mod.startswith("numpy") or (isinstance(v, type) and v.__module__.startswith("numpy")):
        try:
            import numpy
            return numpy.dtype(v).name
        except TypeError:
            return None
    return None


def define_value(v):
    """v as a -D value (docs/cli.md): a literal; strings quoted."""
    lit = literal(v)
    if lit is None:
        raise TypeError("factory argument %r cannot be passed to tilec (it takes ints, floats, "
                        "bools, strings and tuples of them)" % (v,))
    return lit


def _dedented(obj):
    """(lines, first line number, indentation, ast FunctionDef) of a function
    or code object."""
    lines, first = inspect.getsourcelines(obj)
    indent = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
    lines = [l[indent:] if l.strip() else "\n" for l in lines]
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    tree = ast.parse("".join(lines))
    fn = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return lines, first, indent, fn


def _free_names(fn):
    """Names fn reads that it does not bind itself (its parameters, the
    names it assigns, the functions and classes it defines)."""
    read, bound = set(), set()
    a = fn.args
    for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
        if x is not None:
            bound.add(x.arg)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node is not fn:
            bound.add(node.name)
        elif isinstance(node, ast.arg) and node is not fn:
            bound.add(node.arg)
    return read - bound


def _keep_decorator(dec, ns):
    """@T.prim_func and @T.macro stay; jit, autotune and the rest go."""
    target = dec.func if isinstance(dec, ast.Call) else dec
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return target.attr in ("prim_func", "macro") and _is_language(ns.get(target.value.id))
    if isinstance(target, ast.Name):
        v = ns.get(target.id)
        return v is language.prim_func or v is language.macro
    return False


class _Builder:
    def __init__(self, namespace):
        self.ns = namespace
        self.prelude = []          # (text)
        self.defs = []             # (lines, first, indent)
        self.seen = set()
        self.dyn_alias = None

    def lang_alias(self):
        for name, v in self.ns.items():
            if _is_language(v) and isinstance(v, types.ModuleType):
                return name
        if not self.dyn_alias:
            self.dyn_alias = "_tilec_T"
            self.prelude.insert(0, "import tilelang.language as _tilec_T")
        return self.dyn_alias

    def add_function(self, obj, ns, jit=None):
        """Adds obj's source; jit, when given, is the decorator that replaces
        the ones removed (the frontend needs @tilelang.jit on an eager-style
        kernel, and takes out_idx from it)."""
        lines, first, indent, fn = _dedented(obj)
        rows = [(l, (first + i, indent)) for i, l in enumerate(lines)]
        for dec in fn.decorator_list:
            if not _keep_decorator(dec, ns):
                for ln in range(dec.lineno, (dec.end_lineno or dec.lineno) + 1):
                    rows[ln - 1] = ("\n", rows[ln - 1][1])
        if jit is not None:
            if "import tilelang as _tilec_tl" not in self.prelude:
                self.prelude.append("import tilelang as _tilec_tl")
            at = fn.decorator_list[0].lineno - 1 if fn.decorator_list else fn.lineno - 1
            deco = "@_tilec_tl.jit%s\n" % jit
            if fn.decorator_list and not _keep_decorator(fn.decorator_list[0], ns):
                rows[at] = (deco, rows[at][1])
            else:
                rows.insert(at, (deco, None))
        self.defs.insert(0, rows)
        self.resolve(_free_names(fn), ns)
        return fn

    def resolve(self, names, ns):
        for name in sorted(names):
            if name in self.seen:
                continue
            self.seen.add(name)
            if name not in ns:
                continue
            v = ns[name]
            if isinstance(v, types.ModuleType):
                if _is_language(v):
                    self.prelude.append("import tilelang.language as %s" % name)
                elif _is_tilec_top(v):
                    self.prelude.append("import tilelang as %s" % name)
                continue
            if isinstance(v, language.Macro):
                self.add_function(v.func, function_namespace(v.func))
                continue
            if isinstance(v, language.dynamic):
                self.prelude.append("%s = %s.dynamic(%s)" % (name, self.lang_alias(),
                                                             literal(v.name)))
                continue
            if isinstance(v, types.FunctionType) and not v.__module__.startswith(("tilec",
                                                                                  "tilelang")):
                try:
                    self.add_function(v, function_namespace(v))
                except (OSError, TypeError, StopIteration, SyntaxError):
                    pass
                continue
            if getattr(builtins, name, None) is v:
                continue
            lit = literal(v)
            if lit is not None:
                self.prelude.append("%s = %s" % (name, lit))

    def text(self):
        out, origin = [], []
        for line in self.prelude:
            out.append(line + "\n")
            origin.append(None)
        for rows in self.defs:
            out.append("\n")
            origin.append(None)
            for l, o in rows:
                out.append(l)
                origin.append(o)
        return "".join(out), origin


def build(obj, namespace, args=None, entry=None, jit=None):
    """The Source of a factory, an eager-style jit kernel or a top-level
    prim_func: obj is its function or code object, namespace the names it
    sees (module globals, closure variables), args the factory's arguments
    by name, jit the decorator arguments to compile it under ("" for a bare
    @tilelang.jit, "(out_idx=[-1])"; None: no jit decorator)."""
    b = _Builder(namespace)
    fn = b.add_function(obj, namespace, jit)
    text, origin = b.text()
    defs = []
    for name, v in (args or {}).items():
        defs.append((name, define_value(v)))
    try:
        filename = inspect.getsourcefile(obj) or inspect.getfile(obj)
    except TypeError:
        filename = "<tilec>"
    return Source(text, entry or fn.name, defs, filename, origin)


def eager_tensors(func):
    """For an eager-style kernel (a jit function with a `with T.Kernel` block
    and no inner @T.prim_func): its parameters declared as tensors by
    `A: T.Tensor(...)` statements, in order; None for a factory."""
    try:
        _, _, _, fn = _dedented(func)
    except (OSError, TypeError, StopIteration, SyntaxError):
        return None
    inner = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not fn and
                any(getattr(d.func if isinstance(d, ast.Call) else d, "attr",
                            getattr(d.func if isinstance(d, ast.Call) else d, "id", None))
                    == "prim_func" for d in n.decorator_list)
                for n in ast.walk(fn))
    kernel = any(isinstance(n, ast.With) and any(
        isinstance(i.context_expr, ast.Call) and
        getattr(i.context_expr.func, "attr", getattr(i.context_expr.func, "id", "")) == "Kernel"
        for i in n.items) for n in ast.walk(fn))
    if inner or not kernel:
        return None
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    return [st.target.id for st in fn.body
            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name)
            and st.target.id in params]


def function_namespace(func):
    """The names func sees: its module's globals, then its closure."""
    ns = dict(func.__globals__)
    if func.__closure__:
        for name, cell in zip(func.__code__.co_freevars, func.__closure__):
            try:
                ns[name] = cell.cell_contents
            except ValueError:
                pass
    return ns
