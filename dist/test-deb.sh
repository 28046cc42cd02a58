#!/usr/bin/env bash
# Installs the Debian package on this machine and checks it as an
# operator would meet it, then removes and purges it and checks that
# nothing of it is left (issue 33, item 3). Run by .ci/run after
# dist/build-deb.sh; needs root (or sudo), dpkg, man-db and systemd's
# systemd-analyze and systemd-sysusers, on Debian bookworm or later.
#
#   bash dist/test-deb.sh [PACKAGE.deb]    # default: target/debian/linklab_*.deb
#
# It refuses to run where linklab is installed already (outside CI, where
# a package left by an interrupted run is purged first). The user
# `linklab` is removed at the end when this run's install made it (dpkg
# leaves system users behind on purge, as Debian does).
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

deb=${1:-}
if [ -z "$deb" ]; then
    # shellcheck disable=SC2012 # the names are cargo-deb's, plain
    deb=$(ls -t target/debian/linklab_*.deb 2>/dev/null | head -n 1 || true)
    [ -n "$deb" ] || { echo "test-deb: no target/debian/linklab_*.deb: run dist/build-deb.sh first" >&2; exit 2; }
fi
[ -f "$deb" ] || { echo "test-deb: $deb: no such file" >&2; exit 2; }
for tool in dpkg man systemd-analyze systemd-sysusers; do
    command -v "$tool" >/dev/null 2>&1 || { echo "test-deb: $tool is missing (Debian: man-db, systemd)" >&2; exit 2; }
done

# Slim container images tell dpkg to skip manual pages: then the package
# installs none and `man` cannot find them, whatever the package holds.
if grep -qs 'path-exclude[= ]*/usr/share/man' /etc/dpkg/dpkg.cfg.d/*; then
    echo "test-deb: dpkg is told to skip /usr/share/man here (/etc/dpkg/dpkg.cfg.d/); the manual page checks will fail" >&2
fi

passed=0
failed=0
check() { # NAME COMMAND...: runs COMMAND, counts and reports it
    local name=$1
    shift
    if "$@"; then
        echo "ok: $name"
        passed=$((passed + 1))
    else
        echo "FAILED: $name"
        failed=$((failed + 1))
    fi
}

installed() { dpkg-query -W -f='${db:Status-Status}' linklab 2>/dev/null || true; }

still_there() { # FILE [KEPT]: prints the paths in FILE that exist, less KEPT
    local path
    while read -r path; do
        if [ "$path" != "${2:-}" ] && { [ -e "$path" ] || [ -L "$path" ]; }; then
            echo "$path"
        fi
    done <"$1"
}

case $(installed) in
    "" | not-installed) ;;
    *)
        if [ "${CI:-}" = true ]; then
            echo "--- purging linklab left installed ($(installed)) by an earlier run"
            $sudo dpkg -P linklab >/dev/null
        else
            echo "test-deb: linklab is installed here ($(installed)); remove it (dpkg -P linklab) to run the test" >&2
            exit 2
        fi
        ;;
esac

user_before=no
getent passwd linklab >/dev/null && user_before=yes

work=$(mktemp -d)
cleanup() {
    # A failed run leaves no package behind.
    case $(installed) in "" | not-installed) ;; *) $sudo dpkg -P linklab >/dev/null 2>&1 || true ;; esac
    rm -rf "$work"
}
trap cleanup EXIT

echo "--- dpkg -i $deb"
$sudo dpkg -i "$deb"
check "dpkg says installed" test "$(installed)" = installed

version=$(dpkg-deb -f "$deb" Version)
check "linklab --version says ${version%-*}" \
    test "$(/usr/bin/linklab --version)" = "linklab ${version%-*}"
check "linklab is the one in PATH" test "$(command -v linklab)" = /usr/bin/linklab

# The manual pages, found by name as `man linklab-station` finds them.
man -P cat linklab-station >"$work/man-station" 2>"$work/man-err" || true
check "man linklab-station opens, with its options" \
    grep -q -- '--config' "$work/man-station"
check "man linklab-station names the configuration file" \
    grep -q '/etc/linklab/station.toml' "$work/man-station"
check "man linklab lists the station's page" \
    sh -c 'man -P cat linklab 2>/dev/null | grep -q "linklab-station(1)"'
check "the changelog names this version" \
    sh -c "zcat /usr/share/doc/linklab/changelog.Debian.gz | head -n 1 | grep -qF 'linklab ($version)'"
check "the pages are gzipped" test -f /usr/share/man/man1/linklab-station.1.gz

# The unit as installed, with its program and documentation in place.
unit=/lib/systemd/system/linklab-station.service
check "the unit is at $unit" test -f "$unit"
systemd-analyze verify "$unit" >"$work/verify" 2>&1 && verify=0 || verify=$?
sed 's/^/  verify: /' "$work/verify"
check "systemd-analyze verify passes" test "$verify" -eq 0
check "systemd-analyze verify says nothing of the unit" \
    sh -c "! grep -q linklab-station.service '$work/verify'"
check "the unit is not enabled" \
    sh -c '! ls /etc/systemd/system/*.wants/linklab-station.service >/dev/null 2>&1'

# The user the unit names, made by systemd-sysusers in postinst.
check "user linklab exists" getent passwd linklab
check "group linklab exists" getent group linklab
if getent passwd linklab >/dev/null; then
    IFS=: read -r _ _ uid _ _ home shell < <(getent passwd linklab)
    check "linklab is a system user (uid $uid)" test "$uid" -lt 1000
    check "its home is the unit's StateDirectory" test "$home" = /var/lib/linklab
    check "it cannot log in ($shell)" sh -c "case '$shell' in */nologin | */false) ;; *) exit 1 ;; esac"
    check "the unit runs as it" grep -qx 'User=linklab' "$unit"
    check "user linklab can read and check the example configuration" \
        $sudo runuser -u linklab -- /usr/bin/linklab station --check /etc/linklab/station.toml
fi

check "/etc/linklab/station.toml is a conffile" \
    sh -c "dpkg-query --showformat='\${Conffiles}\n' --show linklab | grep -q '^ /etc/linklab/station.toml '"

# Completions: bash loads the script and completes a subcommand with it.
check "bash loads the completion" \
    bash --norc -c 'source /usr/share/bash-completion/completions/linklab && complete -p linklab'
# shellcheck disable=SC2016 # expanded by the inner bash
check "bash completes \"linklab stat\" to station and status" bash --norc -c '
    source /usr/share/bash-completion/completions/linklab
    COMP_WORDS=(linklab stat); COMP_CWORD=1; COMP_LINE="linklab stat"; COMP_POINT=${#COMP_LINE}
    _linklab linklab stat linklab
    [ "$(printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " ")" = "station status " ]'
check "the zsh completion is in place" test -f /usr/share/zsh/vendor-completions/_linklab
check "the fish completion is in place" test -f /usr/share/fish/vendor_completions.d/linklab.fish
if command -v zsh >/dev/null 2>&1; then
    check "zsh parses its completion" zsh -n /usr/share/zsh/vendor-completions/_linklab
else
    echo "skipped: zsh is not installed, its completion unchecked"
fi
if command -v fish >/dev/null 2>&1; then
    # fish finds it in its vendor directory by itself (a home of its own
    # keeps the user's configuration out).
    # shellcheck disable=SC2016 # expanded by the inner sh
    check "fish completes \"linklab stat\" to station and status" env HOME="$work" XDG_CONFIG_HOME="$work" sh -c \
        '[ "$(fish -c "complete -C \"linklab stat\"" | cut -f1 | sort | tr "\n" " ")" = "station status " ]'
else
    echo "skipped: fish is not installed, its completion unchecked"
fi

# Removal: every file of the package goes; the conffile stays until purge.
dpkg-query -L linklab >"$work/listed"
while read -r path; do
    if [ ! -d "$path" ]; then echo "$path"; fi
done <"$work/listed" >"$work/files"
echo "--- dpkg -r linklab ($(wc -l <"$work/files") files)"
$sudo dpkg -r linklab
check "dpkg says config-files after -r" test "$(installed)" = config-files
left=$(still_there "$work/files" /etc/linklab/station.toml)
check "every file but the conffile is gone after -r${left:+ (left: $left)}" test -z "$left"
check "the conffile stays after -r" test -f /etc/linklab/station.toml

echo "--- dpkg -P linklab"
$sudo dpkg -P linklab
check "dpkg no longer knows linklab after -P" sh -c '! dpkg-query -W linklab >/dev/null 2>&1'
left=$(still_there "$work/files")
check "every file is gone after -P${left:+ (left: $left)}" test -z "$left"
check "/etc/linklab is gone after -P" test ! -e /etc/linklab
check "no mask of the unit is left after -P" test ! -e /etc/systemd/system/linklab-station.service

if [ $user_before = no ] && getent passwd linklab >/dev/null; then
    $sudo userdel linklab
    getent group linklab >/dev/null && $sudo groupdel linklab
    echo "removed the user linklab this run's install made"
fi

echo "test-deb: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
