import tilelang.language as T


class Kernel:
    block_M = 128
