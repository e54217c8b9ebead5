build-cuda/core/passes.o: core/passes.c core/passes.h \
 plugin-sdk/include/tilec/ir.h core/log.h \
 core/../plugin-sdk/src/ir_internal.h
core/passes.h:
plugin-sdk/include/tilec/ir.h:
core/log.h:
core/../plugin-sdk/src/ir_internal.h:
