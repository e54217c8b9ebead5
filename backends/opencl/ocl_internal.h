/*
 * ocl_internal.h — private interfaces of the OpenCL backend.
 *
 * The backend never links against OpenCL: ocl_api.c opens the ICD loader
 * libOpenCL.so.1 with dlopen and resolves the subset of the OpenCL 1.2 API
 * declared here by hand (types and constants as the Khronos headers define
 * them), then enumerates every device of every platform once, in a stable
 * order (platform order of the loader, then device order).  ocl_codegen.c
 * fills the SIMT kit's dialect table for OpenCL C; ocl_plugin.c holds the
 * plugin table (devices, compile with the kernel cache, memory, launch).
 */
#ifndef TILEC_OCL_INTERNAL_H
#define TILEC_OCL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/ir.h"
#include "tilec/plugin.h"
#include "tilec/shell.h"
#include "tilec/simt.h"

#define TILEC_OCL_PLUGIN_VERSION "0.1.0"

/* ---- the OpenCL API subset ---------------------------------------------- */

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_uint cl_bool;
typedef cl_ulong cl_bitfield;
typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_event *cl_event;
typedef intptr_t cl_context_properties;

#define CL_SUCCESS 0
#define CL_DEVICE_NOT_FOUND (-1)
#define CL_BUILD_PROGRAM_FAILURE (-11)
#define CL_PLATFORM_NOT_FOUND_KHR (-1001)
#define CL_TRUE 1
#define CL_FALSE 0

#define CL_PLATFORM_VERSION 0x0901
#define CL_PLATFORM_NAME 0x0902
#define CL_PLATFORM_VENDOR 0x0903

#define CL_DEVICE_TYPE_CPU (1u << 1)
#define CL_DEVICE_TYPE_GPU (1u << 2)
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFFu

#define CL_DEVICE_TYPE 0x1000
#define CL_DEVICE_MAX_COMPUTE_UNITS 0x1002
#define CL_DEVICE_MAX_CLOCK_FREQUENCY 0x100C
#define CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004
#define CL_DEVICE_MAX_WORK_ITEM_SIZES 0x1005
#define CL_DEVICE_MAX_MEM_ALLOC_SIZE 0x1010
#define CL_DEVICE_GLOBAL_MEM_SIZE 0x101F
#define CL_DEVICE_LOCAL_MEM_SIZE 0x1023
#define CL_DEVICE_NAME 0x102B
#define CL_DEVICE_VENDOR 0x102C
#define CL_DRIVER_VERSION 0x102D
#define CL_DEVICE_VERSION 0x102F
#define CL_DEVICE_EXTENSIONS 0x1030

#define CL_CONTEXT_PLATFORM 0x1084
#define CL_QUEUE_PROFILING_ENABLE (1u << 1)
#define CL_MEM_READ_WRITE (1u << 0)
#define CL_PROGRAM_BINARY_SIZES 0x1165
#define CL_PROGRAM_BINARIES 0x1166
#define CL_PROGRAM_BUILD_LOG 0x1183
#define CL_KERNEL_WORK_GROUP_SIZE 0x11B0
#define CL_KERNEL_LOCAL_MEM_SIZE 0x11B2
#define CL_KERNEL_PRIVATE_MEM_SIZE 0x11B4
#define CL_DEVICE_WARP_SIZE_NV 0x4003       /* cl_nv_device_attribute_query */
#define CL_DEVICE_WAVEFRONT_WIDTH_AMD 0x4043 /* cl_amd_device_attribute_query */
#define CL_PROFILING_COMMAND_START 0x1282
#define CL_PROFILING_COMMAND_END 0x1283

/* Every entry point the backend takes from libOpenCL.so.1, once: the
 * table's fields and the names ocl_api.c resolves come from this list. */
