// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kafka-chatops/kafkabot/internal/kube"
)

// The Kubernetes side of issue 9: every API call the repair makes fails
// with each kind of error the API server produces, a few times (the bot
// retries where that is safe and carries on) and for good (the bot stops
// with a clear message and leaves nothing half done); watches drop; the
// debug pod is never scheduled or loses its node; someone else deletes the
// broker; the broker's claim is missing.

// apiFault is one kind of API error.
type apiFault struct {
	name string
	make func(gr schema.GroupResource, name string) error
	// transient errors are the ones kube.IsTransient retries.
	transient bool
}

var apiFaults = []apiFault{
	{"500", func(schema.GroupResource, string) error {
		return apierrors.NewInternalError(errors.New("injected: etcdserver: leader changed"))
	}, true},
	{"429", func(schema.GroupResource, string) error {
		return apierrors.NewTooManyRequests("injected: the server has received too many requests", 1)
	}, true},
	{"timeout", func(gr schema.GroupResource, _ string) error {
		return apierrors.NewServerTimeout(gr, "injected", 1)
	}, true},
	{"conflict", func(gr schema.GroupResource, name string) error {
		return apierrors.NewConflict(gr, name, errors.New("injected: the object has been modified"))
	}, false},
}

// apiCall is one verb on one resource, as the fake clientset records it.
type apiCall struct{ verb, resource, subresource string }

func (c apiCall) String() string {
	s := c.verb + " " + c.resource
	if c.subresource != "" {
		s += "/" + c.subresource
	}
	return s
}

func callOf(a k8stesting.Action) apiCall {
	return apiCall{a.GetVerb(), a.GetResource().Resource, a.GetSubresource()}
}

// injector fails the first `times` requests of one call with an error.
type injector struct {
	mu       sync.Mutex
	call     apiCall
	times    int
	fault    apiFault
	attempts int
}

func (in *injector) fire(a k8stesting.Action) error {
	if callOf(a) != in.call {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.attempts++
	if in.attempts > in.times {
		return nil
	}
	name := ""
	if n, ok := a.(interface{ GetName() string }); ok {
		name = n.GetName()
	}
	return in.fault.make(a.GetResource().GroupResource(), name)
}

func (in *injector) count() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.attempts
}

// install puts the injector in front of every other reactor.
func (in *injector) install(h *harness) {
	h.cs.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if err := in.fire(a); err != nil {
			return true, nil, err
		}
		return false, nil, nil
	})
	h.cs.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
		if err := in.fire(a); err != nil {
			return true, nil, err
		}
		return false, nil, nil
	})
}

func successPlan() kubeletPlan {
	return kubeletPlan{debug: "succeed", debugLog: movedResult(StatusMoved), broker: "ready", brokerLog: recoveredLog}
}

// callsOfARepair runs a clean repair and returns every distinct API call it
// made: the table of calls the fault test injects into.
func callsOfARepair(t *testing.T) []apiCall {
	t.Helper()
	h := newHarness(t, seedCluster(t), successPlan())
	if s := h.r.Repair(context.Background(), request(), &recorder{}); s.Outcome != OutcomeRepaired {
		t.Fatalf("clean repair: %s\n%s", s.Outcome, s.Text)
	}
	var calls []apiCall
	for _, a := range h.cs.Actions() {
		if c := callOf(a); !slices.Contains(calls, c) {
			calls = append(calls, c)
		}
	}
	return calls
}

// TestFaultKubeAPIErrorsOnEachCall injects 500s, 429s, server timeouts and
// resourceVersion conflicts into each API call a repair makes, twice (a
// blip) and without end (an outage). Whatever fails, the repair ends
// (never hangs), says which step failed and why, never restarts the broker
// without a recorded move, and leaves no debug pod and no running Lease
// behind, unless the Lease writes themselves are what keeps failing (then
// the cleanup failure is reported). Idempotent reads and deletes ride out
// a blip of transient errors and the repair succeeds.
func TestFaultKubeAPIErrorsOnEachCall(t *testing.T) {
	calls := callsOfARepair(t)
	for _, want := range []string{"get pods", "list pods", "create pods", "delete pods", "watch pods", "create leases", "update leases", "create events"} {
		if !slices.ContainsFunc(calls, func(c apiCall) bool { return c.String() == want }) {
			t.Fatalf("a clean repair made no %q call; calls: %v", want, calls)
		}
	}
	t.Logf("calls of a repair: %v", calls)
	for _, call := range calls {
		for _, fault := range apiFaults {
			for _, times := range []int{2, 1000} {
				name := fmt.Sprintf("%s/%s/x%d", strings.ReplaceAll(call.String(), " ", "_"), fault.name, times)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					runFaultedRepair(t, call, fault, times)
				})
			}
		}
	}
}

func runFaultedRepair(t *testing.T, call apiCall, fault apiFault, times int) {
	h := newHarness(t, seedCluster(t), successPlan())
	in := &injector{call: call, times: times, fault: fault}
	in.install(h)
	rep := &recorder{}
	done := make(chan Summary, 1)
	go func() { done <- h.r.Repair(context.Background(), request(), rep) }()
	// During an outage a watch's informer retries its list for as long as
	// the wait lasts: let the repair's timeout (on the fake clock) pass
	// whenever the repair sits waiting.
	var s Summary
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	hung := time.After(3 * time.Minute) // bounds a hung test only
	lastProgress, stalled := -1, 0
wait:
	for {
		select {
		case s = <-done:
			break wait
		case <-tick.C:
			// No step reported for four ticks while waiting on the clock:
			// let the wait's timeout pass.
			n := rep.startedCount()
			if n == lastProgress {
				stalled++
			} else {
				stalled = 0
			}
			if times > 2 && stalled >= 4 && h.clock.HasWaiters() {
				h.clock.Step(6 * time.Minute)
				stalled = 0
			}
			lastProgress = n
		case <-hung:
			t.Fatalf("the repair hung with %s failing %d times; progress:\n%s", call, times, rep.text())
		}
	}
	if rep.summary == nil || rep.summary.Outcome != s.Outcome {
		t.Fatalf("the reporter was not told the outcome: %+v vs %s", rep.summary, s.Outcome)
	}
	if in.count() == 0 {
		t.Fatalf("%s was never called", call)
	}
	writes := strings.Join(h.writes(), "\n")
	brokerRestarted := strings.Contains(writes, "delete pods/"+brokerName)
	l, err := h.cs.CoordinationV1().Leases(testNS).Get(context.Background(), kube.RepairLeaseName(brokerName), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err): // stopped before the Lease was taken
		l = &coordinationv1.Lease{}
		if brokerRestarted || strings.Contains(writes, "create pods/") {
			t.Errorf("pods written without a Lease; writes:\n%s", writes)
		}
	case err != nil:
		t.Fatal(err)
	}

	leaseCall := call.resource == "leases" && (call.verb == "update" || call.verb == "get")
	idempotent := call.verb == "get" || call.verb == "list" || call.verb == "watch" || call.verb == "delete" ||
		call.resource == "events"
	switch {
	case s.Outcome == OutcomeRepaired:
		if !brokerRestarted || !strings.Contains(l.Annotations[annoResult], `"Status":"moved"`) {
			t.Errorf("repaired without a recorded move and a restart; writes:\n%s", writes)
		}
	case times == 2 && fault.transient && idempotent:
		t.Errorf("a blip of %s on an idempotent call (%s) failed the repair: %s\n%s", fault.name, call, s.Outcome, s.Text)
	default:
		// A clear failure: the summary names the step and the API's words.
		if !strings.Contains(s.Text, "injected") && !strings.Contains(s.Text, "Not repaired") {
			t.Errorf("the summary does not say what failed:\n%s", s.Text)
		}
		if brokerRestarted && l.Annotations[annoResult] == "" {
			t.Errorf("the broker was restarted without a recorded move; writes:\n%s", writes)
		}
	}
	if call.resource == "events" && call.verb == "create" && s.Outcome != OutcomeRepaired {
		t.Errorf("failing to record Events failed the repair: %s\n%s", s.Outcome, s.Text)
	}

	// Nothing is left half done.
	debug := DebugPodName(brokerName)
	if _, err := h.tracker().Get(podsGVR, testNS, debug); err == nil {
		// A delete that keeps failing fails both the step and the cleanup.
		if !(call.verb == "delete" && call.resource == "pods" && times >= 2) {
			t.Errorf("debug pod %s left behind; writes:\n%s", debug, writes)
		} else if !strings.Contains(rep.text(), "failed | Delete") {
			t.Errorf("debug pod left behind and the failed cleanup not reported:\n%s", rep.text())
		}
	}
	if l.Annotations[annoState] == leaseRunning || l.Spec.HolderIdentity != nil {
		if !leaseCall || times <= 2 {
			t.Errorf("lease left %s, holder %v", l.Annotations[annoState], l.Spec.HolderIdentity)
		} else if !strings.Contains(rep.text(), "failed | Release the repair lease") && !strings.Contains(s.Text, "injected") {
			t.Errorf("lease left running and not reported:\n%s", rep.text())
		}
	}
	// An outage is given up on after a bounded number of tries.
	if times > 2 && in.count() > 40 {
		t.Errorf("%s tried %d times during an outage; want a bounded budget", call, in.count())
	}
}

