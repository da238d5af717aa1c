package logging

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestLoggerRedactsSecretsEverywhere(t *testing.T) {
	const approvalSecret = "approval-secret-0123456789abcdef0123456789"
	const botToken = "xoxb-1111-2222-abcdefghijkl"
	const unknownToken = "xapp-1-A0TEST-99-deadbeef"
	for _, format := range []string{"json", "text"} {
		var buf bytes.Buffer
		log := New(&buf, format, slog.LevelDebug, NewRedactor(approvalSecret, botToken, ""))
		log.Info("connecting with "+botToken,
			"secret", approvalSecret,
			"err", fmt.Errorf("auth failed for %s: %w", unknownToken, errors.New("invalid_auth")),
			slog.Group("slack", "token", botToken))
		log.With("k", approvalSecret).WithGroup("g").Warn("x", "v", "prefix "+approvalSecret+" suffix")
		out := buf.String()
		for _, s := range []string{approvalSecret, botToken, unknownToken} {
			if strings.Contains(out, s) {
				t.Errorf("%s output contains a secret %q:\n%s", format, s, out)
			}
		}
		if n := strings.Count(out, Redacted); n < 6 {
			t.Errorf("%s output has %d redactions, want >= 6:\n%s", format, n, out)
		}
		if !strings.Contains(out, "invalid_auth") || !strings.Contains(out, "prefix") {
			t.Errorf("%s output lost the non-secret text:\n%s", format, out)
		}
	}
}

func TestRedactorIgnoresTooShortSecrets(t *testing.T) {
	r := NewRedactor("abc")
	if got := r.Redact("abc abc"); got != "abc abc" {
		t.Errorf("Redact = %q; a 3-byte secret must not be scrubbed (it would mangle logs)", got)
	}
}
