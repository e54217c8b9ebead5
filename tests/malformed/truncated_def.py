import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128, 128), "float16"),
         B: T.Tensor((128,