#!/bin/sh
# Debian's redis-server for the scale-out tests (tests/server/test_scale_out.py starts its own on a
# free loopback port); `wiregrad serve` needs it only with --message-queue.
set -e
command -v redis-server >/dev/null 2>&1 && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server >/dev/null 2>&1 || {
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server >/dev/null
}
# the package starts a system service on 6379; the tests do not use it
$SUDO service redis-server stop >/dev/null 2>&1 || true
redis-server --version
