build-cuda/frontend/value.o: frontend/value.c frontend/eval_internal.h \
 frontend/ast.h plugin-sdk/include/tilec/ir.h frontend/diag.h \
 frontend/frontend.h
frontend/eval_internal.h:
frontend/ast.h:
plugin-sdk/include/tilec/ir.h:
frontend/diag.h:
frontend/frontend.h:
