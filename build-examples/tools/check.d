build-examples/tools/check.o: tools/check.c tools/check.h \
 plugin-sdk/include/tilec/ir.h
tools/check.h:
plugin-sdk/include/tilec/ir.h:
