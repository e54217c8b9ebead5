build-cuda/plugin-sdk/src/sdk_cache.o: plugin-sdk/src/sdk_cache.c \
 plugin-sdk/include/tilec/sdk.h
plugin-sdk/include/tilec/sdk.h:
