build-cuda/core/interp.o: core/interp.c core/interp.h \
 plugin-sdk/include/tilec/ir.h core/interp_priv.h core/log.h
core/interp.h:
plugin-sdk/include/tilec/ir.h:
core/interp_priv.h:
core/log.h:
