package benchutil

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// NewWorld returns a fake clientset holding objs. Unlike the bare fake, it
// applies the API server's defaults on create (see serverDefaults).
func NewWorld(objs ...runtime.Object) *fake.Clientset {
	cs := fake.NewClientset(objs...)
	cs.PrependReactor("create", "*", serverDefaults)
	return cs
}

// serverDefaults does to a created object what the API server does and the
// bare fake does not, then lets the next reactor store it: a fresh UID
// (the bot tells a recreated pod from the old one by it), and phase
// Pending for a new pod (the kubelet stand-in starts pending debug pods).
func serverDefaults(a k8stesting.Action) (bool, runtime.Object, error) {
	ca, ok := a.(k8stesting.CreateAction)
	if !ok || ca.GetObject() == nil {
		return false, nil, nil
	}
	if m, err := meta.Accessor(ca.GetObject()); err == nil && m.GetUID() == "" {
		m.SetUID(uuid.NewUUID())
	}
	if pod, ok := ca.GetObject().(*corev1.Pod); ok && pod.Status.Phase == "" {
		pod.Status.Phase = corev1.PodPending
	}
	return false, nil, nil
}
