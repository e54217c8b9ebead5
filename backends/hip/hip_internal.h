/*
 * hip_internal.h — private interfaces of the HIP (AMD GPU) backend.
 *
 * The backend is a dialect of the SDK's SIMT kit plus glue: hip_codegen.c
 * fills the kit's dialect table for HIP C++ (with the MFMA / WMMA hook for
 * T.gemm), hip_target.c holds the target descriptions of the AMD families
 * (wavefront, LDS, matrix instructions) and parses --arch, hip_compile.c
 * turns the kernel into a code object with hiprtc, and hip_plugin.c is the
 * plugin shell's backend (devices, memory, launch through the HIP module
 * API).  Nothing links ROCm: hip_dl.c opens the libraries with dlopen and
 * resolves the subset of their C APIs declared below, from ONE X-macro
 * list whose first column says which library a function comes from.
 */
#ifndef TILEC_HIP_INTERNAL_H
#define TILEC_HIP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/ir.h"
#include "tilec/plugin.h"
#include "tilec/sdk.h"
#include "tilec/shell.h"
#include "tilec/simt.h"
#include "tilec/target.h"

#define TILEC_HIP_PLUGIN_VERSION "0.1.0"
#define HIP_KERNEL_NAME "tilec_kernel"

/* ---- the hand-declared API subsets (hip_runtime_api.h, hiprtc.h, amd_comgr.h) ---- */

typedef int hipError_t;           /* hipSuccess = 0 */
typedef int hiprtcResult;         /* HIPRTC_SUCCESS = 0 */
typedef int hipDevice_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef struct _hiprtcProgram *hiprtcProgram;
typedef struct amd_comgr_isa_s amd_comgr_isa_t; /* never dereferenced */

#define hipSuccess 0
#define hipErrorOutOfMemory 2
#define hipErrorNoDevice 100
#define HIPRTC_SUCCESS 0

/* hipDeviceAttribute_t values (stable since ROCm 5.0) */
#define hipDeviceAttributeClockRate 5
#define hipDeviceAttributeMaxThreadsPerBlock 56
#define hipDeviceAttributeMultiprocessorCount 63
#define hipDeviceAttributeMaxRegistersPerBlock 71
#define hipDeviceAttributeMaxSharedMemoryPerBlock 74
#define hipDeviceAttributeWarpSize 87
/* hipFunction_attribute values */
#define HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 0
#define HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES 1
#define HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES 3
#define HIP_FUNC_ATTRIBUTE_NUM_REGS 4

/* hipDeviceProp_t changed layout in ROCm 6 (hipGetDevicePropertiesR0600);
 * the backend reads only its name (offset 0 in both) and finds
 * gcnArchName by its form ("gfx..."), so this buffer holds either. */
#define HIP_PROPS_BYTES 8192

/* Every function the backend takes, once: X(LIB, field, symbol, ret, args).
 * LIB is RT (libamdhip64), RTC (hiprtc: libhiprtc, or libamdhip64 on ROCm
 * 5, where it lives there) or COMGR (libamd_comgr: the ISAs the compiler
 * knows).  "a|b" takes the first of the names the library has. */
#define HIP_SYMBOLS(X)                                                                                 \
    X(RT, Init, "hipInit", hipError_t, (unsigned))                                                     \
    X(RT, DriverGetVersion, "hipDriverGetVersion", hipError_t, (int *))                                \
    X(RT, RuntimeGetVersion, "hipRuntimeGetVersion", hipError_t, (int *))                              \
    X(RT, GetErrorName, "hipGetErrorName", const char *, (hipError_t))                                 \
    X(RT, GetErrorString, "hipGetErrorString", const char *, (hipError_t))                             \
    X(RT, GetDeviceCount, "hipGetDeviceCount", hipError_t, (int *))                                    \
    X(RT, SetDevice, "hipSetDevice", hipError_t, (int))                                                \
    X(RT, DeviceGet, "hipDeviceGet", hipError_t, (hipDevice_t *, int))                                 \
    X(RT, DeviceGetName, "hipDeviceGetName", hipError_t, (char *, int, hipDevice_t))                   \
    X(RT, DeviceTotalMem, "hipDeviceTotalMem", hipError_t, (size_t *, hipDevice_t))                    \
    X(RT, DeviceGetAttribute, "hipDeviceGetAttribute", hipError_t, (int *, int, int))                  \
    X(RT, GetDeviceProperties, "hipGetDevicePropertiesR0600|hipGetDeviceProperties", hipError_t,       \
      (void *, int))                                                                                   \
    X(RT, DeviceSynchronize, "hipDeviceSynchronize", hipError_t, (void))                               \
    X(RT, Malloc, "hipMalloc", hipError_t, (void **, size_t))                                          \
    X(RT, Free, "hipFree", hipError_t, (void *))                                                       \
    X(RT, HostMalloc, "hipHostMalloc", hipError_t, (void **, size_t, unsigned))                        \
    X(RT, HostFree, "hipHostFree", hipError_t, (void *))                                               \
    X(RT, MemcpyHtoD, "hipMemcpyHtoD", hipError_t, (void *, void *, size_t))                           \
    X(RT, MemcpyDtoH, "hipMemcpyDtoH", hipError_t, (void *, void *, size_t))                           \
    X(RT, ModuleLoadData, "hipModuleLoadData", hipError_t, (hipModule_t *, const void *))              \
    X(RT, ModuleUnload, "hipModuleUnload", hipError_t, (hipModule_t))                                  \
    X(RT, ModuleGetFunction, "hipModuleGetFunction", hipError_t, (hipFunction_t *, hipModule_t,        \
                                                                  const char *))                       \
    X(RT, FuncGetAttribute, "hipFuncGetAttribute", hipError_t, (int *, int, hipFunction_t))            \
    X(RT, ModuleLaunchKernel, "hipModuleLaunchKernel", hipError_t,                                     \
      (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,            \
       hipStream_t, void **, void **))                                                                 \
    X(RT, EventCreate, "hipEventCreate", hipError_t, (hipEvent_t *))                                   \
    X(RT, EventRecord, "hipEventRecord", hipError_t, (hipEvent_t, hipStream_t))                        \
    X(RT, EventSynchronize, "hipEventSynchronize", hipError_t, (hipEvent_t))                           \
    X(RT, EventElapsedTime, "hipEventElapsedTime", hipError_t, (float *, hipEvent_t, hipEvent_t))      \
    X(RT, EventDestroy, "hipEventDestroy", hipError_t, (hipEvent_t))                                   \
    X(RTC, RtcGetErrorString, "hiprtcGetErrorString", const char *, (hiprtcResult))                    \
    X(RTC, RtcVersion, "hiprtcVersion", hiprtcResult, (int *, int *))                                  \
    X(RTC, RtcCreateProgram, "hiprtcCreateProgram", hiprtcResult,                                      \
      (hiprtcProgram *, const char *, const char *, int, const char *const *, const char *const *))    \
    X(RTC, RtcDestroyProgram, "hiprtcDestroyProgram", hiprtcResult, (hiprtcProgram *))                 \
    X(RTC, RtcCompileProgram, "hiprtcCompileProgram", hiprtcResult, (hiprtcProgram, int,               \
                                                                      const char *const *))            \
    X(RTC, RtcGetProgramLogSize, "hiprtcGetProgramLogSize", hiprtcResult, (hiprtcProgram, size_t *))   \
    X(RTC, RtcGetProgramLog, "hiprtcGetProgramLog", hiprtcResult, (hiprtcProgram, char *))             \
    X(RTC, RtcGetCodeSize, "hiprtcGetCodeSize", hiprtcResult, (hiprtcProgram, size_t *))               \
    X(RTC, RtcGetCode, "hiprtcGetCode", hiprtcResult, (hiprtcProgram, char *))                         \
    X(COMGR, IsaCount, "amd_comgr_get_isa_count", int, (size_t *))                                     \
    X(COMGR, IsaName, "amd_comgr_get_isa_name", int, (size_t, const char **))

#define HIP_API_FIELD(lib, field, sym, ret, args) ret(*field) args;
typedef struct hip_api {
    HIP_SYMBOLS(HIP_API_FIELD)
} hip_api_t;

