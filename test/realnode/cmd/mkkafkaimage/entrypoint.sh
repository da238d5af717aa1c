#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The kafkabot Authors
# The entrypoint of the real-node tests' Kafka image (our own, not a
# vendor's): it lays the volume out as a distribution does, writes
# server.properties from the environment, formats the storage on the first
# start and runs kafka.Kafka in the foreground, logging to stdout in Kafka's
# own console layout.
#
#   KAFKA_LAYOUT=bitnami (default)  the volume at /bitnami/kafka, the log dir
#       /bitnami/kafka/data; node.id from KAFKA_CFG_NODE_ID, else
#       KAFKA_MIN_ID plus the pod's ordinal (Bitnami's chart).
#   KAFKA_LAYOUT=strimzi  JBOD volumes /var/lib/kafka/data-<n>, the log dir
#       kafka-log<node id> on each, the metadata log on the first; node.id
#       is the pod name's suffix (Strimzi's node pools).
#   KAFKA_CFG_FOO_BAR=v   foo.bar=v in server.properties (Bitnami's rule).
#   KAFKA_KRAFT_CLUSTER_ID  the cluster id the storage is formatted with.
#   KAFKA_HEAP_OPTS, KAFKA_OPTS  added to java's command line.
#   KAFKABOT_TEST_VOTERS_FILE  (the tests' stand-in for DNS) a file whose
#       content is controller.quorum.voters; waited for when set.
set -eu

home=/opt/kafka
java=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
conf_dir=${KAFKA_CONF_DIR:-/tmp/kafka-config}
mkdir -p "${conf_dir}"
props=${conf_dir}/server.properties
ordinal=${HOSTNAME##*-}

case "${KAFKA_LAYOUT:-bitnami}" in
bitnami)
	: "${KAFKA_CFG_LOG_DIRS:=/bitnami/kafka/data}"
	if [ -z "${KAFKA_CFG_NODE_ID:-}" ]; then
		KAFKA_CFG_NODE_ID=$((${KAFKA_MIN_ID:-0} + ordinal))
	fi
	;;
strimzi)
	: "${KAFKA_CFG_NODE_ID:=${ordinal}}"
	dirs=""
	for v in /var/lib/kafka/data-*; do
		[ -d "${v}" ] || continue
		dirs="${dirs:+${dirs},}${v}/kafka-log${KAFKA_CFG_NODE_ID}"
	done
	[ -n "${dirs}" ] || { echo "entrypoint: no /var/lib/kafka/data-* volume" >&2; exit 1; }
	KAFKA_CFG_LOG_DIRS=${dirs}
	KAFKA_CFG_METADATA_LOG_DIR=${dirs%%,*}
	;;
*)
	echo "entrypoint: unknown KAFKA_LAYOUT ${KAFKA_LAYOUT}" >&2
	exit 1
	;;
esac
export KAFKA_CFG_NODE_ID KAFKA_CFG_LOG_DIRS
[ -n "${KAFKA_CFG_METADATA_LOG_DIR:-}" ] && export KAFKA_CFG_METADATA_LOG_DIR

if [ -n "${KAFKABOT_TEST_VOTERS_FILE:-}" ]; then
	while [ ! -s "${KAFKABOT_TEST_VOTERS_FILE}" ]; do
		sleep 0.2
	done
	KAFKA_CFG_CONTROLLER_QUORUM_VOTERS=$(cat "${KAFKABOT_TEST_VOTERS_FILE}")
	export KAFKA_CFG_CONTROLLER_QUORUM_VOTERS
fi

# KAFKA_CFG_LOG_DIRS=x -> log.dirs=x
env | grep '^KAFKA_CFG_' | sort | while IFS='=' read -r name value; do
	key=$(echo "${name#KAFKA_CFG_}" | tr 'A-Z_' 'a-z.')
	echo "${key}=${value}"
done >"${props}"

logging=-Dlog4j2.configurationFile=${home}/config/log4j2.properties
[ -f "${home}/config/log4j.properties" ] && logging=-Dlog4j.configuration=file:${home}/config/log4j.properties

IFS=,
for d in ${KAFKA_CFG_LOG_DIRS}; do
	mkdir -p "${d}"
done
unset IFS
first=${KAFKA_CFG_METADATA_LOG_DIR:-${KAFKA_CFG_LOG_DIRS%%,*}}
if [ ! -f "${first}/meta.properties" ]; then
	echo "entrypoint: formatting ${KAFKA_CFG_LOG_DIRS} for cluster ${KAFKA_KRAFT_CLUSTER_ID}, node ${KAFKA_CFG_NODE_ID}"
	# shellcheck disable=SC2086
	"${java}" -Xmx128m -XX:TieredStopAtLevel=1 -XX:-UsePerfData "${logging}" -cp "${home}/libs/*" \
		kafka.tools.StorageTool format -t "${KAFKA_KRAFT_CLUSTER_ID}" -c "${props}" --ignore-formatted
fi

echo "entrypoint: starting Kafka node ${KAFKA_CFG_NODE_ID} ($(cat "${home}/VERSION"))"
# shellcheck disable=SC2086
exec "${java}" ${KAFKA_HEAP_OPTS:--Xmx256m} -XX:-UsePerfData -Djava.io.tmpdir=/tmp ${KAFKA_OPTS:-} \
	"${logging}" -cp "${home}/libs/*" kafka.Kafka "${props}"
