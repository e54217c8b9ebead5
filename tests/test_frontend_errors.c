/*
 * tests/test_frontend_errors.c — the frontend's diagnostics: each bad
 * program gives its first error at the expected line with the expected
 * text (the construct named), and no odd program crashes the compiler.
 */
#include "frontend_harness.h"

Test(frontend_errors, gemm_accumulator_in_shared)
{
    expect_err(KERNEL_HEAD
               "        a = T.alloc_shared((64, 64), \"float16\")\n"
               "        c = T.alloc_shared((64, 64), \"float32\")\n"
               "        T.gemm(a, a, c)\n", 9, "must be a T.alloc_fragment");
}

Test(frontend_errors, gemm_dtype_mismatch)
{
    expect_err(KERNEL_HEAD
               "        a = T.alloc_shared((64, 64), \"float16\")\n"
               "        b = T.alloc_shared((64, 64), \"float32\")\n"
               "        c = T.alloc_fragment((64, 64), \"float32\")\n"
               "        T.gemm(a, b, c)\n", 10, "must have the same dtype");
}

Test(frontend_errors, gemm_shape_mismatch)
{
    expect_err(KERNEL_HEAD
               "        a = T.alloc_shared((64, 32), \"float16\")\n"
               "        b = T.alloc_shared((16, 64), \"float16\")\n"
               "        c = T.alloc_fragment((64, 64), \"float32\")\n"
               "        T.gemm(a, b, c)\n", 10, "reduction dimension of A ('a') is 32 but that of B ('b') is 16");
}

Test(frontend_errors, gemm_global_operand)
{
    expect_err(KERNEL_HEAD
               "        c = T.alloc_fragment((64, 64), \"float32\")\n"
               "        T.gemm(A, A, c)\n", 8, "copy its tile into T.alloc_shared");
}

Test(frontend_errors, copy_shape_mismatch)
{
    expect_err(KERNEL_HEAD
               "        s = T.alloc_shared((32, 16), \"float16\")\n"
               "        T.copy(A[0:16, 0:32], s)\n", 8, "has shape (16, 32) but the destination region of 's' has shape (32, 16)");
}

Test(frontend_errors, copy_both_corners)
{
    expect_err(KERNEL_HEAD
               "        s = T.alloc_shared((32, 16), \"float16\")\n"
               "        T.copy(A[0, 0], s[0, 0])\n", 8, "both operands of T.copy are single elements");
}

Test(frontend_errors, index_count)
{
    expect_err(KERNEL_HEAD "        A[0] = 1\n", 7, "buffer 'A' has 2 dimensions but 1 index is given");
}

Test(frontend_errors, constant_index_out_of_range)
{
    expect_err(KERNEL_HEAD
               "        s = T.alloc_fragment((4,), \"float32\")\n"
               "        s[4] = 1\n", 8, "index 4 is out of range for dimension 0 of 's' (size 4)");
}

Test(frontend_errors, missing_parameter)
{
    expect_err(GEMM, 5, "parameter 'M' of 'matmul' has no default value: pass -D M=VALUE");
}

Test(frontend_errors, unknown_define)
{
    tilec_define_t defs[] = {{"M", "1"}, {"N", "1"}, {"K", "1"}, {"blockM", "3"}};
    expect_err_e(GEMM, NULL, 4, defs, 0, "-D blockM: 'blockM' is not a parameter, module constant or T.dynamic "
                 "symbol of this program (you can set: M, N, K, block_M");
}

/* T.sync_grid() only at a kernel body's top level; values before it end there. */
Test(frontend_errors, sync_grid_misuse)
{
    expect_err(KERNEL_HEAD "        for i in T.serial(2):\n            T.sync_grid()\n", 8, "at the top level of a kernel body only");
    expect_err(KERNEL_HEAD "        x = bx * 2\n        T.sync_grid()\n        B[x] = 0\n", 9,
               "'x' is a run-time value of the kernel before T.sync_grid()");
}

/* Misused classes are diagnostics. */
Test(frontend_errors, class_misuse)
{
    expect_err("class A:\n    x = 1\na = A()\ny = a.z\n", 4, "'A' object has no attribute 'z'");
    expect_err("class A:\n    x = 1\ny = A.z\n", 3, "class 'A' has no attribute 'z'");
    expect_err("class A:\n    x = 1\na = A(3)\n", 3, "class 'A' has no __init__ and takes no arguments");
    expect_err("class A:\n    def __init__(self, v):\n        self.v = v\na = A()\n", 4,
               "missing argument 'v' in the call of '__init__'");
}

/* A -D value that is not what it looks like says what is wrong with it
 * (an int past int64 used to become a float: "must be an integer, got float"). */
Test(frontend_errors, define_values)
{
    static const struct { const char *v, *msg; } cases[] = {
        {"99999999999999999999", "-D M=99999999999999999999: out of range for int64"},
        {"-99999999999999999999", "out of range for int64"},
        {"0x1ffffffffffffffff", "out of range for int64"},
        {"1e999", "-D M=1e999: out of range for float64"},
        {"12abc", "-D M=12abc: not a number"},
        {"1.2.3", "not a number"},
        {"0xZZ", "-D M=0xZZ: not a hexadecimal integer"},
        {"(1,,2)", "-D M=(1,,2): an empty item in a tuple or list value"},
        {"[(1)]", "a tuple or list value takes one level of brackets"},
        {"(1, 12abc)", "-D M=(1, 12abc): not a number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tilec_define_t defs[] = {{"M", cases[i].v}, {"N", "1"}, {"K", "1"}};
        expect_err_e(GEMM, NULL, 3, defs, 0, cases[i].msg);
    }
    {
        tilec_define_t defs[] = {{"M", "1"}, {"N", "1"}, {"K", "1"}, {"block_M", "abc"}};
        expect_err_e(GEMM, NULL, 4, defs, 0, "-D block_M=abc: not a number (the program's value of 'block_M' is an integer)");
    }
    {
        tilec_define_t defs[] = {{"M", "0x10"}, {"N", "-0"}, {"K", "1e-400"}};
        res_t *x = compile_e("M = 1\nN = 2\nK = 3.0\n", NULL, 3, defs);
        cr_assert_eq(x->rc, -1); /* no kernel, but the values were read */
        cr_assert_null(strstr(tilec_diag_text(&x->d), "-D "), "%s", tilec_diag_text(&x->d));
        cr_assert(strstr(tilec_diag_text(&x->d), "no kernel") || strstr(tilec_diag_text(&x->d), "prim_func"),
                  "%s", tilec_diag_text(&x->d));
        done(x);
    }
}

Test(frontend_errors, unknown_entry)
{
    tilec_define_t defs[] = {{"M", "1"}, {"N", "1"}, {"K", "1"}};
    expect_err_e(GEMM, "gemm", 3, defs, 0, "no kernel factory or @T.prim_func named 'gemm' in t.py (available: matmul)");
}

/* Any import is accepted; using what tilec does not evaluate is the error,
 * and it names the construct. */
Test(frontend_errors, foreign_import)
{
    expect_err("import tilelang\nimport torch\nx = torch.randn(4)\n", 3, "'torch.randn(...)' is outside the subset");
    expect_err("from numpy import zeros\nz = zeros(3)\n", 2, "'numpy.zeros(...)' is outside the subset");
    expect_err("import numpy as np\n@np.vectorize\ndef f(x):\n    return x\n", 2,
               "decorator 'numpy.vectorize' is outside the subset");
    expect_err("from os.path import *\n", 1, "`from os.path import *` is outside the subset");
}

Test(frontend_errors, return_in_prim_func)
{
    expect_err(KERNEL_HEAD "        T.clear(B)\n    return A\n", 8, "a @T.prim_func cannot return a value");
}

Test(frontend_errors, no_kernel)
{
    expect_err(HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    pass\n", 4,
               "has no `with T.Kernel(...)` block");
}

Test(frontend_errors, assert_message)
{
    expect_err(HDR "n = 3\nassert n % 2 == 0, \"n must be even\"\n", 5, "assertion failed: n must be even");
}

Test(frontend_errors, macro_recursion)
{
    expect_err(HDR "@T.macro\ndef rec(x):\n    rec(x)\n"
               "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n"
               "    with T.Kernel(1) as bx:\n        rec(A)\n", 6, "calls nested too deeply");
}

/* while runs at compile time, bounded; on a run-time condition only as a
 * counted loop over a T.alloc_var with a constant positive step */
Test(frontend_errors, while_loop)
{
    static const char need[] = "a while loop on a run-time condition needs the form `while v < E:`";
    expect_err(KERNEL_HEAD "        while True:\n            pass\n", 8, "compile-time evaluation takes too long");
    expect_err(KERNEL_HEAD "        i = bx\n        while i < 2:\n            i += 1\n", 8, need);
#define VAR_HEAD KERNEL_HEAD "        i = T.alloc_var(T.int32)\n        i = bx\n"
    expect_err(VAR_HEAD "        while i > 0:\n            i -= 1\n", 9, need);               /* descending */
    expect_err(VAR_HEAD "        while i < 8:\n            i += bx\n", 9, need);              /* step not constant */
    expect_err(VAR_HEAD "        while i < 8:\n            i += 0\n", 9, need);               /* no progress */
    expect_err(VAR_HEAD "        while i < 8:\n            i += 1\n            i += 1\n", 9,
               "(2 statements of the body write 'i')");
    expect_err(VAR_HEAD "        while i < 8:\n            if bx == 0:\n                i += 1\n", 9,
               "(1 statement of the body writes 'i')");                               /* not at the top */
    expect_err(VAR_HEAD "        while i < B[0]:\n            i += 1\n", 9, need);           /* E reads a buffer */
    expect_err(VAR_HEAD "        while i < 8:\n            B[i] = 1.0\n", 9,
               "(0 statements of the body write 'i')");
#undef VAR_HEAD
}

Test(frontend_errors, raise_and_python_values)
{
    expect_err(HDR "n = 3\nif n % 2:\n    raise NotImplementedError(f'odd n={n}')\n", 6, "NotImplementedError: odd n=3");
    expect_err(HDR "x = [1, 2].push(3)\n", 4, "list has no attribute 'push'");
    expect_err(HDR "x = sorted([3, 1], key=len)\n", 4, "key must be a function or lambda defined in the program");
    expect_err(HDR "x = '{}'.format()\n", 4, "str.format: not enough arguments");
    expect_err(HDR "x = f'{1:q}'\n", 4, "unknown format type 'q'");
}

Test(frontend_errors, undefined_name)
{
    expect_err(KERNEL_HEAD "        T.clear(C)\n", 7, "name 'C' is not defined");
}

Test(frontend_errors, reduce_shape)
{
    expect_err(KERNEL_HEAD
               "        a = T.alloc_fragment((64, 32), \"float32\")\n"
               "        r = T.alloc_fragment((32,), \"float32\")\n"
               "        T.reduce_max(a, r, dim=1)\n", 9, "needs a destination of shape (64,), but 'r' has shape (32,)");
}

Test(frontend_errors, parallel_outside_kernel)
{
    expect_err(HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n"
               "    for i in T.Parallel(4):\n        A[i] = 0\n", 6, "T.Parallel must be inside the `with T.Kernel(...)`");
}

Test(frontend_errors, runtime_assert)
{
    expect_err(KERNEL_HEAD "        assert bx < 3\n", 7, "assert needs a compile-time condition");
}

Test(frontend_errors, symbolic_slice_extent)
{
    expect_err(HDR "M = T.dynamic(\"m\")\n@T.prim_func\ndef main(A: T.Tensor((M,), \"float32\")):\n"
               "    with T.Kernel(1) as bx:\n        s = T.alloc_shared((64,), \"float32\")\n"
               "        T.copy(A[0:M], s)\n", 9, "is not a compile-time constant");
}

Test(frontend_errors, break_in_kernel_loop)
{
    expect_err(KERNEL_HEAD "        for i in T.serial(4):\n            break\n", 8, "break is not supported in kernel loops");
}

Test(frontend_errors, compile_time_division_by_zero)
{
    expect_err(HDR "X = 1 // 0\n", 4, "integer division by zero");
}

Test(frontend_errors, kernel_unpack_count)
{
    expect_err(HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n"
               "    with T.Kernel(2, 2) as bx:\n        pass\n", 6, "T.Kernel has 2 grid dimensions");
}

Test(frontend_errors, tensor_annotation_required)
{
    expect_err(HDR "@T.prim_func\ndef main(A):\n    with T.Kernel(1) as bx:\n        pass\n", 5,
               "kernel parameter 'A' needs a type");
}

Test(frontend_errors, symbol_given_twice)
{
    tilec_define_t defs[] = {{"m", "3"}, {"M", "4"}};
    expect_err_e(HDR "M = T.dynamic(\"m\")\n@T.prim_func\ndef main(A: T.Tensor((M,), \"float32\")):\n"
                 "    with T.Kernel(1) as bx:\n        pass\n", NULL, 2, defs, 4, "given twice");
}

Test(frontend_errors, float_index)
{
    expect_err(KERNEL_HEAD "        B[0.5] = 1\n", 7, "an index must be an integer");
}

Test(frontend_errors, alloc_outside_kernel)
{
    expect_err(HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n"
               "    s = T.alloc_shared((4,), \"float32\")\n", 6, "must be inside the `with T.Kernel(...)`");
}

Test(frontend_errors, unknown_dtype)
{
    expect_err(KERNEL_HEAD "        s = T.alloc_shared((4,), \"float8\")\n", 7, "unknown dtype 'float8'");
}

Test(frontend_errors, unknown_T_member)
{
    expect_err(KERNEL_HEAD "        T.no_such_thing(B)\n", 7, "'T' has no member 'no_such_thing'");
}

/* Programs that are wrong in many small ways must give a diagnostic, never a crash. */
Test(frontend_errors, no_crash_on_odd_programs)
{
    static const char *const progs[] = {
        HDR "x = T\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1):\n        A[0] = A\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1):\n        A[0] = A[0:2]\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1):\n        T.copy(1, A)\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1):\n        T.gemm(A)\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(0):\n        pass\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1, threads=5000):\n        pass\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((-4,), \"float32\")):\n    with T.Kernel(1):\n        pass\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1):\n        x = T.alloc_shared((1 << 40,), \"float32\")\n",
        HDR "x = (1,) * 100000000000\n",
        HDR "x = 2 ** 64\n",
        HDR "def f():\n    for i in range(1 << 60):\n        pass\n    return 1\nX = f()\n",
        HDR "def f():\n    return f()\nX = f()\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        for i in T.Parallel(4, 4):\n            pass\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        A.shape = 3\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        A[0] = \"s\"\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        T.reduce_sum(A, A, dim=5)\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        A[0] = A[0] @ A[0]\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        A[0] = A[0] << 1\n",
        HDR "def f(x=T.Kernel):\n    return x(1)(2)\nY = f()\n",
        HDR "x = 0\nfor i in range(10 ** 12):\n    x += i\n",
        HDR "x = (1,)\ny = (1,)\nfor i in range(100000):\n    x = (x,)\n    y = (y,)\nz = x < y\n",
        HDR "M = T.dynamic(\"m\")\ny = M\nfor i in range(5000):\n    y = y + 1\n",
        HDR "@T.macro\ndef dbl(x):\n    return x + x\n@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n"
            "    with T.Kernel(1) as b:\n        v = A[0]\n        for i in range(60):\n            v = dbl(v)\n"
            "        A[1] = dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(dbl(v))))))))))))))))))))))\n",
        HDR "x = (1,) * 500000\nfor i in range(100000):\n    y = x + x\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        while True:\n            pass\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        x = T.alloc_var(\"float32\")\n        T.gemm(x, x, x)\n",
        HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.Kernel(1) as b:\n        T.atomic_add(A, 1.0)\n        T.atomic_add(A[0:2], A[0:3])\n",
        "",
    };
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
        res_t *x = compile_e(progs[i], NULL, 0, NULL);
        cr_assert_eq(x->rc, -1, "program %zu compiled but should not", i);
        cr_assert(strstr(tilec_diag_text(&x->d), "error: "), "program %zu: no diagnostic", i);
        done(x);
    }
}

/* thread-level and pointer constructs outside the subset name themselves */
Test(frontend_errors, named_outside_subset)
{
    expect_err(KERNEL_HEAD "        p = T.ptr(\"float32\")\n", 7, "T.ptr is outside the subset tilec supports");
}

Test(frontend_errors, reinterpret)
{
    expect_err(KERNEL_HEAD "        B[0] = T.reinterpret(T.Cast(\"int8\", B[1]), \"int4\")\n", 7,
               "T.reinterpret of int8 as int4: the 4-bit dtypes are read through T.cast");
    expect_err(KERNEL_HEAD "        B[0] = T.reinterpret(B[1], \"int16\")\n", 7, "T.reinterpret needs dtypes of the same size");
    expect_err(KERNEL_HEAD "        B[0] = T.reinterpret(B[1], 3)\n", 7, "T.reinterpret needs a dtype");
}

Test(frontend_errors, mma_emitter)
{
    /* the register buffers the emitter took hold nothing: reading one is a diagnostic */
    expect_err(MMA_SRC("        C[0, 0] = C_l[0]\n"), 28, "'C_l' belongs to the MMA emitter");
    expect_err(HDR "from tilelang.intrinsics.mma_macro_generator import TensorCoreIntrinEmitter\n"
               "em = TensorCoreIntrinEmitter(reduce_k=2)\n", 5, "reduce_k or num_elems_per_byte other than 1");
}

