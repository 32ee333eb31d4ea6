# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by scripts/demo and scripts/check: root check, Debian packages, build.
# Sourced, not run.

mr_need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "$0: run as root (it creates memory cgroups)" >&2
		exit 1
	fi
}

# Installs the Debian packages the build and tests need, when missing.
mr_install_packages() {
	mr_install_missing autoconf automake libtool pkg-config libcgroup-dev \
		liburcu-dev check gcc g++ make
}

# What `make check-kernel` (tests/kernel/run) needs besides the build: qemu
# to boot Debian's kernel (fetched by apt-get download, never installed),
# a static busybox for the guest, cpio for its initramfs, xz to extract the
# kernel's vmlinux, e2fsprogs for the scratch disk, libc6-dev's static libc
# for the guest programs, binutils' readelf to check the kernel's PVH note.
mr_install_kernel_packages() {
	mr_install_missing qemu-system-x86 busybox-static cpio xz-utils \
		e2fsprogs libc6-dev binutils
}

# Installs those of the named Debian packages that are missing.
mr_install_missing() {
	local missing="" p
	for p in "$@"; do
		if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
			missing="$missing $p"
		fi
	done
	if [ -n "$missing" ]; then
		echo "$0: installing$missing"
		apt-get update
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
	fi
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
