build-cuda/plugin-sdk/src/ir.o: plugin-sdk/src/ir.c \
 plugin-sdk/include/tilec/ir.h plugin-sdk/src/ir_internal.h
plugin-sdk/include/tilec/ir.h:
plugin-sdk/src/ir_internal.h:
