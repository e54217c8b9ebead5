#!/usr/bin/env python3
"""tools/tlcompat.py -- how many of TileLang's example kernels tilec runs.

TileLang's repository (tile-ai/tilelang) ships example kernels under
examples/.  This script adapts each of them by removing only its host-side
Python (the kernel code is kept byte for byte) and runs the adapted copies
with `tilec run --check` (a backend against the reference interpreter).  The
adapted copies are TileLang's code: keep them outside this repository.

Usage:
  tlcompat.py strip EXAMPLES_DIR OUT_DIR [LIST]   write adapted copies (+ FILE.defs with -D values)
  tlcompat.py run OUT_DIR TILEC LOG.json [--timeout S] [--backend B]
                                                  run each adapted file, one at a time
  tlcompat.py table LOG.json [BEFORE.json]        per-folder pass counts (markdown)
  tlcompat.py reasons LOG.json                    first diagnostic of each failing file

The files are every .py under EXAMPLES_DIR that is not a test_*.py and
contains `T.Kernel` (or the paths listed one a line in LIST).  Host code
removed: `if __name__ == "__main__"` blocks, top-level functions, classes and
statements that are not kernel factories (or helpers the kept code
references), and imports nothing kept uses.  docs/tilelang-compat.md gives
the method and the latest counts.
"""
import ast, json, math, os, re, resource, signal, subprocess, sys

KERNEL_MARK = re.compile(r"T\.prim_func|T\.Kernel|T\.macro|prim_func")


def names_in(node):
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
    return out


def free_names(node):
    """Names a statement reads that it does not bind itself (a nested def's
    parameters and locals are its own: they do not hide the outer reads)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
        return names_in(node)
    loads, local, outer = set(), set(), set()   # outer: read where the def stands
    for d in getattr(node, "decorator_list", []):
        outer |= names_in(d)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
            local.add(a.arg)
        for a in (node.args.vararg, node.args.kwarg):
            if a:
                local.add(a.arg)
        for d in node.args.defaults + node.args.kw_defaults:
            if d is not None:
                outer |= names_in(d)
        for a in node.args.args + node.args.kwonlyargs:
            if a.annotation is not None:
                outer |= names_in(a.annotation)
    body = node.body if isinstance(node.body, list) else [node.body]

    def walk(n):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if not isinstance(n, ast.Lambda):
                local.add(n.name)
            loads.update(free_names(n))
            return
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else local).add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            local.update(bound_names(n))
        for c in ast.iter_child_nodes(n):
            walk(c)

    for st in body:
        walk(st)
    return (loads - local) | outer


def bound_names(stmt):
    if isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        s = set()
        for a in stmt.names:
            if a.name == "*":
                s.add("*" + (stmt.module or ""))
            else:
                s.add(a.asname or a.name.split(".")[0])
        return s
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        s = set()
        for t in targets:
            s |= names_in(t)
        return s
    return set()


def is_main_guard(stmt):
    return isinstance(stmt, ast.If) and "__name__" in names_in(stmt.test)


def strip(src):
    tree = ast.parse(src)
    lines = src.splitlines(keepends=True)
    body = tree.body
    seg = lambda s: "".join(lines[(s.decorator_list[0].lineno if getattr(s, "decorator_list", None) else s.lineno) - 1:s.end_lineno])
    keep = set()
    for i, s in enumerate(body):
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and KERNEL_MARK.search(seg(s)):
            keep.add(i)
        if isinstance(s, (ast.FunctionDef,)) and any(("jit" in ast.unparse(d) or "autotune" in ast.unparse(d))
                                                      and not ast.unparse(d).startswith("triton") for d in s.decorator_list):
            keep.add(i)
    # transitive closure over names used by kept statements
    changed = True
    while changed:
        changed = False
        used = set()
        for i in keep:
            used |= free_names(body[i])
        for i, s in enumerate(body):
            if i in keep or is_main_guard(s):
                continue
            if isinstance(s, (ast.Import, ast.ImportFrom)):
                b = bound_names(s)
                if (b & used) or any(x.startswith("*tilelang") for x in b):
                    keep.add(i); changed = True
                continue
            if isinstance(s, ast.Expr):
                continue
            b = bound_names(s)
            if b & used:
                keep.add(i); changed = True
    # module constants assigned at top level that kept code reads are kept above;
    # drop imports that became unused only through dropped statements (done by construction)
    out = []
    for i, s in enumerate(body):
        if i in keep:
            txt = seg(s)
            # keep only the used names of a multi-name import? no: copy as is
            out.append(txt if txt.endswith("\n") else txt + "\n")
            out.append("\n")
    return "".join(out)


DTYPE_ATTR = re.compile(r"^(u?int\d+|float\d+\w*|bfloat16|bool)$")


def literal(node):
    """A host value: a constant, or a dtype written T.float16 / torch.float8_e4m3fn."""
    if isinstance(node, ast.Constant):
        return True, node.value
    if isinstance(node, ast.Attribute) and DTYPE_ATTR.match(node.attr):
        return True, node.attr
    if isinstance(node, ast.Attribute) and node.attr == "float" and isinstance(node.value, ast.Name):
        return True, "float32"   # T.float
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
            and node.value.attr == "GemmWarpPolicy" and node.attr in ("Square", "FullRow", "FullCol"):
        return True, "T.GemmWarpPolicy." + node.attr
    return False, None


def host_values(src):
    """Literal values the host code gives to names, as (strong, weak):
    strong are argparse defaults and module constants (`K = 3`), taken as
    they are; weak are keyword arguments, positional arguments of calls to
    the file's own functions, and parameter defaults, taken only when they look like sizes."""
    strong, weak = {}, {}
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return strong, weak
    funcs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    for s in tree.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            ok, v = literal(s.value)
            if ok:
                strong.setdefault(s.targets[0].id, v)
    for n in ast.walk(tree):
        # `dtype, accum_dtype = T.bfloat16, T.float` in the host code: the dtypes, weak values
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Tuple) \
                and isinstance(n.value, ast.Tuple) and len(n.targets[0].elts) == len(n.value.elts):
            for t, v in zip(n.targets[0].elts, n.value.elts):
                ok, v = literal(v) if isinstance(v, ast.Attribute) else (False, None)
                if ok and isinstance(t, ast.Name) and "dtype" in t.id.lower():
                    weak.setdefault(t.id, v)
        if isinstance(n, ast.Call):
            f = ast.unparse(n.func)
            if f.endswith("add_argument") and n.args and isinstance(n.args[0], ast.Constant):
                name = str(n.args[0].value).lstrip("-").replace("-", "_")
                for kw in n.keywords:
                    ok, v = literal(kw.value)
                    if kw.arg == "default" and ok:
                        strong.setdefault(name, v)
            for kw in n.keywords:
                ok, v = literal(kw.value)
                if kw.arg and ok:
                    weak.setdefault(kw.arg, v)
            if isinstance(n.func, ast.Name) and n.func.id in funcs:
                for p, a in zip(funcs[n.func.id].args.args, n.args):
                    ok, v = literal(a)
                    if ok:
                        weak.setdefault(p.arg, v)
        if isinstance(n, ast.FunctionDef):
            a = n.args
            ps = a.args[len(a.args) - len(a.defaults):]
            for p, d in zip(ps, a.defaults):
                ok, v = literal(d)
                if ok:
                    weak.setdefault(p.arg, v)
    return strong, weak


# (name pattern, value when the host gives none, cap, smallest host value taken)
SMALL = [
    (re.compile(r"^(batch|batch_size|bs|b|B|BATCH|num_batches)$"), 1, 2, 1),
    (re.compile(r"(?i)^(heads|head|h|num_heads|nheads|H|n_heads|q_heads|head_num|num_head)$"), 8, 8, 1),
    (re.compile(r"(?i)(kv_head|head_kv|heads_kv|k_head|groups|num_groups|kv_group|group)"), 1, 2, 1),
    (re.compile(r"(?i)(seq|ctx|len|^s$|^sq$|^skv$|tokens|^L$|^T$)"), 128, 256, 16),
    (re.compile(r"(?i)^(dim|d|head_dim|dim_v|dim_qk|d_head|dv|dk|d_v|d_k|dim_head)$"), 64, 128, 16),
    (re.compile(r"^(M|N|K|m|n|k)$"), 256, 256, 16),
    (re.compile(r"(?i)^block_?[mnk]?$|^BLOCK|^block"), 64, 1 << 30, 1),
    (re.compile(r"(?i)threads"), 128, 1 << 30, 32),
    (re.compile(r"(?i)stages"), 2, 1 << 30, 1),
    (re.compile(r"(?i)^k_pack$"), 1, 2, 1),
    (re.compile(r"(?i)causal|^(has|use|is|with|enable|trans)_?"), False, None, None),
    (re.compile(r"(?i)scale"), 1.0, None, None),
]


def host_get(host, name):
    """The host's value for name; argparse spells sizes in lower case (--k for K)."""
    if name in host:
        return host[name]
    low = {k.lower(): v for k, v in host.items()}
    return low.get(name.lower())


def pick(name, host):
    """A value for a parameter with no default (or a cap for a huge one);
    host is host_values()."""
    strong, weak = host
    if name.endswith("_list"):
        # a list built from a comma-separated argparse default (`--batch_sizes "64, 128"`)
        v = host_get(strong, name[:-5])
        if isinstance(v, str) and re.match(r"^[\d,\s]+$", v) and v.strip():
            return "(%s,)" % ",".join(x.strip() for x in v.split(",") if x.strip())
    if "dtype" in name.lower():
        v = host_get(strong, name)
        if v is None:
            v = host_get(weak, name)
            # a plain `dtype` keyword of the host code is often an index tensor's (torch.int32)
            if name == "dtype" and isinstance(v, str) and not re.match(r"b?float", v):
                v = None
        if re.match(r"(?i)^(meta|e)_dtype$", name) and not (isinstance(v, str) and re.match(r"u?int", v)):
            return "int16"   # a sparse GEMM's metadata: TileLang's default (sparse_utils' _DEFAULT_META_DTYPE)
        return v if isinstance(v, str) and v else "float16"
    for rx, dflt, cap, least in SMALL:
        if rx.search(name):
            v = host_get(strong, name)
            if cap is not None and type(v) is int and v >= 1:
                return min(v, cap)
            if v is None:
                v = host_get(weak, name)
            if cap is None:
                return dflt if v is None or type(v) is not type(dflt) else v
            if isinstance(v, bool) or not isinstance(v, int) or v < least:
                return dflt
            return min(v, cap)
    v = host_get(strong, name)
    if v is None:
        v = host_get(weak, name)
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return min(v, 256)
    if isinstance(v, (float, str)):
        return v
    return 64


HEADS = re.compile(SMALL[1][0].pattern)


def SMALL_NAME(name):
    """Whether name is one of the size-like names of SMALL."""
    return any(rx.search(name) for rx, _, _, _ in SMALL)
BLOCK_H = re.compile(r"(?i)^block_?h$")


def fit(defs):
    """Keeps the picked sizes within the kernels' own constraints (a head
    block, block_H, is no larger than the heads it blocks) and small enough
    for the interpreter."""
    bh = [v for n, v in defs if BLOCK_H.match(n) and type(v) is int]
    if bh:
        defs = [(n, max(v, max(bh)) if HEADS.search(n) and type(v) is int else v) for n, v in defs]
    # a split-KV kernel: the capped sequence still gives every split a block of keys
    seq = [v for n, v in defs if type(v) is int and re.search(r"(?i)seq|ctx", n)]
    bn = [v for n, v in defs if type(v) is int and re.match(r"(?i)^block_?n$", n)]
    if seq and bn:
        most = max(1, max(seq) // max(bn))
        defs = [(n, min(v, most) if re.match(r"(?i)^num_?splits?$", n) and type(v) is int else v) for n, v in defs]
    # a block over K no larger than the K it blocks once that is capped (the host's block_k = min(_BLOCK_K, D))
    ks = [v for n, v in defs if type(v) is int and n in ("K", "D") and v >= 16]
    if ks:
        defs = [(n, min(v, max(ks)) if re.match(r"(?i)^_?block_?k$", n) and type(v) is int else v) for n, v in defs]
    if {"N", "C", "H", "W", "F"} <= {n for n, _ in defs}:
        # a convolution (batch N, channels C, image H x W, filters F): N*H*W*F*C*K*K multiply-adds
        # in the interpreter, so small images and few channels
        cap = {"N": 2, "C": 16, "H": 8, "W": 8, "F": 64}
        defs = [(n, min(v, cap[n]) if n in cap and type(v) is int else v) for n, v in defs]
    return defs


def entry_node(stripped):
    """The entry: the last kernel factory of the adapted file (tilec's default)."""
    last = None
    for s in ast.parse(stripped).body:
        if isinstance(s, ast.FunctionDef) and (KERNEL_MARK.search(ast.unparse(s)) or s.decorator_list):
            last = s
    return last


def entry_params(stripped):
    last = entry_node(stripped)
    if not last:
        return None, []
    a = last.args
    nd = len(a.args) - len(a.defaults)
    out = []
    for i, p in enumerate(a.args):
        d = a.defaults[i - nd] if i >= nd else None
        if isinstance(d, ast.Constant) and d.value is None and \
                any("autotune" in ast.unparse(x) for x in last.decorator_list):
            out.append((p.arg, "<none>"))   # `p=None` under @autotune: the configs supply it
            continue
        out.append((p.arg, d.value if isinstance(d, ast.Constant) else (None if d is None else "<expr>")))
    # eager T.const names
    consts = []
    for n in ast.walk(last):
        if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("T.const") and n.args and isinstance(n.args[0], ast.Constant):
            consts += [x.strip() for x in str(n.args[0].value).replace(",", " ").split()]
    ann = set()
    for n in ast.walk(last):
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            ann.add(n.target.id)
    # T.dynamic symbols (bound at launch; tilec run takes them from -D)
    for n in ast.walk(last):
        if isinstance(n, ast.Call) and re.search(r"T\.(dynamic|symbolic)$", ast.unparse(n.func)) and n.args \
                and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
            consts += [x.strip() for x in n.args[0].value.replace(",", " ").split()]
    # scalar kernel parameters (`max_seqlen_q: T.int32`) take -D values too
    for n in ast.walk(last):
        # (a T.macro's parameters are its call's arguments, not the kernel's)
        if isinstance(n, ast.FunctionDef) and n is not last and \
                not any(ast.unparse(d).endswith("macro") for d in n.decorator_list):
            for p in n.args.args:
                if p.annotation is not None and re.match(r"^(T\.)?(u?int\d+|float\d+|bfloat16)$",
                                                         ast.unparse(p.annotation)):
                    consts.append(p.arg)
    res, seen = [], set()
    for p, d in [(p, d) for p, d in out if p not in ann] + [(c, None) for c in consts]:
        if p not in seen:
            seen.add(p)
            res.append((p, d))
    return last.name, res


def fmt(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    return str(v)


def kernel_files(src_dir):
    out = []
    for root, dirs, fs in os.walk(src_dir):
        dirs.sort()
        for f in sorted(fs):
            if f.endswith(".py") and not f.startswith("test_"):
                p = os.path.join(root, f)
                with open(p, errors="replace") as fh:
                    if "T.Kernel" in fh.read():
                        out.append(os.path.relpath(p, src_dir))
    return out


def cmd_strip(src_dir, out_dir, listfile=None):
    if listfile:
        files = [l.strip()[2:] if l.strip().startswith("./") else l.strip() for l in open(listfile) if l.strip()]
    else:
        files = kernel_files(src_dir)
    for f in files:
        src = open(os.path.join(src_dir, f)).read()
        try:
            s = strip(src)
        except SyntaxError as e:
            print("syntax", f, e)
            continue
        p = os.path.join(out_dir, f)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").write(s)
        host = host_values(src)
        name, params = entry_params(s)
        defs = []
        for pn, d in params:
            if d == "<none>" and re.search(r"(\b%s\s*=\s*\[|[\"']%s[\"']\s*:\s*\[)" % (re.escape(pn), re.escape(pn)), src):
                continue   # `p=None` the autotune configs list choices for: left to them, as tilec takes it
            if d == "<none>":
                d = None
            if d is None:
                v = pick(pn, host)
                # no host value for a parameter the kernel compares with strings (gemm_type == "ss"):
                # left to the program (its autotune configs' first value)
                if v == 64 and re.search(r"\b%s\s*==\s*[\"']" % re.escape(pn), src) and not SMALL_NAME(pn):
                    continue
                defs.append((pn, v))
            elif isinstance(d, int) and not isinstance(d, bool) and d > 256:
                defs.append((pn, pick(pn, ({}, {pn: d}))))
        have = {n for n, _ in defs}
        for st in ast.parse(s).body:
            # a module constant the kernel reads (`M = 8192`): capped like a parameter
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
                    and isinstance(st.value, ast.Constant) and type(st.value.value) is int and st.value.value > 256 \
                    and st.targets[0].id not in have:
                defs.append((st.targets[0].id, pick(st.targets[0].id, ({}, {st.targets[0].id: st.value.value}))))
        # a block-sparse kernel selects at most the key blocks there are (the host code's
        # topk = min(topk, num_k_blocks)) once the key sequence is capped
        dflt, got = dict(params), dict(defs)
        topk, kvb = got.get("topk", dflt.get("topk")), got.get("kv_block_size", dflt.get("kv_block_size"))
        kv = [v for n, v in defs if re.search(r"(?i)seq_?len_kv", n) and type(v) is int]
        if type(topk) is int and type(kvb) is int and kvb > 0 and kv:
            most = max(1, -(-max(kv) // kvb))
            if topk > most:
                defs = [(n, v) for n, v in defs if n != "topk"] + [("topk", most)]
        open(p + ".defs", "w").write(" ".join("-D%s=%s" % (n, fmt(v)) for n, v in fit(defs)))
        unit = unit_rows(src)
        stoch = sinkhorn_params(src, entry_node(s))
        if stoch:
            open(p + ".dstoch", "w").write(" ".join(sorted(stoch)))
        if unit:
            open(p + ".unit", "w").write(" ".join(sorted(unit)))
    print("%d files adapted into %s" % (len(files), out_dir))


NPY = {"bool": "|b1", "int8": "|i1", "uint8": "|u1", "int16": "<i2", "uint16": "<u2", "int32": "<i4",
       "uint32": "<u4", "int64": "<i8", "uint64": "<u8", "float16": "<f2", "float32": "<f4"}
PARAM = re.compile(r"^  param (\w+) global (\w+) \[([^\]]*)\]", re.M)


def unit_rows(src):
    """Names the host code normalizes along the last dimension (`K = F.normalize(K, dim=-1, p=2)`): a
    recurrence over them (chunked delta rules) stays bounded only with unit rows."""
    out = set()
    for n in ast.walk(ast.parse(src)):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute) \
                and n.value.func.attr == "normalize" and n.value.args and isinstance(n.value.args[0], ast.Name) \
                and n.value.args[0].id == n.targets[0].id \
                and any(k.arg == "dim" and isinstance(k.value, ast.UnaryOp) and isinstance(k.value.operand, ast.Constant)
                        and k.value.operand.value == 1 for k in n.value.keywords):
            out.add(n.targets[0].id)
    return out


def _sum_dim(call):
    """The dimension of `X.sum(d, ...)` (or sum(dim=d)), or None."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "sum"):
        return None
    a = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "dim"), None)
    if isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.USub) and isinstance(a.operand, ast.Constant):
        return -a.operand.value
    return None


def sinkhorn_params(src, entry):
    """Kernel tensors the host code fills with doubly stochastic matrices: the result of a file
    function that divides a tensor by its sums over the last two dimensions in turn (Sinkhorn:
    `R = R / R.sum(-2, keepdim=True)`, `R = R / R.sum(-1, keepdim=True)`), passed to the kernel
    (`kernel = ENTRY.compile(...)` or ENTRY itself) at a position: the entry's parameter there."""
    tree = ast.parse(src)
    funcs = {}
    for f in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
        dims = {}
        for n in ast.walk(f):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                    and isinstance(n.value, ast.BinOp) and isinstance(n.value.op, ast.Div) \
                    and isinstance(n.value.left, ast.Name) and n.value.left.id == n.targets[0].id:
                d = _sum_dim(n.value.right)
                if d is not None:
                    dims.setdefault(n.targets[0].id, set()).add(d)
        for name, ds in dims.items():
            if {-1, -2} <= ds:
                for r in [n for n in ast.walk(f) if isinstance(n, ast.Return) and n.value is not None]:
                    items = r.value.elts if isinstance(r.value, ast.Tuple) else [r.value]
                    for i, it in enumerate(items):
                        if isinstance(it, ast.Name) and it.id == name:
                            funcs[f.name] = (i, isinstance(r.value, ast.Tuple))
    if not funcs or not entry:
        return set()
    ds, kern = set(), {entry.name}
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.value, ast.Call) \
                and isinstance(n.value.func, ast.Name) and n.value.func.id in funcs:
            i, tup = funcs[n.value.func.id]
            t = n.targets[0]
            if tup and isinstance(t, ast.Tuple) and i < len(t.elts) and isinstance(t.elts[i], ast.Name):
                ds.add(t.elts[i].id)
            elif not tup and isinstance(t, ast.Name):
                ds.add(t.id)
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and isinstance(n.value, ast.Call) and ast.unparse(n.value.func) in (entry.name, entry.name + ".compile"):
            kern.add(n.targets[0].id)
    params = [a.arg for a in entry.args.args]
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in kern:
            for i, a in enumerate(n.args):
                if isinstance(a, ast.Name) and a.id in ds and i < len(params):
                    out.add(params[i])
    return out


def doubly_stochastic_values(shape, seed):
    """Seeded doubly stochastic matrices over the last two dimensions, as the host code builds them
    (exp of uniform(0, 4) values, then 100 rounds of column and row normalization)."""
    import random
    rnd = random.Random(seed)
    n, r, c = 1, shape[-2], shape[-1]
    for d in shape:
        n *= d
    vals = []
    for _ in range(n // (r * c)):
        m = [[math.exp(rnd.uniform(0, 4)) for _ in range(c)] for _ in range(r)]
        for _ in range(100):
            for j in range(c):
                t = sum(m[i][j] for i in range(r))
                for i in range(r):
                    m[i][j] /= t
            for i in range(r):
                t = sum(m[i])
                m[i] = [x / t for x in m[i]]
        vals += [x for row in m for x in row]
    return vals


def unit_values(shape, seed):
    """Seeded uniform values with each row (last dimension) scaled to length 1."""
    import random
    rnd = random.Random(seed)
    n, last = 1, shape[-1]
    for d in shape:
        n *= d
    vals = []
    for _ in range(n // last):
        row = [rnd.uniform(-1, 1) for _ in range(last)]
        norm = math.sqrt(sum(x * x for x in row)) or 1.0
        vals += [x / norm for x in row]
    return vals


def write_npy(path, dtype, shape, values):
    """A .npy file (format 1.0) of integers, booleans, float16 or float32, C order."""
    import struct
    code = NPY[dtype]
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        code, "".join("%d, " % d for d in shape) if len(shape) != 1 else "%d," % shape[0])
    hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
    fmt = {"|b1": "B", "|i1": "b", "|u1": "B", "<i2": "h", "<u2": "H", "<i4": "i", "<u4": "I", "<i8": "q",
           "<u8": "Q", "<f2": "e", "<f4": "f"}[code]
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


SPARSE_META_BITS = {"int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32}


def semi_sparse_values(shape, dt, seed):
    """A 2:4 sparse matrix along the last dimension (1:2 for float32), as the host code's
    randn_semi_sparse builds the dense input of the 2:4 compressor."""
    import random
    rnd = random.Random(seed)
    keep, group = (1, 2) if dt == "float32" else (2, 4)
    n = 1
    for d in shape:
        n *= d
    vals = []
    while len(vals) < n:
        nz = set(rnd.sample(range(group), keep))
        vals += [rnd.uniform(-1, 1) if i in nz else 0.0 for i in range(group)]
    return vals[:n]


def sparse_meta_values(shape, dt, a_is_f32):
    """Valid 2:4 metadata for T.gemm_sp's E, as the compressor writes it: each 4-bit field names two
    distinct positions of its group of four, first < second (0b0100 or 0b1110 for float32's pairs)."""
    bits = SPARSE_META_BITS[dt]
    fields = [0x4, 0xE] if a_is_f32 else [a | (b << 2) for a in range(4) for b in range(a + 1, 4)]
    n = 1
    for d in shape:
        n *= d
    vals = []
    for i in range(n):
        v = 0
        for j in range(bits // 4):
            v |= fields[(i * 7 + j * 5) % len(fields)] << (4 * j)
        if dt.startswith("int") and v >= 1 << (bits - 1):
            v -= 1 << bits
        vals.append(v)
    return vals


def index_values(name, shape, defs):
    """Valid contents for an integer or boolean kernel tensor, by TileLang's
    naming conventions (host code builds them like this), or None to keep the
    random fill: masks all true; offsets / cu_seqlens [0, total, total, ...], per-block offsets 0;
    token_indices (sequence, position) pairs; lengths the largest
    -D length; counts 1; block tables and index lists 0, 1, 2, ... along the
    last dimension (distinct, sorted, each inside any dimension they index
    that is at least as long)."""
    n = 1
    for d in shape:
        n *= d
    low = name.lower()
    last = shape[-1] if shape else 1
    if "mask" in low:
        return [1] * n
    if len(shape) == 1 and ("offset" in low or "cu_seq" in low):
        # one sequence of every token (the others empty), which token_indices below agrees with
        total = max([v for k, v in defs.items() if re.search(r"(?i)seq|len|total|tokens", k)] or [n - 1])
        return [0] + [total] * (n - 1)
    if "offset" in low and len(shape) > 1:
        # per-block offsets (minference's BlockOffset: the start token of each key block a query block
        # reads): 0, the first block, which every query block may read
        return [0] * n
    if "token_ind" in low and len(shape) == 2 and last == 2:
        return [x for t in range(shape[0]) for x in (0, t)]
    if re.search(r"seqlen|seq_len|lens$|lengths", low):
        cands = [v for k, v in defs.items() if re.search(r"(?i)max.*(seq|len)", k)]
        # block-sparse kernels mask keys past the length by block index: every block they may select is inside
        bn = [v for k, v in defs.items() if re.match(r"(?i)^block_?n$", k)]
        nb = [v for k, v in defs.items() if re.search(r"(?i)selected_blocks|^num_blocks$|max_num_blocks", k)]
        if bn and nb:
            cands.append(max(bn) * max(nb))
        return [max(cands) if cands else 1] * n
    if "count" in low:
        return [1] * n
    if re.search(r"indices|index|idx|_ids$|table", low):
        return [i % last for i in range(n)]
    return None


def inputs(p, tilec, defs):
    """--input NAME=F.npy for the integer and boolean tensors of the kernel
    whose contents must be valid (index_values); the files go next to p."""
    try:
        r = subprocess.run(["nice", tilec, "compile", p, "--emit", "ir"] + defs, capture_output=True, text=True,
                           timeout=60)
    except subprocess.TimeoutExpired:
        return []
    dv = {}
    for d in defs:
        k, _, v = d[2:].partition("=")
        if v.isdigit():
            dv[k] = int(v)
    out = []
    unit = open(p + ".unit").read().split() if os.path.exists(p + ".unit") else []
    stoch = open(p + ".dstoch").read().split() if os.path.exists(p + ".dstoch") else []
    src = open(p).read()
    found = PARAM.findall(r.stdout if r.returncode == 0 else "")
    adt = {name: dt for name, dt, _ in found}
    for name, dt, shp in found:
        if dt not in NPY:
            continue
        try:  # a T.dynamic size takes its -D value
            shape = [dv[x.strip()] if x.strip() in dv else int(x) for x in shp.split(",") if x.strip()]
        except ValueError:
            continue  # a symbol without a value: keep the random fill
        if dt.startswith("float") and name == "dense" and "semi_sparse" in src and shape:
            vals = semi_sparse_values(shape, dt, len(out))
        elif dt.startswith("float") and name in stoch and len(shape) >= 2:
            vals = doubly_stochastic_values(shape, len(out))
        elif dt.startswith("float"):
            vals = unit_values(shape, len(out)) if name in unit and shape else None
        elif name in ("E", "meta", "e") and "T.gemm_sp" in src and dt in SPARSE_META_BITS:
            vals = sparse_meta_values(shape, dt, "float32" in adt.get("A_sparse", "") or "float32" in adt.get("A", ""))
        else:
            vals = index_values(name, shape, dv)
        if vals is None:
            continue
        f = "%s.%s.npy" % (p, name)
        write_npy(f, dt, shape, vals)
        out += ["--input", "%s=%s" % (name, f)]
    return out


SIZE = re.compile(r"^(M|N|K)$")


def reads_through(src, names, depth=4):
    """names and what they are computed from by the file's assignments
    (`n_blocks = T.ceildiv(N, block_N)`: n_blocks reads N and block_N), a few levels deep."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return set(names)
    deps = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            deps.setdefault(n.targets[0].id, set()).update(names_in(n.value))
    out = set(names)
    for _ in range(depth):
        more = set().union(*[deps.get(x, set()) for x in out]) - out
        if not more:
            break
        out |= more
    return out


def fit_asserts(p, tilec, defs):
    """Sizes that satisfy the kernel's own compile-time assertions: while
    `tilec compile` stops on a failed `assert`, change the -D values the
    assertion's line names (`assert hc_mult3 <= 32`: halved, and if that line
    still fails, doubled from where they were, up to 8 times), else (or when
    that does not help) double the GEMM sizes M, N, K the assertion reads through the file's
    assignments (`assert n_blocks % (2 * group_size) == 0` with `n_blocks = T.ceildiv(N, block_N)`: N),
    or all three when it reads none of them, a few times at most; the kernel code is not touched."""
    tried = {}
    src_text = open(p).read()
    for _ in range(12):
        try:
            r = subprocess.run(["nice", tilec, "compile", p, "--emit", "ir", "-o", "/dev/null"] + defs,
                               capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            return defs
        lines = r.stderr.splitlines()
        if r.returncode != 2 or not lines or "assertion failed" not in lines[0]:
            return defs
        where = lines[0].split(" error:")[0]
        src = lines[1] if len(lines) > 1 else ""
        named = set(re.findall(r"[A-Za-z_]\w*", src))
        base, n = tried.get(where, (defs, 0))
        tried[where] = (base, n + 1)
        if n >= 8:
            return defs
        out, changed = [], False
        for d in (defs if n == 0 else base):
            k, _, v = d[2:].partition("=")
            if n < 4 and v.isdigit() and int(v) > 1 and k in named:
                d, changed = "-D%s=%d" % (k, int(v) // 2 if n == 0 else int(v) << n), True
            out.append(d)
        if not changed:
            defs = base if n == 4 else defs
            out = []
            sizes = {x for x in reads_through(src_text, named) if SIZE.match(x)}
            for d in defs:
                k, _, v = d[2:].partition("=")
                if v.isdigit() and SIZE.match(k) and (not sizes or k in sizes) and int(v) < 4096:
                    d, changed = "-D%s=%d" % (k, int(v) * 2), True
                out.append(d)
        if not changed:
            return defs
        defs = out
    return defs


def cmd_run(out_dir, tilec, log, timeout, backend):
    res = {}
    for root, dirs, fs in os.walk(out_dir):
        dirs.sort()
        for f in sorted(fs):
            if not f.endswith(".py"):
                continue
            p = os.path.join(root, f)
            defs = open(p + ".defs").read().split() if os.path.exists(p + ".defs") else []
            defs = fit_asserts(p, tilec, defs)
            cmd = ["nice", tilec, "run", p, "--check"] + (["--backend", backend] if backend else []) + defs
            cmd += inputs(p, tilec, defs)
            try:
                # the limit is CPU time (the machine may be loaded); wall time only catches hangs
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=max(10 * timeout, 300),
                                   preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CPU, (timeout, timeout + 5)))
                out = (r.stderr if r.returncode else r.stdout).strip().splitlines()
                rc, msg = r.returncode, (out[0] if out else "")
                if r.returncode == -signal.SIGXCPU or r.returncode == -signal.SIGKILL:
                    rc, msg = "timeout", "longer than %d s of CPU time" % timeout
                elif r.returncode < 0:
                    msg = "killed by signal %d" % -r.returncode
            except subprocess.TimeoutExpired:
                rc, msg = "timeout", "longer than %d s (wall)" % max(10 * timeout, 300)
            rel = os.path.relpath(p, out_dir)
            res[rel] = (rc, msg, " ".join(cmd[4:]))
            print(rc, rel, msg[:300], flush=True)
    json.dump(res, open(log, "w"), indent=1)
    print("PASS %d / %d" % (sum(1 for v in res.values() if v[0] == 0), len(res)))


def folder(rel):
    d = os.path.dirname(rel)
    return d.split("/")[0] if d else "(top level)"


def cmd_table(log, before=None):
    now = json.load(open(log))
    old = json.load(open(before)) if before else None
    rows = {}
    for rel, v in now.items():
        r = rows.setdefault(folder(rel), [0, 0, 0])
        r[0] += 1
        r[2] += v[0] == 0
        if old is not None:
            r[1] += old.get(rel, [None])[0] == 0
    print("| folder | files | " + ("before | after |" if old is not None else "pass |"))
    print("| --- | ---: | " + ("---: | ---: |" if old is not None else "---: |"))
    tot = [0, 0, 0]
    for k in sorted(rows):
        r = rows[k]
        tot = [a + b for a, b in zip(tot, r)]
        print("| %s | %d | " % (k, r[0]) + ("%d | %d |" % (r[1], r[2]) if old is not None else "%d |" % r[2]))
    print("| **all** | %d | " % tot[0] + ("%d | %d |" % (tot[1], tot[2]) if old is not None else "%d |" % tot[2]))


def cmd_reasons(log):
    for rel, v in sorted(json.load(open(log)).items()):
        if v[0] != 0:
            print(v[0], rel, re.sub(r"^\S+\.py:(\d+:\d+:)? ", "", v[1])[:200])


def main():
    a = sys.argv[1:]
    if len(a) >= 3 and a[0] == "strip":
        cmd_strip(a[1], a[2], a[3] if len(a) > 3 else None)
    elif len(a) >= 4 and a[0] == "run":
        timeout, backend, rest = 40, None, a[4:]
        while rest:
            if rest[0] == "--timeout" and len(rest) > 1:
                timeout, rest = int(rest[1]), rest[2:]
            elif rest[0] == "--backend" and len(rest) > 1:
                backend, rest = rest[1], rest[2:]
            else:
                sys.exit("unknown option " + rest[0])
        cmd_run(a[1], a[2], a[3], timeout, backend)
    elif len(a) >= 2 and a[0] == "table":
        cmd_table(a[1], a[2] if len(a) > 2 else None)
    elif len(a) == 2 and a[0] == "reasons":
        cmd_reasons(a[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
