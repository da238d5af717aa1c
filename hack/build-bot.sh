#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The kafkabot Authors
# Builds the bot as the container image ships it: a static binary (CGO off),
# trimmed paths, stripped, version and commit stamped. The Dockerfile runs
# this same script, and hack/test.sh runs it too so CI checks what the image
# would copy.
#
#   bash hack/build-bot.sh [OUTPUT]     (default bin/bot)
#
# The version is the VERSION file's (VERSION=... overrides it), the commit
# git's HEAD, with "-dirty" when the tree has changes (COMMIT=... overrides
# it). GOARCH=arm64 cross-compiles.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-bin/bot}"
version="${VERSION:-$(tr -d '[:space:]' <VERSION)}"
if [[ -z "${COMMIT+x}" ]]; then
	COMMIT="$(git rev-parse HEAD 2>/dev/null || true)"
	if [[ -n "${COMMIT}" ]] && ! git diff --quiet HEAD -- 2>/dev/null; then
		COMMIT="${COMMIT}-dirty"
	fi
fi
# -tags nodemo: `bot demo` and the fakes and emulators only it and the tests use
# are left out, so `bot serve` never initialises them (cmd/bot/demo_off.go).
CGO_ENABLED=0 go build -tags nodemo -trimpath -ldflags "-s -w -X main.version=${version} -X main.commit=${COMMIT}" -o "${out}" ./cmd/bot
echo "${out}"