/* What hip_dl.c found: the compiler part (hiprtc + the ISA list) and the
 * runtime part (libamdhip64 + hipInit) are loaded and judged apart, so
 * `tilec compile --arch` works on a machine with no AMD GPU. */
typedef struct hip_state {
    hip_api_t api;
    int rtc_ok;              /* hiprtc resolved */
    int isa_ok;              /* comgr's ISA list is known */
    int rt_ok;               /* runtime resolved and hipInit succeeded with >= 1 device */
    char rtc_why[600];       /* why not */
    char rt_why[600];
    char rtc_path[256];      /* the library hiprtc came from */
    int rtc_major, rtc_minor;
    int runtime_version;     /* hipRuntimeGetVersion, 0 unknown */
    char isas[1024];         /* "gfx900,gfx90a,..." the compiler knows (isa_ok) */
} hip_state_t;

/* Loads the compiler libraries (once; thread-safe).  NULL with the SDK
 * error set ("hip: hiprtc not found (...)"). */
const hip_state_t *hip_rtc(void);
/* Loads the runtime and runs hipInit (once).  NULL with the SDK error set
 * ("hip: libamdhip64.so.6: cannot open ...", "hip: no AMD GPU (hipInit:
 * hipErrorNoDevice)"). */
const hip_state_t *hip_rt(void);
/* "hip: CALL failed: hipErrorX (text)"; the status that fits e. */
tilec_pstatus_t hip_fail(const char *call, hipError_t e, tilec_pstatus_t st);

/* ---- targets (hip_target.c) ----------------------------------------------- */

typedef enum hip_family {
    HIP_GCN = 0,    /* gfx9 without matrix cores: wave64, FMA tiles */
    HIP_CDNA1,      /* gfx908: MFMA f16/i8 */
    HIP_CDNA2,      /* gfx90a: MFMA f16, bf16_1k, i8 */
    HIP_CDNA3,      /* gfx940..942: MFMA, i8 as 32x32x16/16x16x32 */
    HIP_RDNA2,      /* gfx10: wave32, FMA tiles */
    HIP_RDNA3       /* gfx11: wave32, WMMA */
} hip_family_t;

typedef struct hip_arch {
    char name[32];           /* "gfx90a": the processor, target features dropped */
    hip_family_t family;
    int wave;                /* 64 or 32 */
    const tilec_target_desc_t *desc;
} hip_arch_t;

/* Parses "gfx90a", "gfx90a:sramecc+:xnack-", "gfx1100".  0, or -1 with the
 * SDK error set for anything that is not an AMD GPU processor name. */
int hip_arch_parse(const char *arch, hip_arch_t *out);
/* The target description of an arch string; NULL when malformed. */
const tilec_target_desc_t *hip_target_desc(const char *arch);

/* ---- code generation (hip_codegen.c) -------------------------------------- */

typedef struct hip_gen {
    hip_arch_t arch;
    int ngemm_mma;           /* GEMMs the hook lowered to MFMA/WMMA */
    int ngemm_fma;           /* GEMMs left to the kit's FMA tiles */
} hip_gen_t;

/* Fills the HIP C++ dialect for g->arch (g is the hooks' user data and
 * collects their counts). */
void hip_dialect(hip_gen_t *g, tilec_simt_dialect_t *d);

/* ---- modules (hip_compile.c) ---------------------------------------------- */

struct hip_dev;

typedef struct hip_module {
    hip_arch_t arch;
    uint64_t lds_bytes;      /* block-wide memory the kernel declares */
    int ngemm_mma;
    struct hip_dev *loaded_on;
    hipModule_t mod;
    hipFunction_t fn;
} hip_module_t;

/* Generates the source for arch and compiles it with hiprtc (or takes the
 * code object from the cache): sm->source, sm->binary, sm->data. */
tilec_pstatus_t hip_compile_module(tilec_shell_module_t *sm, const char *arch,
                                   const tilec_pcompile_options_t *opts);
/* The code object already in sm->binary (a bundle's): source regenerated
 * for what launch needs, no hiprtc run. */
tilec_pstatus_t hip_load_module(tilec_shell_module_t *sm, const char *arch);

#endif
