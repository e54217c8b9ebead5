/*
 * cuda_internal.h — private interfaces of the CUDA backend.
 *
 * The CUDA backend turns tile IR into CUDA C++ (the SIMT kit with the CUDA
 * dialect of cuda_kit.c, after the SDK's lowering passes), compiles
 * it with NVRTC into a cubin (cuda_compile.c, with the kernel cache), and
 * loads and launches it through the CUDA Driver API (cuda_plugin.c, which
 * also holds the ABI table).  Neither NVRTC nor the driver is linked: both
 * are opened with dlopen through the symbol tables of cuda_dl.c, which
 * declares by hand the small subset of their C APIs the backend uses, so
 * the plugin builds without CUDA headers and reports itself unavailable
 * (with the reason) when a library is missing.
 */
#ifndef TILEC_CUDA_INTERNAL_H
#define TILEC_CUDA_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "tilec/ir.h"
#include "tilec/plugin.h"
#include "tilec/sdk.h"
#include "tilec/shell.h"
#include "tilec/target.h"

#define TILEC_CUDA_PLUGIN_VERSION "0.1.0"

/* ---- the hand-declared API subsets -------------------------------------- */

typedef int CUresult;          /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr;
typedef struct CUtensorMap {
    _Alignas(64) uint64_t opaque[16];
} CUtensorMap;

#define CUDA_SUCCESS 0
#define CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK 1
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK 8
#define CU_DEVICE_ATTRIBUTE_WARP_SIZE 10
#define CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK 12
#define CU_DEVICE_ATTRIBUTE_CLOCK_RATE 13
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97
#define CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 0
#define CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES 1
#define CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES 3
#define CU_FUNC_ATTRIBUTE_NUM_REGS 4
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define CU_EVENT_DEFAULT 0

/* cuLaunchKernelEx's configuration (CUDA 12), for a cluster launch */
#define CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION 4
typedef struct CUlaunchAttribute {
    int id;
    char pad[4];
    union {
        char pad[64];
        struct { unsigned x, y, z; } clusterDim;
    } value;
} CUlaunchAttribute;
typedef struct CUlaunchConfig {
    unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned numAttrs;
} CUlaunchConfig;

typedef int nvrtcResult;       /* NVRTC_SUCCESS = 0 */
typedef struct _nvrtcProgram *nvrtcProgram;
#define NVRTC_SUCCESS 0

/* The functions taken from each library, once: the tables' fields and the
 * names cuda_dl.c resolves both come from these lists. */
#define CUDA_NVRTC_SYMBOLS(X)                                                                      \
    X(GetErrorString, "nvrtcGetErrorString", const char *, (nvrtcResult))                          \
    X(Version, "nvrtcVersion", nvrtcResult, (int *, int *))                                        \
    X(CreateProgram, "nvrtcCreateProgram", nvrtcResult,                                            \
      (nvrtcProgram *, const char *, const char *, int, const char *const *, const char *const *)) \
    X(DestroyProgram, "nvrtcDestroyProgram", nvrtcResult, (nvrtcProgram *))                        \
    X(CompileProgram, "nvrtcCompileProgram", nvrtcResult, (nvrtcProgram, int, const char *const *)) \
    X(GetProgramLogSize, "nvrtcGetProgramLogSize", nvrtcResult, (nvrtcProgram, size_t *))          \
    X(GetProgramLog, "nvrtcGetProgramLog", nvrtcResult, (nvrtcProgram, char *))                    \
    X(GetCUBINSize, "nvrtcGetCUBINSize", nvrtcResult, (nvrtcProgram, size_t *))                    \
    X(GetCUBIN, "nvrtcGetCUBIN", nvrtcResult, (nvrtcProgram, char *))                              \
    X(GetPTXSize, "nvrtcGetPTXSize", nvrtcResult, (nvrtcProgram, size_t *))                        \
    X(GetPTX, "nvrtcGetPTX", nvrtcResult, (nvrtcProgram, char *))

#define CUDA_DRIVER_SYMBOLS(X)                                                                     \
    X(Init, "cuInit", CUresult, (unsigned))                                                        \
    X(DriverGetVersion, "cuDriverGetVersion", CUresult, (int *))                                   \
    X(GetErrorName, "cuGetErrorName", CUresult, (CUresult, const char **))                         \
    X(GetErrorString, "cuGetErrorString", CUresult, (CUresult, const char **))                     \
    X(DeviceGetCount, "cuDeviceGetCount", CUresult, (int *))                                       \
    X(DeviceGet, "cuDeviceGet", CUresult, (CUdevice *, int))                                       \
    X(DeviceGetName, "cuDeviceGetName", CUresult, (char *, int, CUdevice))                         \
    X(DeviceGetAttribute, "cuDeviceGetAttribute", CUresult, (int *, int, CUdevice))                \
    X(DeviceTotalMem, "cuDeviceTotalMem_v2", CUresult, (size_t *, CUdevice))                       \
    X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext *, CUdevice))       \
    X(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult, (CUdevice))               \
    X(CtxPushCurrent, "cuCtxPushCurrent_v2", CUresult, (CUcontext))                                \
    X(CtxPopCurrent, "cuCtxPopCurrent_v2", CUresult, (CUcontext *))                                \
    X(CtxSynchronize, "cuCtxSynchronize", CUresult, (void))                                        \
    X(ModuleLoadData, "cuModuleLoadData", CUresult, (CUmodule *, const void *))                    \
    X(ModuleUnload, "cuModuleUnload", CUresult, (CUmodule))                                        \
    X(ModuleGetFunction, "cuModuleGetFunction", CUresult, (CUfunction *, CUmodule, const char *))  \
    X(FuncSetAttribute, "cuFuncSetAttribute", CUresult, (CUfunction, int, int))                    \
    X(FuncGetAttribute, "cuFuncGetAttribute", CUresult, (int *, int, CUfunction))                  \
    X(LaunchKernel, "cuLaunchKernel", CUresult,                                                    \
      (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, \
       void **, void **))                                                                          \
    X(MemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr *, size_t))                                \
    X(MemFree, "cuMemFree_v2", CUresult, (CUdeviceptr))                                            \
    X(MemAllocHost, "cuMemAllocHost_v2", CUresult, (void **, size_t))                              \
    X(MemFreeHost, "cuMemFreeHost", CUresult, (void *))                                            \
    X(MemcpyHtoD, "cuMemcpyHtoD_v2", CUresult, (CUdeviceptr, const void *, size_t))                \
    X(MemcpyDtoH, "cuMemcpyDtoH_v2", CUresult, (void *, CUdeviceptr, size_t))                      \
    X(EventCreate, "cuEventCreate", CUresult, (CUevent *, unsigned))                               \
    X(EventRecord, "cuEventRecord", CUresult, (CUevent, CUstream))                                 \
    X(EventSynchronize, "cuEventSynchronize", CUresult, (CUevent))                                 \
    /* the _v2 of CUDA 12.8+, else the original */                                                 \
    X(EventElapsedTime, "cuEventElapsedTime_v2|cuEventElapsedTime", CUresult,                      \
      (float *, CUevent, CUevent))                                                                 \
    X(EventDestroy, "cuEventDestroy_v2", CUresult, (CUevent))

typedef struct cuda_nvrtc_api {
    CUDA_NVRTC_SYMBOLS(TILEC_DL_FIELD)
    int major, minor;          /* NVRTC version */
    char path[600];            /* the library that was opened */
} cuda_nvrtc_api_t;

typedef struct cuda_driver_api {
    CUDA_DRIVER_SYMBOLS(TILEC_DL_FIELD)
    /* optional (CUDA 12 drivers on): NULL when the driver lacks it, and
     * only kernels on the tensor copy engine need it */
    CUresult (*TensorMapEncodeTiled)(CUtensorMap *, int, unsigned, void *, const uint64_t *, const uint64_t *,
                                     const uint32_t *, const uint32_t *, int, int, int, int);
    /* optional likewise: only kernels of the cluster pass need it */
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
} cuda_driver_api_t;

/* Loads NVRTC (once per process; thread-safe).  Returns the table, or NULL
 * with the SDK error set to why ("libnvrtc.so.13: cannot open ..."). */
const cuda_nvrtc_api_t *cuda_nvrtc(void);
/* Loads libcuda.so.1 and runs cuInit(0) (once per process).  NULL with the
 * SDK error set to why. */
const cuda_driver_api_t *cuda_driver(void);
/* Sets the SDK error to "cuda: CALL failed: CUDA_ERROR_X (text)" and
 * returns the plugin status that fits r. */
tilec_pstatus_t cuda_fail(const char *call, CUresult r, tilec_pstatus_t st);

/* ---- code generation (cuda_kit.c) ---------------------------------------- */

/* A tensor map the launch builds (cuda_tma.c): of kernel parameter
 * `param`, boxes of box[0..rank) elements, innermost dimension first. */
#define CUDA_MAX_TMAPS 16
typedef struct cuda_tmap_spec {
    int param, rank, esize;
    int swizzle;           /* bytes: 0, 32, 64, 128 */
    uint32_t box[5];
} cuda_tmap_spec_t;

/* Facts about the generated kernel the launcher needs. */
typedef struct cuda_kinfo {
    uint64_t smem_bytes;   /* dynamic shared memory per block */
    int mma;               /* number of GEMMs lowered to tensor cores */
    int cp_async;          /* number of copies lowered to cp.async */
    int wgmma;             /* number of GEMMs lowered to wgmma (sm_90a) */
    uint64_t mbar_off;     /* shared-memory offset of the kernel's mbarriers (8 bytes each) */
    int ntmap;             /* tensor maps passed after the symbols (TMA) */
    cuda_tmap_spec_t tmap[CUDA_MAX_TMAPS];
    /* the block the printed kernel runs on: the lowered kernel's threads,
     * which warp specialization makes more than the program's */
    uint32_t threads[3];
    /* > 0: the lowered kernel is persistent (the persist pass's tile loop,
     * lower.persistent): launch exactly this many blocks, not the
     * program's grid */
    uint32_t persistent_blocks;
    /* all 1 but one: the lowered kernel runs in clusters of blocks of this
     * shape (the cluster pass's lower.cluster); all 0: no clusters */
    uint32_t cluster[3];
} cuda_kinfo_t;

/* ---- barrier objects and the tensor copy engine (cuda_tma.c) -------------
 * The four call sites of a printer of this dialect: */
/* after placing shared memory up to *smem_end: the mbarriers go after it
 * (*smem_end grows), and info gets the tensor maps of the copies on
 * mbarriers.  0, or -1 when a copy on an mbarrier has no box the tensor
 * copy engine takes or there are more than CUDA_MAX_TMAPS maps. */
int cuda_tma_plan(const tilec_ir_kernel_t *k, cuda_kinfo_t *info, uint64_t *smem_end);
/* the device helpers (nothing when the kernel has no mbarriers) */
void cuda_tma_prelude(tilec_sdk_str_t *o, const tilec_ir_kernel_t *k);
/* the tensor-map parameters, after the symbols */
void cuda_tma_params(tilec_sdk_str_t *o, const cuda_kinfo_t *info, int *first);
/* How a statement is printed: into o at indent spaces, expressions by the
 * printer's expr(user, e), the dynamic shared pool's base pointer named smem. */
typedef struct cuda_tma_out {
    tilec_sdk_str_t *o;
    int indent;
    const char *smem;
    void (*expr)(void *user, const tilec_ir_expr_t *e);
    void *user;
    const tilec_ir_kernel_t *k;
    const cuda_kinfo_t *info;
    /* mbarriers (bit = id) whose plain arrivals every warp of the
     * consumers makes (warp specialization's releases): initialized for
     * arrive x arrive_warps arrivals, arrived on by each warp's lane 0 */
    uint32_t warp_arrive;
    int arrive_warps;
} cuda_tma_out_t;
/* barrier_init/arrive/wait and a copy_async on an mbarrier: 1 printed, 0
 * not such a statement, -1 a copy the plan has no tensor map for. */
int cuda_tma_stmt(const cuda_tma_out_t *t, const tilec_ir_stmt_t *s);
/* ---- clusters (cuda_cluster.c): what the cluster pass wrote -------------
 * The device helpers (nothing when the kernel has no lower.cluster loop),
 * the cluster shape of the kernel into dims (0 when it has none), and the
 * statements: an arrival on a barrier of every block of the cluster
 * (lower.cluster_arrive; by each warp's lane 0 where per_warp says the
 * barrier's arrivals are the consumer warps'), the issuer's wait (lower.issuer), the cluster
 * barrier (lower.cluster_sync): 1 printed, 0 not such a statement.  A
 * multicast copy (lower.multicast) is cuda_tma.c's, with the two names below. */
void cuda_cluster_prelude(tilec_sdk_str_t *o, const tilec_ir_kernel_t *k);
int cuda_cluster_dims(const tilec_ir_kernel_t *k, uint32_t dims[3]);
int cuda_cluster_stmt(const cuda_tma_out_t *t, const tilec_ir_stmt_t *s, int per_warp,
                      void (*bar_addr)(const cuda_tma_out_t *, const tilec_ir_mbarrier_t *, const tilec_ir_expr_t *));
/* a copy's (issuing rank, blocks) of lower.multicast: 1, or 0 when it has none */
int cuda_cluster_multicast(const tilec_ir_stmt_t *s, int *rank, int *n);

/* The tensor maps of info for the kernel's tensors at ptrs. */
tilec_pstatus_t cuda_tma_encode(const cuda_driver_api_t *d, const cuda_kinfo_t *info, const tilec_ir_kernel_t *k,
                                const CUdeviceptr *ptrs, CUtensorMap *maps);

/* m lowered for arch by the SDK's passes (tilec/lower.h) into a new
 * module *out in arena a: the layouts, MMA instructions and warp grids
 * the dialect prints.  0, or -1 with "lower: PASS: why" in err. */
int cuda_lower(tilec_arena_t *a, const tilec_ir_module_t *m, const char *arch, tilec_ir_module_t **out,
               char *err, size_t errlen);

/* The CUDA C++ translation unit of m (lowered by cuda_lower) for arch
 * ("sm_90a"), printed by the SDK's SIMT kit with the CUDA dialect
 * (cuda_kit.c); the kernel is extern "C" tilec_kernel(tensors...,
 * int syms..., tensor maps...).  0, or -1 with a message in err. */
int cuda_kit_codegen(const tilec_ir_module_t *m, const char *arch, tilec_sdk_str_t *out, cuda_kinfo_t *info,
                     char *err, size_t errlen);

/* 1 when arch names an sm_90a-style target ("sm_90a", "compute_90a"). */
int cuda_arch_has_wgmma(const char *arch);

/* ---- modules (cuda_compile.c) -------------------------------------------- */

struct cuda_dev;

/* A module's own state (the shell's module holds the IR, source, cubin). */
typedef struct cuda_module {
    char arch[32];            /* "sm_90" */
    cuda_kinfo_t info;
    /* loaded lazily on the device that launches it */
    struct cuda_dev *loaded_on;
    CUmodule cumod;
    CUfunction fn;
} cuda_module_t;

/* Parses an arch string ("sm_90", "sm_90a", "compute_90", "90") into
 * its compute capability times ten; -1 when malformed. */
int cuda_arch_sm(const char *arch);

/* The target description of the SDK's lowering passes for an arch
 * (cuda_target.c, with the two arch parsers); NULL when the arch is malformed. */
const tilec_target_desc_t *cuda_target_desc(const char *arch);
/* The description the backend lowers for: cuda_target_desc's, without the
 * tensor copy engine (TMA) where TILEC_CUDA_TMA=0 says so, and for sm_90
 * unless TILEC_CUDA_TMA=1 (on by default for sm_90a). */
const tilec_target_desc_t *cuda_lower_desc(const char *arch);
/* T.exp2 on float as ex2.approx.ftz (cuda_kit.c): on unless TILEC_CUDA_FAST_EXP2=0 */
int cuda_fast_exp2(void);
/* A register accumulator's clear left to its wgmma (cuda_zero.c): on unless TILEC_CUDA_ZERO_INIT=0 */
int cuda_zero_init(void);

/* A clear of all of register fragment C to 0 that its wgmma GEMM can do
 * instead, through the scale-d predicate of its first k-step
 * (cuda_zero.c): the clear, the GEMM after it (or after the `if` holding
 * it), that if's condition (NULL: the clear is unconditional) and whether
 * the clear is the if's then branch. */
typedef struct cuda_zfold {
    const tilec_ir_stmt_t *clear, *gemm;
    const tilec_ir_expr_t *cond;
    int in_then;
} cuda_zfold_t;
#define CUDA_MAX_ZFOLD 8
/* The candidates in the kernel's statements (nested too), at most CUDA_MAX_ZFOLD; their count. */
int cuda_zero_scan(const tilec_ir_stmt_t *body, cuda_zfold_t *z);

/* The cubin already in sm->binary (a kernel bundle's) for arch: the code
 * generator runs again for what launch needs, NVRTC does not. */
tilec_pstatus_t cuda_load_module(tilec_shell_module_t *sm, const char *arch);
/* Full compile of the shell's module sm (its data is a cuda_module_t) for
 * arch ("sm_XY"): codegen, then the cache or NVRTC.  Options: opt_level,
 * extra (NVRTC flags), TILEC_POPT_FAST_MATH (--use_fast_math). */
tilec_pstatus_t cuda_compile_module(tilec_shell_module_t *sm, const char *arch,
                                    const tilec_pcompile_options_t *opts);

#endif
