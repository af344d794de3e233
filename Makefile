# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make              vhca.ko against the 6.12 headers, and the rdma-core provider
# make lint         W=1 -Werror, sparse (C=2) -Wsparse-error, checkpatch --strict
# make install      module and provider on this host (DESTDIR, INSTALL_MOD_PATH honoured)
# make uninstall    what make install put there, with the same variables
# make dkms-install the module source in /usr/src/vhca-VERSION, built and installed by DKMS
#                   for the running kernel, or for DKMS_KVER
# make dkms-uninstall  DKMS's builds of this version removed, and its source
# make deb          the Debian packages in build/deb (or DEB_OUT), lintian-checked (tools/mkdeb.sh)
# make debug        vhca.ko, vhca.ko with the KUnit suites and tests/kmod against the
#                   debug kernel (tools/debug-kernel.sh), in build/debug
# make sysmodule KDIR=... B=...  vhca.ko and tests/kmod against another kernel's
#                   build tree, from a copy of the sources in $(B)/src, W=1 -Werror
#                   and sparse-clean (tools/system.sh, for each supported system)
#
# KVER defaults to the ABI tools/setup.sh picked, else the running kernel.  Every
# module build first runs the compatibility probes (drivers/compat/probe.sh)
# against its KDIR, into the drivers/vhca_probed.h of the tree it builds.

VHCA_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/vhca
KVER ?= $(or $(shell cat $(VHCA_CACHE)/kver 2>/dev/null),$(shell uname -r))
KDIR ?= /usr/src/linux-headers-$(KVER)
KSRC ?= $(VHCA_CACHE)/kunit/linux-source-6.12
DEBUG_KDIR ?= $(VHCA_CACHE)/debug-kernel/build

B ?= build
# the packages' version (debian/changelog) is the module's for DKMS too
VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
DKMS_SRC = $(DESTDIR)/usr/src/vhca-$(VERSION)
MULTIARCH := $(shell gcc -print-multiarch)
PROVIDER_DIR ?= /usr/lib/$(MULTIARCH)/libibverbs
PROVIDER := $(B)/libvhca-rdmav34.so

KMAKE = $(MAKE) -C $(KDIR) M=$(CURDIR) CONFIG_INFINIBAND_VHCA=m W=1
# kernel test modules (tests/kmod), loaded in a guest
KMAKE_TESTS = $(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod W=1

CFLAGS_USER ?= -O2 -g
# The rdma-core release whose private ABI the provider is built for: the
# third field of libibverbs' version (1.14.44.0 is rdma-core 44).
# The tests that reach into the provider's objects need it too.
RDMA_CORE := $(shell pkg-config --modversion libibverbs 2>/dev/null | cut -d. -f3)
RDMA_CORE_DEF := -DVHCA_RDMA_CORE=$(or $(RDMA_CORE),0)
CFLAGS_PROV := $(CFLAGS_USER) -std=gnu11 -fPIC -Wall -Wextra -Werror $(RDMA_CORE_DEF) \
	-Wmissing-prototypes -Wstrict-prototypes -Iuapi -Iuserspace
PROV_SRCS := $(wildcard userspace/*.c)
PROV_HDRS := $(wildcard userspace/*.h) uapi/vhca-abi.h

KERNEL_FILES := $(filter-out drivers/vhca_probed.h,$(wildcard drivers/*.[ch])) \
	$(wildcard kunit/*.c drivers/compat/*.c) \
	$(filter-out %.mod.c,$(wildcard tests/kmod/*.c)) uapi/vhca-abi.h Kconfig

TEST_CFLAGS := $(CFLAGS_USER) -std=gnu11 -Wall -Wextra -Werror $(RDMA_CORE_DEF)
# ucxcheck needs UCX's headers: the primary system's set-up and the trixie
# root install them (clients.sh and twohost.sh; each system's leg.sh)
UCX_TESTS := $(B)/tests/ucxcheck
GUEST_TESTS := $(filter-out $(UCX_TESTS),$(patsubst tests/guest/%.c,$(B)/tests/%,$(wildcard tests/guest/*.c)))
HOST_TESTS := $(patsubst tests/host/%.c,$(B)/tests/%,$(wildcard tests/host/*.c))
BENCH := $(patsubst bench/%.c,$(B)/bench/%,$(wildcard bench/*.c))

.PHONY: all probe sysmodule usertests module provider tests kmod-tests debug lint lint-build lint-sparse lint-checkpatch \
	lint-kerneldoc install uninstall install-provider uninstall-provider dkms-source \
	dkms-install dkms-uninstall deb version clean
all: module provider tests $(UCX_TESTS)

tests: usertests kmod-tests
usertests: $(GUEST_TESTS) $(HOST_TESTS) $(BENCH)

kmod-tests:
	$(KMAKE_TESTS) modules
	@mkdir -p $(B)/tests && cp tests/kmod/*.ko $(B)/tests/

$(B)/bench/%: bench/%.c
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -o $@ $< -libverbs

# hostile.c, isolation.c and scenfuzz.c write into the rings through the
# provider's own objects
RING_TESTS := $(B)/tests/hostile $(B)/tests/isolation $(B)/tests/scenfuzz \
	$(B)/tests/tm
$(RING_TESTS): TEST_CFLAGS += -Iuapi -Iuserspace -pthread
$(RING_TESTS): $(PROV_HDRS)

$(B)/tests/%: tests/guest/%.c tests/guest/lib/testlib.h
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lrdmacm -libverbs

$(UCX_TESTS): tests/guest/ucxcheck.c tests/guest/lib/testlib.h
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lucp -lucs

# the ring fuzzer reaches the provider's ring mappings (userspace/provider.h);
# its run is ringfuzz.c, what it fuzzes in tests/guest/ringfuzz/
RINGFUZZ_SRCS := tests/guest/ringfuzz.c $(wildcard tests/guest/ringfuzz/*.c)
$(B)/tests/ringfuzz: $(RINGFUZZ_SRCS) tests/guest/ringfuzz/ringfuzz.h \
		tests/guest/lib/testlib.h $(PROV_HDRS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Iuapi -Iuserspace -o $@ $(RINGFUZZ_SRCS) -libverbs

$(B)/tests/%: tests/host/%.c uapi/vhca-abi.h
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Wpedantic -Iuapi -o $@ $<

PROBE = drivers/compat/probe.sh

probe:
	$(PROBE) $(KDIR) drivers/vhca_probed.h

module: probe
	$(KMAKE) modules
	@mkdir -p $(B) && cp vhca.ko $(B)/vhca.ko

provider: $(PROVIDER) $(B)/vhca.driver

$(PROVIDER): $(PROV_SRCS) $(PROV_HDRS) userspace/provider.map
	@mkdir -p $(B)
	$(CC) $(CFLAGS_PROV) $(LDFLAGS) -shared -o $@ $(PROV_SRCS) \
		-Wl,--version-script=userspace/provider.map -Wl,-z,defs -libverbs -lpthread

$(B)/vhca.driver:
	@mkdir -p $(B)
	echo "driver vhca" >$@

# The same sources against the debug kernel's build folder.  kbuild writes
# its objects next to the sources (M=), so these build from a copy in
# build/debug, apart from the objects of the build against Debian's headers.
# cp -p keeps the mtimes: a second run rebuilds only what changed.
D := $(B)/debug
KMOD_SRCS := tests/kmod/Kbuild $(filter-out %.mod.c,$(wildcard tests/kmod/*.c))
debug:
	@test -f $(DEBUG_KDIR)/Module.symvers || \
		{ echo "no debug kernel in $(DEBUG_KDIR): run tools/debug-kernel.sh" >&2; exit 1; }
	@mkdir -p $(D)/src $(D)/kunit $(D)/kmod $(D)/tests/kunit
	cp -p --parents Kbuild Kconfig uapi/*.h drivers/*.[ch] $(D)/src/
	cp -p --parents Kbuild Kconfig uapi/*.h drivers/*.[ch] kunit/*.c $(D)/kunit/
	cp -p $(KMOD_SRCS) $(D)/kmod/
	$(PROBE) $(DEBUG_KDIR) $(D)/src/drivers/vhca_probed.h
	$(PROBE) $(DEBUG_KDIR) $(D)/kunit/drivers/vhca_probed.h
	$(MAKE) -C $(DEBUG_KDIR) M=$(CURDIR)/$(D)/src CONFIG_INFINIBAND_VHCA=m W=1 KCFLAGS=-Werror modules
	$(MAKE) -C $(DEBUG_KDIR) M=$(CURDIR)/$(D)/kunit CONFIG_INFINIBAND_VHCA=m \
		CONFIG_INFINIBAND_VHCA_KUNIT_TEST=y W=1 KCFLAGS=-Werror modules
	$(MAKE) -C $(DEBUG_KDIR) M=$(CURDIR)/$(D)/kmod W=1 KCFLAGS=-Werror modules
	cp $(D)/src/vhca.ko $(D)/vhca.ko
	cp $(D)/kunit/vhca.ko $(D)/tests/kunit/vhca.ko
	cp $(D)/kmod/*.ko $(D)/tests/

# Another kernel: the module and the kernel test modules from copies (kbuild
# writes its objects next to the sources), every warning an error, and
# sparse over each file in the same pass (a second pass with other flags
# compiled everything again).  SPARSE_CHECK names another sparse, which
# kbuild is told to run (KBUILD_CHECKSRC on the command line): it would
# turn C=2 off where scripts/checker-valid.sh is missing (tools/system.sh).
S := $(B)/src
SPARSE = C=2 CF="-Wsparse-error" $(if $(SPARSE_CHECK),KBUILD_CHECKSRC=2 CHECK=$(SPARSE_CHECK))
sysmodule:
	@mkdir -p $(S)/mod $(S)/kmod $(B)/tests
	cp -p --parents Kbuild Kconfig uapi/*.h drivers/*.[ch] $(S)/mod/
	cp -p $(KMOD_SRCS) $(S)/kmod/
	$(PROBE) $(KDIR) $(S)/mod/drivers/vhca_probed.h
	$(MAKE) -C $(KDIR) M=$(CURDIR)/$(S)/mod CONFIG_INFINIBAND_VHCA=m W=1 KCFLAGS=-Werror $(SPARSE) modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/$(S)/kmod W=1 KCFLAGS=-Werror $(SPARSE) modules
	cp $(S)/mod/vhca.ko $(B)/vhca.ko
	cp $(S)/kmod/*.ko $(B)/tests/

# Every kernel warning is an error here; the default build shows them too.
# kbuild rebuilds objects whose flags changed, so no clean is needed.
lint: lint-build lint-sparse lint-checkpatch lint-kerneldoc

lint-build: probe
	$(KMAKE) KCFLAGS=-Werror modules
	$(KMAKE_TESTS) KCFLAGS=-Werror modules

lint-sparse: probe
	$(KMAKE) C=2 CF="-Wsparse-error" modules
	$(KMAKE_TESTS) C=2 CF="-Wsparse-error" modules

lint-checkpatch:
	perl $(KSRC)/scripts/checkpatch.pl -q --strict --no-tree --show-types \
		--no-summary --ignore FILE_PATH_CHANGES -f $(KERNEL_FILES)

lint-kerneldoc:
	perl $(KSRC)/scripts/kernel-doc -none -Wall -Werror \
		$(filter-out Kconfig,$(KERNEL_FILES))

install: all install-provider
	# Debian's signing key stays with Debian: install the module unsigned.
	$(MAKE) -C $(KDIR) M=$(CURDIR) CONFIG_INFINIBAND_VHCA=m \
		CONFIG_MODULE_SIG_ALL= INSTALL_MOD_DIR=updates modules_install
	# Debian's headers carry no System.map, so kbuild skips depmod.
	$(if $(INSTALL_MOD_PATH),,depmod -a $(KVER))

install-provider: provider
	install -D -m 0644 $(PROVIDER) $(DESTDIR)$(PROVIDER_DIR)/libvhca-rdmav34.so
	install -D -m 0644 $(B)/vhca.driver $(DESTDIR)/etc/libibverbs.d/vhca.driver

uninstall-provider:
	rm -f $(DESTDIR)$(PROVIDER_DIR)/libvhca-rdmav34.so $(DESTDIR)/etc/libibverbs.d/vhca.driver

# modules_install compresses the module as the kernel's own are (.xz on
# Debian): each suffix kbuild may have used goes
MODDIR = $(INSTALL_MOD_PATH)/lib/modules/$(KVER)/updates
uninstall: uninstall-provider
	rm -f $(MODDIR)/vhca.ko $(foreach z,.xz .gz .zst,$(MODDIR)/vhca.ko$(z))
	$(if $(INSTALL_MOD_PATH),,depmod -a $(KVER))

# The tree DKMS builds from; debian/rules installs the same one.
dkms-source:
	install -d $(DKMS_SRC)/drivers/compat $(DKMS_SRC)/uapi
	install -m 0644 Kbuild Kconfig $(DKMS_SRC)/
	install -m 0644 $(filter-out drivers/vhca_probed.h,$(wildcard drivers/*.[ch])) \
		$(DKMS_SRC)/drivers/
	install -m 0644 $(wildcard drivers/compat/*.c) $(DKMS_SRC)/drivers/compat/
	install -m 0755 drivers/compat/probe.sh $(DKMS_SRC)/drivers/compat/
	install -m 0644 drivers/compat/dkms.mk $(DKMS_SRC)/drivers/compat/
	install -m 0644 uapi/vhca-abi.h $(DKMS_SRC)/uapi/
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf >$(DKMS_SRC)/dkms.conf

dkms-install: dkms-source install-provider
	dkms install vhca/$(VERSION) $(if $(DKMS_KVER),-k $(DKMS_KVER))

dkms-uninstall: uninstall-provider
	dkms remove vhca/$(VERSION) --all
	rm -rf $(DKMS_SRC)

# for the scripts (tools/mkdeb.sh, the tests): the one reading of the version
version:
	@echo $(VERSION)

# DEB_OUT: another system's packages go elsewhere (tests/packages.sh)
DEB_OUT ?= build/deb
deb:
	tools/mkdeb.sh $(DEB_OUT)

clean:
	$(KMAKE) clean
	$(KMAKE_TESTS) clean
	rm -rf $(B) drivers/vhca_probed.h
