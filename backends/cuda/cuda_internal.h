/*
 * cuda_internal.h — private interfaces of the CUDA backend.
 *
 * The CUDA backend turns tile IR into CUDA C++ (cuda_codegen.c), compiles
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

#define CUDA_SUCCESS 0
#define CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK 1
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define CU_EVENT_DEFAULT 0

typedef int nvrtcResult;       /* NVRTC_SUCCESS = 0 */
typedef struct _nvrtcProgram *nvrtcProgram;
#define NVRTC_SUCCESS 0

typedef struct cuda_nvrtc_api {
    const char *(*GetErrorString)(nvrtcResult);
    nvrtcResult (*Version)(int *, int *);
    nvrtcResult (*CreateProgram)(nvrtcProgram *, const char *, const char *, int,
                                 const char *const *, const char *const *);
    nvrtcResult (*DestroyProgram)(nvrtcProgram *);
    nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetProgramLog)(nvrtcProgram, char *);
    nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetCUBIN)(nvrtcProgram, char *);
    nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetPTX)(nvrtcProgram, char *);
    int major, minor;          /* NVRTC version */
    char path[600];            /* the library that was opened */
} cuda_nvrtc_api_t;

typedef struct cuda_driver_api {
    CUresult (*Init)(unsigned);
    CUresult (*DriverGetVersion)(int *);
    CUresult (*GetErrorName)(CUresult, const char **);
    CUresult (*GetErrorString)(CUresult, const char **);
    CUresult (*DeviceGetCount)(int *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*DeviceTotalMem)(size_t *, CUdevice);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice);
    CUresult (*CtxPushCurrent)(CUcontext);
    CUresult (*CtxPopCurrent)(CUcontext *);
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*FuncSetAttribute)(CUfunction, int, int);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemAllocHost)(void **, size_t);
    CUresult (*MemFreeHost)(void *);
    CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventSynchronize)(CUevent);
    CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*EventDestroy)(CUevent);
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

/* ---- code generation (cuda_codegen.c) ------------------------------------ */

/* Facts about the generated kernel the launcher needs. */
typedef struct cuda_kinfo {
    uint64_t smem_bytes;   /* dynamic shared memory per block */
    int mma;               /* number of GEMMs lowered to tensor cores */
    int cp_async;          /* number of copies lowered to cp.async */
    int wgmma;             /* number of GEMMs lowered to wgmma (sm_90a) */
} cuda_kinfo_t;

/* Generates the CUDA C++ translation unit for m into out; the kernel is
 * extern "C" tilec_kernel(params..., int syms...).  sm is the target's
 * compute capability times ten (e.g. 90), which picks tensor-core and
 * cp.async lowerings; wgmma says the target is sm_90a, whose
 * warpgroup MMA the GEMMs then use.  0, or -1 with a message in err. */
int cuda_codegen(const tilec_ir_module_t *m, int sm, int wgmma, tilec_sdk_str_t *out,
                 cuda_kinfo_t *info, char *err, size_t errlen);

/* 1 when arch names an sm_90a-style target ("sm_90a", "compute_90a"). */
int cuda_arch_has_wgmma(const char *arch);

/* ---- modules (cuda_compile.c) -------------------------------------------- */

struct tilec_pmodule {
    uint32_t magic;
    tilec_arena_t arena;      /* the parsed IR (grid and shape expressions) */
    const tilec_ir_kernel_t *k;
    char *source;             /* generated CUDA C++, owned */
    size_t source_len;
    void *binary;             /* cubin, owned */
    size_t binary_len;
    char arch[32];            /* "sm_90" */
    uint32_t nparams, nsyms;
    cuda_kinfo_t info;
    /* loaded lazily on the device that launches it */
    struct tilec_pdevice *loaded_on;
    CUmodule cumod;
    CUfunction fn;
};
#define CUDA_MOD_MAGIC 0x74634d4fu

/* Host configuration captured by the query. */
typedef struct cuda_host {
    void (*log)(void *user, const char *topic, const char *msg);
    void *log_user;
    char *cache_dir;          /* owned; NULL: no cache */
} cuda_host_t;

void cuda_log(const char *topic, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cuda_host_set(const char *cache_dir, void (*log)(void *, const char *, const char *),
                   void *log_user);
void cuda_host_fini(void);

/* Parses an arch string ("sm_90", "sm_90a", "compute_90", "90") into
 * its compute capability times ten; -1 when malformed. */
int cuda_arch_sm(const char *arch);

/* The target description of the SDK's lowering passes for an arch
 * (cuda_target.c); NULL when the arch is malformed. */
const tilec_target_desc_t *cuda_target_desc(const char *arch);

/* Full compile: IR text -> module (cubin, not loaded).  arch is "sm_XY". */
tilec_pstatus_t cuda_compile_module(const char *ir, size_t ir_len, const char *arch,
                                    unsigned opt_level, const char *extra,
                                    tilec_pmodule_t **out);
void cuda_module_free(tilec_pmodule_t *mod);

/* Integer value of a grid/shape expression under symbol values (kernel
 * symbol order); 0 or -1 when it cannot be evaluated. */
int cuda_eval_int(const tilec_ir_kernel_t *k, const tilec_ir_expr_t *e, const int64_t *syms,
                  int64_t *out);

#endif
