#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The kafkabot Authors
# A real single-node Kubernetes cluster for the real-node tests (test/realnode):
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler and the kubelet
# built from hack/tools' pins (hack/build-node.sh), Debian's containerd, runc
# and CNI plugins, no registry.
#
#   hack/realnode.sh up       bring the cluster up (idempotent: a running one is reused)
#   hack/realnode.sh down     stop everything, by PID, and remove the state dir
#   hack/realnode.sh status   what runs, exit 0 when the node is Ready
#   hack/realnode.sh exec CMD...  run CMD inside the cluster's network namespace,
#                             with KUBECONFIG and REALNODE_* exported
#
# test/realnode/lifecycle.sh checks these promises (hack/test.sh runs it).
#
# Everything lives under one state directory, REALNODE_DIR (default
# /tmp/kafkabot-realnode-<checkout hash>): certificates, etcd data, containerd's root and
# state, the kubelet's root dir, pod logs, the CNI config and IPAM, the local
# volumes the tests create, every process's log and PID file.
#
# Isolation. Every process runs in a network namespace this script creates
# (REALNODE_NETNS, default kafkabot-rn-<checkout hash>) holding only loopback, a dummy
# bridge without ports carrying the node address (10.200.0.1; the kubelet refuses a
# loopback node IP) and the pod bridge cni0 (10.244.0.0/24) the CNI bridge
# plugin adds. The namespace has no interface to the host and no route out, so
# no packet can leave it; its ports cannot collide with anything on the
# machine. There is no kube-proxy: nothing may use Service VIPs (in-cluster
# clients are pointed at 10.200.0.1:6443).
#
# What the kubelet changes outside the state dir is recorded on `up` and put
# back on `down`: the sysctls vm.overcommit_memory, kernel.panic and
# kernel.panic_on_oops (recorded by the first cluster on the machine, put
# back by the last), the cgroups it creates (all under its own cgroup root
# /kafkabot-rn-<checkout hash>), and its /var/log/containers links. Its
# iptables chains live in the private network namespace and go with it. Pod sandboxes
# are stopped and removed through CRI (hack/tools/cri-clean) so CNI releases
# their addresses and the runtime unmounts their namespaces; every mount under
# the state dir is then unmounted before the directory is removed.
#
# A failed `up` tears down what it started. Needs root.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# One cluster per checkout: several worktrees on one machine each get their
# own state dir, network namespace and cgroup root.
checkout_id="$(echo "${repo_root}" | sha256sum | cut -c1-8)"
state="${REALNODE_DIR:-/tmp/kafkabot-realnode-${checkout_id}}"
netns="${REALNODE_NETNS:-kafkabot-rn-${checkout_id}}"
cgroup_root="/kafkabot-rn-${checkout_id}"
node_name="realnode"
node_ip="10.200.0.1"
pod_cidr="10.244.0.0/24"
service_cidr="10.0.0.0/24"
sysctls=(vm.overcommit_memory kernel.panic kernel.panic_on_oops)
# Processes in start order; stopped in reverse.
components=(etcd kube-apiserver containerd kube-controller-manager kube-scheduler kubelet)

log() { echo "realnode: $*" >&2; }
die() {
	log "$*"
	exit 1
}

[[ $(id -u) -eq 0 ]] || die "must run as root (containerd, runc and the kubelet need it)"

# --- packages ---------------------------------------------------------------

# ensure_packages installs Debian's containerd, runc, CNI plugins and iptables
# when missing (a fresh CI machine has only Go, gcc, git and apt).
ensure_packages() {
	local missing=()
	command -v containerd >/dev/null || missing+=(containerd)
	command -v runc >/dev/null || missing+=(runc)
	[[ -x /usr/lib/cni/bridge ]] || missing+=(containernetworking-plugins)
	command -v iptables >/dev/null || missing+=(iptables)
	if [[ ${#missing[@]} -gt 0 ]]; then
		log "installing ${missing[*]}"
		apt-get -o DPkg::Lock::Timeout=600 update -qq
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >/dev/null
	fi
}

# --- processes --------------------------------------------------------------

pidfile() { echo "${state}/run/$1.pid"; }

# running NAME: the process recorded for NAME is alive and is the one we
# started (its command line names our binary), not a recycled PID.
running() {
	local f pid
	f="$(pidfile "$1")"
	[[ -f "$f" ]] || return 1
	pid="$(cat "$f")"
	[[ -r "/proc/${pid}/cmdline" ]] || return 1
	tr '\0' ' ' <"/proc/${pid}/cmdline" | grep -q -- "$1"
}

# start NAME BINARY ARGS...: runs BINARY inside the network namespace, in its
# own session, logging to log/NAME.log; records its PID.
start() {
	local name="$1"
	shift
	if running "${name}"; then
		log "${name} already running (pid $(cat "$(pidfile "${name}")"))"
		return
	fi
	# setsid does not fork here (the script is not a group leader) and nsenter
	# execs the binary, so $! is the component's own PID.
	setsid nsenter --net="/var/run/netns/${netns}" -- "$@" >>"${state}/log/${name}.log" 2>&1 </dev/null &
	echo $! >"$(pidfile "${name}")"
	log "started ${name} (pid $!)"
}

# stop NAME: SIGTERM, up to 20 s, then SIGKILL; only the PID we recorded.
stop() {
	local name="$1" f pid i
	f="$(pidfile "${name}")"
	[[ -f "$f" ]] || return 0
	pid="$(cat "$f")"
	if running "${name}"; then
		kill -TERM "${pid}" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do
			running "${name}" || break
			sleep 0.2
		done
		if running "${name}"; then
			log "${name} (pid ${pid}) ignored SIGTERM; killing it"
			kill -KILL "${pid}" 2>/dev/null || true
			for ((i = 0; i < 50; i++)); do
				running "${name}" || break
				sleep 0.1
			done
		fi
		log "stopped ${name} (pid ${pid})"
	fi
	rm -f "$f"
}

# wait_for WHAT SECONDS CMD...: retries CMD until it succeeds.
wait_for() {
	local what="$1" secs="$2" i
	shift 2
	for ((i = 0; i < secs * 5; i++)); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.2
	done
	die "timed out after ${secs}s waiting for ${what}; see ${state}/log/"
}

kubectl_admin() {
	nsenter --net="/var/run/netns/${netns}" -- "${bin}/kubectl" --kubeconfig "${state}/pki/admin.kubeconfig" "$@"
}

# --- certificates -------------------------------------------------------------

# cert NAME CN [O] [SANS]: a key and a certificate signed by the cluster CA.
cert() {
	local name="$1" cn="$2" org="${3:-}" sans="${4:-}" subj
	subj="/CN=${cn}"
	[[ -n "${org}" ]] && subj="/O=${org}${subj}"
	openssl req -new -newkey rsa:2048 -nodes -keyout "${name}.key" -subj "${subj}" -out "${name}.csr" 2>/dev/null
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		if [[ -n "${sans}" ]]; then
			echo "extendedKeyUsage=serverAuth,clientAuth"
			echo "subjectAltName=${sans}"
		else
			echo "extendedKeyUsage=clientAuth"
		fi
	} >"${name}.ext"
	openssl x509 -req -in "${name}.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 \
		-extfile "${name}.ext" -out "${name}.crt" 2>/dev/null
	rm -f "${name}.csr" "${name}.ext"
}

kubeconfig() {
	local name="$1"
	cat >"${name}.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: realnode
    cluster:
      server: https://${node_ip}:6443
      certificate-authority: ${state}/pki/ca.crt
users:
  - name: ${name}
    user:
      client-certificate: ${state}/pki/${name}.crt
      client-key: ${state}/pki/${name}.key
contexts:
  - name: realnode
    context: {cluster: realnode, user: ${name}}
current-context: realnode
EOF
}

make_pki() {
	[[ -f "${state}/pki/done" ]] && return
	mkdir -p "${state}/pki"
	(
		cd "${state}/pki"
		openssl req -x509 -new -newkey rsa:2048 -nodes -keyout ca.key -subj "/CN=kafkabot-realnode-ca" \
			-days 30 -out ca.crt 2>/dev/null
		cert apiserver kube-apiserver "" \
			"IP:${node_ip},IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
		cert admin kafkabot-realnode-admin system:masters
		cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
		cert kube-controller-manager system:kube-controller-manager
		cert kube-scheduler system:kube-scheduler
		cert kubelet "system:node:${node_name}" system:nodes
		cert kubelet-serving "system:node:${node_name}" system:nodes "IP:${node_ip},DNS:${node_name}"
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
		for n in admin kube-controller-manager kube-scheduler kubelet; do kubeconfig "$n"; done
		touch done
	)
}

# --- configuration ------------------------------------------------------------

write_configs() {
	mkdir -p "${state}/containerd" "${state}/cni/net.d" "${state}/cni/ipam" "${state}/kubelet" \
		"${state}/pod-logs" "${state}/volumes" "${state}/images"
	# The audit log records every request of the bot's ServiceAccount (the
	# tests count the API requests a repair makes) and nothing else.
	cat >"${state}/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
    users: ["system:serviceaccount:kafka-bot:kafka-bot"]
  - level: None
EOF
	cat >"${state}/containerd/config.toml" <<EOF
version = 2
root = "${state}/containerd/root"
state = "${state}/containerd/state"
# Plugins that would write outside the state dir or need absent kernel features.
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "${state}/containerd/containerd.sock"
[ttrpc]
  address = "${state}/containerd/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "kafkabot.local/pause:realnode"
  # Root here lacks CAP_SYS_RESOURCE: runc cannot lower oom_score_adj.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "${state}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${state}/cni/net.d"
EOF
	cat >"${state}/cni/net.d/10-realnode.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "realnode",
  "plugins": [{
    "type": "bridge",
    "bridge": "cni0",
    "isGateway": true,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "ranges": [[{"subnet": "${pod_cidr}"}]],
      "routes": [{"dst": "0.0.0.0/0"}],
      "dataDir": "${state}/cni/ipam"
    }
  }]
}
EOF
	cat >"${state}/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine: cgroup v1 without systemd, and no CAP_SYS_RESOURCE.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: ${cgroup_root}
oomScoreAdj: 0
containerRuntimeEndpoint: unix://${state}/containerd/containerd.sock
podLogsDir: ${state}/pod-logs
address: ${node_ip}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: ${state}/pki/kubelet-serving.crt
tlsPrivateKeyFile: ${state}/pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: ${state}/pki/ca.crt}
authorization:
  mode: AlwaysAllow
failSwapOn: false
resolvConf: ""
# The tests' disks are shared with other work: never evict or GC images here.
evictionHard: {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
EOF
}

# --- up / down ----------------------------------------------------------------

# The machine's sysctls as they were before any real-node cluster ran:
# recorded by the first cluster up, restored by the last one down.
host_sysctls=/run/kafkabot-realnode-sysctls

other_clusters() {
	ls /var/run/netns 2>/dev/null | grep '^kafkabot-rn-' | grep -vx "${netns}" || true
}

record_host_state() {
	mkdir -p "${state}/host"
	# An existing record is the original (a crashed run may have left it).
	if [[ ! -f "${host_sysctls}" ]]; then
		local s
		for s in "${sysctls[@]}"; do
			echo "${s}=$(sysctl -n "${s}")"
		done >"${host_sysctls}"
	fi
	[[ -f "${state}/host/iptables" ]] ||
		iptables-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9:]*\]//' >"${state}/host/iptables" || true
	# The kubelet's cgroup root (cgroupfs driver: one directory per hierarchy).
	local c
	for c in /sys/fs/cgroup/*/; do
		[[ -f "${c}cgroup.procs" ]] || continue
		mkdir -p "${c}${cgroup_root#/}"
		if [[ -f "${c}cpuset.cpus" ]]; then
			# A new v1 cpuset starts empty; a task cannot join it until it has CPUs and memory nodes.
			[[ -n "$(cat "${c}${cgroup_root#/}/cpuset.cpus")" ]] || cat "${c}cpuset.cpus" >"${c}${cgroup_root#/}/cpuset.cpus"
			[[ -n "$(cat "${c}${cgroup_root#/}/cpuset.mems")" ]] || cat "${c}cpuset.mems" >"${c}${cgroup_root#/}/cpuset.mems"
		fi
	done
}

restore_host_state() {
	if [[ -f "${host_sysctls}" && -z "$(other_clusters)" ]]; then
		local line
		while IFS= read -r line; do
			[[ -n "${line}" ]] && sysctl -q -w "${line}" >/dev/null || log "could not restore ${line}"
		done <"${host_sysctls}"
		log "restored sysctls: $(tr '\n' ' ' <"${host_sysctls}")"
		rm -f "${host_sysctls}"
	fi
	if [[ -f "${state}/host/iptables" ]]; then
		local now
		now="$(iptables-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9:]*\]//' || true)"
		if [[ "${now}" != "$(cat "${state}/host/iptables")" ]]; then
			log "WARNING: the host's iptables rules changed while the cluster ran (they should not: its chains live in ${netns})"
		fi
	fi
	# The kubelet's cgroups: everything under our cgroup root, deepest first.
	local c
	for c in /sys/fs/cgroup/*/"${cgroup_root#/}"; do
		[[ -d "$c" ]] || continue
		find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
		[[ -d "$c" ]] && log "WARNING: could not remove cgroup ${c}"
	done
	# The kubelet links each container's log into /var/log/containers.
	find /var/log/containers -maxdepth 1 -lname "${state}/*" -delete 2>/dev/null || true
}

up() {
	ensure_packages
	bin="$(bash "${repo_root}/hack/build-node.sh" | tail -n1)"
	mkdir -p "${state}/run" "${state}/log"
	echo "${bin}" >"${state}/bin-dir"
	trap 'up_failed' EXIT
	if [[ ! -e "/var/run/netns/${netns}" ]]; then
		ip netns add "${netns}"
		ip -n "${netns}" link set lo up
		ip -n "${netns}" link add realnode0 type bridge
		ip -n "${netns}" addr add "${node_ip}/24" dev realnode0
		ip -n "${netns}" link set realnode0 up
		log "created network namespace ${netns} (lo, realnode0 ${node_ip})"
	fi
	make_pki
	write_configs
	record_host_state

	start etcd "${bin}/etcd" --name realnode --data-dir "${state}/etcd" \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster realnode=http://127.0.0.1:2380 --log-level warn --quota-backend-bytes 1073741824
	# --allow-privileged=true as kubeadm and the distributions set it: the
	# API server's default refuses privileged containers by itself, before
	# Pod Security and the bot's admission policy could show they refuse them.
	start kube-apiserver "${bin}/kube-apiserver" --etcd-servers http://127.0.0.1:2379 \
		--advertise-address "${node_ip}" --bind-address 0.0.0.0 --secure-port 6443 \
		--service-cluster-ip-range "${service_cidr}" \
		--client-ca-file "${state}/pki/ca.crt" \
		--tls-cert-file "${state}/pki/apiserver.crt" --tls-private-key-file "${state}/pki/apiserver.key" \
		--kubelet-client-certificate "${state}/pki/apiserver-kubelet-client.crt" \
		--kubelet-client-key "${state}/pki/apiserver-kubelet-client.key" \
		--kubelet-preferred-address-types InternalIP \
		--service-account-issuer https://kubernetes.default.svc \
		--service-account-key-file "${state}/pki/sa.pub" \
		--service-account-signing-key-file "${state}/pki/sa.key" \
		--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
		--allow-privileged=true \
		--audit-policy-file "${state}/audit-policy.yaml" --audit-log-path "${state}/log/audit.log" \
		--audit-log-format json --audit-log-mode blocking \
		--profiling=false --v=1
	start containerd containerd --config "${state}/containerd/config.toml"
	wait_for "the API server" 90 kubectl_admin get --raw /readyz
	wait_for "containerd" 30 test -S "${state}/containerd/containerd.sock"
	start kube-controller-manager "${bin}/kube-controller-manager" \
		--kubeconfig "${state}/pki/kube-controller-manager.kubeconfig" \
		--authentication-kubeconfig "${state}/pki/kube-controller-manager.kubeconfig" \
		--authorization-kubeconfig "${state}/pki/kube-controller-manager.kubeconfig" \
		--service-account-private-key-file "${state}/pki/sa.key" --root-ca-file "${state}/pki/ca.crt" \
		--use-service-account-credentials --leader-elect=false --bind-address 127.0.0.1 \
		--controllers '*,-nodeipam' --v=1
	start kube-scheduler "${bin}/kube-scheduler" --kubeconfig "${state}/pki/kube-scheduler.kubeconfig" \
		--authentication-kubeconfig "${state}/pki/kube-scheduler.kubeconfig" \
		--authorization-kubeconfig "${state}/pki/kube-scheduler.kubeconfig" \
		--leader-elect=false --bind-address 127.0.0.1 --v=1
	import_images
	start kubelet "${bin}/kubelet" --config "${state}/kubelet/config.yaml" \
		--kubeconfig "${state}/pki/kubelet.kubeconfig" --root-dir "${state}/kubelet/root" \
		--hostname-override "${node_name}" --node-ip "${node_ip}" --v=1
	wait_for "node ${node_name} to register" 60 kubectl_admin get node "${node_name}"
	kubectl_admin wait --for=condition=Ready "node/${node_name}" --timeout=90s >/dev/null
	wait_for "the default ServiceAccount" 60 kubectl_admin -n default get serviceaccount default
	local c
	for c in "${components[@]}"; do
		running "$c" || die "${c} exited; see ${state}/log/${c}.log"
	done
	trap - EXIT
	log "node ${node_name} Ready; KUBECONFIG=${state}/pki/admin.kubeconfig"
}

# import_images builds the test images (pause, the broker stand-in, the bot)
# from this tree and imports them into containerd's k8s.io namespace.
import_images() {
	local tarballs=() t
	(cd "${repo_root}" && CGO_ENABLED=0 go run ./test/realnode/cmd/mkimages -out "${state}/images" \
		-cache "${repo_root}/.cache/realnode") >&2
	# Real Apache Kafka images (REALNODE_KAFKA_VERSIONS, pinned in
	# hack/kafka/versions.txt), built once per input and kept in .cache.
	local kafka_args=() line
	while read -r line; do
		kafka_args+=("${line%% *}=${line#* }")
	done < <(bash "${repo_root}/hack/fetch-kafka.sh" ${REALNODE_KAFKA_VERSIONS:-4.4.0 3.7.2})
	(cd "${repo_root}" && CGO_ENABLED=0 go run ./test/realnode/cmd/mkkafkaimage -out "${state}/images" \
		-cache "${repo_root}/.cache/realnode" -debs hack/kafka/image-debs.txt "${kafka_args[@]}") >&2
	for t in "${state}"/images/*.tar; do
		tarballs+=("$t")
	done
	for t in "${tarballs[@]}"; do
		ctr --address "${state}/containerd/containerd.sock" -n k8s.io images import --no-unpack=false "$t" >/dev/null
	done
	log "imported ${#tarballs[@]} images"
}

# unmount_all unmounts every mount under the state dir, deepest first.
unmount_all() {
	local m
	for ((i = 0; i < 3; i++)); do
		mapfile -t mounts < <(awk -v s="${state}" 'index($5, s) == 1 {print $5}' /proc/self/mountinfo | sort -r)
		[[ ${#mounts[@]} -eq 0 ]] && return 0
		for m in "${mounts[@]}"; do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
		done
	done
	mapfile -t mounts < <(awk -v s="${state}" 'index($5, s) == 1 {print $5}' /proc/self/mountinfo)
	[[ ${#mounts[@]} -eq 0 ]] || log "WARNING: still mounted: ${mounts[*]}"
}

# up_failed shows why and tears down what the failed `up` started.
up_failed() {
	trap - EXIT
	log "bring-up failed; the last lines of each log:"
	local f
	for f in "${state}"/log/*.log; do
		[[ -f "$f" ]] || continue
		echo "--- ${f##*/}" >&2
		grep -v '^I[0-9]' "$f" | tail -n 15 >&2 || true
	done
	down || true
	exit 1
}

down() {
	if [[ -d "${state}/run" ]]; then
		stop kubelet
		stop kube-scheduler
		stop kube-controller-manager
		if running containerd; then
			(cd "${repo_root}/hack/tools" && GOFLAGS=-mod=readonly go run ./cri-clean \
				-endpoint "unix://${state}/containerd/containerd.sock") || log "WARNING: CRI cleanup failed"
		fi
		stop containerd
		stop kube-apiserver
		stop etcd
		# Shims outlive containerd by design; ours are found by their containerd address.
		local pid
		for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address ${state}/containerd/containerd.sock" || true); do
			log "stopping leftover shim ${pid}"
			kill -TERM "${pid}" 2>/dev/null || true
		done
	fi
	restore_host_state
	unmount_all
	if [[ -e "/var/run/netns/${netns}" ]]; then
		ip netns delete "${netns}"
		log "deleted network namespace ${netns}"
	fi
	local left=()
	for c in "${components[@]}"; do
		running "$c" && left+=("$c")
	done
	[[ ${#left[@]} -eq 0 ]] || die "still running: ${left[*]}"
	rm -rf "${state}"
	log "down: nothing left running, ${state} removed"
}

status() {
	local c ok=0
	for c in "${components[@]}"; do
		if running "$c"; then
			echo "${c}: running (pid $(cat "$(pidfile "$c")"))"
		else
			echo "${c}: not running"
			ok=1
		fi
	done
	if [[ ${ok} -eq 0 ]]; then
		bin="$(cat "${state}/bin-dir")"
		nsenter --net="/var/run/netns/${netns}" -- "${bin}/kubectl" --kubeconfig "${state}/pki/admin.kubeconfig" \
			wait --for=condition=Ready "node/${node_name}" --timeout=5s || ok=1
	fi
	return ${ok}
}

run_exec() {
	[[ -e "/var/run/netns/${netns}" ]] || die "no cluster: run '$0 up' first"
	export KUBECONFIG="${state}/pki/admin.kubeconfig"
	export REALNODE_DIR="${state}"
	REALNODE_BIN="$(cat "${state}/bin-dir")"
	export REALNODE_BIN
	export REALNODE_CONTAINERD="${state}/containerd/containerd.sock"
	export REALNODE_NODE_IP="${node_ip}"
	export REALNODE_NODE="${node_name}"
	export REALNODE_NETNS="${netns}"
	export REALNODE_CGROUP_ROOT="${cgroup_root}"
	exec nsenter --net="/var/run/netns/${netns}" -- "$@"
}

case "${1:-}" in
up) up ;;
down) down ;;
status) status ;;
exec)
	shift
	run_exec "$@"
	;;
*)
	echo "usage: $0 up|down|status|exec CMD..." >&2
	exit 2
	;;
esac
