// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package botuses lists every Kubernetes request the bot's code makes, and
// where: the contract that deploy/'s RBAC, the kustomize base's and the Helm
// chart's alike, is held to. test/integration derives the (resource, verb)
// pairs from the code's calls and fails unless they are exactly these
// (codeuses_test.go); the RBAC tests there and in deploy/ prove each is
// granted and nothing more is; `bot doctor` (internal/doctor) asks the API
// server about each one on a live install (SelfSubjectAccessReview).
package botuses

// Scope is where a request is made.
type Scope int

const (
	// InKafka is every namespace of KAFKA_NAMESPACES.
	InKafka Scope = iota
	// InBot is the bot's own namespace (POD_NAMESPACE).
	InBot
)

// Use is a set of requests the bot's code makes on one resource.
type Use struct {
	Scope    Scope
	Group    string
	Resource string // "resource" or "resource/subresource"
	Verbs    []string
	// UsedBy names the code that makes these requests.
	UsedBy string
}

// StateConfigMap is the one ConfigMap the bot reads and writes (in its own
// namespace); its Role names it (resourceNames) for every verb but create.
const StateConfigMap = "kafkabot-alert-state"

// All is every request the bot's code makes. When the code starts making a
// new kind of request, add it here and to deploy/base/rbac.yaml and the
// chart's templates/rbac.yaml.
var All = []Use{
	{InKafka, "", "pods", []string{"get", "list", "watch"},
		"kube.Client finding and inspecting brokers; kube.PodInformer and kube watch for the sweep and for waiting on pods"},
	{InKafka, "", "pods", []string{"create", "patch", "delete"},
		"kube repair.go: create and remove the debug pod, patch its go-signal annotation; delete the broker pod so its StatefulSet recreates it"},
	{InKafka, "", "pods/log", []string{"get"},
		"kube inspect.go and repair.go: the previous container's log tail, the debug pod's output"},
	{InKafka, "", "events", []string{"list"},
		"kube inspect.go: recent events about the broker pod"},
	{InKafka, "", "events", []string{"create"},
		"kube events.go: each repair step recorded as an Event on the broker pod"},
	{InKafka, "", "persistentvolumeclaims", []string{"get", "list"},
		"kube inspect.go: the broker's claims (one get, or one list for several)"},
	{InKafka, "coordination.k8s.io", "leases", []string{"get", "list", "create", "update", "delete"},
		"kube lease.go via recovery lock.go: per-broker repair locks, found again after a restart; kube decision.go: approval decision records, pruned (deleted) after expiry"},
	{InBot, "coordination.k8s.io", "leases", []string{"get", "create", "update"},
		"sweep: client-go leaderelection LeaseLock"},
	{InBot, "", "configmaps", []string{"get", "list", "watch", "create", "update"},
		"kube informer_state.go via sweep: alert state ConfigMap and its informer"},
}
