// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

func findFixturePod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
}

func findStrimziPod(name, cluster string, broker, controller bool) *corev1.Pod {
	l := map[string]string{
		"strimzi.io/kind": "Kafka", "strimzi.io/cluster": cluster, "strimzi.io/name": cluster + "-kafka",
		"strimzi.io/broker-role": "false", "strimzi.io/controller-role": "false",
	}
	if broker {
		l["strimzi.io/broker-role"] = "true"
	}
	if controller {
		l["strimzi.io/controller-role"] = "true"
	}
	return findFixturePod("strimzi", name, l)
}

// findCluster is a cluster with Kafka pods of several layouts, non-Kafka
// pods with Kafka-like names, and a Kafka pod in a namespace the bot may
// not read.
func findCluster() []runtime.Object {
	provisioning := inspBitnamiPod("kafka", "foobar-kafka-provisioning-x7k2p", "kafka-provisioning")
	return []runtime.Object{
		inspSeedPod(),
		inspBitnamiPod("kafka", "foobar-kafka-broker-1", "broker"),
		inspBitnamiPod("kafka", "foobar-kafka-controller-0", "controller-eligible"),
		provisioning,
		findFixturePod("kafka", "rabbit-broker-0", map[string]string{"app": "rabbitmq"}),
		findFixturePod("kafka", "web-0", map[string]string{"app": "web"}),
		inspBitnamiPod("staging", "foobar-kafka-broker-0", "broker"),
		findStrimziPod("my-cluster-dual-role-3", "my-cluster", true, true),
		findFixturePod("strimzi", "my-cluster-entity-operator-6d5c8", map[string]string{"strimzi.io/kind": "Kafka", "strimzi.io/cluster": "my-cluster", "strimzi.io/name": "my-cluster-entity-operator"}),
		findFixturePod("strimzi", "my-cluster-zookeeper-0", map[string]string{"strimzi.io/kind": "Kafka", "strimzi.io/cluster": "my-cluster", "strimzi.io/name": "my-cluster-zookeeper"}),
		findFixturePod("confluent", "kafka-0", map[string]string{"app": "kafka", "platform.confluent.io/type": "kafka", "type": "kafka"}),
		inspBitnamiPod("secret-ns", "hidden-kafka-broker-7", "broker"),
	}
}

var findAllowed = []string{"kafka", "staging", "strimzi", "confluent"}

