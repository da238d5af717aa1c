// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package grant is what the bot's buttons other than Approve / Reject may
// do, signed into their values: Silence (an alert's key for a while), End
// silence (one silence) and Clear escalation (one escalation record).
// Each kind is signed like an approval (internal/approval's SignPayload,
// HMAC-SHA256 with APPROVAL_SECRET) under a domain of its own, so a token
// of one kind is never valid as another. It is pure.
package grant

import (
	"errors"
	"fmt"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/approval"
)

// Choice is one duration a Silence control offers.
type Choice struct {
	Label string
	D     time.Duration
}

// SilenceChoices are the Silence buttons of an alert, shortest first.
var SilenceChoices = []Choice{{"1h", time.Hour}, {"24h", 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}}

// How long buttons stay usable after they were posted.
const (
	// SilenceButtonTTL: a repeat alert posts fresh buttons long before.
	SilenceButtonTTL = 7 * 24 * time.Hour
	// EscalationButtonTTL: afterwards `bot escalation clear` does.
	EscalationButtonTTL = 7 * 24 * time.Hour
)

// maxSilenceDuration bounds what a (validly signed) button may ask for.
const maxSilenceDuration = 30 * 24 * time.Hour

// The domains separating each kind's MACs from approval MACs, and from
// each other, made with the same secret.
const (
	silenceDomain    = "kafkabot/silence/v1\x00"
	unsilenceDomain  = "kafkabot/unsilence/v1\x00"
	escalationDomain = "kafkabot/escalation-clear/v1\x00"
)

// Errors of the tokens.
var (
	ErrMalformed = errors.New("silence token is malformed")
	ErrSignature = errors.New("silence token signature does not match")
	ErrExpired   = errors.New("silence button has expired")
)

// Silence is what a Silence button may do: silence Key for For, clicked
// in Channel, before ExpiresAt.
type Silence struct {
	V int `json:"v"`
	// KubeCluster is the Kubernetes cluster whose sweep holds the silence
	// ("": the only cluster of a single-cluster bot).
	KubeCluster string `json:"kc,omitempty"`
	Key         string `json:"key"`
	For         int64  `json:"for"` // seconds
	Channel     string `json:"ch"`
	IssuedAt    int64  `json:"iat"`
	ExpiresAt   int64  `json:"exp"`
}

// Duration is how long the grant silences.
func (g Silence) Duration() time.Duration { return time.Duration(g.For) * time.Second }

// Choose narrows a menu's grant to the chosen duration, which must be one
// of SilenceChoices and within the grant; it reports whether it was.
func (g *Silence) Choose(label string) bool {
	for _, c := range SilenceChoices {
		if c.Label == label && c.D <= g.Duration() {
			g.For = int64(c.D / time.Second)
			return true
		}
	}
	return false
}

// SignSilence signs g (as version 1).
func SignSilence(secret []byte, g Silence) (string, error) {
	g.V = 1
	token, err := approval.SignPayload(secret, silenceDomain, g)
	if err != nil {
		return "", fmt.Errorf("signing the silence of %s: %w", g.Key, err)
	}
	return token, nil
}

// VerifySilence checks token's signature (in constant time) and validity.
// An expired grant is returned with ErrExpired.
func VerifySilence(secret []byte, token string, now time.Time) (Silence, error) {
	var g Silence
	if err := open(secret, silenceDomain, token, &g); err != nil {
		return Silence{}, err
	}
	if g.V != 1 || g.Key == "" || g.Channel == "" || g.For <= 0 || g.Duration() > maxSilenceDuration {
		return Silence{}, ErrMalformed
	}
	return g, expired(g.ExpiresAt, now)
}

// Unsilence is what an End silence button may do: end silence ID (of Key,
// for the messages), clicked in Channel, before ExpiresAt.
type Unsilence struct {
	V int `json:"v"`
	// KubeCluster is the Kubernetes cluster whose sweep holds the silence
	// ("": the only cluster of a single-cluster bot).
	KubeCluster string `json:"kc,omitempty"`
	ID          string `json:"id"`
	Key         string `json:"key"`
	Channel     string `json:"ch"`
	ExpiresAt   int64  `json:"exp"`
}

// SignUnsilence signs g (as version 1).
func SignUnsilence(secret []byte, g Unsilence) (string, error) {
	g.V = 1
	return approval.SignPayload(secret, unsilenceDomain, g)
}

// VerifyUnsilence checks token's signature (in constant time) and
// validity. An expired grant is returned with ErrExpired.
func VerifyUnsilence(secret []byte, token string, now time.Time) (Unsilence, error) {
	var g Unsilence
	if err := open(secret, unsilenceDomain, token, &g); err != nil {
		return Unsilence{}, err
	}
	if g.V != 1 || g.ID == "" || g.Channel == "" {
		return Unsilence{}, ErrMalformed
	}
	return g, expired(g.ExpiresAt, now)
}

// Escalation is what a Clear escalation button may do: clear the record
// UID of KafkaCluster in the Kubernetes cluster KubeCluster, clicked in
// Channel, reporting in Thread.
type Escalation struct {
	V int `json:"v"`
	// KubeCluster is the Kubernetes cluster holding the record ("" from a
	// bot without cluster names: only a bot serving one cluster honours it).
	KubeCluster  string `json:"kc,omitempty"`
	KafkaCluster string `json:"cluster"`
	UID          string `json:"uid"`
	Channel      string `json:"ch"`
	Thread       string `json:"th"`
	IssuedAt     int64  `json:"iat"`
	ExpiresAt    int64  `json:"exp"`
}

// SignEscalation signs g (as version 1).
func SignEscalation(secret []byte, g Escalation) (string, error) {
	g.V = 1
	return approval.SignPayload(secret, escalationDomain, g)
}

// VerifyEscalation checks token's signature (in constant time) and
// validity. An expired grant is returned with ErrExpired.
func VerifyEscalation(secret []byte, token string, now time.Time) (Escalation, error) {
	var g Escalation
	if err := open(secret, escalationDomain, token, &g); err != nil {
		return Escalation{}, err
	}
	if g.V != 1 || g.KafkaCluster == "" || g.UID == "" {
		return Escalation{}, ErrMalformed
	}
	return g, expired(g.ExpiresAt, now)
}

// open checks token's signature under domain and decodes it into g.
func open(secret []byte, domain, token string, g any) error {
	switch err := approval.OpenPayload(secret, domain, token, g); {
	case errors.Is(err, approval.ErrBadSignature):
		return ErrSignature
	case err != nil:
		return ErrMalformed
	}
	return nil
}

// expired is ErrExpired once now reaches the grant's expiry.
func expired(expiresAt int64, now time.Time) error {
	if !now.Before(time.Unix(expiresAt, 0)) {
		return ErrExpired
	}
	return nil
}
