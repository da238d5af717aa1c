// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/testkit/kubesim"
)

// The process side of issue 9: the bot dies right after each step of a
// repair in turn, and a restarted bot (a new Repairer, same replica
// identity) runs Resume. The debug pod runs the real repair script under
// busybox against a real directory standing in for the broker's volume.

// errProcessDead is what every API call of a killed bot "returns": a dead
// process makes no more calls.
var errProcessDead = errors.New("the bot process is dead")

// realScriptPods runs each debug pod's script for real (kubesim's runner)
// against vol, when the pod is created, and counts the runs.
type realScriptPods struct {
	runner *kubesim.Runner
	vol    string
	runs   atomic.Int32
	seq    atomic.Int32
}

func (p *realScriptPods) install(t *testing.T, h *harness) {
	h.cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod).DeepCopy()
		if pod.Labels[kube.LabelManagedBy] != kube.ManagedByBot {
			return false, nil, nil
		}
		pod.UID = types.UID(fmt.Sprintf("uid-debug-real-%d", p.seq.Add(1)))
		runDebugPod(pod) // the script runs its checks and waits for its go
		if err := h.tracker().Create(podsGVR, pod, pod.Namespace); err != nil {
			return true, nil, err
		}
		return true, pod.DeepCopy(), nil
	})
	// The go signal: the real script runs with the annotation projected
	// into its downwardAPI volume, as the kubelet would.
	h.cs.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchAction)
		obj, err := h.tracker().Get(podsGVR, pa.GetNamespace(), pa.GetName())
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*corev1.Pod).DeepCopy()
		var patch struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(pa.GetPatch(), &patch); err != nil {
			return true, nil, err
		}
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		for k, v := range patch.Metadata.Annotations {
			pod.Annotations[k] = v
		}
		claims := func(claim string) (string, bool) { return p.vol, claim == "data-"+brokerName }
		p.runs.Add(1)
		res := p.runner.Run(context.Background(), pod, claims)
		h.logs.set(pod.Name, res.Output)
		finishDebugPod(pod, res.ExitCode == 0)
		if err := h.tracker().Update(podsGVR, pod, pod.Namespace); err != nil {
			return true, nil, err
		}
		return true, pod.DeepCopy(), nil
	})
}

// killSwitch makes every API call fail once the bot is "killed".
type killSwitch struct{ dead atomic.Bool }

func (k *killSwitch) install(h *harness) {
	h.cs.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		if k.dead.Load() {
			return true, nil, errProcessDead
		}
		return false, nil, nil
	})
	h.cs.PrependWatchReactor("*", func(k8stesting.Action) (bool, watch.Interface, error) {
		if k.dead.Load() {
			return true, nil, errProcessDead
		}
		return false, nil, nil
	})
}

// killAfter is the Reporter of a bot that dies right after step `after`
// (0-based, in the plan's order) is done.
type killAfter struct {
	recorder
	after  int
	done   int
	kill   func()
	killed atomic.Bool
}

func (k *killAfter) Report(ctx context.Context, p Progress) {
	k.recorder.Report(ctx, p)
	if p.Status != StepDone && p.Status != StepSkipped {
		return
	}
	if k.done == k.after && k.killed.CompareAndSwap(false, true) {
		k.kill()
	}
	k.done++
}

// volumeState is a directory tree: each file's path and content hash.
func volumeState(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:8])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFaultKilledAfterEveryStep kills the bot right after each step of the
// repair plan in turn, then starts a new Repairer and runs Resume.
// Afterwards the volume is either untouched or fully repaired (the whole
// __cluster_metadata-0 in exactly one backup folder, byte for byte; never a
// half-moved directory, never a second move), the Lease is released with
// state done (or was never taken), the debug pod is gone, and the old or
// the resumed thread says what happened.
func TestFaultKilledAfterEveryStep(t *testing.T) {
	if _, err := os.Stat("/bin/busybox"); err != nil {
		if _, err := os.Stat("/usr/bin/busybox"); err != nil {
			t.Fatal("busybox is needed to run the repair script (hack/test.sh installs it)")
		}
	}
	steps := len(newHarness(t, seedCluster(t), kubeletPlan{}).r.newRun(request(), &recorder{}).plan().Steps)
	for after := 0; after < steps; after++ {
		t.Run(fmt.Sprintf("killed after step %d", after+1), func(t *testing.T) {
			runner, err := kubesim.NewRunner("", t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			vol := t.TempDir()
			writeLogDir(t, vol, "data", "100", "dirA", true)
			before := volumeState(t, vol)

			// The real script checks the go's deadline against the real
			// clock: the broker's last exit is now (the bot's clock is fake).
			c := seedCluster(t)
			c.broker.Status.ContainerStatuses[0].LastTerminationState.Terminated.FinishedAt = metav1.Now()
			h := newHarness(t, c, kubeletPlan{broker: "ready", brokerLog: recoveredLog})
			pods := &realScriptPods{runner: runner, vol: vol}
			pods.install(t, h)
			ks := &killSwitch{}
			ks.install(h)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			first := &killAfter{after: after, kill: func() { ks.dead.Store(true); cancel() }}
			done := make(chan Summary, 1)
			go func() { done <- h.r.Repair(ctx, request(), first) }()
			var s Summary
			select {
			case s = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("the killed repair never returned; progress:\n%s", first.text())
			}
			killedStep := ""
			if first.killed.Load() {
				killedStep = stepNames(first)[after]
			}

			// The restarted bot: same replica identity, a fresh Repairer.
			ks.dead.Store(false)
			restarted := NewRepairer(h.kc, h.r.engine, h.r.opts)
			th := &threads{}
			// Bounded, so that a resumed wait nothing ends fails here,
			// saying where, rather than as the package's timeout.
			rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer rcancel()
			if err := restarted.Resume(rctx, th.newReporter); err != nil {
				t.Fatal(err)
			}
			if rctx.Err() != nil {
				th.mu.Lock()
				for _, rep := range th.reps {
					t.Logf("resumed thread:\n%s", rep.text())
				}
				th.mu.Unlock()
				t.Fatal("Resume did not finish within 2 minutes")
			}

			lease, err := h.cs.CoordinationV1().Leases(testNS).Get(context.Background(), kube.RepairLeaseName(brokerName), metav1.GetOptions{})
			leaseTaken := err == nil
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
			after := volumeState(t, vol)
			moved := assertVolumeWholeOrMoved(t, before, after)

			if n := pods.runs.Load(); n > 2 || (moved && n == 0) {
				t.Errorf("the script ran %d times", n)
			}
			if _, err := h.tracker().Get(podsGVR, testNS, DebugPodName(brokerName)); err == nil {
				t.Error("the debug pod is left behind")
			}
			switch {
			case !leaseTaken:
				if moved || first.summary == nil || !strings.Contains(first.summary.Text, "The bot stopped during") {
					t.Errorf("no lease, but moved=%t; summary: %+v", moved, first.summary)
				}
				if len(th.reps) != 0 {
					t.Errorf("Resume reported %d repairs without a lease", len(th.reps))
				}
			default:
				if st := lease.Annotations[annoState]; st != leaseDone || lease.Spec.HolderIdentity != nil {
					t.Errorf("lease state %q holder %v, want done and released", st, lease.Spec.HolderIdentity)
				}
				if !moved {
					t.Error("the lease says done but the volume was not repaired")
				}
				if len(th.reps) == 1 {
					rep := th.reps[0]
					if !strings.Contains(rep.text(), "bot restarted during step") || rep.summary == nil || rep.summary.Outcome != OutcomeRepaired {
						t.Errorf("the resumed thread does not say what happened:\n%s\n%+v", rep.text(), rep.summary)
					}
				} else if s.Outcome != OutcomeRepaired {
					t.Errorf("the repair neither finished (%s) nor was resumed (%d threads)", s.Outcome, len(th.reps))
				}
			}
			t.Logf("killed after %q: first outcome %s, lease taken %t, moved %t, script runs %d, resumed threads %d",
				killedStep, s.Outcome, leaseTaken, moved, pods.runs.Load(), len(th.reps))
		})
	}
}

// stepNames lists the distinct steps a recorder saw finish, in order.
func stepNames(r *killAfter) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, p := range r.progress {
		if p.Status == StepDone || p.Status == StepSkipped {
			out = append(out, p.Step)
		}
	}
	return out
}

// assertVolumeWholeOrMoved checks that the volume after equals before, or
// equals before with every file of data/__cluster_metadata-0 moved, byte
// for byte, under exactly one kafkabot-backup-* folder. It reports which.
func assertVolumeWholeOrMoved(t *testing.T, before, after map[string]string) (moved bool) {
	t.Helper()
	const target = "data/__cluster_metadata-0/"
	backups := map[string]bool{}
	var missing, extra []string
	for path, sum := range before {
		if !strings.HasPrefix(path, target) {
			if after[path] != sum {
				missing = append(missing, path)
			}
			continue
		}
		if _, ok := after[path]; ok {
			continue // still in place
		}
		moved = true
		found := false
		for p, s := range after {
			if strings.HasPrefix(p, "kafkabot-backup-") && strings.HasSuffix(p, "/"+path) && s == sum {
				backups[strings.SplitN(p, "/", 2)[0]] = true
				found = true
			}
		}
		if !found {
			missing = append(missing, path)
		}
	}
	for path := range after {
		if _, ok := before[path]; !ok && !strings.HasPrefix(path, "kafkabot-backup-") {
			extra = append(extra, path)
		}
	}
	if moved {
		for path := range before {
			if strings.HasPrefix(path, target) {
				if _, still := after[path]; still {
					missing = append(missing, "half-moved: "+path+" is still in place")
				}
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("volume is neither untouched nor fully repaired: missing %v, unexpected %v", missing, extra)
	}
	if moved && len(backups) != 1 {
		t.Errorf("the target was moved into %d backup folders: %v", len(backups), backups)
	}
	if !moved && len(backups) > 0 {
		t.Errorf("backup folders exist but nothing moved: %v", backups)
	}
	return moved
}
