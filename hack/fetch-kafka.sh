#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The kafkabot Authors
# Fetches real Apache Kafka from Maven Central, at the exact versions pinned in
# hack/kafka/versions.txt, into the git-ignored .cache/kafka/<version>/:
#
#   libs/          every runtime jar of kafka_2.13 and kafka-tools plus the
#                  pinned logging binding (what a distribution's libs/ holds)
#   log4j.properties or log4j2.properties
#                  the console layout of Kafka's own config ([%d] %p %m (%c)%n)
#   java           the java binary to run it with (Java 17 for every line here)
#   run.sh         `run.sh CLASS ARGS...`: runs a Kafka main class with libs/,
#                  e.g. run.sh kafka.Kafka server.properties
#
#   bash hack/fetch-kafka.sh [VERSION...]     (default: every pinned version)
#
# Prints one line per version: "<version> <dir>". A version already fetched
# (its libs/.complete stamp present) is reused without asking Maven. Maven's
# own repository (~/.m2, or MAVEN_REPO_LOCAL) is where downloads are kept
# between clones. Nothing but Maven Central is contacted.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pins="${repo_root}/hack/kafka/versions.txt"
cache="${repo_root}/.cache/kafka"

log() { echo "fetch-kafka.sh: $*" >&2; }

command -v mvn >/dev/null || { log "mvn (Maven) is not on PATH: install Debian's maven package"; exit 1; }

java_bin="${KAFKA_JAVA:-}"
if [[ -z "${java_bin}" ]]; then
	for candidate in /usr/lib/jvm/java-17-openjdk-*/bin/java "$(command -v java || true)"; do
		if [[ -x "${candidate}" ]]; then
			java_bin="${candidate}"
			break
		fi
	done
fi
[[ -x "${java_bin}" ]] || { log "no Java 17 found (set KAFKA_JAVA to a java binary)"; exit 1; }

# pinned VERSION: the pin line's extra artifacts; fails when VERSION is not pinned.
pinned() {
	awk -v v="$1" '!/^#/ && $1 == v { $1 = ""; print; found = 1 } END { exit !found }' "${pins}"
}

fetch_one() {
	local version="$1" extras dir stage
	if ! extras="$(pinned "${version}")"; then
		log "${version} is not pinned in ${pins}"
		return 1
	fi
	dir="${cache}/${version}"
	if [[ -f "${dir}/libs/.complete" ]]; then
		echo "${version} ${dir}"
		return 0
	fi
	local start=${SECONDS}
	mkdir -p "${cache}"
	stage="$(mktemp -d "${cache}/.fetch-${version}.XXXXXX")"
	chmod 755 "${stage}" # mktemp's 0700 would keep Kafka from users other than root
	trap 'rm -rf "${stage}"' RETURN

	{
		echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
		echo '<groupId>local.kafkabot</groupId><artifactId>kafka-fetch</artifactId><version>1</version><packaging>pom</packaging><dependencies>'
		local coord g a v
		for coord in "org.apache.kafka:kafka_2.13:${version}" "org.apache.kafka:kafka-tools:${version}" ${extras}; do
			IFS=: read -r g a v <<<"${coord}"
			echo "<dependency><groupId>${g}</groupId><artifactId>${a}</artifactId><version>${v}</version></dependency>"
		done
		echo '</dependencies></project>'
	} >"${stage}/pom.xml"

	local mvn_args=(-q -B -f "${stage}/pom.xml" dependency:copy-dependencies
		-DoutputDirectory="${stage}/libs" -DincludeScope=runtime)
	if [[ -n "${MAVEN_REPO_LOCAL:-}" ]]; then
		mvn_args+=(-Dmaven.repo.local="${MAVEN_REPO_LOCAL}")
	fi
	if ! mvn "${mvn_args[@]}" >"${stage}/mvn.log" 2>&1; then
		log "Maven could not fetch Kafka ${version}:"
		tail -n 20 "${stage}/mvn.log" >&2
		return 1
	fi
	[[ -f "${stage}/libs/kafka_2.13-${version}.jar" ]] || { log "kafka_2.13-${version}.jar missing after the fetch"; return 1; }

	case "${version}" in
	3.*) cp "${repo_root}/hack/kafka/log4j.properties" "${stage}/" ;;
	*) cp "${repo_root}/hack/kafka/log4j2.properties" "${stage}/" ;;
	esac
	ln -s "${java_bin}" "${stage}/java"
	cat >"${stage}/run.sh" <<'RUN'
#!/usr/bin/env bash
# run.sh CLASS ARGS...: a Kafka main class on this version's libs, logging to
# stdout in Kafka's own layout. KAFKA_HEAP_OPTS (default -Xmx256m) and
# KAFKA_OPTS are added as Kafka's own scripts add them.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
logging=(-Dlog4j.configuration="file:${here}/log4j.properties")
[[ -f "${here}/log4j2.properties" ]] && logging=(-Dlog4j2.configurationFile="${here}/log4j2.properties")
# shellcheck disable=SC2086
exec "${here}/java" ${KAFKA_HEAP_OPTS:--Xmx256m} ${KAFKA_OPTS:-} "${logging[@]}" -cp "${here}/libs/*" "$@"
RUN
	chmod +x "${stage}/run.sh"
	touch "${stage}/libs/.complete"
	rm -rf "${dir}"
	mv "${stage}" "${dir}"
	rm -f "${dir}/pom.xml" "${dir}/mvn.log"
	log "Kafka ${version}: $(ls "${dir}/libs" | wc -l) jars fetched in $((SECONDS - start))s"
	echo "${version} ${dir}"
}

versions=("$@")
if [[ ${#versions[@]} -eq 0 ]]; then
	mapfile -t versions < <(awk '!/^#/ && NF { print $1 }' "${pins}")
fi
for version in "${versions[@]}"; do
	fetch_one "${version}"
done
