// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Errors of FindPod, Snapshot and Inspect. Use errors.Is to tell them
// apart; every error's message is safe to show to the person who asked.
var (
	// ErrInvalidName: the pod or namespace name is not a Kubernetes name.
	// Nothing was sent to the API server.
	ErrInvalidName = errors.New("invalid name")
	// ErrNamespaceNotAllowed: the namespace is outside KAFKA_NAMESPACES.
	// Nothing was sent to the API server, so the error says nothing about
	// the namespace itself.
	ErrNamespaceNotAllowed = errors.New("namespace not allowed")
	// ErrPodNotFound: no Kafka pod in scope has that name.
	ErrPodNotFound = errors.New("pod not found")
	// ErrAmbiguous: a short name matches more than one Kafka pod.
	ErrAmbiguous = errors.New("ambiguous pod name")
	// ErrNotKafkaPod: the pod exists but is not a Kafka pod (its labels
	// match neither KAFKA_POD_SELECTOR nor the built-in selectors).
	ErrNotKafkaPod = errors.New("not a Kafka pod")
)

// maxLookupCandidates bounds the pods a lookup error suggests.
const maxLookupCandidates = 5

// LookupError is a FindPod failure that has pods to suggest: the closest
// Kafka pods in scope for an unknown name, every match for an ambiguous
// one. It unwraps to ErrPodNotFound or ErrAmbiguous.
type LookupError struct {
	// Kind is ErrPodNotFound or ErrAmbiguous.
	Kind error
	// Query is the name that was looked up; Namespace is "" when every
	// allowed namespace was searched.
	Query     string
	Namespace string
	// Candidates are the suggestions (not found) or the matches
	// (ambiguous), as PodRef (defined in events.go).
	Candidates []PodRef
}

// Error describes the failure and lists the candidates.
func (e *LookupError) Error() string {
	var b strings.Builder
	where := "in the namespaces the bot may read"
	if e.Namespace != "" {
		where = "in namespace " + strconv.Quote(e.Namespace)
	}
	switch {
	case errors.Is(e.Kind, ErrAmbiguous):
		fmt.Fprintf(&b, "%v: %q matches %d Kafka pods %s: ", e.Kind, e.Query, len(e.Candidates), where)
		b.WriteString(joinPodRefs(e.Candidates))
		b.WriteString("; give the full pod name or a namespace")
	case len(e.Candidates) == 0:
		fmt.Fprintf(&b, "%v: no Kafka pod named %q %s, and none to suggest", e.Kind, e.Query, where)
	default:
		fmt.Fprintf(&b, "%v: no Kafka pod named %q %s; closest: %s", e.Kind, e.Query, where, joinPodRefs(e.Candidates))
	}
	return b.String()
}

// Unwrap returns Kind, so errors.Is(err, ErrAmbiguous) works.
func (e *LookupError) Unwrap() error { return e.Kind }

func joinPodRefs(refs []PodRef) string {
	s := make([]string, len(refs))
	for i, r := range refs {
		s[i] = r.Namespace + "/" + r.Name
	}
	return strings.Join(s, ", ")
}

// kafkaSelectors are the built-in label selectors that find Kafka pods.
// A selector can only AND its terms, so each layout gets its own list
// request; IsKafkaPod then drops the non-broker pods they also match.
var kafkaSelectors = []string{
	"app.kubernetes.io/name=kafka",     // Bitnami chart, charts with the recommended labels
	"strimzi.io/kind=Kafka",            // Strimzi (also matches its operators, ZooKeeper, exporters)
	"platform.confluent.io/type=kafka", // Confluent for Kubernetes
	"app=kafka",                        // plain manifests, older charts
}

// KafkaSelectors returns the built-in label selectors used when
// KAFKA_POD_SELECTOR is empty. A pod must also pass IsKafkaPod.
func KafkaSelectors() []string { return slices.Clone(kafkaSelectors) }

// Bitnami components of app.kubernetes.io/name=kafka pods that do not run a
// Kafka node (topic provisioning job, metrics exporter).
var nonKafkaComponents = map[string]bool{
	"kafka-provisioning": true,
	"cluster-metrics":    true,
	"metrics":            true,
	"kafka-exporter":     true,
	"zookeeper":          true,
}

// IsKafkaPod reports whether a pod runs a Kafka node (broker, controller or
// both) according to the built-in layouts:
//   - Bitnami and other charts: app.kubernetes.io/name=kafka, unless its
//     app.kubernetes.io/component names a helper (provisioning, metrics);
//   - Strimzi: strimzi.io/kind=Kafka and either strimzi.io/name ending in
//     "-kafka" or a strimzi.io/broker-role / strimzi.io/controller-role label
//     (this excludes the entity operator, Cruise Control, exporters, ZooKeeper);
//   - Confluent for Kubernetes: platform.confluent.io/type=kafka;
//   - plain manifests: app=kafka.
//
// Pods created by a Job are never Kafka nodes.
func IsKafkaPod(pod *corev1.Pod) bool {
	if pod == nil {
		return false
	}
	l := pod.Labels
	if _, isJob := l["batch.kubernetes.io/job-name"]; isJob || ownedByKind(pod, "Job") {
		return false
	}
	switch {
	case l["app.kubernetes.io/name"] == "kafka":
		return !nonKafkaComponents[l["app.kubernetes.io/component"]]
	case l["strimzi.io/kind"] == "Kafka":
		return isStrimziKafkaNode(l)
	case l["platform.confluent.io/type"] == "kafka":
		return true
	case l["app"] == "kafka":
		return true
	}
	return false
}

// isStrimziKafkaNode reports whether Strimzi labels mark a Kafka node pod.
func isStrimziKafkaNode(l map[string]string) bool {
	if l["strimzi.io/kind"] != "Kafka" {
		return false
	}
	_, broker := l["strimzi.io/broker-role"]
	_, controller := l["strimzi.io/controller-role"]
	return broker || controller || strings.HasSuffix(l["strimzi.io/name"], "-kafka")
}

func ownedByKind(pod *corev1.Pod, kind string) bool {
	for _, o := range pod.OwnerReferences {
		if o.Kind == kind {
			return true
		}
	}
	return false
}

// kafkaPodMatcher returns the list selectors and the predicate that
// decide what a Kafka pod is for this client: KAFKA_POD_SELECTOR alone when
// set, else the built-in selectors refined by IsKafkaPod.
func (c *Client) kafkaPodMatcher() ([]string, func(*corev1.Pod) bool, error) {
	if c.opts.Selector == "" {
		return kafkaSelectors, IsKafkaPod, nil
	}
	sel, err := labels.Parse(c.opts.Selector)
	if err != nil {
		return nil, nil, fmt.Errorf("KAFKA_POD_SELECTOR %q: %w", c.opts.Selector, err)
	}
	return []string{c.opts.Selector}, func(p *corev1.Pod) bool { return sel.Matches(labels.Set(p.Labels)) }, nil
}

// IsKafka reports whether the client counts pod as a Kafka pod: it matches
// KAFKA_POD_SELECTOR when one is set, else IsKafkaPod.
func (c *Client) IsKafka(pod *corev1.Pod) (bool, error) {
	_, match, err := c.kafkaPodMatcher()
	if err != nil {
		return false, err
	}
	return match(pod), nil
}

// scopeNamespaces returns the namespaces to list: the one asked for, the
// allowed ones, or all (metav1.NamespaceAll) when there is no allow-list.
func (c *Client) scopeNamespaces(namespace string) []string {
	switch {
	case namespace != "":
		return []string{namespace}
	case len(c.opts.Namespaces) == 0:
		return []string{metav1.NamespaceAll}
	default:
		return c.opts.Namespaces
	}
}

// listKafkaPods lists the Kafka pods of the given namespace ("" = all in
// scope), deduplicated, in namespace/name order. It costs one list request
// per selector and namespace (plus continuation pages).
func (c *Client) listKafkaPods(ctx context.Context, namespace string) ([]corev1.Pod, error) {
	selectors, match, err := c.kafkaPodMatcher()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var pods []corev1.Pod
	for _, ns := range c.scopeNamespaces(namespace) {
		nsSelectors := selectors
		if ns != metav1.NamespaceAll && len(selectors) > 1 {
			// Within one namespace, one unfiltered list (matched here) costs
			// fewer requests than a list per built-in selector; cluster-wide,
			// the selectors keep the bot from reading every pod.
			nsSelectors = []string{""}
		}
		for _, sel := range nsSelectors {
			err := c.findListPods(ctx, ns, sel, func(p *corev1.Pod) {
				key := p.Namespace + "/" + p.Name
				if seen[key] || !c.NamespaceAllowed(p.Namespace) || !match(p) {
					return
				}
				seen[key] = true
				pods = append(pods, *p)
			})
			if err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(pods, func(a, b corev1.Pod) int {
		if n := strings.Compare(a.Namespace, b.Namespace); n != 0 {
			return n
		}
		return comparePodNames(a.Name, b.Name)
	})
	return pods, nil
}

// findListPageSize is the page size of pod and claim lists.
const findListPageSize = 500

// findListPods lists the pods of one namespace matching selector, page by
// page, calling each for every pod.
func (c *Client) findListPods(ctx context.Context, ns, selector string, each func(*corev1.Pod)) error {
	opts := metav1.ListOptions{LabelSelector: selector, Limit: findListPageSize}
	for {
		list, err := c.cs.CoreV1().Pods(ns).List(ctx, opts)
		if err != nil {
			where := "namespace " + ns
			if ns == metav1.NamespaceAll {
				where = "all namespaces (set KAFKA_NAMESPACES if the bot may only read some)"
			}
			return fmt.Errorf("listing pods %q in %s: %w", selector, where, err)
		}
		for i := range list.Items {
			each(&list.Items[i])
		}
		if list.Continue == "" {
			return nil
		}
		opts.Continue = list.Continue
	}
}

// FindPod resolves what a person typed to one Kafka pod. namespace ""
// searches every allowed namespace (KAFKA_NAMESPACES; all when empty). name
// is either a full pod name or a short one such as "broker-0" that ends
// exactly one Kafka pod's name on a dash boundary ("foobar-kafka-broker-0").
// An exact name wins over suffix matches.
//
// Errors: ErrInvalidName and ErrNamespaceNotAllowed before any API call;
// a *LookupError (ErrPodNotFound with the closest candidates, ErrAmbiguous
// with every match); ErrNotKafkaPod for an existing non-Kafka pod named in
// full with its namespace. Cost: one pod get when the namespace and full
// name are given, else one list per selector and namespace.
func (c *Client) FindPod(ctx context.Context, namespace, name string) (ns, pod string, err error) {
	if err := c.checkTarget(namespace, name); err != nil {
		return "", "", err
	}
	pods, err := c.listKafkaPods(ctx, namespace)
	if err != nil {
		return "", "", err
	}
	p, err := c.matchPod(ctx, pods, namespace, name)
	if err != nil {
		return "", "", err
	}
	c.handoff.put(p)
	return p.Namespace, p.Name, nil
}

// matchPod picks the pod name means among pods (the Kafka pods of
// namespace, "" for all in scope): an exact name, else the one pod whose
// name ends in "-"+name. Its errors are FindPod's.
func (c *Client) matchPod(ctx context.Context, pods []corev1.Pod, namespace, name string) (*corev1.Pod, error) {
	var exact, suffix []int
	for i, p := range pods {
		switch {
		case p.Name == name:
			exact = append(exact, i)
		case strings.HasSuffix(p.Name, "-"+name):
			suffix = append(suffix, i)
		}
	}
	for _, matches := range [][]int{exact, suffix} {
		switch len(matches) {
		case 0:
			continue
		case 1:
			return &pods[matches[0]], nil
		default:
			refs := make([]PodRef, len(matches))
			for j, i := range matches {
				refs[j] = PodRef{Namespace: pods[i].Namespace, Name: pods[i].Name, UID: pods[i].UID}
			}
			return nil, &LookupError{Kind: ErrAmbiguous, Query: name, Namespace: namespace, Candidates: refs}
		}
	}
	if namespace != "" {
		// Only on this error path: tell "not a Kafka pod" from "no such pod".
		if p, err := c.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{}); err == nil && p.Name == name {
			return nil, fmt.Errorf("%w: pod %s/%s does not carry the labels of a Kafka pod", ErrNotKafkaPod, namespace, name)
		}
	}
	return nil, &LookupError{Kind: ErrPodNotFound, Query: name, Namespace: namespace, Candidates: closestPods(name, pods)}
}

// checkTarget validates a namespace ("" allowed) and a pod name before any
// API call, and enforces KAFKA_NAMESPACES.
func (c *Client) checkTarget(namespace, name string) error {
	if err := ValidateTarget(namespace, name); err != nil {
		return err
	}
	if namespace != "" && !c.NamespaceAllowed(namespace) {
		return fmt.Errorf("%w: namespace %s is outside the namespaces this bot may read (KAFKA_NAMESPACES)",
			ErrNamespaceNotAllowed, quoteForUser(namespace))
	}
	return nil
}

// ValidateTarget checks what a person typed before anything is sent
// anywhere: namespace ("" allowed) must be a DNS label, name a DNS
// subdomain (which rules out paths, spaces, shell metacharacters, upper
// case and non-ASCII look-alikes). Errors wrap ErrInvalidName and quote the
// input escaped and cut to 40 bytes.
func ValidateTarget(namespace, name string) error {
	if namespace != "" && (len(namespace) > validation.DNS1123LabelMaxLength || len(validation.IsDNS1123Label(namespace)) > 0) {
		return fmt.Errorf("%w: namespace %s: want a lowercase DNS label (a-z, 0-9, '-'), at most %d characters",
			ErrInvalidName, quoteForUser(namespace), validation.DNS1123LabelMaxLength)
	}
	if name == "" {
		return fmt.Errorf("%w: empty pod name", ErrInvalidName)
	}
	if len(name) > validation.DNS1123SubdomainMaxLength || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return fmt.Errorf("%w: pod %s: want a lowercase DNS name (a-z, 0-9, '-', '.'), at most %d characters",
			ErrInvalidName, quoteForUser(name), validation.DNS1123SubdomainMaxLength)
	}
	return nil
}

// quoteForUser quotes untrusted input for an error message: cut to 40
// bytes, non-ASCII and control characters escaped (so a Cyrillic look-alike
// shows up as \u043e instead of passing for a Latin letter).
func quoteForUser(s string) string {
	const max = 40
	if len(s) > max {
		return strconv.QuoteToASCII(strings.ToValidUTF8(s[:max], "")) + fmt.Sprintf(" (%d bytes, cut)", len(s))
	}
	return strconv.QuoteToASCII(s)
}

// closestPods returns up to maxLookupCandidates pods whose names are
// closest to query: the edit distance between query and the pod name's
// best dash-boundary suffix, ties broken by namespace and name.
func closestPods(query string, pods []corev1.Pod) []PodRef {
	type scored struct {
		ref  PodRef
		dist int
	}
	all := make([]scored, 0, len(pods))
	for _, p := range pods {
		all = append(all, scored{PodRef{Namespace: p.Namespace, Name: p.Name, UID: p.UID}, suffixDistance(query, p.Name)})
	}
	slices.SortStableFunc(all, func(a, b scored) int { return a.dist - b.dist })
	out := make([]PodRef, 0, min(len(all), maxLookupCandidates))
	for i := 0; i < len(all) && i < maxLookupCandidates; i++ {
		out = append(out, all[i].ref)
	}
	return out
}

// suffixDistance is the smallest edit distance between query and name or
// any suffix of name that starts after a dash.
func suffixDistance(query, name string) int {
	best := editDistance(query, name)
	for i := 0; i < len(name); i++ {
		if name[i] == '-' {
			best = min(best, editDistance(query, name[i+1:]))
		}
	}
	return best
}

// editDistance is the Levenshtein distance of two ASCII strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// comparePodNames orders pod names naturally: "broker-2" before
// "broker-10" when the names differ only in their trailing number.
func comparePodNames(a, b string) int {
	ap, an, aok := splitOrdinal(a)
	bp, bn, bok := splitOrdinal(b)
	if aok && bok && ap == bp && an != bn {
		if an < bn {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// splitOrdinal splits "name-12" into ("name", 12, true).
func splitOrdinal(name string) (string, int, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return name, 0, false
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 0 {
		return name, 0, false
	}
	return name[:i], n, true
}
