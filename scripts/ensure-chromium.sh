#!/usr/bin/env bash
# Runs before `npm test`: the browser end-to-end test drives Debian's Chromium
# (never a downloaded browser). Installs it when missing and we may (root + apt).
set -euo pipefail
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "Installing Debian's chromium for the browser test (apt-get)..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  exit 0
fi
echo "Chromium not found at $CHROMIUM: install it (sudo apt-get install chromium) or set CHROMIUM_PATH." >&2
exit 1