func TestFindPod(t *testing.T) {
	tests := []struct {
		name       string
		ns, query  string
		wantNS     string
		wantPod    string
		wantErr    error
		wantCands  []string // LookupError candidates, ns/name, in order
		maxActions int      // 0: no limit checked
	}{
		{name: "full name with namespace is one get", ns: "kafka", query: "foobar-kafka-broker-0", wantNS: "kafka", wantPod: "foobar-kafka-broker-0", maxActions: 1},
		{name: "short name with namespace", ns: "kafka", query: "broker-0", wantNS: "kafka", wantPod: "foobar-kafka-broker-0"},
		{name: "short name across namespaces", query: "controller-0", wantNS: "kafka", wantPod: "foobar-kafka-controller-0"},
		{name: "longer short name", query: "kafka-broker-1", wantNS: "kafka", wantPod: "foobar-kafka-broker-1"},
		{name: "Strimzi node pool pod", query: "dual-role-3", wantNS: "strimzi", wantPod: "my-cluster-dual-role-3"},
		{name: "Confluent pod by exact name", query: "kafka-0", wantNS: "confluent", wantPod: "kafka-0"},
		{
			name: "short name in two namespaces is ambiguous", query: "broker-0", wantErr: ErrAmbiguous,
			wantCands: []string{"kafka/foobar-kafka-broker-0", "staging/foobar-kafka-broker-0"},
		},
		{
			name: "full name in two namespaces is ambiguous", query: "foobar-kafka-broker-0", wantErr: ErrAmbiguous,
			wantCands: []string{"kafka/foobar-kafka-broker-0", "staging/foobar-kafka-broker-0"},
		},
		{
			name: "typo lists the closest Kafka pods of the namespace", ns: "kafka", query: "brokr-0", wantErr: ErrPodNotFound,
			wantCands: []string{"kafka/foobar-kafka-broker-0", "kafka/foobar-kafka-broker-1", "kafka/foobar-kafka-controller-0"},
		},
		{name: "non-Kafka pod with a broker-like name does not match", query: "rabbit-broker-0", wantErr: ErrPodNotFound},
		{name: "Strimzi ZooKeeper pod is not a Kafka pod", query: "zookeeper-0", wantErr: ErrPodNotFound},
		{name: "Kafka pod of a disallowed namespace is invisible", query: "broker-7", wantErr: ErrPodNotFound},
		{name: "non-Kafka pod named in full", ns: "kafka", query: "web-0", wantErr: ErrNotKafkaPod, maxActions: 2},
		{name: "disallowed namespace: refused before any request", ns: "secret-ns", query: "hidden-kafka-broker-7", wantErr: ErrNamespaceNotAllowed},
		{name: "path traversal", query: "../etc", wantErr: ErrInvalidName},
		{name: "shell substitution", query: "$(rm -rf)", wantErr: ErrInvalidName},
		{name: "shell separator", query: "broker-0;ls", wantErr: ErrInvalidName},
		{name: "10 KB name", query: strings.Repeat("a", 10<<10), wantErr: ErrInvalidName},
		{name: "Cyrillic look-alike", query: "br\u043eker-0", wantErr: ErrInvalidName},
		{name: "upper case", query: "Broker-0", wantErr: ErrInvalidName},
		{name: "leading space", query: " broker-0", wantErr: ErrInvalidName},
		{name: "newline", query: "broker-0\n", wantErr: ErrInvalidName},
		{name: "empty", query: "", wantErr: ErrInvalidName},
		{name: "bad namespace", ns: "../kube-system", query: "broker-0", wantErr: ErrInvalidName},
		{name: "namespace with a dot", ns: "kafka.prod", query: "broker-0", wantErr: ErrInvalidName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset(findCluster()...)
			c := New(cs, Options{Namespaces: findAllowed})
			ns, pod, err := c.FindPod(context.Background(), tt.ns, tt.query)
			actions := inspActionList(cs)
			if tt.maxActions > 0 && len(actions) > tt.maxActions {
				t.Errorf("%d requests, want at most %d: %q", len(actions), tt.maxActions, actions)
			}
			if tt.wantErr == nil {
				if err != nil || ns != tt.wantNS || pod != tt.wantPod {
					t.Fatalf("FindPod(%q, %q) = %q, %q, %v; want %q, %q", tt.ns, tt.query, ns, pod, err, tt.wantNS, tt.wantPod)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("FindPod(%q, %.40q) error = %v, want %v", tt.ns, tt.query, err, tt.wantErr)
			}
			if ns != "" || pod != "" {
				t.Errorf("FindPod returned %q/%q with an error", ns, pod)
			}
			msg := err.Error()
			if len(msg) > 400 {
				t.Errorf("error message is %d bytes, want a short one", len(msg))
			}
			if strings.Contains(msg, "secret-ns/") || strings.Contains(msg, "hidden-kafka") {
				t.Errorf("error %q reveals a pod of a disallowed namespace", msg)
			}
			if errors.Is(tt.wantErr, ErrInvalidName) || errors.Is(tt.wantErr, ErrNamespaceNotAllowed) {
				if len(actions) != 0 {
					t.Errorf("refused input still made requests: %q", actions)
				}
			}
			var le *LookupError
			if tt.wantCands != nil {
				if !errors.As(err, &le) {
					t.Fatalf("error %T is not a *LookupError", err)
				}
				var got []string
				for _, r := range le.Candidates {
					got = append(got, r.Namespace+"/"+r.Name)
				}
				if !slices.Equal(got, tt.wantCands) {
					t.Errorf("candidates = %q, want %q", got, tt.wantCands)
				}
				for _, cand := range tt.wantCands {
					if !strings.Contains(msg, cand) {
						t.Errorf("message %q does not name candidate %s", msg, cand)
					}
				}
			}
		})
	}
}

func TestFindPodMessages(t *testing.T) {
	c := New(fake.NewClientset(findCluster()...), Options{Namespaces: findAllowed})
	tests := []struct {
		ns, query string
		want      []string
		notWant   []string
	}{
		// The look-alike shows up escaped, so a person sees why it failed.
		{query: "br\u043eker-0", want: []string{`"br\u043eker-0"`}},
		// Long input is cut, not echoed.
		{query: strings.Repeat("a", 10<<10), want: []string{"10240 bytes, cut"}, notWant: []string{strings.Repeat("a", 41)}},
		{query: "$(rm -rf)", want: []string{`"$(rm -rf)"`}},
		// The refusal names the rule, not the namespace's content.
		{ns: "secret-ns", query: "hidden-kafka-broker-7", want: []string{"KAFKA_NAMESPACES"}, notWant: []string{"hidden", "not found", "exist"}},
		{query: "broker-0", want: []string{"give the full pod name or a namespace"}},
	}
	for _, tt := range tests {
		_, _, err := c.FindPod(context.Background(), tt.ns, tt.query)
		if err == nil {
			t.Errorf("FindPod(%q, %.20q) succeeded", tt.ns, tt.query)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("FindPod(%q, %.20q) = %q, want it to contain %q", tt.ns, tt.query, err, w)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(err.Error(), w) {
				t.Errorf("FindPod(%q, %.20q) = %q, must not contain %q", tt.ns, tt.query, err, w)
			}
		}
	}
}

func TestFindPodAllNamespaces(t *testing.T) {
	// With no KAFKA_NAMESPACES every namespace is in scope: one
	// cluster-wide list per selector.
	cs := fake.NewClientset(findCluster()...)
	ns, pod, err := New(cs, Options{}).FindPod(context.Background(), "", "broker-7")
	if err != nil || ns != "secret-ns" || pod != "hidden-kafka-broker-7" {
		t.Fatalf("FindPod = %q, %q, %v; want secret-ns/hidden-kafka-broker-7", ns, pod, err)
	}
	if got := len(cs.Actions()); got != len(KafkaSelectors()) {
		t.Errorf("%d requests, want one list per built-in selector (%d): %q", got, len(KafkaSelectors()), inspActionList(cs))
	}
	for _, a := range cs.Actions() {
		if a.GetNamespace() != "" || a.GetVerb() != "list" {
			t.Errorf("request %s in namespace %q, want cluster-wide lists", a.GetVerb(), a.GetNamespace())
		}
	}
}

func TestFindPodCustomSelector(t *testing.T) {
	custom := findFixturePod("kafka", "stream-node-2", map[string]string{"team": "streaming", "tier": "kafka"})
	cs := fake.NewClientset(append(findCluster(), custom)...)

	c := New(cs, Options{Selector: "team=streaming,tier=kafka"})
	ns, pod, err := c.FindPod(context.Background(), "", "node-2")
	if err != nil || ns != "kafka" || pod != "stream-node-2" {
		t.Fatalf("FindPod = %q, %q, %v; want kafka/stream-node-2", ns, pod, err)
	}
	// Pods of the built-in layouts are not Kafka pods under a custom selector.
	if _, _, err := c.FindPod(context.Background(), "", "controller-0"); !errors.Is(err, ErrPodNotFound) {
		t.Errorf("built-in layout pod found under a custom selector: %v", err)
	}

	bad := New(cs, Options{Selector: "team in (("})
	if _, _, err := bad.FindPod(context.Background(), "", "node-2"); err == nil || !strings.Contains(err.Error(), "KAFKA_POD_SELECTOR") {
		t.Errorf("invalid selector error = %v, want one naming KAFKA_POD_SELECTOR", err)
	}
}

func TestIsKafkaPod(t *testing.T) {
	jobPod := inspBitnamiPod("kafka", "foobar-kafka-broker-x", "broker")
	jobPod.OwnerReferences = []metav1.OwnerReference{{Kind: "Job", Name: "foobar-topics"}}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"Bitnami broker", inspSeedPod(), true},
		{"Bitnami controller-eligible", inspBitnamiPod("kafka", "foobar-kafka-controller-0", "controller-eligible"), true},
		{"Bitnami pre-v26 single StatefulSet", findFixturePod("kafka", "kafka-0", map[string]string{"app.kubernetes.io/name": "kafka", "app.kubernetes.io/component": "kafka"}), true},
		{"Bitnami provisioning job", inspBitnamiPod("kafka", "foobar-kafka-provisioning-x", "kafka-provisioning"), false},
		{"Bitnami metrics exporter", findFixturePod("kafka", "foobar-kafka-exporter-x", map[string]string{"app.kubernetes.io/name": "kafka", "app.kubernetes.io/component": "cluster-metrics"}), false},
		{"pod owned by a Job", jobPod, false},
		{"Strimzi broker", findStrimziPod("c-broker-0", "c", true, false), true},
		{"Strimzi controller", findStrimziPod("c-controller-3", "c", false, true), true},
		{"Strimzi ZooKeeper-era broker", findFixturePod("s", "c-kafka-0", map[string]string{"strimzi.io/kind": "Kafka", "strimzi.io/name": "c-kafka"}), true},
		{"Strimzi entity operator", findFixturePod("s", "c-entity-operator-x", map[string]string{"strimzi.io/kind": "Kafka", "strimzi.io/name": "c-entity-operator"}), false},
		{"Strimzi Kafka exporter", findFixturePod("s", "c-kafka-exporter-x", map[string]string{"strimzi.io/kind": "Kafka", "strimzi.io/name": "c-kafka-exporter"}), false},
		{"Strimzi Cruise Control", findFixturePod("s", "c-cruise-control-x", map[string]string{"strimzi.io/kind": "Kafka", "strimzi.io/name": "c-cruise-control"}), false},
		{"Strimzi Kafka Connect", findFixturePod("s", "c-connect-0", map[string]string{"strimzi.io/kind": "KafkaConnect", "strimzi.io/name": "c-connect"}), false},
		{"Confluent for Kubernetes", findFixturePod("c", "kafka-0", map[string]string{"platform.confluent.io/type": "kafka", "app": "my-kafka"}), true},
		{"Confluent ZooKeeper", findFixturePod("c", "zookeeper-0", map[string]string{"platform.confluent.io/type": "zookeeper", "app": "zookeeper"}), false},
		{"plain app=kafka", findFixturePod("k", "kafka-0", map[string]string{"app": "kafka"}), true},
		{"other app", findFixturePod("k", "kafka-ui-0", map[string]string{"app": "kafka-ui"}), false},
		{"no labels", findFixturePod("k", "kafka-0", nil), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if got := IsKafkaPod(tt.pod); got != tt.want {
			t.Errorf("%s: IsKafkaPod = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestComparePodNames(t *testing.T) {
	names := []string{"b-broker-10", "a-0", "b-broker-2", "b-broker-1", "b-controller-0", "b-broker"}
	slices.SortFunc(names, comparePodNames)
	want := []string{"a-0", "b-broker", "b-broker-1", "b-broker-2", "b-broker-10", "b-controller-0"}
	if !slices.Equal(names, want) {
		t.Errorf("sorted = %q, want %q", names, want)
	}
}

// FuzzValidateTarget: whatever is typed, an accepted name holds only
// lowercase letters, digits, '-' and '.', and a refusal is short, ASCII
// and free of control characters (safe to echo into Slack or a terminal).
func FuzzValidateTarget(f *testing.F) {
	for _, s := range []string{"broker-0", "../etc", "$(rm -rf)", "br\u043eker-0", "a\x1b[2Jb", strings.Repeat("x", 300), "", strings.Repeat("\xe4", 27), strings.Repeat("\U0001F600", 20)} {
		f.Add("kafka", s)
		f.Add(s, "broker-0")
	}
	f.Fuzz(func(t *testing.T, ns, name string) {
		err := ValidateTarget(ns, name)
		if err == nil {
			for _, r := range ns + name {
				if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
					t.Fatalf("accepted %q/%q with %q in it", ns, name, r)
				}
			}
			if strings.Contains(ns, ".") || strings.Contains(name, "..") {
				t.Fatalf("accepted %q/%q", ns, name)
			}
			return
		}
		if !errors.Is(err, ErrInvalidName) {
			t.Fatalf("error %v is not ErrInvalidName", err)
		}
		msg := err.Error()
		if len(msg) > 320 { // 40 input bytes escape to at most 160 characters
			t.Fatalf("message is %d bytes", len(msg))
		}
		for _, r := range msg {
			if r > 0x7e || r < 0x20 {
				t.Fatalf("message %q carries %q", msg, r)
			}
		}
	})
}

// TestFindThenInspectCostsFourRequests pins the API cost of one diagnosis
// of a short name in an allowed namespace: one pod list (FindPod), then the
// claim, the events and the log (Inspect reuses the listed pod).
func TestFindThenInspectCostsFourRequests(t *testing.T) {
	for _, tc := range []struct{ namespace, name string }{
		{"kafka", "broker-0"},
		{"kafka", "foobar-kafka-broker-0"},
		{"", "broker-0"},
	} {
		cs := fake.NewClientset(inspSeedObjects()...)
		c := New(cs, Options{Namespaces: []string{"kafka"}})
		ns, pod, err := c.FindPod(context.Background(), tc.namespace, tc.name)
		if err != nil {
			t.Fatalf("FindPod(%q, %q): %v", tc.namespace, tc.name, err)
		}
		if _, err := c.Inspect(context.Background(), ns, pod); err != nil {
			t.Fatalf("Inspect: %v", err)
		}
		if got := inspActionList(cs); len(got) > 4 {
			t.Errorf("FindPod(%q, %q) + Inspect made %d requests, want <= 4: %q", tc.namespace, tc.name, len(got), got)
		}
		// The handed-over pod is used once: a second Inspect reads it again.
		before := len(inspActionList(cs))
		if _, err := c.Inspect(context.Background(), ns, pod); err != nil {
			t.Fatal(err)
		}
		if got := inspActionList(cs)[before:]; len(got) == 0 || got[0] != "get pods" {
			t.Errorf("second Inspect requests %q, want a fresh pod read first", got)
		}
	}
}
