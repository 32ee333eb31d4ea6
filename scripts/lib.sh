# SPDX-License-Identifier: LGPL-2.1-or-later
# Shared by scripts/demo and scripts/check: root check, Debian packages, build.
# Sourced, not run.

mr_need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "$0: run as root (it creates memory cgroups)" >&2
		exit 1
	fi
}

# The Debian packages the build and tests need that are not installed.
mr_missing_packages() {
	local pkgs="autoconf automake libtool pkg-config libcgroup-dev liburcu-dev check libjson-c-dev gcc g++ make"
	local missing="" p
	for p in $pkgs; do
		if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
			missing="$missing $p"
		fi
	done
	echo "$missing"
}

# Installs the Debian packages the build and tests need, when missing.
mr_install_packages() {
	local missing
	missing=$(mr_missing_packages)
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