// droppingWatches answers the first n pod watches with a watch that
// delivers nothing and can be closed by the test: a watch that drops.
type droppingWatches struct {
	mu      sync.Mutex
	n       int
	open    []*watch.FakeWatcher
	dropped int
}

func (d *droppingWatches) install(h *harness) {
	h.cs.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.n == 0 {
			return false, nil, nil
		}
		d.n--
		w := watch.NewFake()
		d.open = append(d.open, w)
		return true, w, nil
	})
}

// dropAll closes every open dead watch.
func (d *droppingWatches) dropAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, w := range d.open {
		w.Stop()
		d.dropped++
	}
	d.open = nil
}

func (d *droppingWatches) opened() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.open) + d.dropped
}

// TestFaultWatchDropsDuringTheWait makes the debug pod finish while the
// repair's watch is dead, then drops that watch: the wait re-lists, sees
// the finished pod, and the repair completes. A missed event never leaves
// the repair waiting until its timeout.
func TestFaultWatchDropsDuringTheWait(t *testing.T) {
	h := newHarness(t, seedCluster(t), kubeletPlan{debug: "hang", broker: "ready", brokerLog: recoveredLog})
	dw := &droppingWatches{n: 1}
	dw.install(h)
	done := make(chan Summary, 1)
	rep := &recorder{}
	go func() { done <- h.r.Repair(context.Background(), request(), rep) }()
	waitForTimer(t, h)
	waitUntil(t, "the dead watch to be opened", func() bool { return dw.opened() == 1 })

	name := DebugPodName(brokerName)
	obj, err := h.tracker().Get(podsGVR, testNS, name)
	if err != nil {
		t.Fatal(err)
	}
	pod := obj.(*corev1.Pod).DeepCopy()
	h.logs.set(name, movedResult(StatusMoved))
	finishDebugPod(pod, true)
	if err := h.tracker().Update(podsGVR, pod, testNS); err != nil { // the dead watch misses this
		t.Fatal(err)
	}
	dw.dropAll()
	s := <-done
	if s.Outcome != OutcomeRepaired {
		t.Fatalf("outcome %s after a dropped watch:\n%s\n%s", s.Outcome, s.Text, rep.text())
	}
	if h.clock.Since(testStart) != 0 {
		t.Errorf("the repair only finished because its timeout passed")
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFaultClusterChangesDuringRepair covers what the cluster does to a
// running repair: the debug pod never scheduled, the debug pod's node
// going away (the pod is deleted, or fails without a result), and someone
// else deleting the broker pod while the script runs.
func TestFaultClusterChangesDuringRepair(t *testing.T) {
	debugName := DebugPodName(brokerName)
	tests := []struct {
		name string
		// act changes the cluster while the repair waits for its debug pod.
		act         func(t *testing.T, h *harness)
		wantOutcome Outcome
		wantText    []string
		// wantBrokerDelete: the bot deletes the approved broker pod.
		wantBrokerDelete bool
	}{
		{
			name:        "debug pod never scheduled: Pending until the deadline",
			act:         func(t *testing.T, h *harness) { h.clock.Step(6 * time.Minute) },
			wantOutcome: OutcomeFailed,
			wantText:    []string{"waiting to give the debug pod its go: timed out after 5m0s"},
		},
		{
			name: "the debug pod's node goes away: pod deleted by the pod GC",
			act: func(t *testing.T, h *harness) {
				if err := h.tracker().Delete(podsGVR, testNS, debugName); err != nil {
					t.Fatal(err)
				}
			},
			wantOutcome: OutcomeFailed,
			wantText:    []string{"pod was deleted"},
		},
		{
			name: "the debug pod's node goes away: pod failed without a result",
			act: func(t *testing.T, h *harness) {
				obj, err := h.tracker().Get(podsGVR, testNS, debugName)
				if err != nil {
					t.Fatal(err)
				}
				pod := obj.(*corev1.Pod).DeepCopy()
				pod.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "NodeLost",
					Message: "Node node-a which was running pod " + debugName + " is unresponsive"}
				h.logs.set(debugName, "")
				if err := h.tracker().Update(podsGVR, pod, testNS); err != nil {
					t.Fatal(err)
				}
			},
			wantOutcome: OutcomeFailed,
			wantText:    []string{"ended in phase Failed"},
		},
		{
			name: "someone else deletes the broker pod while the script runs",
			act: func(t *testing.T, h *harness) {
				// The StatefulSet recreates it (new UID) and it comes up Ready.
				if err := h.tracker().Delete(podsGVR, testNS, brokerName); err != nil {
					t.Fatal(err)
				}
				if err := h.tracker().Create(podsGVR, bitnamiPod(brokerName, "broker", newBrokerUID), testNS); err != nil {
					t.Fatal(err)
				}
				obj, err := h.tracker().Get(podsGVR, testNS, debugName)
				if err != nil {
					t.Fatal(err)
				}
				pod := obj.(*corev1.Pod).DeepCopy()
				h.logs.set(debugName, movedResult(StatusMoved))
				h.logs.set(brokerName, recoveredLog)
				finishDebugPod(pod, true)
				if err := h.tracker().Update(podsGVR, pod, testNS); err != nil {
					t.Fatal(err)
				}
			},
			wantOutcome:      OutcomeRepaired,
			wantText:         []string{"New pod " + brokerName + " (UID " + newBrokerUID + "): Ready"},
			wantBrokerDelete: true, // of the approved UID only: a no-op on the new pod
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, seedCluster(t), kubeletPlan{debug: "hang", broker: "none"})
			enforceUIDPreconditions(h)
			rep := &recorder{}
			done := make(chan Summary, 1)
			go func() { done <- h.r.Repair(context.Background(), request(), rep) }()
			waitForTimer(t, h)
			// The repair watches its debug pod now: act once that watch is
			// established (the fake loses a delete between list and watch).
			h.waitForWatch(t, debugName)
			tc.act(t, h)
			var s Summary
			select {
			case s = <-done:
			case <-time.After(2 * time.Minute):
				// Only a wait nothing ends (the fake clock never
				// reaches a timeout) takes this long: say where.
				t.Fatalf("the repair never returned; progress:\n%s", rep.text())
			}
			if s.Outcome != tc.wantOutcome {
				t.Fatalf("outcome %s, want %s:\n%s\n%s", s.Outcome, tc.wantOutcome, s.Text, rep.text())
			}
			for _, w := range tc.wantText {
				if !strings.Contains(s.Text, w) {
					t.Errorf("summary lacks %q:\n%s", w, s.Text)
				}
			}
			if _, err := h.tracker().Get(podsGVR, testNS, debugName); err == nil {
				t.Errorf("debug pod left behind")
			}
			l := h.lease()
			want := leaseFailed
			if tc.wantOutcome == OutcomeRepaired {
				want = leaseDone
			}
			if l.Annotations[annoState] != want || l.Spec.HolderIdentity != nil {
				t.Errorf("lease state %q holder %v, want %s and released", l.Annotations[annoState], l.Spec.HolderIdentity, want)
			}
			// The bot never deletes a broker pod other than the approved
			// instance: every delete of it carries the approved UID.
			deletes := 0
			for _, a := range h.cs.Actions() {
				d, ok := a.(k8stesting.DeleteAction)
				if !ok || d.GetName() != brokerName {
					continue
				}
				deletes++
				pre := d.GetDeleteOptions().Preconditions
				if pre == nil || pre.UID == nil || string(*pre.UID) != brokerUID {
					t.Errorf("broker deleted without the approved UID as precondition: %+v", d.GetDeleteOptions())
				}
			}
			if got := deletes > 0; got != tc.wantBrokerDelete {
				t.Errorf("broker delete attempted = %t, want %t", got, tc.wantBrokerDelete)
			}
			if obj, err := h.tracker().Get(podsGVR, testNS, brokerName); tc.name == tests[3].name && (err != nil || string(obj.(*corev1.Pod).UID) != newBrokerUID) {
				t.Errorf("the pod someone else recreated is gone: %v", err)
			}
		})
	}
}

// enforceUIDPreconditions makes pod deletes honour a UID precondition, as
// the API server does (client-go's fake tracker ignores preconditions).
func enforceUIDPreconditions(h *harness) {
	h.cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteAction)
		pre := d.GetDeleteOptions().Preconditions
		if pre == nil || pre.UID == nil {
			return false, nil, nil
		}
		obj, err := h.tracker().Get(podsGVR, d.GetNamespace(), d.GetName())
		if err != nil {
			return false, nil, nil
		}
		if uid := obj.(*corev1.Pod).UID; uid != *pre.UID {
			return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), d.GetName(),
				fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *pre.UID, uid))
		}
		return false, nil, nil
	})
}

// TestFaultMissingClaim: the broker's PersistentVolumeClaim does not
// exist. The gates refuse with the claim's name; nothing is written.
func TestFaultMissingClaim(t *testing.T) {
	c := seedCluster(t)
	c.claims = c.claims[1:] // data-foobar-kafka-broker-0 is gone
	h := newHarness(t, c, successPlan())
	s := h.r.Repair(context.Background(), request(), &recorder{})
	if s.Outcome != OutcomeGateFailed {
		t.Fatalf("outcome %s, want gate-failed:\n%s", s.Outcome, s.Text)
	}
	if !strings.Contains(s.Text, "data-"+brokerName) || !strings.Contains(s.Text, "Nothing was changed") {
		t.Errorf("the refusal does not name the missing claim:\n%s", s.Text)
	}
	for _, w := range h.writes() {
		if !strings.HasPrefix(w, "create events/") {
			t.Errorf("wrote %s for a broker without its claim", w)
		}
	}
	if _, err := h.cs.CoordinationV1().Leases(testNS).Get(context.Background(), kube.RepairLeaseName(brokerName), metav1.GetOptions{}); err == nil {
		t.Error("a lease was taken")
	}
}
