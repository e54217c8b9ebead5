build-examples/tools/tilec.o: tools/tilec.c tools/check.h \
 plugin-sdk/include/tilec/ir.h plugin-sdk/include/tilec/plugin.h \
 include/tilec/tilec.h include/tilec/dlpack.h
tools/check.h:
plugin-sdk/include/tilec/ir.h:
plugin-sdk/include/tilec/plugin.h:
include/tilec/tilec.h:
include/tilec/dlpack.h:
