#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The kafkabot Authors
# Checks hack/realnode.sh's own promises on a running cluster, and tears it
# down on the way (hack/test.sh runs it after the real-node scenarios):
#
#   1. `up` on a running cluster is idempotent: it reuses every component
#      (same PIDs) and the node stays Ready;
#   2. `status` exits 0 while the node is Ready;
#   3. no route out of the network namespace: no default route (IPv4 or
#      IPv6), and a connect to a documentation address (192.0.2.1,
#      2001:db8::1, never a real host) fails at once with "Network is
#      unreachable": the kernel refuses it before any packet exists;
#   4. `down` leaves nothing: none of the recorded PIDs and no process
#      naming the state dir is alive, no listening socket belongs to them,
#      the network namespace and the pods' ones, the state dir, the kubelet's cgroup root, every
#      mount under the state dir and the /var/log/containers links into it
#      are gone; `status` then exits non-zero; a second `down` is harmless.
#
# Needs root, like hack/realnode.sh. Exits non-zero with every broken
# promise listed.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
script="${repo_root}/hack/realnode.sh"
failures=()
fail() {
	echo "lifecycle: FAIL: $*" >&2
	failures+=("$*")
}
ok() { echo "lifecycle: ok: $*" >&2; }

# What the script says about its cluster (from inside its exec).
eval "$(bash "${script}" exec bash -c 'printf "state=%q netns=%q cgroup_root=%q\n" "$REALNODE_DIR" "$REALNODE_NETNS" "$REALNODE_CGROUP_ROOT"')"
[[ -n "${state}" && -d "${state}/run" ]] || {
	echo "lifecycle: no running cluster (run hack/realnode.sh up first)" >&2
	exit 1
}

# pids prints "name pid" for every PID file of the state dir.
pids() {
	local f
	for f in "${state}"/run/*.pid; do
		[[ -f "$f" ]] && echo "$(basename "$f" .pid) $(cat "$f")"
	done
}

# 1. up again.
before="$(pids)"
[[ $(wc -l <<<"${before}") -ge 6 ]] || fail "fewer than six PID files before the second up: ${before}"
if out="$(bash "${script}" up 2>&1)"; then
	after="$(pids)"
	if [[ "${after}" == "${before}" ]]; then
		ok "a second up reused every component (PIDs unchanged)"
	else
		fail "a second up changed the components' PIDs: before ${before//$'\n'/, }; after ${after//$'\n'/, }"
	fi
	n="$(grep -c 'already running' <<<"${out}" || true)"
	[[ "${n}" -eq 6 ]] || fail "a second up reported ${n} components already running, want 6"
else
	fail "a second up failed: ${out}"
fi

# 2. status.
if bash "${script}" status >/dev/null 2>&1; then
	ok "status exits 0 while the node is Ready"
else
	fail "status exited non-zero on a Ready node"
fi

# 3. no route out.
routes="$(bash "${script}" exec sh -c 'ip -4 route show default; ip -6 route show default' 2>&1)"
if [[ -z "${routes}" ]]; then
	ok "no default route in ${netns}"
else
	fail "default routes in ${netns}: ${routes}"
fi
for addr in 192.0.2.1 2001:db8::1; do
	# bash's /dev/tcp connect; a refused or timed-out connect would mean a
	# route exists. The timeout only bounds a broken namespace.
	err="$(bash "${script}" exec timeout 10 bash -c "exec 3<>/dev/tcp/${addr}/9" 2>&1 || true)"
	if grep -q 'Network is unreachable' <<<"${err}"; then
		ok "connect to ${addr} inside ${netns}: Network is unreachable"
	else
		fail "connect to ${addr} inside ${netns} did not fail with ENETUNREACH: ${err:-it connected}"
	fi
done

# 4. down.
recorded="$(pids)"
# The pods' network namespaces: containerd names them cni-<uuid> under
# /var/run/netns; ours are those of the processes in the kubelet's cgroup root.
pod_netns=""
inodes=" "
for f in $(find /sys/fs/cgroup/*/"${cgroup_root#/}" -name cgroup.procs 2>/dev/null); do
	for pid in $(cat "$f"); do
		inodes+="$(stat -L -c %i "/proc/${pid}/ns/net" 2>/dev/null) "
	done
done
for n in $(ls /var/run/netns 2>/dev/null | grep '^cni-' || true); do
	if [[ "${inodes}" == *" $(stat -L -c %i "/var/run/netns/${n}") "* ]]; then
		pod_netns+=" ${n}"
	fi
done
[[ -n "${pod_netns}" ]] || fail "found no pod network namespace of this cluster before down (the check below would test nothing)"
if ! bash "${script}" down >/dev/null 2>&1; then
	fail "down exited non-zero"
fi
while read -r name pid; do
	[[ -n "${pid}" ]] || continue
	if [[ -d "/proc/${pid}" ]] && tr '\0' ' ' 2>/dev/null <"/proc/${pid}/cmdline" | grep -q -- "${name}"; then
		fail "${name} (pid ${pid}) still runs after down"
	fi
	if ss -H -ltnup 2>/dev/null | grep -q "pid=${pid},"; then
		fail "a socket of ${name}'s pid ${pid} still listens after down"
	fi
done <<<"${recorded}"
left=""
for p in /proc/[0-9]*; do
	if tr '\0' ' ' 2>/dev/null <"${p}/cmdline" | grep -qF -- "${state}"; then
		left+=" ${p#/proc/}($(tr '\0' ' ' <"${p}/cmdline" | cut -c1-80))"
	fi
done
[[ -z "${left}" ]] || fail "processes naming ${state} after down:${left}"
[[ ! -e "/var/run/netns/${netns}" ]] || fail "network namespace ${netns} still exists"
[[ ! -e "${state}" ]] || fail "state dir ${state} still exists"
for n in ${pod_netns}; do
	if [[ -e "/var/run/netns/${n}" ]]; then
		fail "pod network namespace ${n} still exists"
	fi
done
for c in /sys/fs/cgroup/*/"${cgroup_root#/}"; do
	if [[ -e "$c" ]]; then
		fail "cgroup ${c} still exists"
	fi
done
if awk -v s="${state}" 'index($5, s) == 1 {found=1} END {exit !found}' /proc/self/mountinfo; then
	fail "mounts under ${state} remain"
fi
if find /var/log/containers -maxdepth 1 -lname "${state}/*" 2>/dev/null | grep -q .; then
	fail "/var/log/containers links into ${state} remain"
fi
if bash "${script}" status >/dev/null 2>&1; then
	fail "status exits 0 after down"
fi
bash "${script}" down >/dev/null 2>&1 || fail "a second down failed"
if [[ ${#failures[@]} -eq 0 ]]; then
	ok "down left no process, listener, namespace, state dir, cgroup, mount or log link"
fi

if [[ ${#failures[@]} -gt 0 ]]; then
	echo "lifecycle: ${#failures[@]} broken promise(s) of hack/realnode.sh" >&2
	exit 1
fi
echo "lifecycle: every promise of hack/realnode.sh held" >&2
