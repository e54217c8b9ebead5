build-cuda/core/cache.o: core/cache.c core/cache.h core/log.h
core/cache.h:
core/log.h:
