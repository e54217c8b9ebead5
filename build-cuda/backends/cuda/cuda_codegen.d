build-cuda/backends/cuda/cuda_codegen.o: backends/cuda/cuda_codegen.c \
 backends/cuda/cuda_internal.h plugin-sdk/include/tilec/ir.h \
 plugin-sdk/include/tilec/plugin.h backends/cuda/cuda_prelude.h
backends/cuda/cuda_internal.h:
plugin-sdk/include/tilec/ir.h:
plugin-sdk/include/tilec/plugin.h:
backends/cuda/cuda_prelude.h:
