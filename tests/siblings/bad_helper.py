# bad_helper.py — imported by bad_main.py.
def check_block(b):
    assert b % 32 == 0, f"block {b} must be a multiple of 32"
