build-cuda/frontend/parser.o: frontend/parser.c frontend/ast.h \
 plugin-sdk/include/tilec/ir.h frontend/diag.h frontend/lexer.h
frontend/ast.h:
plugin-sdk/include/tilec/ir.h:
frontend/diag.h:
frontend/lexer.h:
