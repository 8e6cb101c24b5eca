#!/usr/bin/env bash
# Install the Debian packages listed in mk/packages.txt that are missing.
# Idempotent: prints one line and installs nothing when everything is there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t pkgs < <(grep -v '^\s*#' "$here/packages.txt" | awk 'NF {print $1}' | sort -u)
missing=()
for p in "${pkgs[@]}"; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$st" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all ${#pkgs[@]} packages installed"
    exit 0
fi
echo "deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
        echo "deps: not root and no sudo: install these packages: ${missing[*]}" >&2
        exit 1
    fi
else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
# Package services (lttng-sessiond) must not be started by dpkg: the project starts its own.
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
