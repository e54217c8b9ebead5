build-cuda/tools/check.o: tools/check.c tools/check.h \
 include/tilec/tilec.h include/tilec/dlpack.h \
 plugin-sdk/include/tilec/ir.h
tools/check.h:
include/tilec/tilec.h:
include/tilec/dlpack.h:
plugin-sdk/include/tilec/ir.h:
