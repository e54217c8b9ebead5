build-cuda/conformance/runner.o: conformance/runner.c \
 conformance/conform.h conformance/../tools/check.h include/tilec/tilec.h \
 include/tilec/dlpack.h plugin-sdk/include/tilec/plugin.h \
 plugin-sdk/include/tilec/ir.h plugin-sdk/include/tilec/sdk.h
conformance/conform.h:
conformance/../tools/check.h:
include/tilec/tilec.h:
include/tilec/dlpack.h:
plugin-sdk/include/tilec/plugin.h:
plugin-sdk/include/tilec/ir.h:
plugin-sdk/include/tilec/sdk.h:
