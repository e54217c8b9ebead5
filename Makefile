# tilec — one build for everything.
#   make            libtilec.so, the tilec CLI, every plugin, the SDK library
#   make test       unit tests (Criterion), malformed-program corpus, every example,
#                   the Python package's tests (tests/python, when numpy and pytest exist)
#                   tests/install.sh (make install into a temporary prefix, used as a user would),
#                   the fuzz harnesses on their seeds and regression inputs, and 7 random
#                   programs per backend against the interpreter (tests/diff)
#   make sanitize   all of it again built with clang ASan+UBSan in build-san/ (SAN_SET=ci: CI's share)
#   make fuzz       each libFuzzer harness FUZZ_TIME=60 s, then DIFF_COUNT=100 random programs
#                   per backend (docs/sanitizers.md)
#   make run        the GEMM example on the CPU backend with --check
#   make conform    the conformance suite on the cpu backend and the template plugin
#   make clang      the same build with clang (house style: clean with both)
#   make install    PREFIX (default /usr/local), DESTDIR for staging; make uninstall
#                   (docs/operators.md says what goes where)
# Outputs go to build/.  Nothing here needs a vendor SDK: backends dlopen
# their runtimes.

CC      ?= cc
O       ?= build
PREFIX  ?= /usr/local
WERROR  ?= -Werror
OPT     ?= -O2
CFLAGS_BASE := -std=c11 $(OPT) -g -Wall -Wextra $(WERROR) -fPIC -fvisibility=hidden -DTILEC_PREFIX='"$(PREFIX)"' \
               -D_GNU_SOURCE -Iinclude -Iplugin-sdk/include -Icore -Ifrontend
ifeq ($(DEBUG),1)
CFLAGS_BASE += -DTILEC_DEBUG -O0
endif
CFLAGS  += $(CFLAGS_BASE)
LDLIBS_CORE := -ldl -lpthread -lm

SDK_SRC  := $(wildcard plugin-sdk/src/*.c)
CORE_SRC := $(wildcard core/*.c) $(wildcard frontend/*.c)
CPU_SRC  := $(wildcard backends/cpu/*.c)
CLI_SRC  := $(wildcard tools/*.c) $(wildcard conformance/*.c)
# The check harness lives in core (the tuner validates candidates with it)
# and is linked into the CLI as well: libtilec.so hides its symbols; so is
# the .npy reader/writer of tilec run --input/--output.
CLI_EXTRA_OBJ := $(O)/core/check.o $(O)/core/npy.o
TEST_SRC := $(wildcard tests/test_*.c)

SDK_OBJ  := $(SDK_SRC:%.c=$(O)/%.o)
CORE_OBJ := $(CORE_SRC:%.c=$(O)/%.o)
CPU_OBJ  := $(CPU_SRC:%.c=$(O)/%.o)
CPU_EMB_OBJ := $(CPU_SRC:%.c=$(O)/embedded/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(O)/%.o)
TESTS    := $(TEST_SRC:tests/%.c=$(O)/tests/%)
# Fuzz harnesses (tests/fuzz/), replayed on their corpora by make test.
FUZZ_TARGETS := frontend ir tunedb npy
FUZZ_REPLAY  := $(FUZZ_TARGETS:%=$(O)/fuzz/replay_%)

SONAME   := libtilec.so.0
PLUGINS  := $(O)/libtilec-cpu.so
# Plugins other than cpu: each backends/NAME/ directory builds libtilec-NAME.so.
OTHER_BACKENDS := $(sort $(filter-out cpu,$(notdir $(patsubst %/,%,$(dir $(wildcard backends/*/*.c))))))
PLUGINS  += $(foreach b,$(OTHER_BACKENDS),$(O)/libtilec-$(b).so)

all: $(O)/libtilec.so $(O)/tilec $(PLUGINS) $(O)/libtilec-sdk.a $(O)/examples/api_demo

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(O)/embedded/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DTILEC_EMBEDDED -MMD -MP -c $< -o $@

# The SDK: IR model, text reader/printer, helpers every plugin links.
$(O)/libtilec-sdk.a: $(SDK_OBJ)
	@rm -f $@
	ar rcs $@ $^

# Static archive of the whole library: what the unit tests link, so they
# can reach internal functions that libtilec.so hides.
$(O)/libtilec.a: $(CORE_OBJ) $(CPU_EMB_OBJ) $(SDK_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(O)/libtilec.so: $(CORE_OBJ) $(CPU_EMB_OBJ) $(SDK_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) -o $(O)/$(SONAME) $^ $(LDLIBS_CORE)
	ln -sf $(SONAME) $@

# The CLI uses the public API, plus the SDK for dtype conversions.
$(O)/tilec: $(CLI_OBJ) $(CLI_EXTRA_OBJ) $(O)/libtilec.so $(O)/libtilec-sdk.a
	$(CC) -o $@ $(CLI_OBJ) $(CLI_EXTRA_OBJ) -L$(O) -ltilec $(O)/libtilec-sdk.a -Wl,-rpath,'$$ORIGIN:$$ORIGIN/../lib' $(LDLIBS_CORE)

# A plugin exports exactly tilec_plugin_query (plugin-sdk/plugin.map).
$(O)/libtilec-cpu.so: $(CPU_OBJ) $(O)/libtilec-sdk.a plugin-sdk/plugin.map
	$(CC) -shared -Wl,--version-script=plugin-sdk/plugin.map -o $@ $(CPU_OBJ) $(O)/libtilec-sdk.a $(LDLIBS_CORE)

define backend_rule
$(O)/libtilec-$(1).so: $(patsubst %.c,$(O)/%.o,$(wildcard backends/$(1)/*.c)) $(O)/libtilec-sdk.a plugin-sdk/plugin.map
	$$(CC) -shared -Wl,--version-script=plugin-sdk/plugin.map -o $$@ $$(filter %.o,$$^) $(O)/libtilec-sdk.a $(LDLIBS_CORE)
endef
$(foreach b,$(OTHER_BACKENDS),$(eval $(call backend_rule,$(b))))

$(O)/examples/api_demo: examples/api_demo.c $(O)/libtilec.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -L$(O) -ltilec -Wl,-rpath,'$$ORIGIN/..' $(LDLIBS_CORE)

# ---- tests ------------------------------------------------------------------

# Deliberately broken plugins for the loader tests, all from one source.
BROKEN_KINDS := notplugin nosymbol nulltable noversion smallstruct badabi badname nullentry crashquery \
                crashcount crashinfo exitctor exitquery handlerexit unavailable shadow good \
                v11 small11 nullprop badir
# Kinds that would slow or change every test that scans tests/plugins.
BROKEN_EXTRA := hangcount sighost
BROKEN := $(foreach k,$(BROKEN_KINDS),$(O)/tests/plugins/libtilec-broken_$(k).so) \
          $(foreach k,$(BROKEN_EXTRA),$(O)/tests/plugins-extra/libtilec-broken_$(k).so)
$(O)/tests/plugins/libtilec-broken_notplugin.so:
	@mkdir -p $(dir $@)
	printf 'this is not an ELF shared object\n' > $@
$(O)/tests/plugins/libtilec-broken_%.so: tests/plugins/broken.c $(O)/libtilec-sdk.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -DBROKEN_KIND_$* -o $@ $< $(O)/libtilec-sdk.a
$(O)/tests/plugins-extra/libtilec-broken_%.so: tests/plugins/broken.c $(O)/libtilec-sdk.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -DBROKEN_KIND_$* -o $@ $< $(O)/libtilec-sdk.a

$(O)/tests/%: tests/%.c $(O)/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests -o $@ $< $(O)/libtilec.a -lcriterion $(LDLIBS_CORE)

# The tuner's crashing plugin: the cpu backend whose compile segfaults on
# a marked kernel (tests/plugins/tune_crash.c).
TUNE_PLUGINS := $(O)/tests/tune-plugins/libtilec-tunecrash.so
$(O)/tests/tune-plugins/libtilec-tunecrash.so: tests/plugins/tune_crash.c $(O)/libtilec-cpu.so $(wildcard plugin-sdk/include/tilec/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -o $@ $< -ldl

# Conformance (conformance/README.md): the template plugin built from the
# SDK alone (plugin-sdk/template), its deliberately mis-lowered twin, and
# misbehaving fake plugins for the runner's own tests.  The two template
# builds share object files, so the second waits for the first.
TEMPLATE_DIR := $(abspath $(O))/template
TEMPLATE_SO  := $(O)/template/libtilec-template.so $(O)/template/libtilec-template_wrong.so \
                $(O)/template/libtilec-template_abi10.so
$(O)/template/libtilec-template.so: plugin-sdk/template/template.c plugin-sdk/template/Makefile $(SDK_SRC) $(wildcard plugin-sdk/include/tilec/*.h)
	$(MAKE) -C plugin-sdk/template OUT=$(TEMPLATE_DIR) CC='$(CC)' WERROR=$(WERROR)
$(O)/template/libtilec-template_wrong.so: $(O)/template/libtilec-template.so
	$(MAKE) -C plugin-sdk/template OUT=$(TEMPLATE_DIR) CC='$(CC)' WERROR=$(WERROR) MISLOWER=1
$(O)/template/libtilec-template_abi10.so: $(O)/template/libtilec-template_wrong.so
	$(MAKE) -C plugin-sdk/template OUT=$(TEMPLATE_DIR) CC='$(CC)' WERROR=$(WERROR) ABI10=1
FAKE_KINDS := crash hang liar nocaps
FAKE := $(foreach k,$(FAKE_KINDS),$(O)/tests/conform-plugins/libtilec-fake_$(k).so)
$(O)/tests/conform-plugins/libtilec-fake_%.so: tests/plugins/conform_fake.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -DFAKE_KIND_$* -o $@ $<
# The runner's tests link its objects (they are part of the CLI, not libtilec).
CONFORM_OBJ := $(patsubst %.c,$(O)/%.o,$(wildcard conformance/*.c)) $(O)/core/check.o
$(O)/tests/test_conform: tests/test_conform.c $(CONFORM_OBJ) $(O)/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests -Iconformance -Itools -o $@ $< $(CONFORM_OBJ) $(O)/libtilec.a -lcriterion $(LDLIBS_CORE)

# The lowering tests link the target descriptions of the CUDA and OpenCL
# backends (data only) and the runner's case loader.
$(O)/tests/test_lower: tests/test_lower.c $(CONFORM_OBJ) $(O)/backends/cuda/cuda_target.o $(O)/backends/opencl/ocl_target.o $(O)/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests -Iconformance -Itools -o $@ $< $(filter-out $(O)/libtilec.a,$(filter %.o %.a,$^)) $(O)/libtilec.a -lcriterion $(LDLIBS_CORE)

test: all $(TESTS) $(BROKEN) $(TEMPLATE_SO) $(FAKE) $(TUNE_PLUGINS) $(FUZZ_REPLAY)
	@O=$(O) sh tests/conform.sh
	@TILEC_BUILD_DIR=$(abspath $(O)) O=$(O) sh tests/run.sh $(TESTS)
	@O=$(O) sh tests/python/run.sh
	@O=$(O) PREFIX=$(PREFIX) sh tests/install.sh
	@O=$(O) sh tests/fuzz/replay.sh $(FUZZ_TARGETS)
	@O=$(O) DIFF_COUNT=7 sh tests/diff/run.sh $(DIFF_BACKENDS)

# The conformance suite alone, on the cpu backend and on the template.
conform: all $(BROKEN) $(TEMPLATE_SO)
	@O=$(O) sh tests/conform.sh

run: all
	TILEC_BACKEND=cpu $(O)/tilec run examples/gemm.py --check

# The CUDA backend on a machine with an NVIDIA GPU (the device tool's H200):
# every example and conformance case with --check, tilec conform,
# compute-sanitizer memcheck/racecheck, and with BENCH=1 bench/cuda_bench.py.
test-cuda:
	O=$(O) sh tests/gpu/run_cuda.sh

# Benchmarks beside the reference libraries (OpenBLAS on the CPU).
bench: all $(O)/bench/host_bench
	sh bench/run_host.sh $(O)

$(O)/bench/host_bench: bench/host_bench.c $(O)/libtilec.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I/usr/include/x86_64-linux-gnu/openblas-pthread -o $@ $< -L$(O) -ltilec \
	    -Wl,-rpath,'$$ORIGIN/..' -lopenblas $(LDLIBS_CORE)

clang:
	$(MAKE) CC=clang O=build-clang all

# ---- sanitizers (docs/sanitizers.md) ----------------------------------------
# Everything (library, CLI, plugins, template, tests) rebuilt with clang's
# AddressSanitizer and UndefinedBehaviorSanitizer in its own build dir, then
# the unit tests, examples, tests/lang, golden IR, conformance and the fuzz
# replays (seeds and regression inputs) against it.
# CC is exported to the tests, so the cpu backend's generated kernels are
# compiled by the same instrumented clang.
SAN_O  ?= build-san
SAN_CC ?= clang -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
sanitize:
	$(MAKE) O=$(SAN_O) CC='$(SAN_CC)' OPT=-O1 sanitize-build
	O=$(SAN_O) CC='$(SAN_CC)' sh tests/sanitize.sh $(patsubst $(O)/%,$(SAN_O)/%,$(TESTS))
sanitize-build: all $(TESTS) $(BROKEN) $(TEMPLATE_SO) $(FAKE) $(TUNE_PLUGINS) $(FUZZ_REPLAY)

# ---- fuzzing (docs/sanitizers.md) -------------------------------------------
# libFuzzer harnesses in tests/fuzz/ (frontend, IR reader, tuning-table
# import, .npy reader).  make fuzz builds the library with coverage + ASan + UBSan in
# $(FUZZ_O) and runs each harness FUZZ_TIME seconds from its seed corpus
# (tests/fuzz/corpus/NAME) with its dictionary; a finding is saved under
# $(FUZZ_O)/fuzz/findings/ and belongs in tests/fuzz/regress/NAME/.  make
# test replays the corpora and the regression inputs with the same harness
# linked to tests/fuzz/replay.c instead of libFuzzer.
FUZZ_O    ?= build-fuzz
FUZZ_TIME ?= 60
# TILEC_FUZZ_BUDGETS: the frontend's step and memory budgets made smaller
# (frontend/eval_internal.h), so an input that reaches one stays cheap.
FUZZ_CC   ?= clang -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -DTILEC_FUZZ_BUDGETS
$(O)/fuzz/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(O)/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/fuzz -o $@ $< tests/fuzz/replay.c $(O)/libtilec.a $(LDLIBS_CORE)
$(O)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(O)/libtilec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -Itests/fuzz -o $@ $< $(O)/libtilec.a $(LDLIBS_CORE)
# Then DIFF_COUNT random programs (tests/diff/gen.py, seeds from 7 on: make
# test runs 0..6) on every backend against the interpreter.
DIFF_BACKENDS := cpu opencl vulkan
DIFF_COUNT ?= 100
fuzz: all
	$(MAKE) O=$(FUZZ_O) CC='$(FUZZ_CC)' OPT=-O1 $(FUZZ_TARGETS:%=$(FUZZ_O)/fuzz/fuzz_%)
	O=$(FUZZ_O) FUZZ_TIME=$(FUZZ_TIME) sh tests/fuzz/run.sh $(FUZZ_TARGETS)
	O=$(O) DIFF_COUNT=$(DIFF_COUNT) DIFF_FIRST=7 sh tests/diff/run.sh $(DIFF_BACKENDS)
fuzz-replay: $(FUZZ_REPLAY)
	@O=$(O) sh tests/fuzz/replay.sh $(FUZZ_TARGETS)

# ---- install (docs/operators.md) --------------------------------------------
# PREFIX/bin/tilec finds PREFIX/lib/libtilec.so.0 through its runpath
# ($ORIGIN/../lib), and libtilec finds PREFIX/lib/tilec next to itself, so
# the tree works wherever it is installed or moved, with no ldconfig.
IBIN   := $(DESTDIR)$(PREFIX)/bin
ILIB   := $(DESTDIR)$(PREFIX)/lib
IINC   := $(DESTDIR)$(PREFIX)/include/tilec
ISHARE := $(DESTDIR)$(PREFIX)/share/tilec
HEADERS     := $(wildcard include/tilec/*.h plugin-sdk/include/tilec/*.h)
SDK_FILES   := $(wildcard plugin-sdk/include/tilec/*.h plugin-sdk/src/*.c plugin-sdk/src/*.h) \
               plugin-sdk/plugin.map plugin-sdk/template/Makefile plugin-sdk/template/template.c
SUITE_FILES := $(wildcard conformance/cases/* conformance/known-failures/*) conformance/README.md

install: all
	install -d $(IBIN) $(ILIB)/tilec $(ILIB)/pkgconfig $(IINC)
	install -m 755 $(O)/tilec $(IBIN)/
	install -m 755 $(O)/$(SONAME) $(ILIB)/
	ln -sf $(SONAME) $(ILIB)/libtilec.so
	install -m 644 $(O)/libtilec-sdk.a $(ILIB)/
	install -m 755 $(PLUGINS) $(ILIB)/tilec/
	install -m 644 $(HEADERS) $(IINC)/
	sed -e 's|@PREFIX@|$(PREFIX)|g' tools/tilec.pc.in > $(ILIB)/pkgconfig/tilec.pc
	for f in $(SDK_FILES) $(SUITE_FILES); do \
	    install -D -m 644 $$f $(ISHARE)/$$f || exit 1; done

uninstall:
	rm -f $(IBIN)/tilec $(ILIB)/$(SONAME) $(ILIB)/libtilec.so $(ILIB)/libtilec-sdk.a \
	      $(ILIB)/pkgconfig/tilec.pc $(addprefix $(ILIB)/tilec/,$(notdir $(PLUGINS))) \
	      $(addprefix $(IINC)/,$(notdir $(HEADERS))) \
	      $(addprefix $(ISHARE)/,$(SDK_FILES) $(SUITE_FILES))
	-rmdir $(ILIB)/tilec $(IINC) $(ISHARE)/plugin-sdk/template $(ISHARE)/plugin-sdk/include/tilec \
	       $(ISHARE)/plugin-sdk/include $(ISHARE)/plugin-sdk/src $(ISHARE)/plugin-sdk \
	       $(ISHARE)/conformance/cases $(ISHARE)/conformance/known-failures $(ISHARE)/conformance \
	       $(ISHARE) 2>/dev/null || true

# make install into a temporary prefix and use it as a user would.
test-install: all
	@O=$(O) PREFIX=$(PREFIX) sh tests/install.sh

clean:
	rm -rf $(O) build-clang $(SAN_O) $(FUZZ_O)

.PHONY: all test run bench clang install uninstall test-install clean test-cuda sanitize sanitize-build fuzz fuzz-replay
-include $(shell find $(O) -name '*.d' 2>/dev/null)
