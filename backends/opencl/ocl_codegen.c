/*
 * ocl_codegen.c — the OpenCL C dialect of the SIMT lowering kit.
 *
 * Everything about OpenCL C that the kit needs is in this table: type
 * names, __global/__local/private qualifiers, work-group ids, the barrier,
 * 32-bit integer atomics (core since OpenCL 1.1) with compare-and-swap
 * (atomic_cmpxchg / atom_cmpxchg) for floats and 64-bit values, generic
 * math names, and the float16 representation: native `half` when the
 * device has cl_khr_fp16, else storage-only vload_half/vstore_half_rte on
 * global tensors and 16-bit patterns on chip.  bfloat16 is always 16-bit
 * storage with software conversions.  The prelude hook enables the
 * extensions a kernel needs (cl_khr_fp16, cl_khr_fp64,
 * cl_khr_int64_base_atomics).  Tile copies between global and local
 * memory use vloadN/vstoreN where the kit finds them aligned (vec_width).
 */
#include <string.h>

#include "ocl_internal.h"

static int ocl_prelude(void *user, tilec_simt_ctx_t *c)
{
    const ocl_dev_t *dev = user;
    uint32_t u = tilec_simt_uses(c);
    if (dev && dev->fp16 && (u & TILEC_SIMT_USES_F16))
        tilec_simt_emit(c, "#pragma OPENCL EXTENSION cl_khr_fp16 : enable");
    if (u & TILEC_SIMT_USES_F64)
        tilec_simt_emit(c, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable");
    if (u & TILEC_SIMT_USES_ATOMIC_64)
        tilec_simt_emit(c, "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable");
    return 0;
}

void ocl_dialect(const ocl_dev_t *dev, tilec_simt_dialect_t *d)
{
    memset(d, 0, sizeof *d);
    d->struct_size = sizeof *d;
    d->name = "opencl";
    d->type_name[TILEC_BOOL] = "uchar";
    d->type_name[TILEC_INT8] = "char";
    d->type_name[TILEC_INT16] = "short";
    d->type_name[TILEC_INT32] = "int";
    d->type_name[TILEC_INT64] = "long";
    d->type_name[TILEC_UINT8] = "uchar";
    d->type_name[TILEC_UINT16] = "ushort";
    d->type_name[TILEC_UINT32] = "uint";
    d->type_name[TILEC_UINT64] = "ulong";
    d->type_name[TILEC_FLOAT32] = "float";
    d->type_name[TILEC_FLOAT64] = "double";
    if (dev && dev->fp16) {
        d->f16.mode = TILEC_SIMT_HALF_NATIVE;
        d->f16.half_type = "half";
        /* convert_half_rte: explicit round-to-nearest-even */
        d->f16.half_to_float = "convert_float";
        d->f16.half_from_float = "convert_half_rte";
    } else {
        d->f16.mode = TILEC_SIMT_HALF_FUNCS;
        d->f16.half_type = "half";
        d->f16.half_load = "vload_half($o, $p)";
        d->f16.half_store = "vstore_half_rte($v, $o, $p)";
    }
    d->bf16.mode = TILEC_SIMT_HALF_BITS;
    d->int64_suffix = "L";
    d->uint64_suffix = "UL";
    d->f32_as_bits = "as_uint";
    d->bits_as_f32 = "as_float";
    d->f64_as_bits = "as_ulong";
    d->bits_as_f64 = "as_double";
    d->func_qual = "static inline";
    d->global_qual = "__global";
    d->shared_qual = "__local";
    d->private_qual = "";
    d->restrict_kw = "restrict";
    d->kernel_qual = "__kernel void";
    d->kernel_attr = "__attribute__((reqd_work_group_size($x, $y, $z)))";
    d->kernel_name = OCL_KERNEL_NAME;
    d->sym_type = "long";
    d->block_idx[0] = "get_group_id(0)";
    d->block_idx[1] = "get_group_id(1)";
    d->block_idx[2] = "get_group_id(2)";
    d->thread_idx[0] = "get_local_id(0)";
    d->thread_idx[1] = "get_local_id(1)";
    d->thread_idx[2] = "get_local_id(2)";
    d->barrier = "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);";
    static const char *const ops[3] = {"add", "max", "min"};
    static const char *const i32[3] = {"atomic_add($p, $v);", "atomic_max($p, $v);", "atomic_min($p, $v);"};
    for (int o = 0; o < 3; o++) {
        d->atomic[TILEC_INT32][o] = i32[o];
        d->atomic[TILEC_UINT32][o] = i32[o];
    }
    (void)ops;
    if (dev && dev->int64_atomics) {
        d->atomic[TILEC_INT64][0] = "atom_add($p, $v);";
        d->atomic[TILEC_UINT64][0] = "atom_add($p, $v);";
        d->cas64 = "atom_cmpxchg($p, $c, $v)";
    }
    d->cas32 = "atomic_cmpxchg($p, $c, $v)";
    d->math_generic = 1;
    d->has_rsqrt = 1;
    d->has_printf = dev ? dev->printf_ok : 1;
    d->user = (void *)dev;
    d->prelude_hook = ocl_prelude;
    d->shared_align = 16;
    d->printf_i64 = "%ld";
    /* vector copies: vloadN/vstoreN need only element alignment; the kit
     * keeps W * element size within shared_align (16 bytes) */
    d->vec_width = 16;
    d->vec_load = "vload$n(0, $p)";
    d->vec_store = "vstore$n($v, 0, $p);";
    /* PoCL 3.1 runs a work-group-uniform loop that holds barriers with
     * the trip count of the first work-group it ran (the causal flash
     * attention, whose loop runs once in block 0 and twice in block 1);
     * a volatile count, which its uniformity analysis cannot see through,
     * is right, and costs one private load an iteration elsewhere */
    d->uniform_trip_qual = "volatile";
}
