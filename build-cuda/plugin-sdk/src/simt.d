build-cuda/plugin-sdk/src/simt.o: plugin-sdk/src/simt.c \
 plugin-sdk/src/simt_internal.h plugin-sdk/include/tilec/ir.h \
 plugin-sdk/include/tilec/simt.h
plugin-sdk/src/simt_internal.h:
plugin-sdk/include/tilec/ir.h:
plugin-sdk/include/tilec/simt.h:
