/*
 * plugin-sdk/src/subbyte.c — the 4-bit dtypes of tile IR 1.3 (docs/ir.md §11).
 *
 * float4_e2m1fn conversions and the packed storage of 4-bit kernel tensors:
 * two elements per byte, the even one in the low nibble.  Backends that
 * compute on one value per byte unpack a tensor before a launch and pack it
 * after (tilec_unpack4 / tilec_pack4); the byte form is int4 sign-extended
 * to int8, uint4 and float4_e2m1fn as their code.
 */
#include "tilec/ir.h"

#include <math.h>

/* The magnitudes of codes 0..7. */
static const float f4_mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

uint8_t tilec_f64_to_f4e2m1fn(double d)
{
    uint8_t sign = signbit(d) ? 8 : 0;
    double a = fabs(d);
    if (isnan(d)) {
        return (uint8_t)(sign ^ 8); /* ml_dtypes: a zero of the other sign */
    }
    if (a >= 6.0) {
        return (uint8_t)(sign | 7); /* saturates, infinities too */
    }
    for (uint8_t c = 0; c < 7; c++) {
        double mid = 0.5 * ((double)f4_mag[c] + (double)f4_mag[c + 1]); /* exact */
        if (a < mid || (a == mid && (c & 1) == 0)) {
            return (uint8_t)(sign | c); /* below the midpoint, or a tie to the even code */
        }
    }
    return (uint8_t)(sign | 7);
}

float tilec_f4e2m1fn_to_f32(uint8_t code)
{
    float m = f4_mag[code & 7];
    return code & 8 ? -m : m;
}

void tilec_unpack4(tilec_dtype_t t, const uint8_t *packed, uint8_t *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t v = (uint8_t)((packed[i / 2] >> (4 * (i % 2))) & 15);
        bytes[i] = t == TILEC_INT4 ? (uint8_t)((v ^ 8) - 8) : v; /* int4: sign-extended */
    }
}

void tilec_pack4(const uint8_t *bytes, uint8_t *packed, size_t n)
{
    for (size_t i = 0; i + 1 < n; i += 2) {
        packed[i / 2] = (uint8_t)((bytes[i] & 15) | (bytes[i + 1] & 15) << 4);
    }
    if (n % 2) {
        packed[n / 2] = (uint8_t)((packed[n / 2] & 0xf0) | (bytes[n - 1] & 15));
    }
}
