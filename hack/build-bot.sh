#!/usr/bin/env bash
# Builds the bot as the container image ships it: a static binary (CGO off),
# trimmed paths, stripped, version stamped. The Dockerfile runs this same
# script, and hack/test.sh runs it too so CI checks what the image would copy.
#
#   bash hack/build-bot.sh [OUTPUT]     (default bin/bot; VERSION=v1.2.3 to stamp)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-bin/bot}"
version="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
# -tags nodemo: `bot demo` and the fakes and emulators only it and the tests use
# are left out, so `bot serve` never initialises them (cmd/bot/demo_off.go).
CGO_ENABLED=0 go build -tags nodemo -trimpath -ldflags "-s -w -X main.version=${version}" -o "${out}" ./cmd/bot
echo "${out}"
