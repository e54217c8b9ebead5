build-cuda/backends/cuda/cuda_dl.o: backends/cuda/cuda_dl.c \
 backends/cuda/cuda_internal.h plugin-sdk/include/tilec/ir.h \
 plugin-sdk/include/tilec/plugin.h plugin-sdk/include/tilec/sdk.h
backends/cuda/cuda_internal.h:
plugin-sdk/include/tilec/ir.h:
plugin-sdk/include/tilec/plugin.h:
plugin-sdk/include/tilec/sdk.h:
