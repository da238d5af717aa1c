# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The kafkabot Authors
# shellcheck shell=bash
# Shared by hack/build-control-plane.sh and hack/build-node.sh: the version
# stamps and linker flags for binaries built from hack/tools' pins. Source it
# from inside hack/tools (it asks `go list -m` for the pinned versions).
#
# Sets: kube_version, etcd_version, kube_ldflags (array), etcd_ldflags (array).

kube_build_module_version() { go list -m -f '{{.Version}}' "$1"; }
kube_build_module_time() { go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' "$1"; }

kube_version="$(kube_build_module_version k8s.io/kubernetes)"     # e.g. v1.37.2
etcd_version="$(kube_build_module_version go.etcd.io/etcd/server/v3)" # e.g. v3.7.0
kube_major_minor="${kube_version#v}"
kube_major="${kube_major_minor%%.*}"
kube_minor="${kube_major_minor#*.}"
kube_minor="${kube_minor%%.*}"
# The module's publication time, not the wall clock, keeps the build reproducible.
kube_build_date="$(kube_build_module_time k8s.io/kubernetes)"

kube_version_pkg="k8s.io/component-base/version"
kube_ldflags=(
	"-s" "-w"
	"-X ${kube_version_pkg}.gitVersion=${kube_version}"
	"-X ${kube_version_pkg}.gitMajor=${kube_major}"
	"-X ${kube_version_pkg}.gitMinor=${kube_minor}"
	"-X ${kube_version_pkg}.gitCommit=${kube_version}-gomod"
	"-X ${kube_version_pkg}.gitTreeState=clean"
	"-X ${kube_version_pkg}.buildDate=${kube_build_date}"
)
etcd_ldflags=(
	"-s" "-w"
	"-X go.etcd.io/etcd/api/v3/version.GitSHA=${etcd_version}-gomod"
)
export CGO_ENABLED=0
export GOFLAGS="-mod=readonly -buildvcs=false"
