build-cuda/conformance/abi.o: conformance/abi.c conformance/conform.h \
 conformance/../tools/check.h include/tilec/tilec.h \
 include/tilec/dlpack.h plugin-sdk/include/tilec/plugin.h
conformance/conform.h:
conformance/../tools/check.h:
include/tilec/tilec.h:
include/tilec/dlpack.h:
plugin-sdk/include/tilec/plugin.h:
