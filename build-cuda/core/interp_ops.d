build-cuda/core/interp_ops.o: core/interp_ops.c core/interp_priv.h \
 plugin-sdk/include/tilec/ir.h
core/interp_priv.h:
plugin-sdk/include/tilec/ir.h:
