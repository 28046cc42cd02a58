#!/usr/bin/env bash
# Builds the Debian package of linklab: the release binary, then the
# manual pages and shell completions it generates from its own command
# line into target/dist/, then the .deb with cargo-deb (its contents are
# [package.metadata.deb] in Cargo.toml). Prints the .deb's path last.
#
#   bash dist/build-deb.sh            # the package in target/debian/
#
# Needs cargo-deb (`cargo install cargo-deb --locked`) and dpkg-dev
# (dpkg-shlibdeps computes the package's library dependencies).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo deb --version >/dev/null 2>&1; then
    echo "build-deb: cargo-deb is not installed: cargo install cargo-deb --locked" >&2
    exit 2
fi
if ! command -v dpkg-shlibdeps >/dev/null 2>&1; then
    echo "build-deb: dpkg-shlibdeps is missing: apt-get install dpkg-dev" >&2
    exit 2
fi

target=$(cargo metadata --format-version 1 --no-deps --locked |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
[ -n "$target" ] || { echo "build-deb: cargo metadata names no target directory" >&2; exit 1; }

# The package's version is the crate's with Debian revision 1; its
# changelog's newest entry must say the same.
version=$(cargo pkgid --locked -p linklab)
version=${version##*[@#]}
logged=$(dpkg-parsechangelog -l dist/changelog -S Version)
if [ "$logged" != "$version-1" ]; then
    echo "build-deb: dist/changelog's newest entry is $logged, the crate is $version: add an entry for $version-1" >&2
    exit 2
fi

cargo build --release --locked --bin linklab
linklab="$target/release/linklab"

# Made anew each time, so that a subcommand since removed leaves no page.
# Always ./target/dist (Cargo.toml's assets name it so), whatever
# CARGO_TARGET_DIR says; cargo-deb finds the binary itself.
rm -rf target/dist
"$linklab" generate man target/dist/man >/dev/null
"$linklab" generate completions target/dist/completions >/dev/null

# The release profile keeps some debug information (debug = 1); the
# package's binary is stripped of it.
cargo deb --no-build --locked --strip
