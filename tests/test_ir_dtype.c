/*
 * tests/test_ir_dtype.c — the tile IR library's dtypes: names, sizes and
 * kinds; the 16-bit float conversions (float16 by known patterns and an
 * exhaustive round trip, bfloat16's rounding); IR 1.2's float8 and IR
 * 1.3's 4-bit dtypes (conversions by hand, packed storage, the version
 * rule, the reader refusing them under an older header).
 */
#include <math.h>

#include "ir_harness.h"

TestSuite(ir_dtype, .init = setup, .fini = teardown);

/* ---- dtypes and 16-bit floats ----------------------------------------- */

Test(ir_dtype, dtype_names)
{
    int t;
    for (t = 0; t < TILEC_DTYPE_COUNT; t++) {
        cr_assert_eq(tilec_dtype_from_name(tilec_dtype_name((tilec_dtype_t)t)), t);
    }
    cr_assert_eq(tilec_dtype_from_name("float"), TILEC_FLOAT32);
    cr_assert_eq(tilec_dtype_from_name("half"), -1);
    cr_assert_eq(tilec_dtype_from_name("T.float16"), -1);
    cr_assert_eq(tilec_dtype_size(TILEC_BFLOAT16), 2);
    cr_assert_eq(tilec_dtype_size(TILEC_UINT64), 8);
    cr_assert_eq(tilec_dtype_size(TILEC_BOOL), 1);
    cr_assert(tilec_dtype_is_float(TILEC_BFLOAT16));
    cr_assert(!tilec_dtype_is_float(TILEC_INT8));
    cr_assert(tilec_dtype_is_int(TILEC_UINT8));
    cr_assert(!tilec_dtype_is_int(TILEC_BOOL));
    cr_assert(tilec_dtype_is_signed(TILEC_INT16));
    cr_assert(!tilec_dtype_is_signed(TILEC_UINT16));
    cr_assert_eq(tilec_scope_from_name("fragment"), TILEC_SCOPE_FRAGMENT);
    cr_assert_str_eq(tilec_scope_name(TILEC_SCOPE_VAR), "var");
    cr_assert_eq(tilec_binop_from_name("floordiv"), TILEC_BIN_FLOORDIV);
    cr_assert_eq(tilec_unop_from_name("sigmoid"), TILEC_UN_SIGMOID);
    cr_assert_eq(tilec_unop_from_name("nope"), -1);
    cr_assert_str_eq(tilec_loop_kind_name(TILEC_LOOP_PIPELINED), "pipelined");
    cr_assert_str_eq(tilec_reduce_op_name(TILEC_RED_ABSMAX), "absmax");
    cr_assert_str_eq(tilec_atomic_op_name(TILEC_ATOMIC_MIN), "min");
    cr_assert_str_eq(tilec_policy_name(TILEC_POLICY_FULLCOL), "fullcol");
}

static float bits_f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

Test(ir_dtype, float16_known_patterns)
{
    cr_assert_eq(tilec_f32_to_f16(1.0f), 0x3c00);
    cr_assert_eq(tilec_f32_to_f16(-2.5f), 0xc100);
    cr_assert_eq(tilec_f32_to_f16(65504.0f), 0x7bff);
    cr_assert_eq(tilec_f32_to_f16(0.0f), 0x0000);
    cr_assert_eq(tilec_f32_to_f16(-0.0f), 0x8000);
    cr_assert_eq(tilec_f32_to_f16(5.9604644775390625e-08f), 0x0001); /* smallest subnormal 2^-24 */
    cr_assert_eq(tilec_f32_to_f16(6.103515625e-05f), 0x0400);       /* smallest normal */
    cr_assert_eq(tilec_f32_to_f16(65520.0f), 0x7c00);               /* halfway to 2^16: rounds to inf */
    cr_assert_eq(tilec_f32_to_f16(65519.0f), 0x7bff);
    cr_assert_eq(tilec_f32_to_f16(1e6f), 0x7c00);
    cr_assert_eq(tilec_f32_to_f16(-INFINITY), 0xfc00);
    cr_assert_eq(tilec_f32_to_f16(2.98023223876953125e-08f), 0x0000); /* 2^-25: tie to even (0) */
    cr_assert_eq(tilec_f32_to_f16(8.94069671630859375e-08f), 0x0002); /* 1.5 * 2^-24: tie to even (2) */
    cr_assert_eq(tilec_f32_to_f16(1.00048828125f), 0x3c00);           /* 1 + 2^-11: tie to even */
    cr_assert_eq(tilec_f32_to_f16(1.00146484375f), 0x3c02);           /* 1 + 3*2^-11: tie up to even */
    {
        uint16_t h = tilec_f32_to_f16(NAN);
        cr_assert_eq(h & 0x7c00, 0x7c00);
        cr_assert_neq(h & 0x03ff, 0);
        cr_assert(isnan(tilec_f16_to_f32(h)));
    }
    cr_assert_eq(tilec_f16_to_f32(0x3c00), 1.0f);
    cr_assert_eq(tilec_f16_to_f32(0xc100), -2.5f);
    cr_assert_eq(tilec_f16_to_f32(0x7bff), 65504.0f);
    cr_assert_eq(tilec_f16_to_f32(0x0001), 5.9604644775390625e-08f);
    cr_assert_eq(tilec_f16_to_f32(0x7c00), INFINITY);
    cr_assert(signbit(tilec_f16_to_f32(0x8000)));
}

Test(ir_dtype, float16_exhaustive_round_trip)
{
    unsigned h;
    for (h = 0; h < 65536; h++) {
        float f = tilec_f16_to_f32((uint16_t)h);
        if (isnan(f)) {
            continue;
        }
        cr_assert_eq(tilec_f32_to_f16(f), h, "f16 %04x", h);
        cr_assert_eq(tilec_f64_to_f16((double)f), h, "f16 %04x via double", h);
        f = tilec_bf16_to_f32((uint16_t)h);
        if (!isnan(f)) {
            cr_assert_eq(tilec_f32_to_bf16(f), h, "bf16 %04x", h);
        }
    }
}

Test(ir_dtype, f64_to_f16_rounds_once)
{
    /* 1 + 2^-11 + 2^-40: above the tie, must round up; rounding through
     * float first would lose the 2^-40 and give a tie -> even (down). */
    double d = 1.0 + ldexp(1.0, -11) + ldexp(1.0, -40);
    cr_assert_eq(tilec_f64_to_f16(d), 0x3c01);
    cr_assert_eq(tilec_f32_to_f16((float)d), 0x3c00);
    d = 1.0 + ldexp(1.0, -8) + ldexp(1.0, -40);
    cr_assert_eq(tilec_f64_to_bf16(d), 0x3f81);
    cr_assert_eq(tilec_f64_to_f16(1e-300), 0);
    cr_assert_eq(tilec_f64_to_f16(-1e300), 0xfc00);
}

Test(ir_dtype, bfloat16_known_patterns)
{
    cr_assert_eq(tilec_f32_to_bf16(1.0f), 0x3f80);
    cr_assert_eq(tilec_f32_to_bf16(-2.5f), 0xc020);
    cr_assert_eq(tilec_f32_to_bf16(bits_f32(0x3f808000)), 0x3f80); /* tie, even stays */
    cr_assert_eq(tilec_f32_to_bf16(bits_f32(0x3f818000)), 0x3f82); /* tie, odd rounds up */
    cr_assert_eq(tilec_f32_to_bf16(bits_f32(0x3f808001)), 0x3f81);
    cr_assert_eq(tilec_f32_to_bf16(bits_f32(0x7f7fffff)), 0x7f80); /* FLT_MAX rounds to inf */
    cr_assert_eq(tilec_f32_to_bf16(bits_f32(0x00000001)), 0x0000); /* far below bf16 subnormals */
    cr_assert_eq(tilec_f32_to_bf16(bits_f32(0x00010000)), 0x0001);
    cr_assert(isnan(tilec_bf16_to_f32(tilec_f32_to_bf16(NAN))));
    cr_assert_eq(tilec_bf16_to_f32(0xc020), -2.5f);
}

/* IR 1.2: the float8 dtypes.  Conversions by hand (ml_dtypes' bytes), the
 * version rule (a float8 buffer needs 1.2), a round trip, and the reader
 * refusing float8 under an older header. */
Test(ir_dtype, float8_dtypes_1_2)
{
    static const char *t = "tileir 1.2\nkernel k {\n  var bx int32 block\n  var i int32 loop\n"
                           "  param X global float8_e4m3fn [4]\n  param Y global float32 [4] out\n"
                           "  grid [bx = 1]\n  threads 32 1 1\n  body {\n"
                           "    for i in parallel(4) {\n      store Y[i] = (float32(X[i]) * float32(float8_e5m2(2.0)))\n"
                           "    }\n  }\n}\n";
    tilec_ir_module_t *m = NULL;
    char err[256], *text;
    cr_expect_eq(tilec_f64_to_f8e4m3fn(1.0), 0x38);
    cr_expect_eq(tilec_f64_to_f8e4m3fn(448.0), 0x7e);
    cr_expect_eq(tilec_f64_to_f8e4m3fn(464.0), 0x7e);    /* tie: to even */
    cr_expect_eq(tilec_f64_to_f8e4m3fn(-470.0), 0xff);   /* past the largest: NaN */
    cr_expect_eq(tilec_f64_to_f8e4m3fn(INFINITY), 0x7f);
    cr_expect_eq(tilec_f64_to_f8e4m3fn(0x1p-10), 0x00);  /* half the smallest subnormal: to even */
    cr_expect_eq(tilec_f64_to_f8e5m2(61440.0), 0x7c);    /* rounds to infinity */
    cr_expect_eq(tilec_f64_to_f8e5m2(-0x1p-16), 0x81);
    cr_expect(tilec_f8e4m3fn_to_f32(0x7e) == 448.0f && isnan(tilec_f8e4m3fn_to_f32(0xff)));
    cr_expect(tilec_f8e4m3fn_to_f32(0x01) == 0x1p-9f && tilec_f8e5m2_to_f32(0x7b) == 57344.0f);
    cr_expect(isinf(tilec_f8e5m2_to_f32(0x7c)));
    cr_expect_eq(tilec_dtype_size(TILEC_FLOAT8_E5M2), 1);
    cr_expect(tilec_dtype_is_float(TILEC_FLOAT8_E4M3FN));
    cr_expect_eq(tilec_dtype_from_name("float8_e4m3"), TILEC_FLOAT8_E4M3FN);
    cr_assert_eq(tilec_ir_read(&A, t, strlen(t), &m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s", err);
    cr_expect_eq(tilec_ir_module_minor_needed(m), 2);
    text = round_trip(m);
    cr_expect_str_eq(text, t);
    free(text);
    expect_reject("tileir 1.1\nkernel k {\n  param X global float8_e5m2 [4]\n",
                  "dtype float8_e5m2 needs tileir 1.2 (the header says 1.1)", 1);
    expect_reject("    store X[0, 0] = float32(float8_e4m3fn(1.0))", "dtype float8_e4m3fn needs tileir 1.2", 0);
}

/* IR 1.3: the 4-bit dtypes.  float4_e2m1fn conversions by hand (the codes
 * ml_dtypes gives), int4/uint4 wrapping, the packed storage, the version
 * rule and the reader refusing a 4-bit dtype under an older header. */
Test(ir_dtype, four_bit_dtypes_1_3)
{
    static const char *t = "tileir 1.3\nkernel k {\n  var bx int32 block\n  var i int32 loop\n"
                           "  param X global int4 [4]\n  param Y global float4_e2m1fn [4] out\n"
                           "  grid [bx = 1]\n  threads 32 1 1\n  body {\n"
                           "    for i in parallel(4) {\n      store Y[i] = float4_e2m1fn((float32(X[i]) * 0.5))\n"
                           "    }\n  }\n}\n";
    static const struct { double in; uint8_t code; } f4[] = {
        {0.0, 0}, {0.25, 0}, {0.26, 1}, {0.75, 2}, {1.25, 2}, {1.75, 4}, {2.5, 4}, {3.5, 6}, {5.0, 6},
        {5.01, 7}, {6.5, 7}, {100.0, 7}, {INFINITY, 7}, {-INFINITY, 15}, {-0.0, 8}, {-7.0, 15}, {-1e-9, 8},
        {-0.3, 9}, {NAN, 8}, {-NAN, 0}};
    tilec_ir_module_t *m = NULL;
    char err[256], *text;
    uint8_t packed[3] = {0, 0, 0xa0}, bytes[5];
    for (size_t k = 0; k < sizeof f4 / sizeof f4[0]; k++)
        cr_expect_eq(tilec_f64_to_f4e2m1fn(f4[k].in), f4[k].code, "e2m1fn(%g): %u, want %u", f4[k].in,
                     tilec_f64_to_f4e2m1fn(f4[k].in), f4[k].code);
    cr_expect(tilec_f4e2m1fn_to_f32(7) == 6.0f && tilec_f4e2m1fn_to_f32(9) == -0.5f);
    cr_expect(tilec_f4e2m1fn_to_f32(8) == 0.0f && signbit(tilec_f4e2m1fn_to_f32(8)));
    cr_expect_eq(tilec_ir_wrap_int(8, TILEC_INT4), -8);
    cr_expect_eq(tilec_ir_wrap_int((uint64_t)-9, TILEC_INT4), 7);
    cr_expect_eq(tilec_ir_wrap_int(16, TILEC_INT4), 0);
    cr_expect_eq(tilec_ir_wrap_int((uint64_t)-1, TILEC_UINT4), 15);
    cr_expect_eq(tilec_dtype_bits(TILEC_INT4), 4);
    cr_expect_eq(tilec_dtype_size(TILEC_UINT4), 1, "one per byte on chip");
    cr_expect_eq(tilec_dtype_tensor_bytes(TILEC_FLOAT4_E2M1FN, 5), 3, "two per byte in a tensor");
    cr_expect(tilec_dtype_is_float(TILEC_FLOAT4_E2M1FN) && tilec_dtype_is_signed(TILEC_INT4));
    cr_expect(tilec_dtype_is_int(TILEC_UINT4) && !tilec_dtype_is_signed(TILEC_UINT4));
    /* int4 -8, 7, -1, 0, 1: the even element in the low nibble; the last
     * byte's unused high nibble (0xa) is kept */
    bytes[0] = (uint8_t)-8; bytes[1] = 7; bytes[2] = (uint8_t)-1; bytes[3] = 0; bytes[4] = 1;
    tilec_pack4(bytes, packed, 5);
    cr_expect(packed[0] == 0x78 && packed[1] == 0x0f && packed[2] == 0xa1, "%02x %02x %02x", packed[0],
              packed[1], packed[2]);
    memset(bytes, 0, sizeof bytes);
    tilec_unpack4(TILEC_INT4, packed, bytes, 5);
    cr_expect((int8_t)bytes[0] == -8 && bytes[1] == 7 && (int8_t)bytes[2] == -1 && bytes[3] == 0 && bytes[4] == 1);
    tilec_unpack4(TILEC_UINT4, packed, bytes, 5);
    cr_expect(bytes[0] == 8 && bytes[2] == 15, "uint4 is not sign-extended");
    cr_assert_eq(tilec_ir_read(&A, t, strlen(t), &m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s", err);
    cr_expect_eq(tilec_ir_module_minor_needed(m), 3);
    text = round_trip(m);
    cr_expect_str_eq(text, t);
    free(text);
    expect_reject("tileir 1.2\nkernel k {\n  param X global uint4 [4]\n",
                  "dtype uint4 needs tileir 1.3 (the header says 1.2)", 1);
}
