import tilelang.language as T
# café au lait: latin-1, not UTF-8
x = 1
