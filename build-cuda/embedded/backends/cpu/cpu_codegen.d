build-cuda/embedded/backends/cpu/cpu_codegen.o: \
 backends/cpu/cpu_codegen.c backends/cpu/cpu_internal.h \
 plugin-sdk/include/tilec/ir.h plugin-sdk/include/tilec/plugin.h \
 backends/cpu/cpu_prelude.h
backends/cpu/cpu_internal.h:
plugin-sdk/include/tilec/ir.h:
plugin-sdk/include/tilec/plugin.h:
backends/cpu/cpu_prelude.h:
