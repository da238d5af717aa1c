// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package benchutil

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/testkit/fakeapi"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const crash = "ERROR boom\nkafka.common.UnexpectedAppendOffsetException: Unexpected offset\n"

func TestGeneratedLog(t *testing.T) {
	g := GeneratedLogOfSize(10_000, crash)
	all, err := io.ReadAll(g.Reader())
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(all)) != g.Size() || g.Size() < 10_000 {
		t.Errorf("read %d bytes, Size() = %d, want ≥ 10000 and equal", len(all), g.Size())
	}
	if got := int64(strings.Count(string(all), "\n")); got != g.Lines() {
		t.Errorf("%d lines, Lines() = %d", got, g.Lines())
	}
	if !strings.HasSuffix(string(all), crash) {
		t.Error("the log does not end with the tail")
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(all), crash), "\n") {
		if line != "" && len(line) != noiseWidth-1 {
			t.Fatalf("noise line %d is %d bytes, want %d", i, len(line), noiseWidth-1)
		}
	}
	full := string(all)
	for _, tc := range []struct {
		name             string
		tailLines, limit int64
		want             string
	}{
		{"no bounds", -1, -1, full},
		{"tail within the crash", 1, -1, lastLines(full, 1)},
		{"tail into the noise", 5, -1, lastLines(full, 5)},
		{"tail longer than the log", 1 << 40, -1, full},
		{"limit cuts the end", 5, 100, lastLines(full, 5)[:100]},
		{"limit only", -1, 300, full[:300]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := io.ReadAll(g.Window(tc.tailLines, tc.limit))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("Window(%d, %d) = %d bytes %q…, want %d bytes %q…", tc.tailLines, tc.limit, len(got), head(string(got)), len(tc.want), head(tc.want))
			}
		})
	}
}

func lastLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	lines = lines[:len(lines)-1] // the empty string after the final newline
	return strings.Join(lines[max(0, len(lines)-n):], "")
}

func head(s string) string { return s[:min(len(s), 40)] }

func TestViewCountsDelaysAndServesLogs(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1"}}
	world := fakeapi.New(pod)
	logs := func(_, _ string, o *corev1.PodLogOptions) (io.ReadCloser, error) {
		if o.Previous {
			return nil, ErrNoLog
		}
		return io.NopCloser(strings.NewReader("hello\n")), nil
	}
	v := NewView(world.Tracker(), ViewOptions{Delay: 20 * time.Millisecond, Logs: logs})
	ctx := context.Background()

	start := time.Now()
	if _, err := v.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 20*time.Millisecond {
		t.Error("the get was not delayed")
	}
	body, err := v.CoreV1().Pods("ns").GetLogs("p", &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil || string(body) != "hello\n" {
		t.Errorf("current log = %q, %v", body, err)
	}
	_, err = v.CoreV1().Pods("ns").GetLogs("p", &corev1.PodLogOptions{Previous: true}).Stream(ctx)
	if !apierrors.IsBadRequest(err) {
		t.Errorf("missing log: err = %v, want a 400 Bad Request", err)
	}
	if _, err := world.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Fatal(err) // the world's requests are not the View's
	}

	st := v.Stats()
	if st.Requests != 3 || st.ByKind["get pods"] != 1 || st.ByKind["get pods/log"] != 2 {
		t.Errorf("stats = %+v, want 1 pod get and 2 log reads", st)
	}
	if st.Delayed != 3 || st.LogBytes != int64(len("hello\n")) || st.ObjectBytes == 0 {
		t.Errorf("stats = %+v, want 3 delayed, 6 log bytes, some object bytes", st)
	}
	v.Reset()
	if st := v.Stats(); st.Requests != 0 || st.LogBytes != 0 || st.ObjectBytes != 0 {
		t.Errorf("after Reset: %+v", st)
	}
}

// A View serves creates as the API server does (fakeapi.Reaction).
func TestViewCreatesGetServerDefaults(t *testing.T) {
	world := fakeapi.New()
	v := NewView(world.Tracker(), ViewOptions{})
	created, err := v.CoreV1().Pods("ns").Create(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.Status.Phase != corev1.PodPending {
		t.Errorf("created pod: uid %q phase %q, want a UID and Pending", created.UID, created.Status.Phase)
	}
	got, err := world.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{})
	if err != nil || got.UID != created.UID {
		t.Errorf("the world sees %v, %v; want the View's pod", got, err)
	}
}