Test(frontend_errors, loop_index_past_on_chip_buffer)
{
    expect_err(KERNEL_HEAD
               "        s = T.alloc_fragment((32,), \"float32\")\n"
               "        for i in T.Parallel(64):\n"
               "            s[i] = 0\n", 9, "this index ranges over 0..63 in its loops, outside dimension 0 of 's' (size 32)");
}

Test(frontend_errors, eager_mistakes)
{
    tilec_define_t defs[] = {{"block", "8"}};
    /* a tensor declared after the kernel block started */
    expect_err_e(HDR "@tilelang.jit\ndef f(A, block):\n    N = T.const(\"N\")\n    A: T.Tensor((N,), \"float32\")\n"
                 "    with T.Kernel(1) as bx:\n        B = T.empty((N,), \"float32\")\n        T.copy(A, B)\n",
                 NULL, 1, defs, 9, "declare every tensor");
    expect_err(HDR "A: T.Tensor((4,), \"float32\")\n", 4, "declares a tensor only in an eager-style");
    expect_err(HDR "M = T.const(\"M, 3\")\n", 4, "is not a list of names");
    expect_err(HDR "@tilelang.jit(pass_configs={1: True})\ndef f():\n    pass\n", 4,
               "a pass_configs key must be a string");
}

Test(frontend_errors, scalar_parameters)
{
    expect_err(HDR "@T.prim_func\n"
                   "def main(A: T.Tensor((8,), \"float32\"), alpha: T.float32):\n"
                   "    with T.Kernel(1) as bx:\n"
                   "        A[0] = alpha\n",
               5, "scalar kernel parameter 'alpha: float32' needs its value at compile time: pass -D alpha=VALUE");
    expect_err(HDR "@tilelang.jit(out_idx=[1])\n"
                   "def f():\n"
                   "    @T.prim_func\n"
                   "    def main(A: T.Tensor((8,), \"float32\"), n: T.int32):\n"
                   "        with T.Kernel(1) as bx:\n"
                   "            A[0] = n\n"
                   "    return main\n",
               0, "out_idx 1 names a scalar parameter");
}

/* a slice extent seen through a temporary is refused once the temporary is assigned again */
Test(frontend_errors, slice_through_reassigned_temporary)
{
    expect_err(HDR "@T.prim_func\n"
                   "def main(A: T.Tensor((16,), \"float32\"), B: T.Tensor((16,), \"float32\")):\n"
                   "    with T.Kernel(4) as bx:\n"
                   "        s = T.alloc_shared((4,), \"float32\")\n"
                   "        h0 = bx * 4\n"
                   "        h1 = h0 + 4\n"
                   "        T.copy(A[h0:h1], s)\n"
                   "        h0 = bx * 2\n"
                   "        T.copy(s, B[0:4])\n",
               10, "the extent of this slice depends on 'h0', which is assigned more than once");
}

/* Looking through temporaries turns a DAG into a tree: x_{i+1} = x_i + x_i
 * forty times would expand 2^40 nodes.  The walk is bounded: a diagnostic
 * (or an answer), not a hang. */
Test(frontend_errors, slice_through_doubling_temporaries_is_bounded)
{
    expect_err("import tilelang.language as T\n@T.prim_func\ndef main(A: T.Tensor((16,), \"float32\")):\n    with T.Kernel(4) as bx:\n        s = T.alloc_shared((4,), \"float32\")\n        x0 = bx * 4\n        x1 = x0 + x0\n        x2 = x1 + x1\n        x3 = x2 + x2\n        x4 = x3 + x3\n        x5 = x4 + x4\n        x6 = x5 + x5\n        x7 = x6 + x6\n        x8 = x7 + x7\n        x9 = x8 + x8\n        x10 = x9 + x9\n        x11 = x10 + x10\n        x12 = x11 + x11\n        x13 = x12 + x12\n        x14 = x13 + x13\n        x15 = x14 + x14\n        x16 = x15 + x15\n        x17 = x16 + x16\n        x18 = x17 + x17\n        x19 = x18 + x18\n        x20 = x19 + x19\n        x21 = x20 + x20\n        x22 = x21 + x21\n        x23 = x22 + x22\n        x24 = x23 + x23\n        x25 = x24 + x24\n        x26 = x25 + x25\n        x27 = x26 + x26\n        x28 = x27 + x27\n        x29 = x28 + x28\n        x30 = x29 + x29\n        x31 = x30 + x30\n        x32 = x31 + x31\n        x33 = x32 + x32\n        x34 = x33 + x33\n        x35 = x34 + x34\n        x36 = x35 + x35\n        x37 = x36 + x36\n        x38 = x37 + x37\n        x39 = x38 + x38\n        x40 = x39 + x39\n        y = x40 + 4\n        T.copy(A[x40:y], s)\n", 0, "is not a compile-time constant");
}

/* Hopper/Blackwell objects read at block level (wsops.c): what has no
 * block-level meaning is named; misuse is a diagnostic. */
Test(frontend_errors, warp_specialized_objects)
{
    expect_err(KERNEL_HEAD "        b = T.alloc_barrier([128, 128])\n        T.barrier_arrive(b[2])\n", 8,
               "barrier index 2 is out of range for 2 barriers");
    expect_err(KERNEL_HEAD "        T.barrier_wait(A, 0)\n", 7, "T.barrier_wait takes a barrier from T.alloc_barrier");
    expect_err(KERNEL_HEAD "        b = T.alloc_barrier(0)\n", 7, "the arrive count must be positive");
    expect_err(KERNEL_HEAD "        s = T.alloc_shared((64,), \"float32\")\n        b = T.alloc_barrier(1)\n"
               "        T.tma_copy(B, s, barrier=b, cluster_mask=3)\n", 9, "clusters are outside the subset");
    expect_err(KERNEL_HEAD "        with T.ws(0) as w:\n            pass\n", 7, "`with T.ws(...)` binds no name");
    expect_err(HDR "@T.prim_func\ndef main(A: T.Tensor((4,), \"float32\")):\n    with T.ws(0):\n        pass\n", 6,
               "T.ws must be inside the `with T.Kernel(...)` block");
    expect_err(KERNEL_HEAD "        tx = T.get_thread_binding()\n        B[tx % 64] = 1.0\n        T.clear(B)\n", 9,
               "T.clear after a thread index");
    expect_err(KERNEL_HEAD "        tx = T.get_thread_binding()\n        for i in T.Parallel(4):\n            B[i] = tx\n", 8,
               "T.Parallel after a thread index");
    expect_err(KERNEL_HEAD "        tx = T.thread_binding(0, 64, thread=\"threadIdx.x\")\n", 7,
               "must cover the block's 128 threads");
    expect_err(KERNEL_HEAD "        B[T.get_thread_binding()] = 0\n", 7, "only read as a statement");
    expect_err(KERNEL_HEAD "        c = T.alloc_fragment((8, 8), \"float32\")\n        a = T.alloc_shared((8, 8), \"float16\")\n"
               "        T.tcgen05_gemm(a, a, c, mbar=None, use_2cta=True)\n", 9, "clusters are outside the subset");
}

/* Warp roles (wsroles.c): what cannot be put in one barrier-true order, or
 * would not compute what the GPU computes, is named. */
#define ROLES_HEAD KERNEL_HEAD "        f = T.alloc_barrier(128)\n        g = T.alloc_barrier(64)\n" \
    "        tx = T.get_thread_binding()\n"
Test(frontend_errors, warp_roles)
{
    /* the consumer waits for a phase no role completes */
    expect_err(ROLES_HEAD "        if tx < 64:\n            T.barrier_wait(f, 0)\n        else:\n"
               "            T.barrier_arrive(g)\n", 11, "would wait for ever");
    /* a register buffer of one role read by the other */
    expect_err(ROLES_HEAD "        r = T.alloc_fragment((64,), \"float32\")\n        if tx < 64:\n"
               "            T.fill(r, 1.0)\n            T.barrier_arrive(g)\n        else:\n"
               "            T.barrier_wait(g, 0)\n            T.copy(r, B)\n", 16, "register memory used by two warp roles");
    /* a run-time parity */
    expect_err(ROLES_HEAD "        if tx < 64:\n            T.barrier_wait(g, bx)\n        else:\n"
               "            T.barrier_arrive(g)\n", 11, "parity is a run-time value");
    /* roles' loops of different trip counts */
    expect_err(ROLES_HEAD "        if tx < 64:\n            for k in T.serial(3):\n                T.barrier_wait(g, k % 2)\n"
               "        else:\n            for k in T.serial(4):\n                T.barrier_arrive(g)\n", 14,
               "runs 4 times and the one at line 11 3 times");
    /* a barrier operation hidden in a macro called from a role */
    expect_err(HDR "@T.macro\ndef arrive(b):\n    T.barrier_arrive(b)\n" "@T.prim_func\ndef main(B: T.Tensor((64,), \"float32\")):\n"
               "    with T.Kernel(1, threads=128) as bx:\n        g = T.alloc_barrier(64)\n"
               "        tx = T.get_thread_binding()\n        if tx < 64:\n            T.barrier_wait(g, 0)\n"
               "        else:\n            arrive(g)\n", 6, "inside a call in warp-role code");
    /* the index that splits the roles is still checked */
    expect_err(KERNEL_HEAD "        g = T.alloc_barrier(64)\n        tx = T.thread_binding(0, 64, thread=\"threadIdx.x\")\n"
               "        if tx < 32:\n            T.barrier_wait(g, 0)\n        else:\n            T.barrier_arrive(g)\n", 8,
               "must cover the block's 128 threads");
    /* per-thread code of a role: threads may not exchange values inside it */
    expect_err(ROLES_HEAD "        s = T.alloc_shared((64,), \"float32\")\n        if tx < 64:\n"
               "            T.barrier_wait(g, 0)\n        else:\n            for u in T.serial(1):\n"
               "                s[tx - 64] = 1.0\n                B[tx - 64] = s[127 - tx]\n"
               "            T.barrier_arrive(g)\n", 16, "did not write itself");
    /* T.ptx_cp_async: the size must be the runs' */
    expect_err(ROLES_HEAD "        s = T.alloc_shared((64, 8), \"float16\")\n        if tx < 64:\n"
               "            T.barrier_wait(g, 0)\n        else:\n"
               "            T.ptx_cp_async(T.access_ptr(s[tx - 64, 0], \"w\", 8), T.access_ptr(A[tx - 64, 0], \"r\", 8), 4)\n"
               "            T.cp_async_barrier_noinc(g)\n", 14, "the runs are 8 elements (16 bytes)");
    expect_err(ROLES_HEAD "        s = T.alloc_shared((64, 8), \"float16\")\n        if tx < 64:\n"
               "            T.barrier_wait(g, 0)\n        else:\n"
               "            T.ptx_cp_async(T.access_ptr(s[tx - 64, 0], \"w\", 8), T.access_ptr(A[tx - 64, 0], \"x\", 8), 8)\n"
               "            T.cp_async_barrier_noinc(g)\n", 14, "mode is \"r\", \"w\" or \"rw\"");
}

Test(frontend_errors, runtime_bit_operations)
{
    expect_err(KERNEL_HEAD "        for i in T.Parallel(64):\n            B[i] = T.cast(i << 40, \"float32\")\n", 8,
               "shift count 40 is out of range for int32");
    expect_err(KERNEL_HEAD "        for i in T.Parallel(64):\n            B[i] = B[i] & 1\n", 8,
               "operator & needs integers, got float32");
    expect_err(KERNEL_HEAD "        for i in T.Parallel(64):\n            B[i] = ~B[i]\n", 8,
               "operator ~ needs an integer, got float32");
}

Test(frontend_errors, reviews)
{
    expect_err(KERNEL_HEAD "        v = T.Tensor((32, 32), \"float16\", A.data)\n", 7,
               "the view has 1024 elements but 'A' has 4096");
    expect_err(KERNEL_HEAD "        v = T.view(B, dtype=\"int32\")\n", 7,
               "T.view of the kernel tensor 'B' as int32 changes the dtype of the caller's bytes");
    /* an on-chip re-typed view is scratch of its own: reading the other dtype's bits is named */
    expect_err(KERNEL_HEAD "        s = T.alloc_shared((8, 8), \"float16\")\n"
               "        f = T.view(s, shape=(4, 8), dtype=\"float32\")\n"
               "        T.fill(s, 1)\n"
               "        B[0] = f[0, 0]\n", 10, "this reads 'f' (float32) where the last write went through 's' (float16, line 9)");
    expect_err(KERNEL_HEAD "        s = T.alloc_shared((8, 8), \"float16\")\n"
               "        f = T.view(s, shape=(4, 8), dtype=\"float32\")\n"
               "        for k in T.serial(2):\n"
               "            f[0, 0] = 1.0\n"
               "            B[k] = f[0, 0]\n"
               "            B[k + 2] = s[1, 1]\n", 12, "this reads 's' (float16) where the last write went through 'f'");
    expect_err(KERNEL_HEAD "        s = T.alloc_shared((8, 8), \"float16\")\n"
               "        f = T.view(s, shape=(8, 8), dtype=\"float32\")\n", 8,
               "the view (64 x float32) is larger than 's' (64 x float16)");
    expect_err(KERNEL_HEAD "        v = T.reshape(B, (8, 8))\n        T.fill(v, 0)\n", 8,
               "T.fill / T.clear on a re-view of 'B'");
    expect_err(KERNEL_HEAD "        f = T.alloc_fragment((8, 8), \"float32\")\n        v = T.reshape(f, (64,))\n"
               "        T.cumsum(v)\n", 9, "T.cumsum on a re-view of 'f'");
    expect_err(KERNEL_HEAD "        s = T.alloc_shared((4, 4), \"float16\")\n        T.im2col(A, s, 0, 0, 3, 1, 1, 1)\n", 8,
               "T.im2col takes a 4-D (N, H, W, C) global image tensor");
}

/* T.rng_init / T.rng_rand (frontend/rng.c): where a stream has no thread to
 * belong to, or its draws no fixed order. */
Test(frontend_errors, rng_streams)
{
    expect_err(KERNEL_HEAD "        T.rng_init(0)\n", 7, "T.rng_init in block-level code of a block of 128 threads");
    expect_err(KERNEL_HEAD "        B[0] = T.rng_rand()\n", 7, "T.rng_rand before T.rng_init in this kernel");
    expect_err(KERNEL_HEAD "        tx = T.get_thread_binding()\n        B[tx % 64] = T.rng_rand(1)\n", 8,
               "T.rng_rand takes no arguments");
    expect_err(KERNEL_HEAD "        tx = T.get_thread_binding()\n        T.rng_init(tx, generator=\"xorwow\")\n", 8,
               "the only generator is \"curandStatePhilox4_32_10_t\"");
    expect_err(HDR "@T.prim_func\ndef main(B: T.Tensor((64,), \"uint32\")):\n    with T.Kernel(1, threads=1) as bx:\n"
               "        T.rng_init(3)\n        for i in T.Parallel(8):\n            for j in T.serial(2):\n"
               "                B[i * 2 + j] = T.rng_rand()\n", 10, "T.rng_rand in a loop inside T.Parallel");
    expect_err(HDR "@T.prim_func\ndef main(B: T.Tensor((64,), \"uint32\")):\n    with T.Kernel(1, threads=1) as bx:\n"
               "        for i in T.Parallel(8):\n            T.rng_init(i)\n", 8, "T.rng_init inside T.Parallel");
}

/* Lock-step per-thread code (frontend/lockstep.c): what it cannot give one meaning. */
Test(frontend_errors, lockstep)
{
#define TX KERNEL_HEAD "        tx = T.get_thread_binding()\n"
    expect_err(KERNEL_HEAD "        B[0] = T.tvm_warp_shuffle(0, B[1], 0, 32, 32)\n", 7,
               "T.tvm_warp_shuffle outside per-thread code");
    expect_err(TX "        for i in T.serial(tx % 4):\n            B[tx % 64] = T.tvm_warp_shuffle(0, B[i], 0, 32, 32)\n", 8,
               "the bound of this loop around code that exchanges values between threads differs between threads");
    expect_err(TX "        if tx < 32:\n            B[tx % 64] = T.tvm_warp_shuffle(0, B[tx % 64], tx ^ 1, 32, 32)\n", 8,
               "the condition of this `if` around code that exchanges values between threads differs");
    expect_err(TX "        B[tx % 64] = T.tvm_warp_shuffle(0, B[tx % 64], 0, 12, 32)\n", 8,
               "T.tvm_warp_shuffle: the width must be a power of two up to 64, got 12");
    expect_err(TX "        B[tx % 64] = T.tvm_warp_shuffle_down(0, B[tx % 64], 1)\n", 8,
               "T.tvm_warp_shuffle_down takes (mask, value, delta, width[, warp_size])");
    expect_err(TX "        r = T.alloc_local((1,), \"float32\")\n"
               "        T.evaluate(T.tvm_thread_allreduce(1, B[tx % 64], True, r[0], tx))\n", 9,
               "T.tvm_thread_allreduce needs its combiner");
    expect_err(TX "        with T.attr(B, \"reduce_scope\", 0):\n            pass\n", 8,
               "T.attr is supported only as `with T.attr(T.comm_reducer(...), \"reduce_scope\", ...)`");
    expect_err(TX "        r = T.alloc_local((1,), \"float32\")\n"
               "        with T.attr(T.comm_reducer(lambda x, y: x + y, [0.0]), \"reduce_scope\", 0):\n"
               "            T.evaluate(T.tvm_thread_allreduce(1, B[tx % 64], True, r[0], 3))\n", 10,
               "T.tvm_thread_allreduce reduces over thread indices");
    expect_err(TX "        r = T.alloc_local((1,), \"float32\")\n"
               "        with T.attr(T.comm_reducer(lambda x, y: x + y, [0.0]), \"reduce_scope\", 0):\n"
               "            T.evaluate(T.tvm_thread_allreduce(2, B[tx % 64], True, r[0], tx))\n", 10,
               "T.tvm_thread_allreduce of more than one value is outside the subset");
#undef TX
}

Test(frontend_errors, kernel_with_no_grid_binds_no_block_index)
{
    expect_err(HDR "@T.prim_func\ndef main(A: T.Tensor((8,), \"float32\")):\n"
               "    with T.Kernel(threads=32) as bx:\n"
               "        A[0] = 1.0\n", 6, "T.Kernel() with no grid extents is one block and has no block index");
}

Test(frontend_errors, gemm_sp_metadata_shape)
{
    expect_err(HDR "@T.prim_func\ndef main(A: T.Tensor((8,), \"float32\")):\n"
               "    with T.Kernel(1, threads=32) as bx:\n"
               "        a = T.alloc_shared((16, 16), \"float16\")\n"
               "        e = T.alloc_shared((16, 4), \"int16\")\n"
               "        b = T.alloc_shared((32, 16), \"float16\")\n"
               "        c = T.alloc_fragment((16, 16), \"float32\")\n"
               "        T.gemm_sp(a, e, b, c)\n", 11, "the metadata E ('e') is 16 x 4");
}

Test(frontend_errors, per_thread_copy_between_shared_tiles)
{
    expect_err(HDR "@T.prim_func\ndef main(A: T.Tensor((8,), \"float32\")):\n"
               "    with T.Kernel(1, threads=32) as bx:\n"
               "        s = T.alloc_shared((8,), \"float32\")\n"
               "        tx = T.get_thread_binding()\n"
               "        A[tx] = 1.0\n"
               "        T.copy(A[0:8], s)\n", 10, "T.copy after a thread index");
}

Test(frontend_errors, device_assert_false_at_compile_time)
{
    expect_err(HDR "@T.prim_func\ndef main(A: T.Tensor((8,), \"float32\")):\n"
               "    with T.Kernel(1, threads=32) as bx:\n"
               "        T.device_assert(1 > 2, \"never\")\n", 7, "T.device_assert fails at compile time: never");
}
