import tilelang.language as T
x = (1 + 
