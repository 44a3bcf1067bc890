#!/usr/bin/env bash
# Print the path of a current Neovim (Debian trixie's 0.10.x) for the tests,
# fetching it first when it is not cached.
#
# Debian 12 ships Neovim 0.7.2, and trixie's package needs glibc 2.38, so it
# cannot be installed as a system package here. Instead the packages are
# fetched with `apt-get download` through a private sources list, lists
# directory and cache (the system's apt state is untouched), extracted with
# `dpkg-deb -x` into a private prefix together with trixie's own libc, and
# nvim's ELF interpreter and library path are pointed into that prefix with
# patchelf. Only nvim itself runs on trixie's libc: the processes it starts
# (flow, a shell) use the system's.
#
#   scripts/nvim-current.sh            # prints .../usr/bin/nvim
#   FLOW_TEST_NVIM_BIN=$(scripts/nvim-current.sh) make test-nvim
#
# The prefix is kept in ${FLOW_TEST_CACHE:-$HOME/.cache/flow-test}; a rerun
# reuses it without touching the network. Needs apt-get, dpkg-deb and
# patchelf (`apt-get install patchelf`), and runs as any user. A failed
# signature check of trixie's lists means an old debian-archive-keyring:
# upgrade it (apt-get install debian-archive-keyring).
set -euo pipefail

suite=trixie
mirror=${FLOW_DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
home=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
cache=${FLOW_TEST_CACHE:-$home/.cache/flow-test}
prefix=$cache/nvim-$suite
nvim=$prefix/usr/bin/nvim

log() { printf 'nvim-current: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 1
}

if [ -x "$nvim" ] && "$nvim" --clean --headless -n +q </dev/null >/dev/null 2>&1; then
	echo "$nvim"
	exit 0
fi

for tool in apt-get apt-cache dpkg-deb patchelf; do
	command -v "$tool" >/dev/null || die "$tool is missing; install it (apt-get install $tool) and rerun"
done
[ -r "$keyring" ] || die "$keyring is missing; install debian-archive-keyring and rerun"
arch=$(dpkg --print-architecture)
case $arch in
amd64) triplet=x86_64-linux-gnu ld=ld-linux-x86-64.so.2 ;;
arm64) triplet=aarch64-linux-gnu ld=ld-linux-aarch64.so.1 ;;
*) die "architecture $arch is not supported" ;;
esac

mkdir -p "$cache"
work=$(mktemp -d "$cache/fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/etc/sources.list.d" "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
echo "deb [signed-by=$keyring] $mirror $suite main" >"$work/etc/sources.list"
touch "$work/status"
apt_opts=(
	-o "Dir::Etc::sourcelist=$work/etc/sources.list"
	-o "Dir::Etc::sourceparts=$work/etc/sources.list.d"
	-o "Dir::State::Lists=$work/lists"
	-o "Dir::State::status=$work/status"
	-o "Dir::Cache=$work/cache"
	-o "APT::Architecture=$arch"
	-o "Debug::NoLocking=1"
)
# As root, apt drops to the _apt user for downloads, which cannot write the
# private directories; they are private, so download as the caller.
[ "$(id -u)" = 0 ] && apt_opts+=(-o "APT::Sandbox::User=root")

log "reading the $suite package lists"
apt-get "${apt_opts[@]}" -qq update </dev/null >&2

# The dependency closure of neovim in trixie (with an empty dpkg status, so
# nothing counts as installed): every library it loads, trixie's libc6 and
# libgcc-s1 among them.
mapfile -t pkgs < <(apt-cache "${apt_opts[@]}" depends --recurse --no-recommends --no-suggests \
	--no-conflicts --no-breaks --no-replaces --no-enhances neovim |
	sed -n 's/^\([a-z0-9][a-z0-9.+-]*\)$/\1/p' | sort -u)
[ ${#pkgs[@]} -gt 0 ] || die "no neovim package found in $suite"
log "downloading ${#pkgs[@]} packages: ${pkgs[*]}"
(cd "$work/debs" && apt-get "${apt_opts[@]}" -qq download "${pkgs[@]}" </dev/null >&2)

stage=$work/prefix
mkdir -p "$stage"
for deb in "$work"/debs/*.deb; do
	dpkg-deb -x "$deb" "$stage"
done
bin=$stage/usr/bin/nvim
[ -x "$bin" ] || die "the neovim package has no usr/bin/nvim"

# The loader and the library directories of the final prefix. Debian's
# library packages install under usr/lib/<triplet> and lib/<triplet>
# (before the /usr merge), plus a few private directories (lua modules).
libdirs=()
for d in usr/lib/$triplet lib/$triplet usr/lib/$triplet/lua/5.1 usr/lib; do
	[ -d "$stage/$d" ] && libdirs+=("$prefix/$d")
done
interp=
for d in usr/lib/$triplet lib/$triplet usr/lib64 lib64; do
	if [ -e "$stage/$d/$ld" ]; then
		interp=$prefix/$d/$ld
		break
	fi
done
[ -n "$interp" ] || die "trixie's libc6 has no $ld"
rpath=$(
	IFS=:
	echo "${libdirs[*]}"
)
patchelf --set-interpreter "$interp" --set-rpath "$rpath" "$bin"

rm -rf "$prefix"
mv "$stage" "$prefix"
if ! out=$("$nvim" --clean --headless -n +q </dev/null 2>&1); then
	die "the fetched Neovim does not start: $out"
fi
log "$("$nvim" --version | head -n 1) in $prefix"
echo "$nvim"
