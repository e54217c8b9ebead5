build-cuda/core/api_buffer.o: core/api_buffer.c core/api_internal.h \
 plugin-sdk/include/tilec/ir.h plugin-sdk/include/tilec/plugin.h \
 include/tilec/tilec.h include/tilec/dlpack.h
core/api_internal.h:
plugin-sdk/include/tilec/ir.h:
plugin-sdk/include/tilec/plugin.h:
include/tilec/tilec.h:
include/tilec/dlpack.h:
