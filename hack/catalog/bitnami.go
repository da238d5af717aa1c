// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"github.com/kafka-chatops/kafkabot/internal/diagnose/catalog"
)

// The current Bitnami images live in bitnami/containers, a repository larger
// than the fetch tool brings here, so its libkafka.sh cannot be read from a
// mirror. These are the arguments of its kafka_validate's
// print_validation_error calls (each ends the container: kafka_validate
// returns the error code and the setup script exits with it), as written in
// the script (shell quoting kept, read with shellWords like the mirrored
// scripts), from the file below, read with the search tool's read_file.
var bitnamiCurrent = struct {
	Repo, Commit, File string
	Messages           []string
}{
	Repo:   "bitnami/containers",
	Commit: "da685fd8fa08edb563541744052cb34d04f28d68",
	File:   "bitnami/kafka/4.3/debian-12/rootfs/opt/bitnami/scripts/libkafka.sh",
	Messages: []string{
		`"The allowed values for ${1} are: ${2}"`,
		`"Role 'controller' enabled but environment variable KAFKA_CFG_CONTROLLER_LISTENER_NAMES was not provided."`,
		`"Role 'controller' enabled but listener ${KAFKA_CFG_CONTROLLER_LISTENER_NAMES} not found in KAFKA_CFG_LISTENERS."`,
		`"Role 'controller' enabled and KAFKA_CFG_CONTROLLER_QUORUM_BOOTSTRAP_SERVERS for dynamic controller quorum configured but KAFKA_INITIAL_CONTROLLERS was not provided."`,
		`"Invalid KRaft process role '$role'. Supported roles are 'broker,controller'"`,
		`"An invalid port ${port} was specified in the environment variable KAFKA_CFG_LISTENERS: ${err}."`,
		`"There are listeners bound to the same port"`,
		`"Authentication protocol ${protocol} is not supported!"`,
		`"When using SASL for inter broker comunication the mechanism should be provided using KAFKA_CFG_SASL_MECHANISM_INTER_BROKER_PROTOCOL"`,
		`"In order to configure SASL authentication for Kafka inter-broker communications, you must provide the SASL credentials. Set the environment variables KAFKA_INTER_BROKER_USER and KAFKA_INTER_BROKER_PASSWORD to configure the credentials for SASL authentication with between brokers."`,
		`"When using SASL for controller comunication the mechanism should be provided at KAFKA_CFG_SASL_MECHANISM_CONTROLLER_PROTOCOL"`,
		`"In order to configure SASL authentication for Kafka control plane communications, you must provide the SASL credentials. Set the environment variables KAFKA_CONTROLLER_USER and KAFKA_CONTROLLER_PASSWORD to configure the credentials for SASL authentication with between controllers."`,
		`"In order to configure SASL authentication for Kafka, you must provide the SASL credentials. Set the environment variables KAFKA_CLIENT_USERS and KAFKA_CLIENT_PASSWORDS to configure the credentials for SASL authentication with clients."`,
		`"Kafka haven't been configured to work in either Raft or Zookeeper mode. Please make sure at least one of the modes is configured."`,
		`"Both KRaft mode and Zookeeper modes are configured, but KAFKA_CFG_ZOOKEEPER_METADATA_MIGRATION_ENABLE is not enabled"`,
		`"KRaft mode requires an unique node.id, please set the environment variable KAFKA_CFG_NODE_ID"`,
		`"In order to configure the TLS encryption for Zookeeper with JKS certs you must mount your zookeeper.truststore.jks cert to the ${KAFKA_MOUNTED_CONF_DIR}/certs directory."`,
		`"In order to configure the TLS encryption for Zookeeper with PEM certs you must mount your zookeeper.truststore.pem cert to the ${KAFKA_MOUNTED_CONF_DIR}/certs directory."`,
		`"In order to configure SASL authentication for Kafka, you must provide the SASL credentials. Set the environment variables KAFKA_ZOOKEEPER_USER and KAFKA_ZOOKEEPER_PASSWORD, to configure the credentials for SASL authentication with"`,
		`"Kafka requires at least one process role to be set. Set the environment variable KAFKA_CFG_PROCESS_ROLES to configure the process roles for Kafka."`,
		`"In order to configure the TLS encryption for Kafka with JKS certs you must mount your kafka.keystore.jks and kafka.truststore.jks certs to the ${KAFKA_MOUNTED_CONF_DIR}/certs directory."`,
		`"In order to configure the TLS encryption for Kafka with PEM certs you must mount your kafka.keystore.pem, kafka.keystore.key and kafka.truststore.pem certs to the ${KAFKA_MOUNTED_CONF_DIR}/certs directory."`,
		`"Specified SASL protocol but no SASL mechanisms provided in KAFKA_CFG_SASL_ENABLED_MECHANISMS"`,
		`"Specify the same number of passwords on KAFKA_CLIENT_PASSWORDS as the number of users on KAFKA_CLIENT_USERS!"`,
	},
}

// addBitnamiCurrent adds bitnamiCurrent's messages under a release of their own.
func (b *builder) addBitnamiCurrent() {
	bc := bitnamiCurrent
	ri := b.newRelease("scripts", bc.Repo+"@"+bc.Commit[:12], []string{bc.Repo + "@" + bc.Commit + ":" + bc.File + " (print_validation_error calls, read by hand)"})
	for _, m := range bc.Messages {
		s := site{Kind: catalog.KindScript, Thrower: "bitnami:libkafka.sh", Text: shellWords(m), Fatal: true, File: bc.File}
		b.add(ri, s, catalog.Provenance{Repo: bc.Repo, Version: bc.Commit[:12], File: bc.File})
	}
}
