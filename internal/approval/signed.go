// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package approval

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
)

// SignPayload encodes v as JSON and signs it under domain, in the token
// format of this package: base64url(JSON) "." base64url(HMAC-SHA256(key,
// domain || first part)). The domain separates token kinds made with the
// same key, so a token of one kind never verifies as another. It refuses a
// weak key and a token longer than MaxTokenLength.
func SignPayload(secret []byte, domain string, v any) (string, error) {
	if len(secret) < MinSecretLength {
		return "", ErrWeakSecret
	}
	body, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encoding token payload: %w", err)
	}
	part := b64.EncodeToString(body)
	token := part + "." + b64.EncodeToString(macOf(secret, domain, part))
	if len(token) > MaxTokenLength {
		return "", fmt.Errorf("%w: %d characters", ErrTooLong, len(token))
	}
	return token, nil
}

// OpenPayload checks token's signature under domain in constant time and
// decodes its payload into v, refusing unknown fields. Errors: ErrWeakSecret,
// ErrTooLong, ErrMalformed, ErrBadSignature.
func OpenPayload(secret []byte, domain, token string, v any) error {
	if len(secret) < MinSecretLength {
		return ErrWeakSecret
	}
	if len(token) > MaxTokenLength {
		return ErrTooLong
	}
	part, sig, ok := strings.Cut(token, ".")
	if !ok || part == "" || sig == "" || strings.Contains(sig, ".") {
		return ErrMalformed
	}
	got, err := b64.DecodeString(sig)
	// The decoder skips \r and \n: only the canonical spelling of the
	// signature is accepted, so one approval has exactly one token.
	if err != nil || len(got) != sha256.Size || b64.EncodeToString(got) != sig {
		return ErrMalformed
	}
	if !hmac.Equal(got, macOf(secret, domain, part)) {
		return ErrBadSignature
	}
	// Only a token we signed gets this far, so what follows guards against
	// our own older or newer versions, not against forgery.
	body, err := b64.DecodeString(part)
	if err != nil {
		return ErrMalformed
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return nil
}

func macOf(secret []byte, domain, part string) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(domain))
	h.Write([]byte(part))
	return h.Sum(nil)
}