typedef void (*ocl_ctx_notify_fn)(const char *, const void *, size_t, void *);
typedef void (*ocl_build_notify_fn)(cl_program, void *);
#define OCL_SYMBOLS(X)                                                                                        \
    X(GetPlatformIDs, "clGetPlatformIDs", cl_int, (cl_uint, cl_platform_id *, cl_uint *))                     \
    X(GetPlatformInfo, "clGetPlatformInfo", cl_int, (cl_platform_id, cl_uint, size_t, void *, size_t *))      \
    X(GetDeviceIDs, "clGetDeviceIDs", cl_int, (cl_platform_id, cl_bitfield, cl_uint, cl_device_id *, cl_uint *)) \
    X(GetDeviceInfo, "clGetDeviceInfo", cl_int, (cl_device_id, cl_uint, size_t, void *, size_t *))            \
    X(CreateContext, "clCreateContext", cl_context,                                                           \
      (const cl_context_properties *, cl_uint, const cl_device_id *, ocl_ctx_notify_fn, void *, cl_int *))    \
    X(ReleaseContext, "clReleaseContext", cl_int, (cl_context))                                               \
    X(CreateCommandQueue, "clCreateCommandQueue", cl_command_queue,                                           \
      (cl_context, cl_device_id, cl_bitfield, cl_int *))                                                      \
    X(ReleaseCommandQueue, "clReleaseCommandQueue", cl_int, (cl_command_queue))                               \
    X(CreateBuffer, "clCreateBuffer", cl_mem, (cl_context, cl_bitfield, size_t, void *, cl_int *))            \
    X(ReleaseMemObject, "clReleaseMemObject", cl_int, (cl_mem))                                               \
    X(EnqueueWriteBuffer, "clEnqueueWriteBuffer", cl_int,                                                     \
      (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint, const cl_event *, cl_event *)) \
    X(EnqueueReadBuffer, "clEnqueueReadBuffer", cl_int,                                                       \
      (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint, const cl_event *, cl_event *))     \
    X(CreateProgramWithSource, "clCreateProgramWithSource", cl_program,                                       \
      (cl_context, cl_uint, const char **, const size_t *, cl_int *))                                         \
    X(CreateProgramWithBinary, "clCreateProgramWithBinary", cl_program,                                       \
      (cl_context, cl_uint, const cl_device_id *, const size_t *, const unsigned char **, cl_int *, cl_int *)) \
    X(BuildProgram, "clBuildProgram", cl_int,                                                                 \
      (cl_program, cl_uint, const cl_device_id *, const char *, ocl_build_notify_fn, void *))                 \
    X(GetProgramBuildInfo, "clGetProgramBuildInfo", cl_int,                                                   \
      (cl_program, cl_device_id, cl_uint, size_t, void *, size_t *))                                          \
    X(GetProgramInfo, "clGetProgramInfo", cl_int, (cl_program, cl_uint, size_t, void *, size_t *))            \
    X(ReleaseProgram, "clReleaseProgram", cl_int, (cl_program))                                               \
    X(CreateKernel, "clCreateKernel", cl_kernel, (cl_program, const char *, cl_int *))                        \
    X(ReleaseKernel, "clReleaseKernel", cl_int, (cl_kernel))                                                  \
    X(GetKernelWorkGroupInfo, "clGetKernelWorkGroupInfo", cl_int,                                             \
      (cl_kernel, cl_device_id, cl_uint, size_t, void *, size_t *))                                           \
    X(SetKernelArg, "clSetKernelArg", cl_int, (cl_kernel, cl_uint, size_t, const void *))                     \
    X(EnqueueNDRangeKernel, "clEnqueueNDRangeKernel", cl_int,                                                 \
      (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint,         \
       const cl_event *, cl_event *))                                                                         \
    X(Finish, "clFinish", cl_int, (cl_command_queue))                                                         \
    X(WaitForEvents, "clWaitForEvents", cl_int, (cl_uint, const cl_event *))                                  \
    X(GetEventProfilingInfo, "clGetEventProfilingInfo", cl_int, (cl_event, cl_uint, size_t, void *, size_t *)) \
    X(ReleaseEvent, "clReleaseEvent", cl_int, (cl_event))

typedef struct ocl_api {
    OCL_SYMBOLS(TILEC_DL_FIELD)
} ocl_api_t;

/* One enumerated device. */
typedef struct ocl_dev {
    cl_platform_id platform;
    cl_device_id id;
    char name[128];
    char platform_name[128];
    char driver[128];
    char version[128];        /* CL_DEVICE_VERSION */
    cl_bitfield type;
    int fp16, fp64, int64_atomics, printf_ok;
    uint64_t global_mem, local_mem, max_alloc;
    size_t max_wg;
    size_t max_item[3];
    cl_uint compute_units;
    cl_uint clock_mhz;        /* 0 when unknown */
    cl_uint subgroup;         /* warp / wavefront width from a vendor query, 0 unknown */
} ocl_dev_t;

typedef struct ocl_state {
    int ok;                   /* library loaded and at least one device */
    char why[512];            /* reason when not ok */
    ocl_api_t cl;
    ocl_dev_t *devs;
    uint32_t ndevs;
} ocl_state_t;

/* Loads the library and enumerates devices once; thread-safe. */
const ocl_state_t *ocl_state(void);
/* "CL_OUT_OF_RESOURCES (-5)" style name of an error code. */
const char *ocl_err_name(cl_int e);

/* ---- code generation (ocl_codegen.c) ------------------------------------- */

/* Fills the OpenCL C dialect for dev (fp16 native when the device has
 * cl_khr_fp16, else vload_half/vstore_half; printf when OpenCL >= 1.2). */
void ocl_dialect(const ocl_dev_t *dev, tilec_simt_dialect_t *d);
/* The target description of the SDK's lowering passes (ocl_target.c). */
const struct tilec_target_desc *ocl_target_desc(const char *arch);
/* That description with dev's local memory and work-group size (compile
 * lowers for the device it builds on). */
void ocl_target_for_device(const ocl_dev_t *dev, const char *arch, struct tilec_target_desc *out);
#define OCL_KERNEL_NAME "tilec_kernel"


#endif
