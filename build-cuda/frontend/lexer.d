build-cuda/frontend/lexer.o: frontend/lexer.c frontend/lexer.h \
 plugin-sdk/include/tilec/ir.h frontend/diag.h
frontend/lexer.h:
plugin-sdk/include/tilec/ir.h:
frontend/diag.h:
