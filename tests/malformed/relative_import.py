from . import language as T
