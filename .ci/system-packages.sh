#!/usr/bin/env bash
# Installs the Debian packages listed in .ci/system-packages.txt (or the file given as $1) that are missing:
# apt-get update once, then one quiet install. Only as root with apt-get; otherwise prints one line naming
# the missing packages and exits 0 (their tests skip with a reason). Called by .ci/run before the README's
# two Quick start lines; runs alone too: `bash .ci/system-packages.sh`.
set -euo pipefail
list="${1:-$(dirname "$0")/system-packages.txt}"
mapfile -t wanted < <(sed -e 's/#.*//' "$list" | tr -s ' \t' '\n' | sed '/^$/d')
if [ "${#wanted[@]}" -eq 0 ]; then
  echo "::: system packages: none listed in $list"
  exit 0
fi
missing=()
for pkg in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then missing+=("$pkg"); fi
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "::: system packages: all ${#wanted[@]} installed (${wanted[*]})"
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "::: system packages: missing ${missing[*]} (not root with apt-get: not installed, their tests skip)"
  exit 0
fi
echo "::: system packages: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
