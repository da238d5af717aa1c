// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package approval signs and verifies the tokens carried in the value of the
// Approve and Reject buttons of a diagnosis message.
//
// A token names what a click would approve (the Kubernetes cluster, namespace, pod, pod UID, rule,
// action and target), who asked, where the buttons were posted, and when the
// approval expires. It never carries a command: the repair executor builds
// its own plan from these names and re-checks the cluster before acting.
//
// The encoding is compact and URL-safe:
//
//	base64url(JSON payload) "." base64url(HMAC-SHA256(key, domain || payload part))
//
// so that a token fits comfortably in Slack's 2000-character button value.
package approval

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"
)

// Version is the payload version this package signs and accepts.
const Version = 1

// MaxTokenLength is the longest token Sign produces and Verify accepts:
// Slack's limit on a button's value.
const MaxTokenLength = 2000

// MinSecretLength is the shortest HMAC key accepted (APPROVAL_SECRET).
const MinSecretLength = 32

// ClockSkew is how far in the future an issue time may lie (replicas'
// clocks differ a little).
const ClockSkew = time.Minute

// domain separates these MACs from any other use of the same key.
const domain = "kafkabot/approval/v1\x00"

// Errors returned by Sign, Verify and CheckOrigin. Test with errors.Is.
var (
	// ErrWeakSecret means the HMAC key is missing or too short.
	ErrWeakSecret = errors.New("approval secret is shorter than 32 bytes")
	// ErrIncomplete means an approval lacks a field it must have to be signed.
	ErrIncomplete = errors.New("approval is incomplete")
	// ErrTooLong means the token is longer than a button value may be.
	ErrTooLong = errors.New("approval token is too long")
	// ErrMalformed means the token is not a token this bot produces.
	ErrMalformed = errors.New("approval token is malformed")
	// ErrBadSignature means the token was not signed with our key, or was altered.
	ErrBadSignature = errors.New("approval token signature does not match")
	// ErrUnsupportedVersion means the token comes from an incompatible bot version.
	ErrUnsupportedVersion = errors.New("approval token version is not supported")
	// ErrExpired means the approval's time is up.
	ErrExpired = errors.New("approval has expired")
	// ErrNotYetValid means the token claims to be issued in the future.
	ErrNotYetValid = errors.New("approval token is not valid yet")
	// ErrWrongChannel means the click came from another channel than the buttons were posted in.
	ErrWrongChannel = errors.New("approval belongs to another channel")
	// ErrWrongTeam means the click came from another workspace.
	ErrWrongTeam = errors.New("approval belongs to another workspace")
)

// Approval is a pending decision on one repair.
type Approval struct {
	// ID identifies this approval; the repair executor runs an ID at most once.
	ID string
	// KubeCluster is the Kubernetes cluster the pod is in (CLUSTERS_FILE's
	// name, or CLUSTER_NAME). A click is routed only to the cluster its
	// token names; a token naming no cluster (signed by a bot without
	// cluster names) is honoured only by a bot serving exactly one cluster
	// (see handlers).
	KubeCluster string
	// Namespace, Pod and PodUID name the broker pod as it was diagnosed.
	Namespace string
	Pod       string
	PodUID    string
	// Rule is the finding's rule id; Action and Target its automated remedy.
	Rule   string
	Action string
	Target string
	// Requester is the Slack user who asked for the diagnosis.
	Requester string
	// Channel and Team are where the buttons were posted.
	Channel string
	Team    string
	// IssuedAt and ExpiresAt bound the approval's validity (second precision).
	IssuedAt  time.Time
	ExpiresAt time.Time
}

// payload is the wire form of an Approval.
type payload struct {
	V         int    `json:"v"`
	ID        string `json:"id"`
	Cluster   string `json:"cl,omitempty"`
	Namespace string `json:"ns"`
	Pod       string `json:"pod"`
	UID       string `json:"uid,omitempty"`
	Rule      string `json:"rule"`
	Action    string `json:"action"`
	Target    string `json:"target,omitempty"`
	Requester string `json:"requester,omitempty"`
	Channel   string `json:"channel"`
	Team      string `json:"team,omitempty"`
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp"`
}

var b64 = base64.RawURLEncoding.Strict()

// NewID returns a fresh random approval ID (26 base32 characters, 130 bits).
func NewID() string { return rand.Text() }

// Sign encodes and signs a. It refuses a weak key, an approval without its
// identifying fields or a validity window, and a result longer than
// MaxTokenLength.
func Sign(secret []byte, a Approval) (string, error) {
	if len(secret) < MinSecretLength {
		return "", ErrWeakSecret
	}
	if err := a.complete(); err != nil {
		return "", err
	}
	token, err := SignPayload(secret, domain, payload{
		V:         Version,
		ID:        a.ID,
		Cluster:   a.KubeCluster,
		Namespace: a.Namespace,
		Pod:       a.Pod,
		UID:       a.PodUID,
		Rule:      a.Rule,
		Action:    a.Action,
		Target:    a.Target,
		Requester: a.Requester,
		Channel:   a.Channel,
		Team:      a.Team,
		IssuedAt:  a.IssuedAt.Unix(),
		ExpiresAt: a.ExpiresAt.Unix(),
	})
	if err != nil {
		return "", fmt.Errorf("signing approval %s for pod %s: %w", a.ID, a.Pod, err)
	}
	return token, nil
}

// Verify checks token's signature in constant time and its validity at now,
// and returns the approval it carries. The origin of a click (channel and
// workspace) is checked separately by CheckOrigin.
func Verify(secret []byte, token string, now time.Time) (Approval, error) {
	var p payload
	if err := OpenPayload(secret, domain, token, &p); err != nil {
		return Approval{}, err
	}
	if p.V != Version {
		return Approval{}, fmt.Errorf("%w: v%d", ErrUnsupportedVersion, p.V)
	}
	a := Approval{
		ID:          p.ID,
		KubeCluster: p.Cluster,
		Namespace:   p.Namespace,
		Pod:         p.Pod,
		PodUID:      p.UID,
		Rule:        p.Rule,
		Action:      p.Action,
		Target:      p.Target,
		Requester:   p.Requester,
		Channel:     p.Channel,
		Team:        p.Team,
		IssuedAt:    time.Unix(p.IssuedAt, 0).UTC(),
		ExpiresAt:   time.Unix(p.ExpiresAt, 0).UTC(),
	}
	if err := a.complete(); err != nil {
		return Approval{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if !now.Before(a.ExpiresAt) {
		return a, fmt.Errorf("%w at %s", ErrExpired, a.ExpiresAt.Format(time.RFC3339))
	}
	if a.IssuedAt.After(now.Add(ClockSkew)) {
		return a, ErrNotYetValid
	}
	return a, nil
}

// CheckOrigin reports whether a click from team and channel may decide a.
// An empty team on either side is not compared (some payloads omit it).
func (a Approval) CheckOrigin(team, channel string) error {
	if channel != a.Channel {
		return ErrWrongChannel
	}
	if team != "" && a.Team != "" && team != a.Team {
		return ErrWrongTeam
	}
	return nil
}

func (a Approval) complete() error {
	missing := func(name string) error { return fmt.Errorf("%w: no %s", ErrIncomplete, name) }
	switch {
	case a.ID == "":
		return missing("id")
	case a.Namespace == "":
		return missing("namespace")
	case a.Pod == "":
		return missing("pod")
	case a.Rule == "":
		return missing("rule")
	case a.Action == "":
		return missing("action")
	case a.Channel == "":
		return missing("channel")
	case a.IssuedAt.IsZero() || a.ExpiresAt.IsZero():
		return missing("validity window")
	case !a.ExpiresAt.After(a.IssuedAt):
		return fmt.Errorf("%w: expiry %s is not after issue time %s", ErrIncomplete,
			a.ExpiresAt.Format(time.RFC3339), a.IssuedAt.Format(time.RFC3339))
	}
	return nil
}
