def f(n):
    while n > 0:
        n -= 1
    else:
        n = 0
    return n
