#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The kafkabot Authors
# Builds the real Helm that the chart tests (deploy/chart*_test.go) run:
# Helm 3 from hack/tools/helm/go.mod and Helm 4 from hack/tools/helm/v4/go.mod
# (no binary downloads; only Go modules, through the module proxy or the
# local module cache).
#
# Output: .cache/helm/<pins-hash>/helm (Helm 3) and .../helm4 (Helm 4) under
# the repo root, where <pins-hash> is derived from both go.mod and go.sum
# files and this script. When both binaries already exist for the same pins
# the build is skipped, so the script is cheap to call on every test run.
# Concurrent runs are serialised by a lock.
#
# The last line printed on stdout is the Helm 3 binary's path; Helm 4 is
# beside it, named helm4:
#
#   export HELM_BIN="$(bash hack/build-helm.sh | tail -n1)"
#
# With --print-path it only prints that path, building nothing.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools_dir="${repo_root}/hack/tools/helm"

log() { echo "build-helm: $*" >&2; }

pins_hash="$(cat "${tools_dir}/go.mod" "${tools_dir}/go.sum" "${tools_dir}/v4/go.mod" "${tools_dir}/v4/go.sum" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)"
out_dir="${repo_root}/.cache/helm/${pins_hash}"
binary="${out_dir}/helm"

if [[ "${1:-}" == "--print-path" ]]; then
	echo "${binary}"
	exit 0
elif [[ $# -gt 0 ]]; then
	echo "usage: $0 [--print-path]" >&2
	exit 2
fi

if [[ -x "${binary}" && -x "${out_dir}/helm4" ]]; then
	log "reusing ${out_dir} (pins unchanged)"
	echo "${binary}"
	exit 0
fi

mkdir -p "${repo_root}/.cache/helm"
exec 9>"${repo_root}/.cache/helm/.lock"
flock 9
if [[ -x "${binary}" && -x "${out_dir}/helm4" ]]; then
	log "reusing ${out_dir} (built by a concurrent run)"
	echo "${binary}"
	exit 0
fi

staging_dir="$(mktemp -d "${repo_root}/.cache/helm/.build.XXXXXX")"
trap 'rm -rf "${staging_dir}"' EXIT

export CGO_ENABLED=0
export GOFLAGS="-mod=readonly -buildvcs=false"

# build MODULE_DIR HELM_MODULE OUTPUT: the helm command of HELM_MODULE, with
# the version and the Kubernetes version it defaults to stamped in as Helm's
# own Makefile does (else `helm template` assumes Kubernetes 1.20).
build() {
	local dir=$1 module=$2 output=$3
	local version k8s minor
	version="$(cd "${dir}" && go list -m -f '{{.Version}}' "${module}")"
	k8s="$(cd "${dir}" && go list -m -f '{{.Version}}' k8s.io/client-go)" # v0.MINOR.PATCH
	minor="$(cut -d. -f2 <<<"${k8s}")"
	log "building ${module} ${version} (Kubernetes 1.${minor}; a few minutes on 2 cores)"
	(cd "${dir}" && go build -trimpath -ldflags "-s -w \
		-X ${module}/internal/version.version=${version} \
		-X ${module}/pkg/lint/rules.k8sVersionMajor=1 -X ${module}/pkg/lint/rules.k8sVersionMinor=${minor} \
		-X ${module}/pkg/chartutil.k8sVersionMajor=1 -X ${module}/pkg/chartutil.k8sVersionMinor=${minor} \
		-X ${module}/pkg/chart/common.k8sVersionMajor=1 -X ${module}/pkg/chart/common.k8sVersionMinor=${minor}" \
		-o "${output}" "${module}/cmd/helm")
	"${output}" version >&2
}

start=${SECONDS}
build "${tools_dir}" helm.sh/helm/v3 "${staging_dir}/helm"
build "${tools_dir}/v4" helm.sh/helm/v4 "${staging_dir}/helm4"

rm -rf "${out_dir}"
mv "${staging_dir}" "${out_dir}"
trap - EXIT
log "built in $((SECONDS - start))s"
echo "${binary}"
