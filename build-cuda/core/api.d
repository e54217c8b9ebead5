build-cuda/core/api.o: core/api.c core/api_internal.h \
 plugin-sdk/include/tilec/ir.h plugin-sdk/include/tilec/plugin.h \
 include/tilec/tilec.h include/tilec/dlpack.h frontend/frontend.h \
 frontend/diag.h core/interp.h core/loader.h core/log.h core/passes.h
core/api_internal.h:
plugin-sdk/include/tilec/ir.h:
plugin-sdk/include/tilec/plugin.h:
include/tilec/tilec.h:
include/tilec/dlpack.h:
frontend/frontend.h:
frontend/diag.h:
core/interp.h:
core/loader.h:
core/log.h:
core/passes.h:
