build-cuda/plugin-sdk/src/ir_read.o: plugin-sdk/src/ir_read.c \
 plugin-sdk/include/tilec/ir.h plugin-sdk/src/ir_internal.h
plugin-sdk/include/tilec/ir.h:
plugin-sdk/src/ir_internal.h:
