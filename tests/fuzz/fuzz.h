/*
 * tests/fuzz/fuzz.h — what every harness under tests/fuzz/ shares.
 *
 * Each fuzz_NAME.c defines LLVMFuzzerTestOneInput.  Built with clang
 * -fsanitize=fuzzer (make fuzz) it is a libFuzzer binary; linked with
 * replay.c instead (make test) it is a plain program that feeds it every
 * file of the seed corpus and of the regression directory, so an input
 * that ever failed stays a test without libFuzzer.  A harness reports a
 * broken property (a round trip that changed the text) with fuzz_fail,
 * which aborts: libFuzzer saves the input, replay names the file.
 */
#ifndef TILEC_TESTS_FUZZ_H
#define TILEC_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define fuzz_fail(...)                                                                             \
    do {                                                                                           \
        fprintf(stderr, "fuzz: property broken at %s:%d: ", __FILE__, __LINE__);                  \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        abort();                                                                                   \
    } while (0)

#endif
