build-cuda/core/loader.o: core/loader.c core/loader.h \
 plugin-sdk/include/tilec/plugin.h include/tilec/tilec.h \
 include/tilec/dlpack.h core/cache.h core/log.h
core/loader.h:
plugin-sdk/include/tilec/plugin.h:
include/tilec/tilec.h:
include/tilec/dlpack.h:
core/cache.h:
core/log.h:
