#!/usr/bin/env bash
# Installs Debian's chromium (about 80 MB to download, 290 MB installed) for the HTML
# report's browser tests (tests/report_html_test.c), when missing. It is not in
# install-deps.sh because nothing else needs it: without it those tests skip with a
# message. Exits 0 with a message when it cannot install (no apt, no network).
set -uo pipefail
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-browser-deps: no apt-get here: the HTML report's browser tests will skip"
  exit 0
fi
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
echo "install-browser-deps: installing chromium"
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends chromium; }; then
  echo "install-browser-deps: chromium could not be installed: the HTML report's browser tests will skip"
fi
exit 0
