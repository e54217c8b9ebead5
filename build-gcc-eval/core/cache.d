build-gcc-eval/core/cache.o: core/cache.c core/cache.h core/log.h
core/cache.h:
core/log.h:
