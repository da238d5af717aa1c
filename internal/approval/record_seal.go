// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package approval

import (
	"bytes"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
)

// recordDomain separates the MAC of a decision Record from every other
// use of APPROVAL_SECRET (approval and silence tokens, repair Leases).
const recordDomain = "kafkabot decision record v1"

// ErrUnsignedRecord means a stored decision Record does not carry this
// bot's MAC, or carries one that does not match it: it was written or
// changed by someone else (anyone who may write Leases in the namespace),
// by a bot with another APPROVAL_SECRET, or by a version of the bot that
// did not sign its records. Nothing is decided on it.
var ErrUnsignedRecord = errors.New("the decision record is not signed by this bot")

// SealRecord encodes r as JSON and computes its MAC: base64url of
// HMAC-SHA256(secret, domain || JSON). The JSON holds everything a vote
// depends on (approval id, cluster, namespace, pod, required count, votes,
// rejection, expiry), so no field can be changed, no vote added and no
// record moved to another approval without the secret.
func SealRecord(secret []byte, r Record) (body, mac string, err error) {
	if len(secret) < MinSecretLength {
		return "", "", ErrWeakSecret
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "", "", fmt.Errorf("encoding the decision record of approval %s: %w", r.ID, err)
	}
	return string(b), b64.EncodeToString(macOf(secret, recordDomain, string(b))), nil
}

// OpenRecord checks a stored Record's MAC in constant time and decodes it,
// refusing unknown fields. A missing or wrong MAC is ErrUnsignedRecord.
func OpenRecord(secret []byte, body, mac string) (Record, error) {
	var r Record
	if len(secret) < MinSecretLength {
		return r, ErrWeakSecret
	}
	if mac == "" {
		return r, fmt.Errorf("%w: it carries no MAC (written by someone else, or by a bot version before decision records were signed)", ErrUnsignedRecord)
	}
	got, err := b64.DecodeString(mac)
	if err != nil || !hmac.Equal(got, macOf(secret, recordDomain, body)) {
		return r, fmt.Errorf("%w: its MAC does not match its content (changed by someone else, or signed with another APPROVAL_SECRET)", ErrUnsignedRecord)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return r, nil
}
