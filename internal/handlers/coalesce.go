// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/command"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/metrics"
	"github.com/kafka-chatops/kafkabot/internal/slacktransport"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
)

// Sharing one diagnosis among the people who ask about the same pod.
//
// When a broker falls over, many people ask about it within seconds. A
// diagnosis is keyed by the pod's namespace, name, UID and restart count
// (from the pod list that resolved the name): requests with the same key
// that arrive while it runs, or within the share window after it finished,
// get its answer without a second set of Kubernetes reads. A new pod (a
// repair recreates it) or a new crash (restart count) is a new key, so it
// is diagnosed afresh. Failures are shared only with the requests that
// were waiting for them, never kept.
//
// Each requester is answered: in a channel where the diagnosis is not yet
// posted it is posted for them (their own Approve token); in a channel
// where it is, they are shown a link to that message.

// defaultShareWindow is how long a finished diagnosis answers new requests.
const defaultShareWindow = time.Minute

// maxShared bounds the diagnoses kept for sharing.
const maxShared = 64

// shareKey identifies one crash of one pod instance, in its cluster.
type shareKey struct {
	cluster, namespace, pod, uid string
	restarts                     int32
}

func shareKeyOf(cluster string, status diagnose.Snapshot) shareKey {
	k := shareKey{cluster: cluster, namespace: status.Namespace, pod: status.Pod, uid: status.UID}
	if c := status.Kafka(); c != nil {
		k.restarts = c.RestartCount
	} else {
		for _, c := range status.Containers {
			k.restarts += c.RestartCount
		}
	}
	return k
}

// sharedDiagnosis is one diagnosis and who it answered.
type sharedDiagnosis struct {
	key shareKey
	// m is the cluster the pod is in.
	m    *member
	done chan struct{} // closed when snap, findings and err are set
	// Set once done: the snapshot (without the log text, which findings
	// quote as evidence), the findings, or the error that ended it.
	snap     diagnose.Snapshot
	findings []diagnose.Finding
	err      error
	finished time.Time
	// waiters joined while it ran (guarded by coalescer.mu, nil once done).
	waiters []slashRequest
	// posts are its messages, by channel (guarded by coalescer.mu).
	posts map[string]*channelPost
}

// channelPost is the diagnosis' message in one channel.
type channelPost struct {
	channel   string
	ready     chan struct{} // closed once ts and ok are set
	ts        string
	ok        bool
	requester string
	at        time.Time
}

// coalescer holds the diagnoses running or recently finished.
type coalescer struct {
	mu      sync.Mutex
	window  time.Duration // < 0: nothing is shared
	now     func() time.Time
	entries map[shareKey]*sharedDiagnosis
}

func newCoalescer(window time.Duration, now func() time.Time) *coalescer {
	return &coalescer{window: window, now: now, entries: map[shareKey]*sharedDiagnosis{}}
}

// joinRole says what a request does with the diagnosis join returned.
type joinRole int

const (
	roleLead   joinRole = iota // run it (and answer the waiters after)
	roleWait                   // it runs: the leader answers this request
	roleShared                 // it is done: answer from it now
)

// join finds or starts the diagnosis for key on behalf of s.
func (c *coalescer) join(key shareKey, s slashRequest, m *member) (*sharedDiagnosis, joinRole) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fresh := &sharedDiagnosis{key: key, m: m, done: make(chan struct{}), posts: map[string]*channelPost{}}
	if c.window < 0 {
		return fresh, roleLead
	}
	now := c.now()
	var oldest *sharedDiagnosis
	for k, d := range c.entries {
		if isClosed(d.done) && now.Sub(d.finished) > c.window {
			delete(c.entries, k)
			continue
		}
		if isClosed(d.done) && (oldest == nil || d.finished.Before(oldest.finished)) {
			oldest = d
		}
	}
	if d, ok := c.entries[key]; ok {
		if !isClosed(d.done) {
			d.waiters = append(d.waiters, s)
			return d, roleWait
		}
		return d, roleShared
	}
	if len(c.entries) >= maxShared {
		if oldest == nil {
			return fresh, roleLead // all running: this one is not shared
		}
		delete(c.entries, oldest.key)
	}
	c.entries[key] = fresh
	return fresh, roleLead
}

// finish records the leader's result and returns the requests that waited
// for it. A failure is not kept for later requests.
func (c *coalescer) finish(d *sharedDiagnosis, snap diagnose.Snapshot, findings []diagnose.Finding, err error) []slashRequest {
	snap.Log = "" // the findings quote what matters; the tail would pin up to LOG_TAIL_BYTES per entry
	c.mu.Lock()
	defer c.mu.Unlock()
	d.snap, d.findings, d.err, d.finished = snap, findings, err, c.now()
	if err != nil && c.entries[d.key] == d {
		delete(c.entries, d.key)
	}
	w := d.waiters
	d.waiters = nil
	close(d.done)
	return w
}

// claimChannel returns the diagnosis' message in channel and whether this
// caller must post it (the first to claim the channel).
func (c *coalescer) claimChannel(d *sharedDiagnosis, channel string) (*channelPost, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := d.posts[channel]; ok {
		return p, false
	}
	p := &channelPost{channel: channel, ready: make(chan struct{})}
	d.posts[channel] = p
	return p, true
}

// posted records the outcome of a claimed channel's post.
func (c *coalescer) posted(p *channelPost, ts string, ok bool, requester string) {
	c.mu.Lock()
	p.ts, p.ok, p.requester, p.at = ts, ok, requester, c.now()
	c.mu.Unlock()
	close(p.ready)
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// runDiagnose answers /kafka diagnose: it resolves the name (one shared pod
// list), then runs the pod's diagnosis or joins the one running or
// recently finished for the same pod instance and crash.
func (b *Bot) runDiagnose(ctx context.Context, s slashRequest, cmd command.Command) {
	t, ok := b.resolveTarget(ctx, s, cmd)
	if !ok {
		return
	}
	if len(t.unchecked) > 0 {
		b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.OnlyMatch(t.m.Name+"/"+t.status.Namespace+"/"+t.status.Pod, t.unchecked))
	}
	status, read := t.status, t.read
	d, role := b.shared.join(shareKeyOf(t.m.Name, status), s, t.m)
	switch role {
	case roleWait:
		b.log.Debug("joined a running diagnosis", "user", s.User, "namespace", status.Namespace, "pod", status.Pod)
		return // its leader queues this request's answer
	case roleShared:
		metrics.Commands.WithLabelValues(string(command.VerbDiagnose), "shared").Inc()
		b.answer(ctx, d, s)
		return
	}
	snap, err := read(ctx)
	var findings []diagnose.Finding
	if err == nil {
		if snap.Namespace == "" {
			snap.Namespace = status.Namespace
		}
		if snap.Pod == "" {
			snap.Pod = status.Pod
		}
		findings = b.opts.Diagnoser.Diagnose(snap)
		rule := "none"
		if len(findings) > 0 {
			rule = findings[0].Rule
		}
		metrics.Diagnoses.WithLabelValues(rule).Inc()
	} else {
		b.log.Error("reading pod failed", "cluster", t.m.Name, "namespace", status.Namespace, "pod", status.Pod, "error", err)
	}
	for _, w := range b.shared.finish(d, snap, findings, err) {
		metrics.Commands.WithLabelValues(string(command.VerbDiagnose), "shared").Inc()
		b.queue.RunOwed(w.User, func() {
			ctx, cancel := context.WithTimeout(b.runCtx, commandTimeout)
			defer cancel()
			b.answer(ctx, d, w)
		})
	}
	b.answer(ctx, d, s)
}

// answer gives s the finished diagnosis d: the error, a new message in a
// channel where d is not posted yet, or a link to d's message there.
func (b *Bot) answer(ctx context.Context, d *sharedDiagnosis, s slashRequest) {
	if d.err != nil {
		b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.CannotRead(b.podLabel(d.m, d.key.namespace, d.key.pod), d.err.Error()))
		return
	}
	p, mine := b.shared.claimChannel(d, s.Channel)
	if !mine {
		select {
		case <-p.ready:
		case <-ctx.Done():
			tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout*5)
			defer cancel()
			b.tell(tctx, s.Channel, s.User, s.ResponseURL, slackview.GaveUpWaiting)
			return
		}
		if p.ok {
			b.tell(ctx, s.Channel, s.User, s.ResponseURL, b.sharedText(d, p))
			b.log.Info("diagnosis shared", "audit", true, "user", s.User, "channel", s.Channel, "ts", p.ts,
				"namespace", d.key.namespace, "pod", d.key.pod, "asked_by", p.requester)
			return
		}
		// That post failed: try this requester's own.
		b.postDiagnosis(ctx, d, s)
		return
	}
	ts, ok := b.postDiagnosis(ctx, d, s)
	b.shared.posted(p, ts, ok, s.User)
}

// sharedText is the link shown to a requester whose channel already has
// the diagnosis.
func (b *Bot) sharedText(d *sharedDiagnosis, p *channelPost) string {
	age := b.clock().Sub(d.finished).Round(time.Second)
	link := b.workspaceURL + "archives/" + p.channel + "/p" + strings.Replace(p.ts, ".", "", 1)
	return slackview.SharedDiagnosis(b.podLabel(d.m, d.key.namespace, d.key.pod), age, p.requester, d.key.restarts, link)
}

// postDiagnosis renders d for s (their Approve token when repairable) and
// posts it in s's channel; it tells s what happened when it cannot. It
// returns the message ts and whether it was posted.
func (b *Bot) postDiagnosis(ctx context.Context, d *sharedDiagnosis, s slashRequest) (string, bool) {
	snap, findings := d.snap, d.findings
	rule := "none"
	if len(findings) > 0 {
		rule = findings[0].Rule
	}
	now := b.clock()
	view := slackview.Diagnosis{ClusterName: d.m.label(), Snapshot: snap, Findings: findings, Requester: s.User, Now: now}
	if len(findings) > 0 && slackview.Repairable(snap, findings[0]) {
		view.Token, view.ExpiresAt = b.offer(d.m.Name, snap, findings[0], s.User, s.Channel, s.Team, now)
	}
	msg := view.Message()
	fallback := msg.Fallback
	ts, err := b.poster.Post(ctx, s.Channel, "", msg.Blocks, fallback)
	if err != nil {
		if slacktransport.CannotPostHere(err) {
			b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.NotInChannel(slacktransport.ErrorCode(err))+"\n"+fallback)
		} else {
			// Slack kept failing: the user must not be left with "Diagnosing…".
			b.tell(ctx, s.Channel, s.User, s.ResponseURL, slackview.CannotPostDiagnosis(err.Error(), fallback))
		}
		return "", false
	}
	b.postDetails(ctx, s.Channel, ts, view.Details())
	b.log.Info("diagnosis posted", "audit", true, "user", s.User, "channel", s.Channel, "ts", ts,
		"cluster", d.m.Name, "namespace", snap.Namespace, "pod", snap.Pod, "rule", rule, "findings", len(findings), "approval_offered", view.Token != "")
	return ts, true
}

// podLabel names a pod for messages: namespace/pod, prefixed by its
// cluster on a multi-cluster bot.
func (b *Bot) podLabel(m *member, namespace, pod string) string {
	return b.inCluster(m, namespace+"/"+pod)
}
