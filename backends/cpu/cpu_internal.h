/*
 * cpu_internal.h — private interfaces of the CPU backend.
 *
 * The CPU backend turns tile IR into C (cpu_codegen.c), compiles that C
 * with the system compiler into a shared object and loads it with dlopen
 * (cpu_compile.c), and runs the kernel's blocks over the process's pool of
 * host threads (cpu_pool.c); cpu_plugin.c holds the ABI table.  The same sources build
 * the stand-alone plugin libtilec-cpu.so and, with -DTILEC_EMBEDDED, the
 * copy embedded in libtilec.
 */
#ifndef TILEC_CPU_INTERNAL_H
#define TILEC_CPU_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "tilec/ir.h"
#include "tilec/plugin.h"
#include "tilec/sdk.h"
#include "tilec/shell.h"

#define TILEC_CPU_PLUGIN_VERSION "0.1.0"

/* ---- code generation (cpu_codegen.c) ------------------------------------ */

/* Symbols every generated shared object defines (see cpu_codegen.c):
 *   int tilec_cpu_module_abi(void)               returns TILEC_CPU_MODULE_ABI
 *   uint32_t tilec_nparams(void), tilec_nsyms(void)
 *   void tilec_grid(const int64_t *syms, int64_t g[3])
 *   int64_t tilec_scratch_size(const int64_t *syms)
 *   int64_t tilec_param_bytes(uint32_t i, const int64_t *syms)  (-1: bad shape; 4-bit: packed)
 *   int tilec_param_packed4(uint32_t i)   its 4-bit dtype, else 0 (ABI 4)
 *   void tilec_group(int32_t gs[2])   blocks per tilec_block call in x, y (ABI 3)
 *   void tilec_block(int32_t bx, int32_t by, int32_t bz, void *const *args,
 *                    const int64_t *syms, void *scratch)
 * tilec_block runs the group (bx, by) of gs[0] x gs[1] blocks, those of it
 * inside the grid; the launcher walks the grid of groups. */
#define TILEC_CPU_MODULE_ABI 4 /* 2: tilec_block zeroes its on-chip buffers; 3: tilec_group;
                                  4: tilec_param_packed4 (IR 1.3) */

typedef int (*cpu_abi_fn)(void);
typedef uint32_t (*cpu_count_fn)(void);
typedef void (*cpu_grid_fn)(const int64_t *syms, int64_t g[3]);
typedef int64_t (*cpu_scratch_fn)(const int64_t *syms);
typedef int64_t (*cpu_param_bytes_fn)(uint32_t i, const int64_t *syms);
typedef void (*cpu_group_fn)(int32_t gs[2]);
typedef int (*cpu_packed4_fn)(uint32_t i);
typedef void (*cpu_block_fn)(int32_t bx, int32_t by, int32_t bz, void *const *args,
                             const int64_t *syms, void *scratch);

/* Generates the C translation unit for module m into out.  Returns 0, or -1
 * with a message in err (an IR construct the generator rejects). */
int cpu_codegen(const tilec_ir_module_t *m, tilec_sdk_str_t *out, char *err, size_t errlen);

/* ---- compile and load (cpu_compile.c) ----------------------------------- */

/* A module's own state (the shell's module holds the IR, source, binary). */
typedef struct cpu_module {
    void *dl;                 /* dlopen handle */
    uint32_t nparams, nsyms;
    int32_t group[2];         /* blocks per tilec_block call in x, y (>= 1) */
    cpu_grid_fn grid;
    cpu_scratch_fn scratch_size;
    cpu_param_bytes_fn param_bytes;
    cpu_packed4_fn packed4;
    cpu_block_fn block;
} cpu_module_t;

/* The compiler command ($CC split on blanks, default "cc"): 0 when its
 * program is found (in PATH or as a path), else -1 with *why set to a
 * static-lifetime description. */
int cpu_compiler_find(const char **why);

/* First line of `$CC --version` (or $CC's name when that fails), computed
 * once per process; never NULL. */
const char *cpu_compiler_identity(void);

/* Full compile of the shell's module sm (its data is a cpu_module_t):
 * generated C, the shared object (cache or compiler), its entry points.
 * Sets the SDK error on failure. */
tilec_pstatus_t cpu_compile_module(tilec_shell_module_t *sm, const tilec_pcompile_options_t *opts);
/* Binds the shared object in sm->binary (kernel bundles): no compiler. */
tilec_pstatus_t cpu_load_module(tilec_shell_module_t *sm);
/* Unloads the shared object (the shell frees the rest). */
void cpu_module_free(tilec_shell_module_t *sm);

/* ---- the worker pool (cpu_pool.c) ---------------------------------------- */

#define CPU_POOL_MAX_THREADS 1024

/* CPUs in the process's affinity mask (online CPUs when unknown), >= 1. */
int cpu_affinity_cpus(void);
/* Threads a launch uses: TILEC_NUM_THREADS, or cpu_affinity_cpus() when it
 * is unset or empty; -1 (with a message in err, when given) for a value
 * that is not an integer from 1 to CPU_POOL_MAX_THREADS. */
int cpu_pool_threads(char *err, size_t errlen);
/* An open device handle uses the pool (acquire: registers the fork
 * handlers once; 0, or -1 when they cannot be); the last release joins the
 * workers. */
int cpu_pool_acquire(void);
void cpu_pool_release(void);
/* Runs blocks 0..nblocks-1 of grid g (x fastest) on the pool, one launch
 * at a time per process; *ms (when given) is the wall time once the pool
 * was ours.  Sets the SDK error on failure. */
tilec_pstatus_t cpu_pool_run(const cpu_module_t *mod, void *const *args, const int64_t *syms,
                             const int64_t g[3], int64_t nblocks, size_t scratch, double *ms);

/* fork() safety for cpu_compile.c's lock (the compiler identity's),
 * called from cpu_pool.c's pthread_atfork handlers:
 * prepare takes them, parent and child release them (the child's only
 * thread is the forking one, which held them across the fork). */
void cpu_compile_fork_prepare(void);
void cpu_compile_fork_parent(void);
void cpu_compile_fork_child(void);

#endif
