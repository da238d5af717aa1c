#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The kafkabot Authors
# Builds the real Prometheus Alertmanager that the webhook receiver's
# end-to-end test (test/e2e/alertmanager_test.go) runs, from the version
# pinned in hack/tools/alertmanager/go.mod (no binary downloads; only Go
# modules, through the module proxy or the local module cache).
#
# Output: .cache/alertmanager/<pins-hash>/alertmanager under the repo root,
# where <pins-hash> is derived from that go.mod, go.sum, the UI stub and this
# script. When the binary
# already exists for the same pins the build is skipped, so the script is
# cheap to call on every test run. Concurrent runs are serialised by a lock.
#
# The last line printed on stdout is the binary's path:
#
#   export ALERTMANAGER_BIN="$(bash hack/build-alertmanager.sh | tail -n1)"
#
# With --print-path it only prints that path, building nothing.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools_dir="${repo_root}/hack/tools/alertmanager"

log() { echo "build-alertmanager: $*" >&2; }

pins_hash="$(cat "${tools_dir}/go.mod" "${tools_dir}/go.sum" "${tools_dir}/webui-stub.go.in" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)"
out_dir="${repo_root}/.cache/alertmanager/${pins_hash}"
binary="${out_dir}/alertmanager"

if [[ "${1:-}" == "--print-path" ]]; then
	echo "${binary}"
	exit 0
elif [[ $# -gt 0 ]]; then
	echo "usage: $0 [--print-path]" >&2
	exit 2
fi

if [[ -x "${binary}" ]]; then
	log "reusing ${binary} (pins unchanged)"
	echo "${binary}"
	exit 0
fi

mkdir -p "${repo_root}/.cache/alertmanager"
exec 9>"${repo_root}/.cache/alertmanager/.lock"
flock 9
if [[ -x "${binary}" ]]; then
	log "reusing ${binary} (built by a concurrent run)"
	echo "${binary}"
	exit 0
fi

cd "${tools_dir}"
version="$(go list -m -f '{{.Version}}' github.com/prometheus/alertmanager)"

staging_dir="$(mktemp -d "${repo_root}/.cache/alertmanager/.build.XXXXXX")"
trap 'rm -rf "${staging_dir}"' EXIT

export CGO_ENABLED=0
export GOFLAGS="-mod=readonly -buildvcs=false"

# The module has no web UI assets (built by npm upstream), so ui/web.go's
# //go:embed cannot compile from the module cache. The build uses a copy of
# the pinned module's source with ui/web.go swapped for a stub
# (webui-stub.go.in), through a copy of the tools module that replaces the
# module by that copy; every other dependency keeps the tools module's pins.
go mod download github.com/prometheus/alertmanager
module_dir="$(go list -m -f '{{.Dir}}' github.com/prometheus/alertmanager)"
cp -r "${module_dir}" "${staging_dir}/alertmanager-src"
chmod -R u+w "${staging_dir}/alertmanager-src"
cp "${tools_dir}/webui-stub.go.in" "${staging_dir}/alertmanager-src/ui/web.go"
mkdir "${staging_dir}/tools"
cp "${tools_dir}/go.mod" "${tools_dir}/go.sum" "${staging_dir}/tools/"
(cd "${staging_dir}/tools" && go mod edit -replace "github.com/prometheus/alertmanager=../alertmanager-src")

start=${SECONDS}
log "building alertmanager ${version} (a few minutes on 2 cores)"
(cd "${staging_dir}/tools" && go build -trimpath \
	-ldflags "-s -w -X github.com/prometheus/common/version.Version=${version#v} -X github.com/prometheus/common/version.Revision=${version}-gomod" \
	-o "${staging_dir}/alertmanager" github.com/prometheus/alertmanager/cmd/alertmanager)
"${staging_dir}/alertmanager" --version >&2
rm -rf "${staging_dir}/alertmanager-src" "${staging_dir}/tools"

rm -rf "${out_dir}"
mv "${staging_dir}" "${out_dir}"
trap - EXIT
log "built in $((SECONDS - start))s"
echo "${binary}"
