#!/bin/sh
# Debian's Chromium for the end-to-end tests (Playwright drives it; it never downloads a browser).
set -e
[ -x /usr/bin/chromium ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version
