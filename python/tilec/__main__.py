"""python -m tilec SCRIPT.py [ARGS...]: runs a TileLang script, host code
and all, with `tilelang` resolved to tilec (_hook.py)."""
import os
import runpy
import sys


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m tilec SCRIPT.py [ARGS...]\n"
              "Runs a TileLang script with tilelang resolved to tilec; the kernels compile "
              "on TILEC_BACKEND (default auto).")
        return 0 if argv else 2
    if argv[0] == "--version":
        import tilec
        print("tilec %s (%s)" % (tilec.__version__, tilec.library_path()))
        return 0
    script = argv[0]
    if not os.path.exists(script):
        print("python -m tilec: %s: no such file" % script, file=sys.stderr)
        return 2
    from . import _hook
    _hook.install()
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
