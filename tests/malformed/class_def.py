import tilelang.language as T


class Kernel(dict):
    block_M = 128
