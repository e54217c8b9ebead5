build-cuda/core/log.o: core/log.c core/log.h
core/log.h:
