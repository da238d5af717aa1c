// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package sweep finds crash-looping Kafka pods before anyone asks and
// alerts about them, the way Alertmanager does: detection from a pod
// informer (a pod in a crash loop, OOMKilled, or restarting too often is
// diagnosed at once; see Detector.Observe), a scheduled full sweep from
// the informer's cache as a safety net, and an alert pipeline of small
// stages (record, silence, dedupe, group, notify and set-notified,
// resolve). The alert
// state and silences live in a ConfigMap, so a restart does not re-alert,
// and only the leader replica (a Lease) sweeps and alerts.
package sweep

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"

	"github.com/kafka-chatops/kafkabot/internal/alert"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// Defaults of Options.
const (
	DefaultSchedule         = "@every 5m"
	DefaultRepeatInterval   = 4 * time.Hour
	DefaultResolveGrace     = 5 * time.Minute
	DefaultGroupThreshold   = 3
	DefaultGroupWait        = 10 * time.Second
	DefaultRestartThreshold = 3
	DefaultRestartWindow    = 10 * time.Minute
	DefaultStateName        = "kafkabot-alert-state"
	DefaultLeaseName        = "kafkabot-leader"
	DefaultLeaseDuration    = 15 * time.Second
	DefaultRenewDeadline    = 10 * time.Second
	DefaultRetryPeriod      = 2 * time.Second
)

// SummaryMode says when a scheduled sweep posts its summary.
type SummaryMode string

// Summary modes.
const (
	SummaryIfUnhealthy SummaryMode = "unhealthy" // only when something fires (the default)
	SummaryAlways      SummaryMode = "always"
	SummaryNever       SummaryMode = "never"
)

// Diagnoser is the diagnosis engine (*diagnose.Engine).
type Diagnoser interface {
	Diagnose(s diagnose.Snapshot) []diagnose.Finding
}

// SnapshotReader reads everything about one pod, log tail included
// (*kube.Client).
type SnapshotReader interface {
	Snapshot(ctx context.Context, namespace, pod string) (diagnose.Snapshot, error)
}

// Options configure a Sweeper. Zero values take the defaults above.
type Options struct {
	// Client is the cluster access; required.
	Client *kube.Client
	// Engine diagnoses unhealthy pods; nil means diagnose.Default().
	Engine Diagnoser
	// Reader reads an unhealthy pod in full; nil means Client.
	Reader SnapshotReader
	// Notifier delivers alerts; required.
	Notifier Notifier
	// Schedule is the robfig/cron spec of full sweeps (SWEEP_SCHEDULE).
	Schedule string
	// RepeatInterval is how long before an unchanged alert is posted again.
	RepeatInterval time.Duration
	// ResolveGrace is how long a pod must stay Ready (or absent) before its
	// alert resolves.
	ResolveGrace time.Duration
	// GroupThreshold is how many pods of one cluster alerting in one
	// evaluation make one grouped alert instead of one alert each.
	GroupThreshold int
	// GroupWait is how long the watch path gathers changed pods before
	// evaluating them together, so a cluster-wide crash arrives as one
	// evaluation.
	GroupWait time.Duration
	// RestartThreshold and RestartWindow: more than RestartThreshold
	// restarts within RestartWindow alert even without a crash loop.
	RestartThreshold int
	RestartWindow    time.Duration
	// Summary says when scheduled sweeps post a summary.
	Summary SummaryMode
	// StateNamespace is the bot's own namespace (POD_NAMESPACE), home of the
	// state ConfigMap and the leader Lease; required.
	StateNamespace string
	// StateName names the state ConfigMap.
	StateName string
	// LeaderElection makes only the holder of the Lease LeaseName sweep and
	// alert. Without it this replica always does.
	LeaderElection bool
	LeaseName      string
	// LeaseClient holds the leader Lease (in StateNamespace); nil means
	// Client's cluster. A bot serving several clusters keeps every
	// cluster's leader Lease in its home cluster (internal/serve), so
	// leadership belongs to the bot deployment, not to a target cluster.
	LeaseClient coordinationv1client.CoordinationV1Interface
	// Identity names this replica in the Lease; empty means the host name.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	// Clock is the sweep's clock (alert times, grace, repeat, workqueue);
	// nil means the real clock. Leader election and the cron schedule
	// always run on the real clock.
	Clock clock.WithTicker
	// Logger receives the sweep's logs; nil means slog.Default().
	Logger *slog.Logger
}

func (o *Options) setDefaults() error {
	if o.Client == nil {
		return errors.New("sweep: Options.Client is required")
	}
	if o.Notifier == nil {
		return errors.New("sweep: Options.Notifier is required")
	}
	if o.StateNamespace == "" {
		return errors.New("sweep: Options.StateNamespace (POD_NAMESPACE) is required")
	}
	if o.Engine == nil {
		o.Engine = diagnose.Default()
	}
	if o.Reader == nil {
		o.Reader = o.Client
	}
	o.Schedule = cmp.Or(o.Schedule, DefaultSchedule)
	o.RepeatInterval = cmp.Or(o.RepeatInterval, DefaultRepeatInterval)
	o.ResolveGrace = cmp.Or(o.ResolveGrace, DefaultResolveGrace)
	o.GroupThreshold = cmp.Or(o.GroupThreshold, DefaultGroupThreshold)
	if o.GroupWait < 0 {
		o.GroupWait = 0
	}
	o.RestartThreshold = cmp.Or(o.RestartThreshold, DefaultRestartThreshold)
	o.RestartWindow = cmp.Or(o.RestartWindow, DefaultRestartWindow)
	o.Summary = cmp.Or(o.Summary, SummaryIfUnhealthy)
	switch o.Summary {
	case SummaryIfUnhealthy, SummaryAlways, SummaryNever:
	default:
		return fmt.Errorf("sweep: summary mode %q: want unhealthy, always or never", o.Summary)
	}
	o.StateName = cmp.Or(o.StateName, DefaultStateName)
	o.LeaseName = cmp.Or(o.LeaseName, DefaultLeaseName)
	o.LeaseDuration = cmp.Or(o.LeaseDuration, DefaultLeaseDuration)
	o.RenewDeadline = cmp.Or(o.RenewDeadline, DefaultRenewDeadline)
	o.RetryPeriod = cmp.Or(o.RetryPeriod, DefaultRetryPeriod)
	if o.Identity == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("sweep: no Identity given and no host name: %w", err)
		}
		o.Identity = host
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if _, err := cron.ParseStandard(o.Schedule); err != nil {
		return fmt.Errorf("sweep: schedule %q: %w", o.Schedule, err)
	}
	return nil
}

// Sweeper watches Kafka pods and alerts about the unhealthy ones. Create it
// with New and run it with Run; Silence and Silences work on every replica.
type Sweeper struct {
	opts  Options
	clock clock.WithTicker
	log   *slog.Logger
	pods  *kube.PodInformer
	cm    *kube.StateConfigMap
	// busy counts batches the worker took from the queue and has not
	// finished (tests wait for it to reach zero).
	busy atomic.Int32
	// stalled is why the sweep cannot start (its alert state cannot be
	// read), nil once it can; warned makes its warning appear once.
	stalled atomic.Pointer[string]
	warned  atomic.Bool

	// term is held by the leading term in progress, so that a new term
	// never overlaps the end of the previous one; terms counts them for Run.
	term  sync.Mutex
	terms sync.WaitGroup

	// mu serialises evaluations and state changes; it guards everything below.
	mu        sync.Mutex
	store     *stateStore
	st        *state          // nil unless leading
	leaderCtx context.Context // ends when leadership ends; nil unless leading
	detector  *Detector
	diagnoses map[kube.PodKey]diagnosis
	// external are the pods an external alert (Alertmanager) fires for.
	external map[kube.PodKey]externalHint
}

// New builds a Sweeper. Nothing talks to the API server before Run.
func New(opts Options) (*Sweeper, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	pods, err := opts.Client.NewPodInformer(kube.PodInformerOptions{Clock: opts.Clock})
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	cm := opts.Client.NewStateConfigMap(opts.StateNamespace, opts.StateName)
	s := &Sweeper{
		opts:      opts,
		clock:     opts.Clock,
		log:       opts.Logger.With("component", "sweep", "identity", opts.Identity),
		pods:      pods,
		cm:        cm,
		store:     &stateStore{cm: cm},
		detector:  NewDetector(opts.RestartThreshold, opts.RestartWindow),
		diagnoses: map[kube.PodKey]diagnosis{},
		external:  map[kube.PodKey]externalHint{},
	}
	if err := cm.OnListError(s.stateUnreadable); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	return s, nil
}

// stateUnreadable is told each error reading the alert state ConfigMap.
// Before the first successful read the sweep cannot start: say why once,
// as a warning naming the namespace and what to install (the logger names
// the cluster), and keep the reason for NotRunning. client-go keeps
// retrying, so the sweep starts by itself once the cause is fixed.
func (s *Sweeper) stateUnreadable(err error) {
	if s.cm.Synced() {
		return
	}
	ns := s.cm.Namespace()
	reason := fmt.Sprintf("it cannot read its alert state ConfigMap %s: %v", s.cm, err)
	fix := "the sweep starts once this cluster's API server answers"
	if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsUnauthorized(err) {
		reason = fmt.Sprintf("it may not read its alert state in namespace %s of this cluster (%s)", ns, apierrors.ReasonForError(err))
		fix = fmt.Sprintf("the bot's namespace %s (POD_NAMESPACE) must exist in every cluster the bot serves: "+
			"install deploy/'s bot-namespace objects there (the Namespace labelled %s=true, the ServiceAccount, "+
			"its Role and RoleBinding); the sweep starts by itself once it can read its state", ns, botNamespaceLabel)
	}
	s.stalled.Store(&reason)
	if s.warned.CompareAndSwap(false, true) {
		s.log.Warn("health sweep not running: "+reason, "namespace", ns, "configmap", s.cm.String(), "error", err, "fix", fix)
	}
}

// botNamespaceLabel marks the bot's namespace; the admission policy reads
// its parameters from the namespace carrying it (deploy/).
const botNamespaceLabel = "kafkabot.io/bot-namespace"

// NotRunning returns why this sweep cannot run (its alert state cannot be
// read), or "" when nothing stops it. /kafka status shows it.
func (s *Sweeper) NotRunning() string {
	if r := s.stalled.Load(); r != nil {
		return *r
	}
	return ""
}

// Run starts the informers and the watch-driven worker on this replica,
// then sweeps and alerts whenever this replica leads (always, without
// leader election). It returns when ctx ends.
func (s *Sweeper) Run(ctx context.Context) error {
	s.pods.Start(ctx)
	s.cm.Start(ctx)
	if err := s.pods.WaitForCacheSync(ctx); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if err := s.cm.WaitForCacheSync(ctx); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if s.stalled.Swap(nil) != nil {
		s.log.Info("health sweep: its alert state is readable now; the sweep runs")
	}
	var wg sync.WaitGroup
	wg.Go(func() { s.work(ctx) })
	defer wg.Wait()
	defer s.terms.Wait()
	if !s.opts.LeaderElection {
		s.lead(ctx)
		return nil
	}
	for ctx.Err() == nil {
		if err := s.campaign(ctx); err != nil {
			return err
		}
	}
	return nil
}

// campaign runs one leader election: it waits for the Lease, leads while it
// holds it, and returns when it lost it or ctx ended.
func (s *Sweeper) campaign(ctx context.Context) error {
	leases := s.opts.LeaseClient
	if leases == nil {
		leases = s.opts.Client.Clientset().CoordinationV1()
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: s.opts.StateNamespace, Name: s.opts.LeaseName},
			Client:     leases,
			LockConfig: resourcelock.ResourceLockConfig{Identity: s.opts.Identity},
		},
		LeaseDuration:   s.opts.LeaseDuration,
		RenewDeadline:   s.opts.RenewDeadline,
		RetryPeriod:     s.opts.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            "kafkabot-sweep",
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: s.lead,
			OnStoppedLeading: func() { s.log.Info("sweep leadership ended") },
		},
	})
	if err != nil {
		return fmt.Errorf("sweep: leader election: %w", err)
	}
	le.Run(ctx)
	return nil
}

// lead sweeps and alerts until lctx ends: it reads the state from the
// ConfigMap (what the previous leader wrote), sweeps everything once, then
// runs the schedule; the worker handles watched changes meanwhile.
func (s *Sweeper) lead(lctx context.Context) {
	s.terms.Add(1)
	defer s.terms.Done()
	s.term.Lock() // the previous term may still be winding down
	defer s.term.Unlock()
	if lctx.Err() != nil {
		return
	}
	s.log.Info("leading the sweep")
	st, err := s.loadState(lctx)
	if err != nil {
		return // lctx ended
	}
	defer func() {
		s.mu.Lock()
		s.st, s.leaderCtx = nil, nil
		s.diagnoses = map[kube.PodKey]diagnosis{}
		s.mu.Unlock()
	}()
	// Catch up before anything else: the first evaluation sees every pod at
	// once, so a cluster that went down meanwhile is one grouped alert.
	s.mu.Lock()
	s.st, s.leaderCtx = st, lctx
	_, err = s.evaluateLocked(lctx, nil, true)
	s.mu.Unlock()
	if err != nil && lctx.Err() == nil {
		s.log.Error("first sweep failed", "err", err)
	}
	c := cron.New(cron.WithLogger(cron.DiscardLogger))
	if _, err := c.AddFunc(s.opts.Schedule, func() {
		if err := s.sweep(lctx, true); err != nil && lctx.Err() == nil {
			s.log.Error("scheduled sweep failed", "err", err)
		}
	}); err != nil {
		s.log.Error("bad sweep schedule", "schedule", s.opts.Schedule, "err", err)
	} else {
		c.Start()
	}
	<-lctx.Done()
	<-c.Stop().Done()
}

// loadState reads the state until it succeeds or ctx ends: a leader that
// cannot read what was already notified must not notify again.
func (s *Sweeper) loadState(ctx context.Context) (*state, error) {
	delay := s.opts.RetryPeriod
	for {
		s.mu.Lock()
		st, err := s.store.load(ctx)
		s.mu.Unlock()
		if err == nil {
			return st, nil
		}
		s.log.Error("reading alert state", "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.clock.After(delay):
		}
		delay = min(2*delay, time.Minute)
	}
}

// work handles the pods the informer queued: after the first key it waits
// GroupWait for more, then evaluates them all at once.
func (s *Sweeper) work(ctx context.Context) {
	q := s.pods.Queue()
	for {
		k, shutdown := q.Get()
		if shutdown {
			return
		}
		s.busy.Add(1)
		keys := []kube.PodKey{k}
		if s.opts.GroupWait > 0 {
			select {
			case <-ctx.Done():
			case <-s.clock.After(s.opts.GroupWait):
			}
		}
		for q.Len() > 0 {
			k, shutdown := q.Get()
			if shutdown {
				break
			}
			keys = append(keys, k)
		}
		failed, err := s.evaluate(ctx, keys, false)
		if err != nil && !errors.Is(err, alert.ErrNotLeader) && ctx.Err() == nil {
			s.log.Error("evaluating changed pods", "pods", len(keys), "err", err)
		}
		for _, k := range keys {
			if failed[k] {
				q.AddRateLimited(k)
			} else {
				q.Forget(k)
			}
			q.Done(k)
		}
		s.busy.Add(-1)
	}
}

// SweepNow evaluates every cached Kafka pod and every open alert now, like
// a scheduled sweep without the summary. It returns alert.ErrNotLeader on a
// replica that does not lead.
func (s *Sweeper) SweepNow(ctx context.Context) error { return s.sweep(ctx, false) }

func (s *Sweeper) sweep(ctx context.Context, scheduled bool) error {
	_, err := s.evaluate(ctx, nil, true)
	if err != nil || !scheduled || s.opts.Summary == SummaryNever {
		return err
	}
	sum, lctx, err := s.summary()
	if err != nil {
		return err
	}
	if len(sum.Firing) == 0 && s.opts.Summary == SummaryIfUnhealthy {
		return nil
	}
	if err := s.opts.Notifier.Summary(lctx, sum); err != nil {
		return fmt.Errorf("posting the sweep summary: %w", err)
	}
	return nil
}

// Leading reports whether this replica leads and has loaded its state.
func (s *Sweeper) Leading() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st != nil
}

// Silence suppresses notifications of the alerts key matches until until:
// an alert key ("namespace/pod/rule"), a pod ("namespace/pod") or a cluster
// (alert.KafkaClusterKey). by names who asked (a Slack user). It works on every
// replica: the silence is written to the state ConfigMap, where the leader
// picks it up.
func (s *Sweeper) Silence(ctx context.Context, key string, until time.Time, by string) (alert.Silence, error) {
	now := s.clock.Now()
	if key == "" {
		return alert.Silence{}, errors.New("silence: empty key")
	}
	if !until.After(now) {
		return alert.Silence{}, fmt.Errorf("silence %s: end %s is not in the future", key, until.UTC().Format(time.RFC3339))
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s|%s|%d", key, by, now.UnixNano()))
	sil := alert.Silence{ID: hex.EncodeToString(sum[:6]), Key: key, Until: until, By: by, CreatedAt: now, UpdatedAt: now}

	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	if st == nil { // not leading: read, add, write
		var err error
		if st, err = s.store.load(ctx); err != nil {
			return alert.Silence{}, fmt.Errorf("silence %s: %w", key, err)
		}
	}
	st.Silences[sil.ID] = &sil
	if err := s.store.save(ctx, st, now); err != nil {
		return alert.Silence{}, fmt.Errorf("silence %s: %w", key, err)
	}
	s.log.Info("silenced", "key", key, "until", until, "by", by, "id", sil.ID)
	return sil, nil
}

// EndSilence ends the silence id now, before its time: the alerts it hid
// are posted again by the next sweep. by names who ended it (a Slack
// user). Like Silence it works on every replica. The silence stays in the
// state, ended, until the state's pruning drops it.
func (s *Sweeper) EndSilence(ctx context.Context, id, by string) (alert.Silence, error) {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	if st == nil { // not leading: read, change, write
		var err error
		if st, err = s.store.load(ctx); err != nil {
			return alert.Silence{}, fmt.Errorf("ending silence %s: %w", id, err)
		}
	}
	sil, ok := st.Silences[id]
	if !ok || !sil.Active(now) {
		return alert.Silence{}, fmt.Errorf("ending silence %s: %w", id, alert.ErrNoSuchSilence)
	}
	ended := *sil
	sil.Until, sil.UpdatedAt = now, now
	if err := s.store.save(ctx, st, now); err != nil {
		*sil = ended // not written: still in force
		return alert.Silence{}, fmt.Errorf("ending silence %s: %w", id, err)
	}
	s.log.Info("silence ended early", "key", sil.Key, "id", id, "by", by, "was_until", ended.Until)
	return *sil, nil
}

// Silences returns the silences in force, newest first. It reads the state
// ConfigMap (from the informer's cache once Run has started).
func (s *Sweeper) Silences(ctx context.Context) ([]alert.Silence, error) {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.st
	if st != nil {
		if err := s.store.refresh(st); err != nil {
			return nil, err
		}
	} else {
		var data map[string]string
		if cm := s.cm.Cached(); cm != nil {
			data = cm.Data
		} else if cm, err := s.cm.Read(ctx); err != nil {
			return nil, fmt.Errorf("listing silences: %w", err)
		} else if cm != nil {
			data = cm.Data
		}
		var err error
		if st, err = decodeState(data); err != nil {
			return nil, fmt.Errorf("listing silences: %w", err)
		}
	}
	var out []alert.Silence
	for _, sil := range st.sortedSilences() {
		if sil.Active(now) {
			out = append(out, sil)
		}
	}
	return out, nil
}
