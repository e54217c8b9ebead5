build-cuda/embedded/backends/cpu/cpu_compile.o: \
 backends/cpu/cpu_compile.c backends/cpu/cpu_internal.h \
 plugin-sdk/include/tilec/ir.h plugin-sdk/include/tilec/plugin.h \
 plugin-sdk/include/tilec/sdk.h
backends/cpu/cpu_internal.h:
plugin-sdk/include/tilec/ir.h:
plugin-sdk/include/tilec/plugin.h:
plugin-sdk/include/tilec/sdk.h:
