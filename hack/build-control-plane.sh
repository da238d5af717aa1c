#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The kafkabot Authors
# Builds the control plane the real-apiserver tests run against: kube-apiserver
# and etcd, from the versions pinned in hack/tools/go.mod (no binary downloads;
# only Go modules, through the module proxy or the local module cache).
#
# Output: .cache/control-plane/<pins-hash>/{kube-apiserver,etcd} under the repo
# root, where <pins-hash> is derived from hack/tools/go.mod and go.sum. When
# both binaries already exist for the same pins the build is skipped, so the
# script is cheap to call on every test run.
#
# The last line printed on stdout is the assets directory, suitable for
# KUBEBUILDER_ASSETS:
#
#   export KUBEBUILDER_ASSETS="$(bash hack/build-control-plane.sh | tail -n1)"
#
# With --print-dir it only prints that directory, building nothing
# (internal/testkit/testenv checks that it computes the same one).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools_dir="${repo_root}/hack/tools"

log() { echo "build-control-plane: $*" >&2; }

pins_hash="$(cat "${tools_dir}/go.mod" "${tools_dir}/go.sum" | sha256sum | cut -c1-16)"
assets_dir="${repo_root}/.cache/control-plane/${pins_hash}"

if [[ "${1:-}" == "--print-dir" ]]; then
	echo "${assets_dir}"
	exit 0
elif [[ $# -gt 0 ]]; then
	echo "usage: $0 [--print-dir]" >&2
	exit 2
fi

binaries_present() {
	[[ -x "${assets_dir}/kube-apiserver" && -x "${assets_dir}/etcd" ]]
}

if binaries_present; then
	log "reusing ${assets_dir} (pins unchanged)"
	echo "${assets_dir}"
	exit 0
fi

mkdir -p "${repo_root}/.cache/control-plane"
# Serialise concurrent builds (two test runs started at once): the second one
# waits and then finds the binaries already present.
exec 9>"${repo_root}/.cache/control-plane/.lock"
flock 9
if binaries_present; then
	log "reusing ${assets_dir} (built by a concurrent run)"
	echo "${assets_dir}"
	exit 0
fi

cd "${tools_dir}"

# shellcheck source=hack/lib/kube-build.sh
source "${repo_root}/hack/lib/kube-build.sh"

staging_dir="$(mktemp -d "${repo_root}/.cache/control-plane/.build.XXXXXX")"
trap 'rm -rf "${staging_dir}"' EXIT

start=${SECONDS}
log "building kube-apiserver ${kube_version} (several minutes on 2 cores)"
go build -trimpath -ldflags "${kube_ldflags[*]}" -o "${staging_dir}/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
log "building etcd ${etcd_version}"
go build -trimpath -ldflags "${etcd_ldflags[*]}" -o "${staging_dir}/etcd" go.etcd.io/etcd/server/v3

"${staging_dir}/kube-apiserver" --version >&2
"${staging_dir}/etcd" --version >&2

rm -rf "${assets_dir}"
mv "${staging_dir}" "${assets_dir}"
trap - EXIT
log "built in $((SECONDS - start))s"
echo "${assets_dir}"
