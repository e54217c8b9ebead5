build-cuda/frontend/diag.o: frontend/diag.c frontend/diag.h
frontend/diag.h:
