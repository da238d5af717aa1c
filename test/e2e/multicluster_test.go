// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/logging"
	"github.com/kafka-chatops/kafkabot/internal/serve"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// The two clusters one bot serves in these scenarios (issue 15).
const (
	clusterA = "prod-eu"
	clusterB = "prod-us"
)

// twoClusters is one bot deployment serving two Kubernetes clusters: A on
// the package's API server and B on a second, independent one
// (testenv.StartSecond), each with a Kafka namespace of the same name,
// deploy/'s RBAC and admission policy, and its own kubelet stand-in; one
// Slack emulator, as one Slack app serves every cluster.
type twoClusters struct {
	t    *testing.T
	emu  *slackemu.Server
	a, b *world
}

// newTwoClusters makes both clusters' namespace, named after ns.
func newTwoClusters(t *testing.T, ns string) *twoClusters {
	t.Helper()
	envA, envB := testenv.Start(t), testenv.StartSecond(t)
	ns = fmt.Sprintf("%s-%d", ns, worldSeq.Add(1))
	emu := newEmulator(t)
	f := &twoClusters{t: t, emu: emu}
	f.a = newWorldOn(t, envA, ns, worldOptions{}, emu)
	f.b = newWorldOn(t, envB, ns, worldOptions{}, emu)
	if f.a.ns != f.b.ns {
		t.Fatalf("the clusters' Kafka namespaces differ (%s, %s): these scenarios need the same name in both", f.a.ns, f.b.ns)
	}
	return f
}

// ns is the Kafka namespace's name, the same in both clusters.
func (f *twoClusters) ns() string { return f.a.ns }

// member is a served cluster for serve.New: the bot's ServiceAccount on
// the world's API server, reading the world's namespace.
func (w *world) member(name string) serve.Cluster {
	return serve.Cluster{Name: name, Config: w.env.BotConfig(), KafkaNamespaces: []string{w.ns}}
}

// unreachable is a served cluster whose API server is cfg's (a hanging or
// refusing stand-in), reading namespace ns.
func unreachable(name, ns string, cfg *rest.Config) serve.Cluster {
	return serve.Cluster{Name: name, Config: cfg, KafkaNamespaces: []string{ns}}
}

// fleetBot is one replica of `bot serve` built by serve.New over several
// clusters, as cmd/bot builds it from CLUSTERS_FILE.
type fleetBot struct {
	srv  *serve.Server
	logs *logging.Buffer
}

// settings are the bot's settings in these scenarios: the e2e Slack side,
// the defaults of internal/config otherwise, with repairs that call a
// broker back at its first Ready (REPAIR_SETTLE=0) and no group wait.
func (f *twoClusters) settings() *config.Config {
	return &config.Config{
		SlackAppToken: slackemu.DefaultAppToken, SlackBotToken: slackemu.DefaultBotToken, SlackAPIURL: f.emu.APIURL(),
		ClusterName:    "kubernetes",
		SweepSchedule:  "@every 5m",
		RepeatInterval: 4 * time.Hour, ResolveGrace: 5 * time.Minute, GroupThreshold: 3, GroupWait: -1,
		SweepSummary: "unhealthy", RestartAlerts: 3, RestartWindow: 10 * time.Minute,
		Approvers: []string{approver}, ApprovalSecret: string(approvalSecret), ApprovalTTL: 30 * time.Minute,
		ForbidSelfApproval: true, RequiredApprovals: 1, ApprovalChannels: []string{channel},
		RepairTimeout: repairTimeout, RepairSettle: 0,
		LogTailBytes: 262144, LogTailLines: 2000, Workers: 4, QueueSize: 256, ShareWindow: time.Minute,
		LeaderElection: true, PodNamespace: testenv.BotNamespace,
		LogLevel: "debug", LogFormat: "json",
	}
}

// startBot builds the bot with serve.New over clusters (tune adjusts the
// options first), runs it, and waits until it is connected to Slack. It
// stops when the test ends, and its log is printed if the test failed.
func (f *twoClusters) startBot(identity string, clusters []serve.Cluster, tune func(*serve.Options)) *fleetBot {
	f.t.Helper()
	logs := &logging.Buffer{}
	opts := serve.Options{
		Settings: f.settings(), Clusters: clusters, Engine: diagnose.Default(), Identity: identity,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		// A cluster that hangs must not hold the bot's start for long.
		StartupTimeout: 2 * time.Second,
		Bot:            func(o *handlers.Options) { o.PingInterval = 5 * time.Second },
	}
	if tune != nil {
		tune(&opts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := serve.New(ctx, opts)
	if err != nil {
		cancel()
		f.t.Fatalf("serve.New: %v\n%s", err, logs.String())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	f.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				f.t.Errorf("bot %s: Run: %v", identity, err)
			}
		case <-time.After(waitLimit):
			f.t.Errorf("bot %s did not stop within %s", identity, waitLimit)
		}
		if f.t.Failed() {
			f.t.Logf("log of bot %s:\n%s", identity, logs.String())
		}
	})
	deadline := time.Now().Add(waitLimit)
	for !srv.Bot().Connected() {
		if time.Now().After(deadline) {
			f.t.Fatalf("bot %s did not connect to the Slack emulator", identity)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return &fleetBot{srv: srv, logs: logs}
}

// ask types `/kafka <text>` as the requester and returns the first reply
// only the requester sees (an ephemeral message), checking that nothing
// was posted in the channel meanwhile.
func (f *twoClusters) ask(text string) slackemu.Message {
	f.t.Helper()
	w := f.a
	posted := len(f.emu.Messages(channel))
	seen := len(f.emu.Ephemerals(channel, requester))
	id, err := f.emu.SendSlashCommand(w.ctx(), slackemu.SlashCommand{ChannelID: channel, UserID: requester, Command: "/kafka", Text: text})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.emu.WaitAck(w.ctx(), id); err != nil {
		f.t.Fatal(err)
	}
	var reply slackemu.Message
	w.waitSlack("the reply to /kafka "+text, func() bool {
		for _, m := range f.emu.Ephemerals(channel, requester)[seen:] {
			// (The command's acknowledgement is shown to the requester too.)
			if !strings.Contains(m.Text, "Diagnosing") {
				reply = m
				return true
			}
		}
		return false
	})
	if n := len(f.emu.Messages(channel)); n != posted {
		f.t.Errorf("/kafka %s posted %d messages in the channel, want none", text, n-posted)
	}
	return reply
}

// status types `/kafka status` and returns the message the bot posts.
func (f *twoClusters) status() string {
	f.t.Helper()
	w := f.a
	before := len(f.emu.Messages(channel))
	id, err := f.emu.SendSlashCommand(w.ctx(), slackemu.SlashCommand{ChannelID: channel, UserID: requester, Command: "/kafka", Text: "status"})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.emu.WaitAck(w.ctx(), id); err != nil {
		f.t.Fatal(err)
	}
	w.waitSlack("the /kafka status message", func() bool { return len(f.emu.Messages(channel)) > before })
	m := f.emu.Messages(channel)[before]
	return blockTexts(f.t, m.Blocks) + "\n" + m.Text
}

// messageText is a message's block texts and fallback text.
func messageText(t *testing.T, m slackemu.Message) string {
	t.Helper()
	if len(m.Blocks) == 0 {
		return m.Text
	}
	return blockTexts(t, m.Blocks) + "\n" + m.Text
}

// clusterState is what a scenario must leave unchanged in a cluster it
// does not act on: every object of the Kafka namespace and of the bot's
// namespace the bot could write (pods, claims, Leases, Events, ConfigMaps)
// by kind/namespace/name, with its UID and resourceVersion.
func (w *world) clusterState() map[string]string {
	w.t.Helper()
	out := map[string]string{}
	for _, ns := range []string{w.ns, testenv.BotNamespace} {
		pods, err := w.admin.CoreV1().Pods(ns).List(w.ctx(), metav1.ListOptions{})
		if err != nil {
			w.t.Fatal(err)
		}
		for _, o := range pods.Items {
			out["pod/"+ns+"/"+o.Name] = string(o.UID) + "@" + o.ResourceVersion
		}
		claims, err := w.admin.CoreV1().PersistentVolumeClaims(ns).List(w.ctx(), metav1.ListOptions{})
		if err != nil {
			w.t.Fatal(err)
		}
		for _, o := range claims.Items {
			out["pvc/"+ns+"/"+o.Name] = string(o.UID) + "@" + o.ResourceVersion
		}
		leases, err := w.admin.CoordinationV1().Leases(ns).List(w.ctx(), metav1.ListOptions{})
		if err != nil {
			w.t.Fatal(err)
		}
		for _, o := range leases.Items {
			out["lease/"+ns+"/"+o.Name] = string(o.UID) + "@" + o.ResourceVersion
		}
		events, err := w.admin.CoreV1().Events(ns).List(w.ctx(), metav1.ListOptions{})
		if err != nil {
			w.t.Fatal(err)
		}
		for _, o := range events.Items {
			out["event/"+ns+"/"+o.Name] = string(o.UID) + "@" + o.ResourceVersion
		}
		cms, err := w.admin.CoreV1().ConfigMaps(ns).List(w.ctx(), metav1.ListOptions{})
		if err != nil {
			w.t.Fatal(err)
		}
		for _, o := range cms.Items {
			out["configmap/"+ns+"/"+o.Name] = string(o.UID) + "@" + o.ResourceVersion
		}
	}
	return out
}

// stateDiff lists what differs between two clusterStates.
func stateDiff(before, after map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(before)) {
		switch v, ok := after[k]; {
		case !ok:
			out = append(out, "deleted "+k)
		case v != before[k]:
			out = append(out, "changed "+k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[k]; !ok {
			out = append(out, "created "+k)
		}
	}
	return out
}

// TestFleetSameShortNameInTwoClustersAsksWhichOne: both clusters run a
// Kafka cluster with the same namespace and pod names, and both brokers
// crash-loop. `/kafka diagnose broker-0` gets a reply, to the requester
// only, listing both as cluster/namespace/pod, with no buttons and nothing
// posted: never a guess. Naming the cluster (CLUSTER/POD or
// CLUSTER/NAMESPACE/POD) diagnoses that cluster's pod: the header names
// the cluster, and the details carry that cluster's pod UID, not the
// other's.
func TestFleetSameShortNameInTwoClustersAsksWhichOne(t *testing.T) {
	f := newTwoClusters(t, "kafka-e2e-fleet-which")
	podA, _ := f.a.seedCluster()
	podB, _ := f.b.seedCluster()
	if podA.UID == podB.UID {
		t.Fatal("the two clusters gave their brokers the same UID")
	}
	f.startBot("kafkabot-0", []serve.Cluster{f.a.member(clusterA), f.b.member(clusterB)}, nil)

	reply := f.ask("diagnose broker-0")
	text := messageText(t, reply)
	for _, want := range []string{
		"Which one?",
		clusterA + "/" + f.ns() + "/" + seedBroker,
		clusterB + "/" + f.ns() + "/" + seedBroker,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the reply to a short name found in both clusters lacks %q:\n%s", want, text)
		}
	}
	if ids := actionIDs(t, orEmpty(reply.Blocks)); len(ids) != 0 {
		t.Errorf("the \"which one?\" reply offers buttons %v", ids)
	}

	for _, tc := range []struct {
		command    string
		cluster    string
		want, not  string // pod UIDs
		wantHeader string
	}{
		{"diagnose " + clusterA + "/broker-0", clusterA, string(podA.UID), string(podB.UID), clusterA + "/" + f.ns() + "/" + seedBroker},
		{"diagnose " + clusterB + "/" + f.ns() + "/" + seedBroker, clusterB, string(podB.UID), string(podA.UID), clusterB + "/" + f.ns() + "/" + seedBroker},
	} {
		m := f.a.diagnose(tc.command)
		head := blockTexts(t, m.Blocks)
		if !strings.Contains(head, tc.wantHeader) {
			t.Errorf("/kafka %s: the message does not name %s:\n%s", tc.command, tc.wantHeader, head)
		}
		if ids := actionIDs(t, m.Blocks); !slices.Contains(ids, actionApprove) {
			t.Errorf("/kafka %s: the diagnosis offers %v, want Approve", tc.command, ids)
		}
		details := strings.Join(f.a.threadTexts(m), "\n")
		if !strings.Contains(details, tc.want) || strings.Contains(details, tc.not) {
			t.Errorf("/kafka %s: the details should carry pod UID %s (cluster %s) and not %s:\n%s", tc.command, tc.want, tc.cluster, tc.not, details)
		}
	}
}

// orEmpty turns a message without blocks into an empty block list.
func orEmpty(raw []byte) []byte {
	if len(raw) == 0 {
		return []byte("[]")
	}
	return raw
}

// TestFleetRepairApprovedOnAOnlyTouchesA: the same Kafka cluster (same
// namespace, pod and claim names) crash-loops in both clusters; an
// approver approves cluster A's repair. A's broker is repaired (metadata
// log moved on A's volume, broker recreated, one debug pod, Leases in A);
// in cluster B not one object of the Kafka namespace or the bot's
// namespace is created, changed or deleted (pods, claims, Leases, Events,
// ConfigMaps), no debug pod is ever created, and B's volume is byte for
// byte the same.
func TestFleetRepairApprovedOnAOnlyTouchesA(t *testing.T) {
	f := newTwoClusters(t, "kafka-e2e-fleet-repair")
	oldA, volA := f.a.seedCluster()
	_, volB := f.b.seedCluster()
	treeA, treeB := readTree(t, volA), readTree(t, volB)
	debugA, debugB := f.a.recordDebugPods(), f.b.recordDebugPods()
	f.startBot("kafkabot-0", []serve.Cluster{f.a.member(clusterA), f.b.member(clusterB)}, nil)
	stateB := f.b.clusterState()

	m := f.a.diagnose("diagnose " + clusterA + "/" + f.ns() + "/" + seedBroker)
	if head := blockTexts(t, m.Blocks); !strings.Contains(head, clusterA+"/"+f.ns()+"/"+seedBroker) {
		t.Fatalf("the diagnosis does not name cluster %s:\n%s", clusterA, head)
	}
	f.a.click(m, actionApprove, approver)
	th := f.a.waitRepairEnd(m)
	if out := outcomeText(th); !strings.Contains(out, "Repair succeeded: the broker is back") {
		t.Fatalf("the repair on %s did not succeed:\n%s", clusterA, strings.Join(th, "\n---\n"))
	}

	// B: untouched (checked first: A's checks stop the test on failure).
	if diff := stateDiff(stateB, f.b.clusterState()); len(diff) != 0 {
		t.Errorf("approving %s's repair changed cluster %s:\n%s", clusterA, clusterB, strings.Join(diff, "\n"))
	}
	if created := debugB.pods(); len(created) != 0 {
		t.Errorf("approving %s's repair created %d debug pods in cluster %s", clusterA, len(created), clusterB)
	}
	if diff := treeB.diff(readTree(t, volB)); len(diff) != 0 {
		t.Errorf("approving %s's repair changed %s's broker volume:\n%s", clusterA, clusterB, strings.Join(diff, "\n"))
	}
	if events := f.b.botEvents(seedBroker); len(events) != 0 {
		t.Errorf("the bot recorded %d Events on %s's broker", len(events), clusterB)
	}

	// A: repaired, as in the single-cluster story.
	checkMetadataLogMoved(t, volA, treeA)
	checkBrokerReplaced(t, f.a, oldA)
	checkOneDebugPod(t, f.a, debugA)
	leasesA, err := f.a.admin.CoordinationV1().Leases(f.ns()).List(f.a.ctx(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(leasesA.Items, func(l coordinationv1.Lease) bool { return strings.HasPrefix(l.Name, "kafkabot-decision-") }) {
		t.Errorf("no decision record in cluster %s's namespace: the approval was recorded elsewhere", clusterA)
	}
}

// TestFleetUnreachableClusterDoesNotBlockTheOther: cluster B's API server
// hangs (answers no request, or never completes the TLS handshake) or is
// down (connection refused). Commands naming cluster A answer from A even
// with a lookup timeout far longer than the test's own wait, so they
// cannot be waiting on B at all. With a short lookup timeout, a short name
// found only in A is diagnosed from A (B's failure is told beside it, not
// in its place), `/kafka status` shows A's pods and B as cannot be
// reached, and a command naming B is told that B cannot be reached. Once
// B failed a lookup its breaker is open: another short name, a pod found
// nowhere (the reply names B as not checked) and status do not reach B
// again (counted at the hanging server; with a 1 ns breaker period this
// check fails).
func TestFleetUnreachableClusterDoesNotBlockTheOther(t *testing.T) {
	// downCluster starts B's API server stand-in and returns its client
	// configuration and, when it can tell, how many times the bot reached
	// it (connections and requests; nil for a refusing port).
	type downCluster func(t *testing.T) (*rest.Config, func() int64)
	hanging := func(mode testenv.HangMode) downCluster {
		return func(t *testing.T) (*rest.Config, func() int64) {
			h := testenv.StartHanging(t, testenv.HangOptions{Mode: mode})
			return h.Config(), func() int64 { return h.Connections() + h.Requests() }
		}
	}
	for _, tc := range []struct {
		name string
		down downCluster
	}{
		{"hangs_after_TLS", hanging(testenv.HangRequests)},
		{"hangs_before_TLS", hanging(testenv.HangHandshake)},
		{"refuses_connections", func(t *testing.T) (*rest.Config, func() int64) { return testenv.StartRefuser(t).Config(), nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			envA := testenv.Start(t)
			ns := fmt.Sprintf("kafka-e2e-fleet-down-%d", worldSeq.Add(1))
			f := &twoClusters{t: t, emu: newEmulator(t)}
			f.a = newWorldOn(t, envA, ns, worldOptions{}, f.emu)
			f.a.seedCluster()
			cfgB, touchesB := tc.down(t)
			b := unreachable(clusterB, f.a.ns, cfgB)

			t.Run("explicit_cluster_never_waits_on_B", func(t *testing.T) {
				f.t = t
				f.a.t = t
				// Far beyond waitLimit: a command that waited on B would
				// fail this test rather than answer.
				f.startBot("kafkabot-wait", []serve.Cluster{f.a.member(clusterA), b}, func(o *serve.Options) {
					o.LookupTimeout = 10 * time.Minute
					o.Settings.ShareWindow = 0 // every command reads the cluster
				})
				for _, cmd := range []string{
					"diagnose " + clusterA + "/" + f.a.ns + "/" + seedBroker,
					"diagnose " + clusterA + "/broker-0",
				} {
					m := f.a.diagnose(cmd)
					if head := blockTexts(t, m.Blocks); !strings.Contains(head, clusterA+"/"+f.a.ns+"/"+seedBroker) ||
						!strings.Contains(head, "KRaft metadata log diverged") {
						t.Errorf("/kafka %s: the diagnosis does not name %s's broker and its finding:\n%s", cmd, clusterA, head)
					}
				}
			})
			t.Run("short_name_and_status", func(t *testing.T) {
				f.t = t
				f.a.t = t
				f.startBot("kafkabot-short", []serve.Cluster{f.a.member(clusterA), b}, func(o *serve.Options) {
					o.LookupTimeout = 2 * time.Second
					// Long enough that it cannot pass during the subtest,
					// however loaded the machine.
					o.BreakerPeriod = 10 * time.Minute
					o.Settings.ShareWindow = 0
				})
				m := f.a.diagnose("diagnose broker-0")
				if head := blockTexts(t, m.Blocks); !strings.Contains(head, clusterA+"/"+f.a.ns+"/"+seedBroker) {
					t.Errorf("a short name found only in %s: the diagnosis does not name it:\n%s", clusterA, head)
				}
				// B failed that lookup: its breaker is open, so neither
				// another short name nor status asks B again.
				var touched int64
				if touchesB != nil {
					touched = touchesB()
				}
				m = f.a.diagnose("diagnose broker-0")
				if head := blockTexts(t, m.Blocks); !strings.Contains(head, clusterA+"/"+f.a.ns+"/"+seedBroker) {
					t.Errorf("a second short name: the diagnosis does not name %s:\n%s", clusterA, head)
				}
				missing := messageText(t, f.ask("diagnose broker-9"))
				for _, want := range []string{"found no Kafka pod", "could not check `" + clusterB + "`"} {
					if !strings.Contains(missing, want) {
						t.Errorf("/kafka diagnose broker-9 (in no cluster): the reply lacks %q:\n%s", want, missing)
					}
				}
				st := f.status()
				if touchesB != nil && touchesB() != touched {
					t.Errorf("with %s's breaker open, a short name, a missing pod and status reached %s again (%d times)", clusterB, clusterB, touchesB()-touched)
				}
				for _, want := range []string{clusterA, seedBroker, clusterB + "* cannot be reached"} {
					if !strings.Contains(st, want) {
						t.Errorf("/kafka status lacks %q:\n%s", want, st)
					}
				}
				if strings.Contains(st, clusterA+"* cannot be reached") {
					t.Errorf("/kafka status shows %s as unreachable:\n%s", clusterA, st)
				}
				// A command naming B is told B cannot be reached (within
				// the lookup timeout), to the requester only.
				reply := messageText(t, f.ask("diagnose "+clusterB+"/broker-0"))
				if !strings.Contains(reply, "cluster "+clusterB+" cannot be reached") {
					t.Errorf("/kafka diagnose %s/broker-0 with %s down: the reply does not say it cannot be reached:\n%s", clusterB, clusterB, reply)
				}
			})
		})
	}
}

// TestFleetSweepAlertsForAWhileBHangs: with ALERT_CHANNEL set, every
// cluster has its own sweep; cluster B's API server hangs, so its sweep
// never syncs. Cluster A's broker starting to crash-loop still raises one
// alert naming cluster A, with Approve.
func TestFleetSweepAlertsForAWhileBHangs(t *testing.T) {
	envA := testenv.Start(t)
	ns := fmt.Sprintf("kafka-e2e-fleet-sweep-%d", worldSeq.Add(1))
	f := &twoClusters{t: t, emu: newEmulator(t)}
	f.a = newWorldOn(t, envA, ns, worldOptions{}, f.emu)
	for _, id := range []string{"0", "1", "2"} {
		c := controller("foobar-kafka-controller-"+id, id)
		f.a.createNode(c, "")
		f.a.ready(c.name)
	}
	f.a.createNode(broker(seedBroker, seedNodeID), newBrokerVolume(t, seedNodeID))
	f.a.ready(seedBroker)
	self := envA.SelfNamespace(t, "kafka-bot-"+f.a.ns)
	hang := testenv.StartHanging(t, testenv.HangOptions{Mode: testenv.HangRequests})

	f.startBot("kafkabot-0", []serve.Cluster{f.a.member(clusterA), unreachable(clusterB, f.a.ns, hang.Config())}, func(o *serve.Options) {
		o.Settings.AlertChannel = alertChannel
		o.Settings.PodNamespace = self
		o.LookupTimeout = 2 * time.Second
	})
	testenv.WaitFor(t, "cluster "+clusterA+"'s sweep to lead", func(ctx context.Context) (bool, error) {
		l, err := envA.Clientset.CoordinationV1().Leases(self).Get(ctx, serve.LeaderLeaseName(clusterA, true), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == "kafkabot-0", nil
	})

	f.a.crashLoop(seedBroker, seedLog())
	f.a.waitSlack("the alert for "+clusterA, func() bool { return len(f.emu.Messages(alertChannel)) > 0 })
	alert := f.emu.Messages(alertChannel)[0]
	text := blockTexts(t, alert.Blocks)
	for _, want := range []string{clusterA + "/" + f.a.ns + "/" + seedBroker, "KRaft metadata log diverged"} {
		if !strings.Contains(text, want) {
			t.Errorf("the alert lacks %q:\n%s", want, text)
		}
	}
	if ids := actionIDs(t, alert.Blocks); !slices.Contains(ids, actionApprove) {
		t.Errorf("the alert offers %v, want Approve", ids)
	}
	if hang.Connections() == 0 {
		t.Errorf("the bot never tried cluster %s: the scenario did not test a hanging cluster", clusterB)
	}
}

// TestFleetAlertmanagerClusterLabelRoutesToThatCluster: the real
// Alertmanager notifies a bot serving two clusters whose Kafka namespace
// and pods have the same names. Cluster B's broker crash-loops, A's is
// Ready. An alert labelled cluster=B is diagnosed in B (the message names
// B and carries B's pod UID), with Approve; an alert with no cluster
// label, or naming a cluster the bot does not serve, is refused and
// posts nothing. Approving the alert repairs B's broker and leaves every
// object of cluster A unchanged; resolving it in Alertmanager resolves
// the message.
func TestFleetAlertmanagerClusterLabelRoutesToThatCluster(t *testing.T) {
	bin := alertmanagerBinary(t)
	f := newTwoClusters(t, "kafka-e2e-fleet-am")
	var volB string
	var oldB = map[string]bool{}
	for _, w := range []*world{f.a, f.b} {
		for _, id := range []string{"0", "1", "2"} {
			c := controller("foobar-kafka-controller-"+id, id)
			w.createNode(c, "")
			w.ready(c.name)
		}
		vol := newBrokerVolume(t, seedNodeID)
		p := w.createNode(broker(seedBroker, seedNodeID), vol)
		w.ready(seedBroker)
		if w == f.b {
			volB = vol
			oldB[string(p.UID)] = true
		}
	}
	treeB := readTree(t, volB)
	// POD_NAMESPACE: the bot's namespace, in each cluster (each cluster's
	// alert state lives there; the leader Leases in the home cluster's).
	self := f.a.env.SelfNamespace(t, "kafka-bot-"+f.ns())
	if selfB := f.b.env.SelfNamespace(t, "kafka-bot-"+f.ns()); selfB != self {
		t.Fatalf("the bot's namespace is %s in %s and %s in %s", self, clusterA, selfB, clusterB)
	}
	bot := f.startBot("kafkabot-0", []serve.Cluster{f.a.member(clusterA), f.b.member(clusterB)}, func(o *serve.Options) {
		o.Settings.AlertChannel = alertChannel
		o.Settings.AlertmanagerToken = amToken
		o.Settings.PodNamespace = self
		// The sweeps' own watch path waits an hour before alerting, so
		// every post below comes through the receiver.
		o.Settings.GroupWait = time.Hour
	})
	for _, c := range []string{clusterA, clusterB} {
		testenv.WaitFor(t, "cluster "+c+"'s sweep to lead", func(ctx context.Context) (bool, error) {
			l, err := f.a.admin.CoordinationV1().Leases(self).Get(ctx, serve.LeaderLeaseName(c, true), metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == "kafkabot-0", nil
		})
	}
	mux := http.NewServeMux()
	mux.Handle("POST /alertmanager", bot.srv.Receiver())
	recv := httptest.NewServer(mux) // loopback
	t.Cleanup(recv.Close)
	am := startAlertmanager(t, bin, recv.URL)

	f.b.crashLoop(seedBroker, seedLog())
	podB, err := f.b.pod(seedBroker)
	if err != nil {
		t.Fatal(err)
	}
	stateA := f.a.clusterState()
	started := time.Now().UTC()
	labels := func(cluster string) map[string]string {
		l := map[string]string{"alertname": "KubePodCrashLooping", "namespace": f.ns(), "pod": seedBroker, "container": "kafka"}
		if cluster != "" {
			l["cluster"] = cluster
		}
		return l
	}

	// Refused: no cluster label, and a cluster this bot does not serve.
	am.post(t, amAlert{Labels: labels(""), StartsAt: started}, amAlert{Labels: labels("prod-asia"), StartsAt: started})
	testenv.WaitFor(t, "both refusals in the bot's log", func(context.Context) (bool, error) {
		l := bot.logs.String()
		return strings.Contains(l, `"cluster_label":""`) && strings.Contains(l, `"cluster_label":"prod-asia"`), nil
	})
	if n := len(f.emu.Messages(channel)) + len(f.emu.Messages(alertChannel)); n != 0 {
		t.Fatalf("alerts naming no served cluster posted %d messages", n)
	}

	// Routed: cluster B's alert is diagnosed in B.
	am.post(t, amAlert{Labels: labels(clusterB), StartsAt: started})
	f.a.waitSlack("the diagnosis of "+clusterB+"'s alert", func() bool { return len(f.emu.Messages(channel)) > 0 })
	alert := f.emu.Messages(channel)[0]
	text := blockTexts(t, alert.Blocks)
	for _, want := range []string{clusterB + "/" + f.ns() + "/" + seedBroker, "KRaft metadata log diverged", "Alert from Alertmanager"} {
		if !strings.Contains(text, want) {
			t.Errorf("the alert lacks %q:\n%s", want, text)
		}
	}
	if details := strings.Join(f.a.waitThread(alert, string(podB.UID)), "\n"); !strings.Contains(details, string(podB.UID)) {
		t.Errorf("the details do not carry %s's pod UID %s", clusterB, podB.UID)
	}

	f.a.click(alert, actionApprove, approver)
	th := f.a.waitRepairEnd(alert)
	if missing := containsInOrder(th, "approved. Starting", "Repair succeeded: the broker is back"); missing != "" {
		t.Fatalf("the alert's thread lacks %q; it reads:\n%s", missing, strings.Join(th, "\n---\n"))
	}
	if diff := stateDiff(stateA, f.a.clusterState()); len(diff) != 0 {
		t.Errorf("repairing %s's broker changed cluster %s:\n%s", clusterB, clusterA, strings.Join(diff, "\n"))
	}
	checkMetadataLogMoved(t, volB, treeB)
	if now, err := f.b.pod(seedBroker); err != nil || oldB[string(now.UID)] {
		t.Errorf("%s's broker was not recreated (err %v)", clusterB, err)
	}

	am.post(t, amAlert{Labels: labels(clusterB), StartsAt: started, EndsAt: time.Now().UTC()})
	f.a.waitSlack("the alert to resolve", func() bool {
		return strings.Contains(blockTexts(t, f.a.message(alert).Blocks), "Resolved")
	})
	if n := len(f.emu.Messages(channel)); n != 1 {
		t.Errorf("the routed channel has %d messages, want the one alert", n)
	}
}
