# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by scripts/demo, scripts/check and scripts/check-sanitize: root
# check, Debian packages, build.
# Sourced, not run.

mr_need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "$0: run as root (it creates memory cgroups)" >&2
		exit 1
	fi
}

# The Debian packages the build and tests need (jemalloc and mimalloc:
# tests/test-real-alloc-hook preloads them behind the hook; jemalloc's
# development files: examples/jemalloc-extents, on its extent hooks;
# crun and busybox-static: tests/test-real-oci runs containers with crun
# from a busybox rootfs it builds; podman: it also tries the OCI hook's
# hooks.d file with podman, which reads hooks.d where crun does not: 14
# packages, 18 MB to download, 9 s to install here). memreclaimd
# needs libinih (its configuration files), libsystemd (sd_notify) and
# libmicrohttpd (its metrics endpoint); its tests parse the metrics with
# python3-prometheus-client, check its unit with systemd-analyze
# (systemd) and render the manual pages with man (man-db).
MR_BUILD_PACKAGES="autoconf automake libtool pkg-config libcgroup-dev liburcu-dev check libjson-c-dev gcc g++ make libjemalloc2 libmimalloc2.0 libinih-dev libsystemd-dev libmicrohttpd-dev python3-prometheus-client systemd man-db libjemalloc-dev crun busybox-static podman"

# What `make check-kernel` (tests/kernel/run) needs besides the build: qemu
# to boot Debian's kernel (fetched by apt-get download, never installed),
# a static busybox for the guest, cpio for its initramfs, xz to extract the
# kernel's vmlinux, e2fsprogs for the scratch disk, libc6-dev's static libc
# for the guest programs, binutils' readelf to check the kernel's PVH note.
MR_KERNEL_PACKAGES="qemu-system-x86 busybox-static cpio xz-utils e2fsprogs libc6-dev binutils"

# What scripts/check-sanitize needs besides the build: clang, the
# sanitizers' and libFuzzer's runtimes (libclang-rt-14-dev, which clang
# only recommends) and llvm's llvm-symbolizer, which puts file and line in
# the reports.
MR_SANITIZE_PACKAGES="clang libclang-rt-14-dev llvm"

# What scripts/check-deb needs to build and check the Debian packages of
# debian/.
MR_PACKAGING_PACKAGES="debhelper dpkg-dev fakeroot lintian"

# Those of the named Debian packages that are not installed.
mr_missing() {
	local missing="" p
	for p in "$@"; do
		if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
			missing="$missing $p"
		fi
	done
	echo "$missing"
}

# Installs those of the named Debian packages that are missing.
mr_install_missing() {
	local missing
	missing=$(mr_missing "$@")
	if [ -n "$missing" ]; then
		echo "$0: installing$missing"
		apt-get update
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
	fi
}

# The build's packages that are not installed.
mr_missing_packages() {
	mr_missing $MR_BUILD_PACKAGES
}

mr_install_packages() {
	mr_install_missing $MR_BUILD_PACKAGES
}

mr_install_kernel_packages() {
	mr_install_missing $MR_KERNEL_PACKAGES
}

mr_install_packaging_packages() {
	mr_install_missing $MR_PACKAGING_PACKAGES
}

mr_install_sanitize_packages() {
	mr_install_missing $MR_SANITIZE_PACKAGES
}

# Configures (once) and builds in the source tree.
mr_build() {
	cd "$MR_TOP"
	if [ ! -x configure ] || [ ! -f config.status ]; then
		autoreconf -fi
		./configure
	fi
	make -j"$(nproc)"
}
