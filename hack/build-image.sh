#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The kafkabot Authors
# Builds the bot's container image without Docker or a registry: an OCI
# image-layout tarball (cmd/mkimage, internal/ociimage/botimage, assembled
# with go-containerregistry), and prints its reference and digest.
#
#   bash hack/build-image.sh [OUT.tar] [flags]     (default bin/kafkabot-image.tar)
#
# Flags: -base FILE (an OCI tarball to build on, e.g. distroless/static:nonroot
# copied with skopeo), -platforms linux/amd64,linux/arm64 (one multi-arch
# image: an OCI image index, the bot cross-compiled for each), -name REF,
# -version V (or VERSION=; default the VERSION file), -also-by-digest,
# -no-download; `bash hack/build-image.sh -help` lists them all.
#
# Needs Go and, without -base, dpkg-deb and apt-get (Debian's ca-certificates
# package is fetched once into .cache/debs and reused, so builds stay
# reproducible). Two builds of the same commit give the same digest: the
# version (VERSION), revision and creation time come from the commit
# (SOURCE_DATE_EPOCH overrides the time).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
args=()
if [[ $# -gt 0 && "$1" != -* ]]; then
	args=(-out "$1")
	shift
fi
exec go run ./cmd/mkimage "${args[@]}" "$@"
