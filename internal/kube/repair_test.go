// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func typesUID(s string) types.UID { return types.UID(s) }

func labelledPod(name, repairID string) *corev1.Pod {
	p := repairTestPod(name, "", corev1.PodPending)
	p.Labels = map[string]string{LabelManagedBy: ManagedByBot, LabelRepairID: repairID}
	return p
}

func TestCreateRepairPod(t *testing.T) {
	timeout := apierrors.NewServerTimeout(podsResource.GroupResource(), "create", 1)
	tests := []struct {
		name string
		// existing is in the cluster before; createErr is what the
		// create returns, after storing the pod when stored is true.
		existing  *corev1.Pod
		createErr error
		stored    bool
		wantErr   string
		wantCalls int
	}{
		{name: "created", wantCalls: 1},
		{name: "answer lost, pod stored: accepted after a read", createErr: timeout, stored: true, wantCalls: 2},
		{name: "answer lost, pod not stored: error, no second create", createErr: timeout, wantErr: "not found", wantCalls: 2},
		{name: "same repair's pod exists: reused", existing: labelledPod("debug", "r1"), wantCalls: 2},
		{name: "another repair's pod exists: refused", existing: labelledPod("debug", "r2"), wantErr: `belongs to repair "r2"`, wantCalls: 2},
		{name: "forbidden: no read", createErr: apierrors.NewForbidden(podsResource.GroupResource(), "debug", errors.New("rbac")), wantErr: "forbidden", wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			if tc.existing != nil {
				objs = append(objs, tc.existing)
			}
			cs := fake.NewClientset(objs...)
			if tc.createErr != nil {
				cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
					if tc.stored {
						_ = cs.Tracker().Create(podsResource, a.(k8stesting.CreateAction).GetObject(), "kafka")
					}
					return true, nil, tc.createErr
				})
			}
			pod, err := New(cs, Options{}).CreateRepairPod(context.Background(), labelledPod("debug", "r1"))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
			} else if err != nil || pod.Labels[LabelRepairID] != "r1" {
				t.Fatalf("CreateRepairPod = %v, %v", pod, err)
			}
			creates := 0
			for _, a := range cs.Actions() {
				if a.GetVerb() == "create" {
					creates++
				}
			}
			if creates != 1 || len(cs.Actions()) != tc.wantCalls {
				t.Errorf("%d creates and %d calls, want 1 and %d", creates, len(cs.Actions()), tc.wantCalls)
			}
		})
	}
}

func TestDeletePodUID(t *testing.T) {
	cs := fake.NewClientset(repairTestPod("broker-0", "u1", corev1.PodRunning))
	calls := 0
	cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if calls == 1 {
			return true, nil, apierrors.NewTooManyRequests("slow down", 0)
		}
		pre := a.(k8stesting.DeleteAction).GetDeleteOptions().Preconditions
		if pre == nil || pre.UID == nil || *pre.UID != "u1" {
			t.Errorf("delete without the UID precondition: %+v", pre)
		}
		return false, nil, nil
	})
	c := New(cs, Options{})
	if err := c.DeletePodUID(context.Background(), "kafka", "broker-0", "u1"); err != nil {
		t.Fatalf("delete with one 429: %v", err)
	}
	if calls != 2 {
		t.Errorf("%d delete calls, want 2 (one retry)", calls)
	}
	if err := c.DeletePodUID(context.Background(), "kafka", "broker-0", "u1"); err != nil {
		t.Errorf("deleting a pod that is gone: %v", err)
	}
}

func TestIsTransient(t *testing.T) {
	gr := podsResource.GroupResource()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewTooManyRequests("", 1), true},
		{apierrors.NewInternalError(errors.New("x")), true},
		{apierrors.NewServerTimeout(gr, "get", 1), true},
		{apierrors.NewConflict(gr, "p", errors.New("x")), false},
		{apierrors.NewNotFound(gr, "p"), false},
		{apierrors.NewForbidden(gr, "p", errors.New("x")), false},
		{nil, false},
	} {
		if got := IsTransient(tc.err); got != tc.want {
			t.Errorf("IsTransient(%v) = %t, want %t", tc.err, got, tc.want)
		}
	}
}

func TestRecordPodEvent(t *testing.T) {
	cs := fake.NewClientset()
	c := New(cs, Options{})
	ref := PodRef{Namespace: "kafka", Name: "broker-0", UID: "u1"}
	long := strings.Repeat("x", 2000)
	for range 2 { // same instant twice: names must differ
		if err := c.RecordPodEvent(context.Background(), PodEvent{Pod: ref, Type: corev1.EventTypeNormal, Reason: "KafkabotRepairStep", Message: long, Instance: "bot-a"}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := cs.CoreV1().Events("kafka").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 {
		t.Fatalf("events %v, %v; want 2", list, err)
	}
	e := list.Items[0]
	if e.InvolvedObject.Name != "broker-0" || e.InvolvedObject.UID != "u1" || e.InvolvedObject.Kind != "Pod" || e.Reason != "KafkabotRepairStep" ||
		len(e.Message) != maxEventMessage || e.Source.Component != EventComponent {
		t.Errorf("event %+v", e)
	}
}
