// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package testenv

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestStartSecondIsAnIndependentCluster: the second control plane has its
// own storage (a namespace made on one does not exist on the other), the
// bot's identity and RBAC installed like the first, and one per package.
func TestStartSecondIsAnIndependentCluster(t *testing.T) {
	a, b := Start(t), StartSecond(t)
	if again := StartSecond(t); again != b {
		t.Error("StartSecond started another control plane on its second call")
	}
	if a.Config.Host == b.Config.Host {
		t.Fatalf("both control planes serve %s", a.Config.Host)
	}
	ns := b.KafkaNamespace(t, "kafka-second-only", nil)
	if _, err := a.Clientset.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s made on the second control plane: on the first, err = %v, want NotFound", ns, err)
	}
	bot, err := kubernetes.NewForConfig(b.BotConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bot.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Errorf("the bot cannot list pods in its Kafka namespace on the second control plane: %v", err)
	}
	if _, err := bot.CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the bot listing Secrets on the second control plane: err = %v, want Forbidden (RBAC enforced)", err)
	}
}

// TestEachReaperHoldsOnlyItsOwnControlPlane: with two control planes in one
// process, each reaper kills only the processes its own start started, so
// a failed Stop of one never takes the other down.
func TestEachReaperHoldsOnlyItsOwnControlPlane(t *testing.T) {
	a, b := Start(t), StartSecond(t)
	if a.reaper == nil || b.reaper == nil {
		t.Skip("no reaper on this platform")
	}
	if len(a.reaper.groups) != 2 || len(b.reaper.groups) != 2 {
		t.Fatalf("reaper process groups %v and %v, want etcd's and kube-apiserver's each", a.reaper.groups, b.reaper.groups)
	}
	for _, g := range a.reaper.groups {
		if slices.Contains(b.reaper.groups, g) {
			t.Errorf("process group %d is in both reapers (%v, %v)", g, a.reaper.groups, b.reaper.groups)
		}
	}
	all, err := controlPlaneGroups(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range append(slices.Clone(a.reaper.groups), b.reaper.groups...) {
		if !slices.Contains(all, g) {
			t.Errorf("reaper group %d is not a control-plane process of this test binary (%v)", g, all)
		}
	}
}

// TestKubeconfigActsAsTheConfig: a kubeconfig file made from BotConfig
// reaches the API server as the bot's ServiceAccount (impersonation kept).
func TestKubeconfigActsAsTheConfig(t *testing.T) {
	env := StartSecond(t)
	path := WriteKubeconfig(t, env.BotConfig(), "cluster-b")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %v, want 0600 (it holds credentials)", info.Mode().Perm())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := review.Status.UserInfo.Username; got != BotUserName {
		t.Errorf("the kubeconfig acts as %q, want %q", got, BotUserName)
	}
	if _, err := Kubeconfig(&rest.Config{Host: env.Config.Host, BearerTokenFile: "/var/run/token"}, "x"); err == nil {
		t.Error("Kubeconfig accepted a config whose token is in a file it would not embed")
	}
}

// TestHangingServer: a client of a hanging server waits until its own
// deadline, in both modes; the server saw the connection (and the request,
// when it completes handshakes); Close releases a request still hanging.
func TestHangingServer(t *testing.T) {
	for _, mode := range []HangMode{HangRequests, HangHandshake} {
		t.Run(strings.ReplaceAll(mode.String(), " ", "_"), func(t *testing.T) {
			h := StartHanging(t, HangOptions{Mode: mode})
			cs, err := kubernetes.NewForConfig(h.Config())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			_, err = cs.CoreV1().Pods("kafka").List(ctx, metav1.ListOptions{})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("listing pods on a hanging server: err = %v, want the client's deadline", err)
			}
			if h.Connections() < 1 {
				t.Errorf("the server accepted %d connections, want at least 1", h.Connections())
			}
			wantRequests := mode == HangRequests
			if got := h.Requests() > 0; got != wantRequests {
				t.Errorf("requests reached the server: %v (%d), want %v", got, h.Requests(), wantRequests)
			}

			// A request without a deadline returns once the server closes.
			done := make(chan error, 1)
			go func() {
				_, err := cs.CoreV1().Pods("kafka").List(context.Background(), metav1.ListOptions{})
				done <- err
			}()
			before := h.Connections()
			WaitFor(t, "the second request to reach the server", func(context.Context) (bool, error) {
				if mode == HangRequests {
					return h.Requests() >= 2, nil
				}
				return h.Connections() > before, nil
			})
			h.Close()
			select {
			case err := <-done:
				if err == nil {
					t.Error("a request to the closed hanging server succeeded")
				}
			case <-time.After(WaitTimeout):
				t.Fatal("a hanging request did not return after Close")
			}
			h.Close() // twice is fine
		})
	}
}

// TestHangingServerWithDelayAnswersUnavailable: with Delay it answers each
// request, late, with 503.
func TestHangingServerWithDelayAnswersUnavailable(t *testing.T) {
	h := StartHanging(t, HangOptions{Delay: 50 * time.Millisecond})
	cs, err := kubernetes.NewForConfig(h.Config())
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Pods("kafka").Get(t.Context(), "broker-0", metav1.GetOptions{})
	if !apierrors.IsServiceUnavailable(err) {
		t.Errorf("err = %v, want 503 Service Unavailable", err)
	}
	if h.Requests() != 1 {
		t.Errorf("%d requests reached the server, want 1", h.Requests())
	}
}

// TestRefuserRefusesAndKeepsItsPort: a client is refused at once, and the
// port cannot be taken by anyone else while the Refuser holds it.
func TestRefuserRefusesAndKeepsItsPort(t *testing.T) {
	r := StartRefuser(t)
	cs, err := kubernetes.NewForConfig(r.Config())
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Pods("kafka").List(t.Context(), metav1.ListOptions{})
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("err = %v, want connection refused", err)
	}
	port := r.URL[strings.LastIndexByte(r.URL, ':')+1:]
	if _, err := strconv.Atoi(port); err != nil {
		t.Fatalf("URL %s has no port", r.URL)
	}
	if ln, err := net.Listen("tcp", "127.0.0.1:"+port); err == nil {
		ln.Close()
		t.Errorf("port %s could be taken while the Refuser holds it", port)
	}
}
