// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

func TestSnapshotSeedIncident(t *testing.T) {
	crash := inspReadCrashLog(t)
	cs := fake.NewClientset(inspSeedObjects()...)
	logs := &inspLogServer{previous: crash, current: []byte("current instance log\n")}
	logs.install(cs)
	c := New(cs, Options{Namespaces: []string{"kafka"}, LogTailBytes: 64 << 10, LogTailLines: 500})

	in, err := c.Inspect(context.Background(), "kafka", "foobar-kafka-broker-0")
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	s := in.Snapshot

	for _, f := range []struct{ name, got, want string }{
		{"namespace", s.Namespace, "kafka"},
		{"pod", s.Pod, "foobar-kafka-broker-0"},
		{"uid", s.UID, "uid-kafka-foobar-kafka-broker-0"},
		{"node", s.Node, "node-a"},
		{"phase", s.Phase, "Running"},
		{"cluster", s.KafkaCluster, "foobar"},
		{"role", string(s.Role), string(diagnose.RoleBroker)},
		{"node id", s.NodeID, "100"},
		{"kafka container", s.KafkaContainer, "kafka"},
		{"log source", string(in.LogSource), string(LogPrevious)},
	} {
		if f.got != f.want {
			t.Errorf("%s = %q, want %q", f.name, f.got, f.want)
		}
	}
	if !strings.Contains(in.RoleSource, "env KAFKA_CFG_PROCESS_ROLES=broker") || !strings.Contains(in.RoleSource, "env KAFKA_CFG_NODE_ID") {
		t.Errorf("RoleSource = %q, want it to name the env variables", in.RoleSource)
	}

	k := s.Kafka()
	if k == nil {
		t.Fatal("Snapshot has no Kafka container")
	}
	if k.WaitingReason != "CrashLoopBackOff" || k.RestartCount != 12 || k.Ready || k.Running {
		t.Errorf("kafka container = %+v, want waiting CrashLoopBackOff, 12 restarts, not ready", *k)
	}
	if k.LastTerminated == nil || k.LastTerminated.ExitCode != 1 || k.LastTerminated.Reason != "Error" || !k.LastTerminated.FinishedAt.Equal(inspCrashTime) {
		t.Errorf("LastTerminated = %+v, want exit 1 Error at %v", k.LastTerminated, inspCrashTime)
	}
	if k.Image != "docker.io/bitnami/kafka:3.5.1-debian-11-r1" || !strings.HasPrefix(k.ImageID, "docker.io/bitnami/kafka@sha256:") {
		t.Errorf("image = %q, imageID = %q", k.Image, k.ImageID)
	}

	wantClaims := []diagnose.VolumeClaim{{
		Volume: "data", ClaimName: "data-foobar-kafka-broker-0", MountPath: "/bitnami/kafka",
		AccessModes: []string{"ReadWriteOnce"}, Phase: "Bound",
	}}
	if fmt.Sprint(s.Claims) != fmt.Sprint(wantClaims) {
		t.Errorf("Claims = %+v, want %+v", s.Claims, wantClaims)
	}

	wantEvents := []string{
		`Warning Pulled: Container image "docker.io/bitnami/kafka:3.5.1-debian-11-r1" already present on machine (x13)`,
		"Warning BackOff: Back-off restarting failed container kafka in pod foobar-kafka-broker-0_kafka (x42)",
	}
	if !slices.Equal(s.Events, wantEvents) {
		t.Errorf("Events =\n%q\nwant (this pod instance only, oldest first)\n%q", s.Events, wantEvents)
	}

	if s.Log != string(crash) || s.LogBytes != len(crash) || s.LogTruncated {
		t.Errorf("log: %d bytes, truncated=%v; want the seed crash log byte for byte (%d bytes)", s.LogBytes, s.LogTruncated, len(crash))
	}

	if len(logs.requests) != 1 {
		t.Fatalf("log requests = %d, want 1", len(logs.requests))
	}
	req := logs.requests[0]
	if !req.Previous || req.Container != "kafka" || req.TailLines == nil || *req.TailLines != 500 ||
		req.LimitBytes == nil || *req.LimitBytes != inspectReadCapFactor*(64<<10)+1 || req.Follow {
		t.Errorf("log request = %+v, want previous, container kafka, tailLines 500, limitBytes %d (the read cap + 1), no follow",
			req, inspectReadCapFactor*(64<<10)+1)
	}

	actions := inspActionList(cs)
	if len(actions) > 4 {
		t.Errorf("Inspect made %d API requests, want at most 4: %q", len(actions), actions)
	}
	// The pod first; then the claim, the events and the log, at once (in
	// any order).
	want := []string{"get pods", "get persistentvolumeclaims", "get pods/log", "list events"}
	if len(actions) != len(want) || actions[0] != want[0] || !slices.Equal(slices.Sorted(slices.Values(actions[1:])), want[1:]) {
		t.Errorf("requests = %q, want %q then %q in any order", actions, want[0], want[1:])
	}
}

func TestSnapshotMatchesInspect(t *testing.T) {
	cs := fake.NewClientset(inspSeedObjects()...)
	(&inspLogServer{previous: inspReadCrashLog(t)}).install(cs)
	c := New(cs, Options{})
	s, err := c.Snapshot(context.Background(), "kafka", "foobar-kafka-broker-0")
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if s.Pod != "foobar-kafka-broker-0" || s.Role != diagnose.RoleBroker || s.LogBytes == 0 {
		t.Errorf("Snapshot = pod %q role %q log %d bytes", s.Pod, s.Role, s.LogBytes)
	}
}

// A large log is cut to LogTailBytes, keeping the newest lines, even when
// the server ignores limitBytes (the fake does).
func TestSnapshotLogBounded(t *testing.T) {
	const keep = 4 << 10
	numbered := func(n int, last string) []byte {
		var b bytes.Buffer
		for i := range n {
			fmt.Fprintf(&b, "[2025-04-28 08:22:01,%03d] INFO line %06d of a long startup\n", i%1000, i)
		}
		b.WriteString(last + "\n")
		return b.Bytes()
	}
	tests := []struct {
		name       string
		body       []byte
		honour     bool   // the server applies limitBytes
		wantEnd    string // the kept log ends with this
		wantCapHit bool
	}{
		{
			name:    "between LogTailBytes and the read cap: newest lines kept",
			body:    numbered(150, "ERROR Encountered fatal fault: Unexpected error in raft IO thread"),
			wantEnd: "ERROR Encountered fatal fault: Unexpected error in raft IO thread\n",
		},
		{
			name:       "server ignores limits and sends 4 MB: reading stops at the cap",
			body:       numbered(60000, "never reached"),
			wantCapHit: true,
		},
		{
			name:       "server applies limitBytes to a window over the cap: the cut is still detected",
			body:       numbered(60000, "never reached"),
			honour:     true,
			wantCapHit: true,
		},
		{
			name:    "server applies limitBytes, window under the cap: complete",
			body:    numbered(150, "ERROR Encountered fatal fault: Unexpected error in raft IO thread"),
			honour:  true,
			wantEnd: "ERROR Encountered fatal fault: Unexpected error in raft IO thread\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset(inspSeedObjects()...)
			(&inspLogServer{previous: tt.body, honourLimits: tt.honour}).install(cs)
			c := New(cs, Options{LogTailBytes: keep, LogTailLines: 2000})
			in, err := c.Inspect(context.Background(), "kafka", "foobar-kafka-broker-0")
			if err != nil {
				t.Fatalf("Inspect: %v", err)
			}
			s := in.Snapshot
			if len(s.Log) > keep || s.LogBytes != len(s.Log) {
				t.Errorf("kept %d bytes (LogBytes %d), want at most %d", len(s.Log), s.LogBytes, keep)
			}
			if !s.LogTruncated {
				t.Error("LogTruncated = false, want true")
			}
			if !strings.HasPrefix(s.Log, "[2025-04-28 ") {
				t.Errorf("kept log does not start on a line boundary: %.60q", s.Log)
			}
			if tt.wantEnd != "" && !strings.HasSuffix(s.Log, tt.wantEnd) {
				t.Errorf("kept log ends %q, want the newest line %q", s.Log[max(0, len(s.Log)-80):], tt.wantEnd)
			}
			if !bytes.Contains(tt.body, []byte(s.Log)) {
				t.Error("kept log is not a contiguous part of what the server sent")
			}
			capNote := slices.ContainsFunc(in.Notes, func(n string) bool { return strings.Contains(n, "read cap") })
			if capNote != tt.wantCapHit {
				t.Errorf("read-cap note = %v, want %v (notes %q)", capNote, tt.wantCapHit, in.Notes)
			}
			if tt.wantCapHit && in.LogBytesReceived != inspectReadCapFactor*keep {
				t.Errorf("LogBytesReceived = %d, want the cap %d", in.LogBytesReceived, inspectReadCapFactor*keep)
			}
		})
	}
}

func TestSnapshotLogSource(t *testing.T) {
	previousGone := apierrors.NewBadRequest(`previous terminated container "kafka" in pod "foobar-kafka-broker-0" not found`)
	waiting := apierrors.NewBadRequest(`container "kafka" in pod "foobar-kafka-broker-0" is waiting to start: ContainerCreating`)
	noRestarts := func(p *corev1.Pod) {
		st := &p.Status.ContainerStatuses[0]
		st.RestartCount = 0
		st.LastTerminationState = corev1.ContainerState{}
	}
	tests := []struct {
		name         string
		pod          func(*corev1.Pod)
		logs         inspLogServer
		wantSource   LogSource
		wantLog      string
		wantPrevious []bool // Previous flag of each log request, in order
		wantNote     string
	}{
		{
			name:         "restarted: previous instance",
			logs:         inspLogServer{previous: []byte("crash\n"), current: []byte("current\n")},
			wantSource:   LogPrevious,
			wantLog:      "crash\n",
			wantPrevious: []bool{true},
		},
		{
			// Between a crash and the kubelet's CrashLoopBackOff the crashed
			// instance is the current one (state Terminated) and "previous"
			// is the instance before it: a real 3.7.2 broker on the real node
			// was diagnosed from that older log.
			name: "current instance terminated: its own log, not the one before",
			pod: func(p *corev1.Pod) {
				p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}
			},
			logs:         inspLogServer{previous: []byte("the run before\n"), current: []byte("crash\n")},
			wantSource:   LogCurrent,
			wantLog:      "crash\n",
			wantPrevious: []bool{false},
		},
		{
			name:         "previous instance's log gone: falls back to current and says so",
			logs:         inspLogServer{previousErr: previousGone, current: []byte("current\n")},
			wantSource:   LogCurrent,
			wantLog:      "current\n",
			wantPrevious: []bool{true, false},
			wantNote:     "read the current instance's log instead",
		},
		{
			name:         "never restarted: current instance only",
			pod:          noRestarts,
			logs:         inspLogServer{previous: []byte("must not be read\n"), current: []byte("current\n")},
			wantSource:   LogCurrent,
			wantLog:      "current\n",
			wantPrevious: []bool{false},
			wantNote:     "has not restarted",
		},
		{
			name: "container waiting to start: no log, no error",
			pod: func(p *corev1.Pod) {
				noRestarts(p)
				p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
			},
			logs:         inspLogServer{currentErr: waiting},
			wantSource:   LogNone,
			wantPrevious: []bool{false},
			wantNote:     "is waiting to start",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := inspSeedPod()
			if tt.pod != nil {
				tt.pod(pod)
			}
			cs := fake.NewClientset(pod, inspPVC("kafka", "data-foobar-kafka-broker-0", corev1.ClaimBound))
			logs := tt.logs
			logs.install(cs)
			in, err := New(cs, Options{}).Inspect(context.Background(), "kafka", pod.Name)
			if err != nil {
				t.Fatalf("Inspect: %v", err)
			}
			if in.LogSource != tt.wantSource || in.Snapshot.Log != tt.wantLog {
				t.Errorf("source %q log %q, want %q %q", in.LogSource, in.Snapshot.Log, tt.wantSource, tt.wantLog)
			}
			var gotPrevious []bool
			for _, r := range logs.requests {
				gotPrevious = append(gotPrevious, r.Previous)
			}
			if !slices.Equal(gotPrevious, tt.wantPrevious) {
				t.Errorf("log requests previous = %v, want %v", gotPrevious, tt.wantPrevious)
			}
			if tt.wantNote != "" && !slices.ContainsFunc(in.Notes, func(n string) bool { return strings.Contains(n, tt.wantNote) }) {
				t.Errorf("notes %q, want one containing %q", in.Notes, tt.wantNote)
			}
			if max := 4 + len(tt.wantPrevious) - 1; len(cs.Actions()) > max {
				t.Errorf("%d requests, want at most %d: %q", len(cs.Actions()), max, inspActionList(cs))
			}
		})
	}
}

func TestSnapshotClaims(t *testing.T) {
	twoClaims := func() *corev1.Pod {
		p := inspSeedPod()
		p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "logs", MountPath: "/opt/bitnami/kafka/logs"})
		p.Spec.Volumes = append(p.Spec.Volumes,
			corev1.Volume{Name: "logs", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "logs-foobar-kafka-broker-0"}}},
			corev1.Volume{Name: "unmounted", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "not-mounted-by-kafka"}}},
		)
		return p
	}
	tests := []struct {
		name        string
		objects     []runtime.Object
		wantClaims  []diagnose.VolumeClaim
		wantPVCVerb string
		wantNote    string
	}{
		{
			name: "two claims: one list instead of two gets",
			objects: []runtime.Object{twoClaims(),
				inspPVC("kafka", "data-foobar-kafka-broker-0", corev1.ClaimBound),
				inspPVC("kafka", "logs-foobar-kafka-broker-0", corev1.ClaimPending),
				inspPVC("kafka", "not-mounted-by-kafka", corev1.ClaimBound)},
			wantClaims: []diagnose.VolumeClaim{
				{Volume: "data", ClaimName: "data-foobar-kafka-broker-0", MountPath: "/bitnami/kafka", AccessModes: []string{"ReadWriteOnce"}, Phase: "Bound"},
				{Volume: "logs", ClaimName: "logs-foobar-kafka-broker-0", MountPath: "/opt/bitnami/kafka/logs", AccessModes: []string{"ReadWriteOnce"}, Phase: "Pending"},
			},
			wantPVCVerb: "list persistentvolumeclaims",
		},
		{
			name:        "claim object missing: kept from the pod spec, noted",
			objects:     []runtime.Object{inspSeedPod()},
			wantClaims:  []diagnose.VolumeClaim{{Volume: "data", ClaimName: "data-foobar-kafka-broker-0", MountPath: "/bitnami/kafka"}},
			wantPVCVerb: "get persistentvolumeclaims",
			wantNote:    "claim data-foobar-kafka-broker-0 (volume data) does not exist",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset(tt.objects...)
			(&inspLogServer{previous: []byte("x\n")}).install(cs)
			in, err := New(cs, Options{}).Inspect(context.Background(), "kafka", "foobar-kafka-broker-0")
			if err != nil {
				t.Fatalf("Inspect: %v", err)
			}
			if fmt.Sprint(in.Snapshot.Claims) != fmt.Sprint(tt.wantClaims) {
				t.Errorf("Claims =\n%+v\nwant\n%+v", in.Snapshot.Claims, tt.wantClaims)
			}
			actions := inspActionList(cs)
			if len(actions) != 4 || !slices.Contains(actions, tt.wantPVCVerb) {
				t.Errorf("requests = %q, want 4 including %q", actions, tt.wantPVCVerb)
			}
			if tt.wantNote != "" && !slices.Contains(in.Notes, tt.wantNote) {
				t.Errorf("notes = %q, want %q", in.Notes, tt.wantNote)
			}
		})
	}
}

func TestInspectRefusals(t *testing.T) {
	web := &corev1.Pod{}
	web.Name, web.Namespace, web.Labels = "web-0", "kafka", map[string]string{"app": "web"}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "", errors.New(`User "system:serviceaccount:kafka-bot:bot" cannot list resource "events"`))

	tests := []struct {
		name        string
		ns, pod     string
		setup       func(*fake.Clientset)
		wantIs      error
		wantAPI     func(error) bool
		wantActions int
		// orFewer accepts down to wantActions-orFewer requests: reads that
		// run at once may or may not have been sent before one failed.
		orFewer int
	}{
		{name: "namespace outside KAFKA_NAMESPACES", ns: "kube-system", pod: "foobar-kafka-broker-0", wantIs: ErrNamespaceNotAllowed},
		{name: "no namespace", ns: "", pod: "foobar-kafka-broker-0", wantIs: ErrInvalidName},
		{name: "path in name", ns: "kafka", pod: "../etc", wantIs: ErrInvalidName},
		{name: "absent pod", ns: "kafka", pod: "foobar-kafka-broker-9", wantIs: ErrPodNotFound, wantActions: 1},
		{name: "not a Kafka pod: its log is never read", ns: "kafka", pod: "web-0", wantIs: ErrNotKafkaPod, wantActions: 1},
		{
			name: "RBAC forbids events: the error says so", ns: "kafka", pod: "foobar-kafka-broker-0",
			setup: func(cs *fake.Clientset) {
				cs.PrependReactor("list", "events", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, forbidden })
			},
			// The pod get, then claims, events and log at once: the log
			// and claim reads may be cancelled before they are sent.
			wantAPI: apierrors.IsForbidden, wantActions: 4, orFewer: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset(append(inspSeedObjects(), web)...)
			(&inspLogServer{previous: []byte("x\n")}).install(cs)
			if tt.setup != nil {
				tt.setup(cs)
			}
			c := New(cs, Options{Namespaces: []string{"kafka"}})
			_, err := c.Inspect(context.Background(), tt.ns, tt.pod)
			if err == nil {
				t.Fatal("Inspect succeeded, want an error")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %q is not %v", err, tt.wantIs)
			}
			if tt.wantAPI != nil && !tt.wantAPI(err) {
				t.Errorf("error %q has the wrong API status", err)
			}
			if got := len(cs.Actions()); got > tt.wantActions || got < tt.wantActions-tt.orFewer {
				t.Errorf("%d requests, want %d: %q", got, tt.wantActions, inspActionList(cs))
			}
		})
	}
}

// inspEndlessReader is a log stream that never ends, like a server that
// ignores limitBytes on a followed log.
type inspEndlessReader struct{ read int64 }

func (r *inspEndlessReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = "line\n"[int(r.read+int64(i))%5]
	}
	r.read += int64(len(p))
	return len(p), nil
}

func TestReadLogTail(t *testing.T) {
	lines := func(n int) string { return strings.Repeat("0123456789\n", n) } // 11 bytes a line
	tests := []struct {
		name                   string
		in                     string
		keep, limit            int64
		want                   string
		wantCutOlder, wantHits bool
		wantReceived           int64
	}{
		{name: "empty", in: "", keep: 100, limit: 400, want: "", wantReceived: 0},
		{name: "fits", in: lines(3), keep: 100, limit: 400, want: lines(3), wantReceived: 33},
		{name: "exactly keep", in: lines(10)[:100], keep: 100, limit: 400, want: lines(10)[:100], wantReceived: 100},
		{name: "older lines cut at a line boundary", in: lines(20), keep: 50, limit: 400, want: lines(4), wantCutOlder: true, wantReceived: 220},
		{name: "exactly the cap is not over it", in: lines(20)[:200], keep: 50, limit: 200, want: lines(20)[:200][154:], wantCutOlder: true, wantReceived: 200},
		{name: "over the cap", in: lines(40), keep: 50, limit: 200, want: lines(20)[:200][154:], wantCutOlder: true, wantHits: true, wantReceived: 200},
		{name: "no newline to cut at", in: strings.Repeat("x", 300), keep: 50, limit: 400, want: strings.Repeat("x", 50), wantCutOlder: true, wantReceived: 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readLogTail(strings.NewReader(tt.in), tt.keep, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if string(got.text) != tt.want || got.cutOlder != tt.wantCutOlder || got.hitCap != tt.wantHits || got.received != tt.wantReceived {
				t.Errorf("readLogTail = %q cutOlder=%v hitCap=%v received=%d; want %q %v %v %d",
					got.text, got.cutOlder, got.hitCap, got.received, tt.want, tt.wantCutOlder, tt.wantHits, tt.wantReceived)
			}
		})
	}

	t.Run("endless stream is read only up to the cap", func(t *testing.T) {
		r := &inspEndlessReader{}
		got, err := readLogTail(r, 1000, 100_000)
		if err != nil {
			t.Fatal(err)
		}
		// The tail reader asks for at most limit+1 bytes through io.LimitReader;
		// the endless reader is called with buffers no larger than that.
		if r.read > 100_001 || !got.hitCap || len(got.text) > 1000 {
			t.Errorf("read %d bytes from an endless stream, hitCap=%v, kept %d; want <= 100001, true, <= 1000", r.read, got.hitCap, len(got.text))
		}
	})

	t.Run("read error is returned", func(t *testing.T) {
		_, err := readLogTail(io.MultiReader(strings.NewReader("a\n"), inspErrReader{}), 100, 1000)
		if err == nil || !strings.Contains(err.Error(), "connection reset") {
			t.Errorf("err = %v, want the stream's error", err)
		}
	})
}

type inspErrReader struct{}

func (inspErrReader) Read([]byte) (int, error) { return 0, errors.New("connection reset by peer") }

func BenchmarkReadLogTail(b *testing.B) {
	body := bytes.Repeat([]byte("[2025-04-28 08:22:01,606] INFO [MetadataLoader id=100] initializeNewPublishers: catching up\n"), 10000)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := readLogTail(bytes.NewReader(body), 256<<10, 1<<20); err != nil {
			b.Fatal(err)
		}
	}
}
