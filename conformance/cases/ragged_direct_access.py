# ragged_direct_access.py — direct (indexed) global loads, stores, an atomic and a vectorized store at ragged edges:
# past the tensor's edge, loads read 0 and stores/atomics are skipped (TileLang's safe-memory semantics, applied by
# the core before the plugin sees the IR), so a plugin only has to run the guarded IR it receives without writing
# out of bounds.  M and N are not multiples of the tile; the dynamic case makes the guard symbolic.
# conform: tol=auto covers=store,load,atomic_add,vectorized,dynamic
# conform-params: -D r=33
# conform-params: -D r=45
# conform-params: -D r=1
import tilelang
import tilelang.language as T


def ragged_direct_access(N=19, blk=16, bn=8):
    R = T.dynamic("r")

    @T.prim_func
    def main(X: T.Tensor((R, N), "float32"), Y: T.Tensor((R, N), "float32"), S: T.Tensor((N,), "float32"),
             Z: T.Tensor((R, 4), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(R, blk), threads=64) as (bx, by):
            m = T.alloc_fragment((blk,), "float32")
            for i in T.Parallel(blk):
                m[i] = 0
                for k in T.serial(bn):
                    m[i] += X[by * blk + i, bx * bn + k]
            for i, j in T.Parallel(blk, bn):
                Y[by * blk + i, bx * bn + j] = m[i] * 0.5 + X[by * blk + i, bx * bn + j]
            for j in T.serial(bn):
                for i in T.serial(blk):
                    T.atomic_add(S[bx * bn + j], X[by * blk + i, bx * bn + j])
            if bx == 0:
                for i in T.serial(blk):
                    for v in T.vectorized(4):
                        Z[by * blk + i, v] = X[by * blk + i, v] - 1

    return main
