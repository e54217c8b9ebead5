build-cuda/tools/tilec.o: tools/tilec.c tools/../conformance/conform.h \
 tools/../conformance/../tools/check.h include/tilec/tilec.h \
 include/tilec/dlpack.h plugin-sdk/include/tilec/plugin.h tools/check.h \
 plugin-sdk/include/tilec/ir.h
tools/../conformance/conform.h:
tools/../conformance/../tools/check.h:
include/tilec/tilec.h:
include/tilec/dlpack.h:
plugin-sdk/include/tilec/plugin.h:
tools/check.h:
plugin-sdk/include/tilec/ir.h:
