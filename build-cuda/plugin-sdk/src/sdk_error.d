build-cuda/plugin-sdk/src/sdk_error.o: plugin-sdk/src/sdk_error.c \
 plugin-sdk/include/tilec/sdk.h
plugin-sdk/include/tilec/sdk.h:
