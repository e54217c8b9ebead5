build-cuda/plugin-sdk/src/ir_print.o: plugin-sdk/src/ir_print.c \
 plugin-sdk/include/tilec/ir.h plugin-sdk/src/ir_internal.h
plugin-sdk/include/tilec/ir.h:
plugin-sdk/src/ir_internal.h:
