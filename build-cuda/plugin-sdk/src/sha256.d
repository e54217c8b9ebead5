build-cuda/plugin-sdk/src/sha256.o: plugin-sdk/src/sha256.c \
 plugin-sdk/include/tilec/sdk.h
plugin-sdk/include/tilec/sdk.h:
