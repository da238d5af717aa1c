// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package handlers

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/approval"
	"github.com/kafka-chatops/kafkabot/internal/diagshare"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// startSharingBot is startBot with diagnoses shared (the default window).
func startSharingBot(t *testing.T, mutate func(*Options)) *harness {
	return startBot(t, func(o *Options) {
		o.ShareWindow = 0 // the default
		if mutate != nil {
			mutate(o)
		}
	})
}

// linkTo is the link a shared answer gives to message m.
func linkTo(m slackemu.Message) string {
	return "archives/" + m.Channel + "/p" + strings.Replace(m.TS, ".", "", 1)
}

// TestConcurrentRequestsShareOneDiagnosis: eight people in two channels ask
// about the same pod while its read hangs. The cluster is read once; each
// channel gets one message (with an Approve token of the person it was
// posted for) and everyone else a link to their channel's message.
func TestConcurrentRequestsShareOneDiagnosis(t *testing.T) {
	h := startSharingBot(t, nil)
	gate := make(chan struct{})
	h.cluster.mu.Lock()
	h.cluster.gate = gate
	h.cluster.mu.Unlock()
	type asker struct{ user, channel string }
	var askers []asker
	for i := range 8 {
		ch := channel
		if i%2 == 1 {
			ch = otherChan
		}
		askers = append(askers, asker{fmt.Sprintf("U0ASKER%d", i), ch})
	}
	for _, a := range askers {
		_, ack := h.slash(a.user, a.channel, "diagnose broker-0")
		if !strings.Contains(string(ack.Payload), "Diagnosing") {
			t.Fatalf("ack %s, want Diagnosing…", ack.Payload)
		}
	}
	h.eventually("every command to resolve the pod", func() bool { f, _ := h.cluster.counts(); return f == len(askers) })
	close(gate)
	h.waitFor("one message per channel and a link for everyone else", func() bool {
		if len(h.emu.Messages(channel)) != 1 || len(h.emu.Messages(otherChan)) != 1 {
			return false
		}
		for _, a := range askers {
			if !answered(h, a.user, a.channel) {
				return false
			}
		}
		return true
	})
	if _, reads := h.cluster.counts(); reads != 1 {
		t.Errorf("the cluster was read %d times for %d requests, want once", reads, len(askers))
	}
	for _, ch := range []string{channel, otherChan} {
		m := h.emu.Messages(ch)[0]
		tok := approveToken(t, m)
		a, err := approval.Verify(testSecret, tok, h.clock.Now())
		if err != nil {
			t.Fatalf("the message in %s carries an invalid token: %v", ch, err)
		}
		if a.Channel != ch || !strings.Contains(string(m.Blocks), a.Requester) {
			t.Errorf("message in %s: token for %s in %s, want its own channel and the requester it names", ch, a.Requester, a.Channel)
		}
		links := 0
		for _, as := range askers {
			if as.channel != ch || as.user == a.Requester {
				continue
			}
			e := h.ephemeral(ch, as.user, linkTo(m))
			if !strings.Contains(e.Text, "foobar-kafka-broker-0") || !strings.Contains(e.Text, "restart count 37") {
				t.Errorf("shared answer %q lacks the pod or its restart count", e.Text)
			}
			links++
		}
		if links != 3 {
			t.Errorf("%d links in %s, want 3", links, ch)
		}
	}
	h.noAckFailures()
}

// answered reports whether user has an answer in ch: a message naming
// them, or an ephemeral link.
func answered(h *harness, user, ch string) bool {
	for _, m := range h.emu.Messages(ch) {
		if strings.Contains(string(m.Blocks), user) {
			return true
		}
	}
	for _, m := range h.emu.Ephemerals(ch, user) {
		if strings.Contains(m.Text, "archives/") {
			return true
		}
	}
	return false
}

// approveToken returns the value of the Approve button of m.
func approveToken(t *testing.T, m slackemu.Message) string {
	t.Helper()
	s := string(m.Blocks)
	i := strings.Index(s, `"action_id":"`+slackview.ActionApprove+`"`)
	if i < 0 {
		t.Fatalf("no Approve button in %s", s)
	}
	j := strings.Index(s[i:], `"value":"`)
	if j < 0 {
		t.Fatalf("Approve button without a value in %s", s)
	}
	v := s[i+j+len(`"value":"`):]
	return v[:strings.IndexByte(v, '"')]
}

// TestRecentRequestSharesUntilWindowEnds: a request within the window
// after a diagnosis gets a link and no read; one after it is read again.
func TestRecentRequestSharesUntilWindowEnds(t *testing.T) {
	h := startSharingBot(t, nil)
	first := h.diagnose()
	h.clock.Advance(diagshare.DefaultWindow - time.Second)
	h.slash(stranger, channel, "diagnose broker-0")
	e := h.ephemeral(channel, stranger, linkTo(first))
	if !strings.Contains(e.Text, "59s ago") || !strings.Contains(e.Text, slackview.Mention(requester)) {
		t.Errorf("shared answer %q should say how old it is and whose it was", e.Text)
	}
	if _, reads := h.cluster.counts(); reads != 1 {
		t.Errorf("%d reads, want 1 (the second request shared the first)", reads)
	}
	h.clock.Advance(2 * time.Second)
	h.slash(approver, channel, "diagnose broker-0")
	h.waitFor("a fresh diagnosis after the window", func() bool { return len(h.emu.Messages(channel)) == 2 })
	if _, reads := h.cluster.counts(); reads != 2 {
		t.Errorf("%d reads, want 2", reads)
	}
}

// TestNewCrashOrPodIsDiagnosedAfresh: the key is the pod UID and restart
// count: a new crash of the same pod, or a recreated pod of the same name,
// is read again even inside the window.
func TestNewCrashOrPodIsDiagnosedAfresh(t *testing.T) {
	h := startSharingBot(t, nil)
	h.diagnose()
	h.cluster.mu.Lock()
	h.cluster.snap.Containers[0].RestartCount++
	h.cluster.mu.Unlock()
	h.diagnose()
	h.cluster.mu.Lock()
	h.cluster.snap.UID = "a-new-pod-after-repair"
	h.cluster.mu.Unlock()
	h.diagnose()
	if _, reads := h.cluster.counts(); reads != 3 {
		t.Errorf("%d reads, want 3 (new restart count, then new UID)", reads)
	}
}

// TestFailedDiagnosisIsNotKept: everyone waiting on a failed read is told
// the error; the next request reads again.
func TestFailedDiagnosisIsNotKept(t *testing.T) {
	h := startSharingBot(t, nil)
	gate := make(chan struct{})
	h.cluster.mu.Lock()
	h.cluster.gate, h.cluster.readErr = gate, errors.New("etcdserver: request timed out")
	h.cluster.mu.Unlock()
	h.slash(requester, channel, "diagnose broker-0")
	h.slash(stranger, otherChan, "diagnose broker-0")
	h.eventually("both commands to resolve the pod", func() bool { f, _ := h.cluster.counts(); return f == 2 })
	close(gate)
	h.ephemeral(channel, requester, "request timed out")
	h.ephemeral(otherChan, stranger, "request timed out")
	h.cluster.mu.Lock()
	h.cluster.gate, h.cluster.readErr = nil, nil
	h.cluster.mu.Unlock()
	h.diagnose()
	if _, reads := h.cluster.counts(); reads != 2 {
		t.Errorf("%d reads, want 2 (the failure was not kept)", reads)
	}
}
