#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The kafkabot Authors
# Builds the rest of a single-node cluster the real-node tests run on: kubelet,
# kube-controller-manager, kube-scheduler and kubectl, from the versions pinned
# in hack/tools/go.mod (the same pins as hack/build-control-plane.sh's
# kube-apiserver and etcd; no binary downloads, only Go modules).
#
# Output: .cache/node/<pins-hash>/{kubelet,kube-controller-manager,
# kube-scheduler,kubectl} under the repo root, <pins-hash> computed exactly as
# hack/build-control-plane.sh does. When all four exist for the same pins the
# build is skipped. The control plane (kube-apiserver, etcd) is built first by
# hack/build-control-plane.sh, and symlinked into the same directory, so one
# directory holds all six binaries.
#
# The last line printed on stdout is that directory:
#
#   bin_dir="$(bash hack/build-node.sh | tail -n1)"
#
# Cold, on 2 cores: about 5 to 11 minutes on top of the control plane.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools_dir="${repo_root}/hack/tools"

log() { echo "build-node: $*" >&2; }

pins_hash="$(cat "${tools_dir}/go.mod" "${tools_dir}/go.sum" | sha256sum | cut -c1-16)"
bin_dir="${repo_root}/.cache/node/${pins_hash}"
node_binaries=(kubelet kube-controller-manager kube-scheduler kubectl)

if [[ "${1:-}" == "--print-dir" ]]; then
	echo "${bin_dir}"
	exit 0
elif [[ $# -gt 0 ]]; then
	echo "usage: $0 [--print-dir]" >&2
	exit 2
fi

control_plane_dir="$(bash "${repo_root}/hack/build-control-plane.sh" | tail -n1)"

binaries_present() {
	local b
	for b in "${node_binaries[@]}" kube-apiserver etcd; do
		[[ -x "${bin_dir}/${b}" ]] || return 1
	done
}

if binaries_present; then
	log "reusing ${bin_dir} (pins unchanged)"
	echo "${bin_dir}"
	exit 0
fi

mkdir -p "${repo_root}/.cache/node"
# Serialise concurrent builds: the second one waits, then finds the binaries.
exec 9>"${repo_root}/.cache/node/.lock"
flock 9
if binaries_present; then
	log "reusing ${bin_dir} (built by a concurrent run)"
	echo "${bin_dir}"
	exit 0
fi

cd "${tools_dir}"
# shellcheck source=hack/lib/kube-build.sh
source "${repo_root}/hack/lib/kube-build.sh"

staging_dir="$(mktemp -d "${repo_root}/.cache/node/.build.XXXXXX")"
trap 'rm -rf "${staging_dir}"' EXIT

start=${SECONDS}
packages=()
for b in "${node_binaries[@]}"; do
	packages+=("k8s.io/kubernetes/cmd/${b}")
done
log "building ${node_binaries[*]} ${kube_version} (several minutes on 2 cores)"
go build -trimpath -ldflags "${kube_ldflags[*]}" -o "${staging_dir}/" "${packages[@]}"
for b in "${node_binaries[@]}"; do
	"${staging_dir}/${b}" --version >&2 2>&1 || "${staging_dir}/${b}" version --client >&2
done
ln -s "${control_plane_dir}/kube-apiserver" "${staging_dir}/kube-apiserver"
ln -s "${control_plane_dir}/etcd" "${staging_dir}/etcd"

rm -rf "${bin_dir}"
mv "${staging_dir}" "${bin_dir}"
trap - EXIT
log "built in $((SECONDS - start))s"
echo "${bin_dir}"
