#!/usr/bin/env bash
# The project's test entry point (the README's test command; .ci/run calls it):
#
#   bash hack/test.sh [extra go test flags...]
#
# 1. installs what the tests need when it is missing (busybox, which runs
#    the repair script in the kubelet stand-in);
# 2. builds kube-apiserver and etcd from hack/tools' pins, and Alertmanager
#    from hack/tools/alertmanager's, or reuses the cached builds (about 6
#    minutes each the first time on 2 cores, instant after);
# 3. runs go vet, staticcheck and go test over the whole module,
#    real-apiserver tests included (they fail, never skip, when CI=true).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${repo_root}"

log() { echo "test.sh: $*" >&2; }

if ! command -v busybox >/dev/null 2>&1; then
	log "installing busybox"
	sudo=""
	if [[ $(id -u) -ne 0 ]]; then
		sudo="sudo"
	fi
	${sudo} apt-get update -qq
	DEBIAN_FRONTEND=noninteractive ${sudo} apt-get install -y -qq busybox >/dev/null
fi

start=${SECONDS}
KUBEBUILDER_ASSETS="$(bash hack/build-control-plane.sh | tail -n1)"
export KUBEBUILDER_ASSETS
log "control plane ready in $((SECONDS - start))s: ${KUBEBUILDER_ASSETS}"

# The real Alertmanager of the webhook receiver's end-to-end test, from
# hack/tools/alertmanager's pin (about 6 minutes the first time, instant after).
start=${SECONDS}
ALERTMANAGER_BIN="$(bash hack/build-alertmanager.sh | tail -n1)"
export ALERTMANAGER_BIN
log "alertmanager ready in $((SECONDS - start))s: ${ALERTMANAGER_BIN}"

start=${SECONDS}
go vet ./...
log "go vet passed in $((SECONDS - start))s"

# staticcheck, pinned, from the Go module proxy: unused code, unreachable
# cases, deprecated APIs and the like fail the build.
start=${SECONDS}
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
log "staticcheck passed in $((SECONDS - start))s"

start=${SECONDS}
go test -timeout 20m "$@" ./...
log "go test passed in $((SECONDS - start))s"

# A short, bounded fuzz run of the hostile-input targets (their checked-in
# corpora already ran above as part of go test): about 30 s in all.
start=${SECONDS}
go test -run='^$' -fuzz='^FuzzParse$' -fuzztime=3s ./internal/handlers
go test -run='^$' -fuzz='^FuzzInteractionPayload$' -fuzztime=3s ./internal/handlers
go test -run='^$' -fuzz='^FuzzVerify$' -fuzztime=3s ./internal/approval
go test -run='^$' -fuzz='^FuzzWebhook$' -fuzztime=3s ./internal/amreceiver
go test -run='^$' -fuzz='^FuzzDiagnoseReader$' -fuzztime=3s ./internal/diagnose
go test -run='^$' -fuzz='^FuzzNormalizer$' -fuzztime=3s ./internal/diagnose
log "bounded fuzzing passed in $((SECONDS - start))s"
