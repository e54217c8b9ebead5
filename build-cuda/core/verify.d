build-cuda/core/verify.o: core/verify.c core/passes.h \
 plugin-sdk/include/tilec/ir.h core/../plugin-sdk/src/ir_internal.h
core/passes.h:
plugin-sdk/include/tilec/ir.h:
core/../plugin-sdk/src/ir_internal.h:
