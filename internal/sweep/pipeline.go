// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package sweep

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/metrics"
)

// RuleUnclassified is the rule of an alert about an unhealthy pod for which
// the engine found nothing.
const RuleUnclassified = "unclassified"

// diagnosis is the cached result of reading and diagnosing one unhealthy
// pod. It is reused until the pod restarts again (or is replaced), so a
// crash-looping pod costs one log read per crash, not one per sweep.
type diagnosis struct {
	uid      types.UID
	restarts int32
	findings []diagnose.Finding
	snapshot diagnose.Snapshot
	readErr  string
}

// observed is one pod in the scope of an evaluation.
type observed struct {
	key kube.PodKey
	pod *corev1.Pod // nil when the pod is gone
	det Detection
}

// firingAlert is an alert firing in this evaluation, with its record.
type firingAlert struct {
	rec      *alertRecord
	alert    alert.Alert
	silenced bool
	// notify is set by the dedupe stage; changed and repeat say why.
	notify, changed, repeat bool
}

// evaluation is the work of one pass of the pipeline: the pods in scope,
// the alerts firing among them, and what the stages decided.
type evaluation struct {
	now   time.Time
	st    *state
	pods  map[kube.PodKey]*observed
	fire  []*firingAlert
	dirty bool
	// failed are pods to evaluate again with backoff (a notification failed).
	failed map[kube.PodKey]bool
	// recheck are pods that turned healthy: evaluate them after the grace.
	recheck []kube.PodKey
	// resolvedExternally are pods whose external alert (Alertmanager) just
	// resolved: once the pod is Ready or gone their alerts resolve without
	// waiting for the grace.
	resolvedExternally map[kube.PodKey]bool
}

// stage is one step of the alert pipeline. Stages run in order on the same
// evaluation; each has one job.
type stage interface {
	run(ctx context.Context, e *evaluation) error
}

// evaluate runs the pipeline on the given pods (all cached Kafka pods and
// every pod with an open alert when full). It returns the pods to retry.
func (s *Sweeper) evaluate(ctx context.Context, keys []kube.PodKey, full bool) (map[kube.PodKey]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.evaluateLocked(ctx, keys, full)
}

// evaluateLocked is evaluate for a caller holding s.mu.
func (s *Sweeper) evaluateLocked(ctx context.Context, keys []kube.PodKey, full bool) (map[kube.PodKey]bool, error) {
	return s.evaluateWith(ctx, keys, full, nil)
}

// evaluateWith is evaluateLocked with the pods whose external alert just
// resolved.
func (s *Sweeper) evaluateWith(ctx context.Context, keys []kube.PodKey, full bool, resolvedExternally map[kube.PodKey]bool) (map[kube.PodKey]bool, error) {
	if s.st == nil || s.leaderCtx == nil || s.leaderCtx.Err() != nil {
		return nil, alert.ErrNotLeader
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.leaderCtx, cancel)()

	if err := s.store.refresh(s.st); err != nil {
		s.log.Warn("reading silences from the state cache", "err", err)
	}
	e := &evaluation{now: s.clock.Now(), st: s.st, pods: map[kube.PodKey]*observed{}, failed: map[kube.PodKey]bool{},
		resolvedExternally: resolvedExternally}
	s.observe(e, keys, full)
	s.diagnoseUnhealthy(ctx, e)

	pipeline := []stage{
		recordStage{},
		silenceStage{},
		dedupeStage{repeat: s.opts.RepeatInterval},
		notifyStage{n: s.opts.Notifier, threshold: s.opts.GroupThreshold, log: s.log},
		resolveStage{n: s.opts.Notifier, grace: s.opts.ResolveGrace, log: s.log},
	}
	var errs []error
	for _, st := range pipeline {
		if err := st.run(ctx, e); err != nil {
			errs = append(errs, err)
		}
	}
	if e.dirty {
		if err := s.store.save(ctx, s.st, e.now); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range e.recheck {
		s.pods.Queue().AddAfter(k, s.opts.ResolveGrace)
	}
	if len(errs) > 0 {
		return e.failed, fmt.Errorf("sweep evaluation: %w", joinErrors(errs))
	}
	return e.failed, nil
}

// observe fills e.pods: the pods in scope, with their detection. A full
// evaluation covers every cached Kafka pod plus the pods of open alerts.
func (s *Sweeper) observe(e *evaluation, keys []kube.PodKey, full bool) {
	var pods []*corev1.Pod
	if full {
		pods = s.pods.List()
		for _, r := range e.st.Alerts {
			if r.firing() {
				keys = append(keys, kube.PodKey{Namespace: r.Namespace, Name: r.Pod})
			}
		}
	}
	for _, k := range keys {
		if pod, ok := s.pods.Get(k); ok {
			pods = append(pods, pod)
		} else {
			e.pods[k] = &observed{key: k}
		}
	}
	uids := map[types.UID]bool{}
	for _, pod := range pods {
		k := kube.PodKey{Namespace: pod.Namespace, Name: pod.Name}
		if o := e.pods[k]; o != nil && o.pod != nil {
			continue // listed and named
		}
		e.pods[k] = &observed{key: k, pod: pod, det: s.detector.Observe(pod, e.now)}
		uids[pod.UID] = true
	}
	if full {
		s.detector.Forget(uids)
	}
}

// diagnoseUnhealthy diagnoses every unhealthy pod in scope (reading it in
// full only when it restarted since the last diagnosis) and turns it into a
// firing alert. Healthy pods drop their cached diagnosis.
func (s *Sweeper) diagnoseUnhealthy(ctx context.Context, e *evaluation) {
	for _, k := range slices.SortedFunc(maps.Keys(e.pods), comparePodKeys) {
		o := e.pods[k]
		if o.pod == nil || !o.det.Unhealthy() {
			delete(s.diagnoses, k)
			continue
		}
		d, ok := s.diagnoses[k]
		if !ok || d.uid != o.pod.UID || d.restarts != o.det.Restarts {
			d = s.read(ctx, k, o)
			s.diagnoses[k] = d
		}
		a := newAlert(o, d)
		if h, ok := s.external[k]; ok {
			a.Channel, a.Source, a.SourceAlert = h.channel, h.source, h.sourceAlert
		}
		e.fire = append(e.fire, &firingAlert{alert: a})
	}
}

// read reads one pod in full (log tail included) and diagnoses it. When the
// read fails the diagnosis falls back to the cached pod status.
func (s *Sweeper) read(ctx context.Context, k kube.PodKey, o *observed) diagnosis {
	d := diagnosis{uid: o.pod.UID, restarts: o.det.Restarts}
	snap, err := s.opts.Reader.Snapshot(ctx, k.Namespace, k.Name)
	if err != nil {
		s.log.Warn("reading unhealthy pod; diagnosing from its status only", "pod", k.String(), "err", err)
		snap, _ = s.pods.StatusSnapshot(k)
		d.readErr = err.Error()
	}
	d.snapshot = snap
	d.findings = s.opts.Engine.Diagnose(snap)
	rule := RuleUnclassified
	if len(d.findings) > 0 {
		rule = d.findings[0].Rule
	}
	metrics.Diagnoses.WithLabelValues(rule).Inc()
	return d
}

// newAlert builds the firing alert of an unhealthy pod from its diagnosis.
func newAlert(o *observed, d diagnosis) alert.Alert {
	a := alert.Alert{
		Namespace: o.key.Namespace, Pod: o.key.Name, PodUID: string(o.pod.UID),
		KafkaCluster: cmp.Or(d.snapshot.KafkaCluster, kube.ClusterOf(o.pod)),
		Rule:         RuleUnclassified, Reason: o.det.Reason, Detail: o.det.Detail,
		Findings: d.findings, Snapshot: d.snapshot, ReadError: d.readErr,
	}
	if len(d.findings) > 0 {
		f := d.findings[0]
		a.Rule, a.Title, a.Severity = f.Rule, f.Title, f.Severity
	}
	a.Key = a.Namespace + "/" + a.Pod + "/" + a.Rule
	return a
}

// fingerprint identifies what an alert says, so a changed finding of the
// same rule is told from a repeat of the same one. Evidence lines are left
// out: they carry timestamps that differ on every crash.
func fingerprint(a alert.Alert) string {
	var b strings.Builder
	b.WriteString(a.Rule)
	if len(a.Findings) > 0 {
		f := a.Findings[0]
		fmt.Fprintf(&b, "|%s|%s|%t|%s|%s", f.Severity, f.Risk, f.Remedy.Automated, f.Remedy.Action, f.Remedy.Target)
		if f.Offsets != nil {
			b.WriteString("|local-divergence=" + strconv.FormatBool(f.Offsets.LocalDivergence))
		}
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:8])
}

// recordStage creates or updates the record of every firing alert: a new
// episode when the key was not firing, otherwise the latest pod details.
type recordStage struct{}

func (recordStage) run(_ context.Context, e *evaluation) error {
	for _, f := range e.fire {
		a := f.alert
		fp := fingerprint(a)
		r, ok := e.st.Alerts[a.Key]
		if !ok || !r.firing() {
			r = &alertRecord{Key: a.Key, Namespace: a.Namespace, Pod: a.Pod, Rule: a.Rule, StartsAt: e.now}
			e.st.Alerts[a.Key] = r
			e.dirty = true
		}
		if r.PodUID != a.PodUID || r.Fingerprint != fp || r.KafkaCluster != a.KafkaCluster || !r.HealthySince.IsZero() {
			r.PodUID, r.Fingerprint, r.KafkaCluster, r.HealthySince = a.PodUID, fp, a.KafkaCluster, time.Time{}
			r.UpdatedAt = e.now
			e.dirty = true
		}
		// Shown in messages but not worth a write on their own.
		r.Title, r.Severity, r.Reason, r.Detail = a.Title, a.Severity, a.Reason, a.Detail
		if r.NotifiedAt.IsZero() && f.alert.Channel != "" && r.Channel != f.alert.Channel {
			// Only before the first post: the message stays where it is.
			r.Channel, r.UpdatedAt = f.alert.Channel, e.now
			e.dirty = true
		}
		if r.NotifiedAt.IsZero() && f.alert.Source != "" && (r.Source != f.alert.Source || r.SourceAlert != f.alert.SourceAlert) {
			// Who raised it, likewise: the first post's words stay.
			r.Source, r.SourceAlert, r.UpdatedAt = f.alert.Source, f.alert.SourceAlert, e.now
			e.dirty = true
		}
		f.rec = r
		f.alert.StartsAt, f.alert.Channel = r.StartsAt, r.Channel
		f.alert.Source, f.alert.SourceAlert = r.Source, r.SourceAlert
	}
	return nil
}

// silenceStage marks the alerts an active silence covers.
type silenceStage struct{}

func (silenceStage) run(_ context.Context, e *evaluation) error {
	for _, f := range e.fire {
		f.silenced = e.st.silencedBy(f.rec, e.now) != nil
	}
	return nil
}

// dedupeStage decides which alerts to notify: never notified, finding
// changed since the last notification, or repeat interval passed.
type dedupeStage struct{ repeat time.Duration }

func (d dedupeStage) run(_ context.Context, e *evaluation) error {
	for _, f := range e.fire {
		r := f.rec
		switch {
		case f.silenced:
		case r.NotifiedAt.IsZero():
			f.notify = true
		case r.NotifiedFingerprint != r.Fingerprint:
			f.notify, f.changed = true, true
		case e.now.Sub(r.NotifiedAt) >= d.repeat:
			f.notify, f.repeat = true, true
		}
		f.alert.Changed, f.alert.Repeat = f.changed, f.repeat
	}
	return nil
}

// notifyStage groups the alerts to notify by cluster (a storm of at least
// threshold pods, or a cluster whose group is still open, becomes one
// grouped alert), sends them, and records what was notified (set-notified).
type notifyStage struct {
	n         Notifier
	threshold int
	log       interface {
		Warn(msg string, args ...any)
	}
}

func (s notifyStage) run(ctx context.Context, e *evaluation) error {
	byCluster := map[string][]*firingAlert{}
	var alone []*firingAlert
	for _, f := range e.fire {
		if f.notify && f.alert.Channel != "" {
			alone = append(alone, f) // a routed alert posts where it was routed, on its own
			continue
		}
		if f.notify {
			gk := alert.KafkaClusterKey(f.alert.Namespace, f.alert.KafkaCluster)
			byCluster[gk] = append(byCluster[gk], f)
		}
	}
	var errs []error
	for _, f := range alone {
		if err := s.notifyOne(ctx, e, f); err != nil {
			errs = append(errs, err)
		}
	}
	for _, gk := range slices.Sorted(maps.Keys(byCluster)) {
		members := byCluster[gk]
		g := e.st.Groups[gk]
		open := g != nil && g.ResolvedAt.IsZero()
		if open || distinctPods(members) >= s.threshold {
			if err := s.notifyGroup(ctx, e, gk, members); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		for _, f := range members {
			if err := s.notifyOne(ctx, e, f); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return joinErrors(errs)
}

func (s notifyStage) notifyOne(ctx context.Context, e *evaluation, f *firingAlert) error {
	r := f.rec
	if f.changed && !r.Ref.IsZero() && r.Group == "" {
		old := r.alert()
		old.Resolution, old.ResolvedAt = alert.ResolutionSuperseded, e.now
		if err := s.n.Resolve(ctx, r.Ref, old); err != nil {
			s.log.Warn("marking the superseded alert", "alert", r.Key, "err", err)
		}
	}
	ref, err := s.n.Notify(ctx, f.alert)
	if err != nil {
		e.failed[kube.PodKey{Namespace: r.Namespace, Name: r.Pod}] = true
		return fmt.Errorf("notifying %s: %w", r.Key, err)
	}
	setNotified(e, f, ref, "")
	metrics.Alerts.WithLabelValues(notifyState(f)).Inc()
	return nil
}

func (s notifyStage) notifyGroup(ctx context.Context, e *evaluation, gk string, members []*firingAlert) error {
	first := members[0].alert
	g := e.st.Groups[gk]
	if g == nil || !g.ResolvedAt.IsZero() {
		g = &groupRecord{Key: gk, Namespace: first.Namespace, KafkaCluster: first.KafkaCluster, OpenedAt: e.now}
	}
	slices.SortFunc(members, func(a, b *firingAlert) int { return strings.Compare(a.alert.Key, b.alert.Key) })
	grp := alert.Group{Key: gk, Namespace: g.Namespace, KafkaCluster: g.KafkaCluster, Ref: g.Ref}
	for _, f := range members {
		f.alert.Group = gk
		grp.Alerts = append(grp.Alerts, f.alert)
	}
	grp.Firing = len(members)
	for _, r := range e.st.Alerts {
		if r.firing() && r.Group == gk && !slices.ContainsFunc(members, func(f *firingAlert) bool { return f.rec == r }) {
			grp.Firing++
		}
	}
	ref, err := s.n.NotifyGroup(ctx, grp)
	if err != nil {
		for _, f := range members {
			e.failed[kube.PodKey{Namespace: f.rec.Namespace, Name: f.rec.Pod}] = true
		}
		return fmt.Errorf("notifying the group of %s (%d alerts): %w", gk, len(members), err)
	}
	g.Ref, g.UpdatedAt = ref, e.now
	e.st.Groups[gk] = g
	for _, f := range members {
		setNotified(e, f, ref, gk)
	}
	metrics.Alerts.WithLabelValues("grouped").Inc()
	return nil
}

// setNotified records a successful notification.
func setNotified(e *evaluation, f *firingAlert, ref alert.MessageRef, group string) {
	r := f.rec
	r.NotifiedAt, r.NotifiedFingerprint, r.Ref, r.Group = e.now, r.Fingerprint, ref, group
	r.UpdatedAt = e.now
	e.dirty = true
}

func notifyState(f *firingAlert) string {
	switch {
	case f.changed:
		return "changed"
	case f.repeat:
		return "repeated"
	}
	return "fired"
}

// resolveStage resolves the open alerts of the pods in scope that no longer
// fire them: at once when the pod fires another rule instead (superseded),
// after the grace period when the pod is Ready or gone. Groups whose last
// member resolved are resolved too.
type resolveStage struct {
	n     Notifier
	grace time.Duration
	log   interface {
		Warn(msg string, args ...any)
	}
}

func (s resolveStage) run(ctx context.Context, e *evaluation) error {
	firingKeys := map[string]bool{}
	firingPods := map[kube.PodKey]bool{}
	for _, f := range e.fire {
		firingKeys[f.rec.Key] = true
		firingPods[kube.PodKey{Namespace: f.rec.Namespace, Name: f.rec.Pod}] = true
	}
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(e.st.Alerts)) {
		r := e.st.Alerts[key]
		pk := kube.PodKey{Namespace: r.Namespace, Name: r.Pod}
		o, inScope := e.pods[pk]
		if !r.firing() || !inScope || firingKeys[key] {
			continue
		}
		var res alert.Resolution
		switch {
		case firingPods[pk]:
			res = alert.ResolutionSuperseded
		case o.pod != nil && !o.det.Ready:
			if !r.HealthySince.IsZero() { // crashed again, or still starting
				r.HealthySince, r.UpdatedAt = time.Time{}, e.now
				e.dirty = true
			}
			continue
		default:
			if r.HealthySince.IsZero() {
				r.HealthySince, r.UpdatedAt = e.now, e.now
				e.dirty = true
				e.recheck = append(e.recheck, pk)
			}
			if e.now.Sub(r.HealthySince) < s.grace && !e.resolvedExternally[pk] {
				continue
			}
			res = alert.ResolutionRecovered
			if o.pod == nil {
				res = alert.ResolutionPodGone
			}
		}
		if err := s.resolve(ctx, e, r, res); err != nil {
			errs = append(errs, err)
		}
	}
	s.resolveGroups(ctx, e, &errs)
	return joinErrors(errs)
}

func (s resolveStage) resolve(ctx context.Context, e *evaluation, r *alertRecord, res alert.Resolution) error {
	r.ResolvedAt, r.Resolution, r.UpdatedAt = e.now, res, e.now
	e.dirty = true
	if r.NotifiedAt.IsZero() {
		return nil // never posted (silenced throughout): nothing to update
	}
	if err := s.n.Resolve(ctx, r.Ref, r.alert()); err != nil {
		// The alert stays resolved: a failed message update is not worth
		// re-alerting; the next repeat or a new episode posts again.
		return fmt.Errorf("resolving %s: %w", r.Key, err)
	}
	metrics.Alerts.WithLabelValues("resolved").Inc()
	return nil
}

// resolveGroups resolves the open groups with no firing member left.
func (s resolveStage) resolveGroups(ctx context.Context, e *evaluation, errs *[]error) {
	for _, gk := range slices.Sorted(maps.Keys(e.st.Groups)) {
		g := e.st.Groups[gk]
		if !g.ResolvedAt.IsZero() {
			continue
		}
		var members []alert.Alert
		open := false
		for _, r := range e.st.Alerts {
			if r.Group != gk {
				continue
			}
			if r.firing() {
				open = true
				break
			}
			members = append(members, r.alert())
		}
		if open {
			continue
		}
		g.ResolvedAt, g.UpdatedAt = e.now, e.now
		e.dirty = true
		slices.SortFunc(members, func(a, b alert.Alert) int { return strings.Compare(a.Key, b.Key) })
		if err := s.n.ResolveGroup(ctx, g.Ref, alert.Group{Key: gk, Namespace: g.Namespace, KafkaCluster: g.KafkaCluster, Alerts: members, Ref: g.Ref}); err != nil {
			*errs = append(*errs, fmt.Errorf("resolving the group of %s: %w", gk, err))
		}
	}
}

// summary returns the firing alerts for the periodic summary, and the
// leader's context to post it with.
func (s *Sweeper) summary() (alert.Summary, context.Context, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st == nil || s.leaderCtx == nil {
		return alert.Summary{}, nil, alert.ErrNotLeader
	}
	now := s.clock.Now()
	sum := alert.Summary{At: now, KafkaPods: len(s.pods.List())}
	for _, key := range slices.Sorted(maps.Keys(s.st.Alerts)) {
		r := s.st.Alerts[key]
		if !r.firing() {
			continue
		}
		a := r.alert()
		if d, ok := s.diagnoses[kube.PodKey{Namespace: r.Namespace, Name: r.Pod}]; ok {
			a.Findings, a.Snapshot = d.findings, d.snapshot
		}
		if s.st.silencedBy(r, now) != nil {
			sum.Silenced++
		}
		sum.Firing = append(sum.Firing, a)
	}
	return sum, s.leaderCtx, nil
}

func distinctPods(fs []*firingAlert) int {
	pods := map[string]bool{}
	for _, f := range fs {
		pods[f.alert.PodKey()] = true
	}
	return len(pods)
}

func comparePodKeys(a, b kube.PodKey) int {
	return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

// joinErrors joins errs (nil when there is none).
func joinErrors(errs []error) error { return errors.Join(errs...) }
