// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package logging builds the bot's structured logger (log/slog) and makes
// sure secrets never reach a log line: every message and attribute value
// is scrubbed of the configured secret values and of anything shaped like
// a Slack token.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// Redacted replaces a secret in every log line.
const Redacted = "[REDACTED]"

// slackTokenPattern matches Slack tokens (bot, user, app-level, config) so
// that even a token the bot was not told about is never logged.
var slackTokenPattern = regexp.MustCompile(`\bx(?:ox[abprse]|app)-[0-9A-Za-z-]{6,}`)

// Redactor scrubs known secrets and token-shaped strings from text.
type Redactor struct {
	secrets []string
}

// NewRedactor returns a Redactor for the given secret values; empty values
// and values shorter than 6 bytes (too short to scrub safely) are ignored.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if len(s) >= 6 {
			r.secrets = append(r.secrets, s)
		}
	}
	return r
}

// Redact returns s with every secret and token-shaped substring replaced.
func (r *Redactor) Redact(s string) string {
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, Redacted)
	}
	return slackTokenPattern.ReplaceAllString(s, Redacted)
}

var (
	// secretSetting is a setting whose name says it holds a secret
	// (password, secret, token, credentials, API or private key, a JAAS
	// config), written "name=value", "name = value", "name: value" or
	// name="value" (Kafka's config dumps, JAAS options, environment
	// variables such as KAFKA_CFG_SSL_KEYSTORE_PASSWORD=...).
	secretSetting = regexp.MustCompile(`(?i)([\w.-]*(?:passw(?:or)?d|secret|token|credentials?|api[_.-]?key|private[_.-]?key|access[_.-]?key|jaas[_.]config)[\w.-]*["']?\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;"']+)`)
	// bearerToken is an HTTP bearer token ("Authorization: Bearer ...").
	bearerToken = regexp.MustCompile(`(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}`)
	// jwtPattern is a JSON Web Token (three base64url parts, the first a JSON header).
	jwtPattern = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`)
	// urlPassword is the password of a URL's user info ("scheme://user:password@host").
	urlPassword = regexp.MustCompile(`(://[^/\s:@]+:)[^/\s@]+@`)
)

// ScrubSecrets returns s with secrets that text from elsewhere (a broker's
// log, a plugin's error) may carry replaced by Redacted: the values of
// secret-looking settings, bearer tokens, JWTs, a URL's password and
// Slack tokens. It knows no secret values; Redactor adds those.
func ScrubSecrets(s string) string {
	s = secretSetting.ReplaceAllStringFunc(s, func(m string) string {
		sub := secretSetting.FindStringSubmatch(m)
		if v := strings.Trim(sub[2], `"'`); v == "" || v == Redacted || v == "[hidden]" || v == "null" {
			return m // nothing secret to hide
		}
		return sub[1] + Redacted
	})
	s = bearerToken.ReplaceAllString(s, "${1}"+Redacted)
	s = jwtPattern.ReplaceAllString(s, Redacted)
	s = urlPassword.ReplaceAllString(s, "${1}"+Redacted+"@")
	return slackTokenPattern.ReplaceAllString(s, Redacted)
}

// New returns a logger writing to w. format is "json", "text" or "auto"
// (JSON when running in a pod or when w is not a terminal, text otherwise).
func New(w io.Writer, format string, level slog.Level, redactor *Redactor) *slog.Logger {
	if format == "auto" {
		format = "text"
		if os.Getenv("KUBERNETES_SERVICE_HOST") != "" || !isTerminal(w) {
			format = "json"
		}
	}
	opts := &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			return redactAttr(redactor, a)
		},
	}
	var h slog.Handler
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(&redactingHandler{Handler: h, redactor: redactor})
}

// redactAttr scrubs a's value of secrets and renders durations as Go
// duration strings ("2m0s"): slog's JSON handler would write nanoseconds.
func redactAttr(r *Redactor, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(r.Redact(a.Value.String()))
	case slog.KindDuration:
		a.Value = slog.StringValue(a.Value.Duration().String())
	case slog.KindAny:
		if d, ok := a.Value.Any().(*time.Duration); ok && d != nil {
			a.Value = slog.StringValue(d.String())
			break
		}
		// Errors, Stringers and anything else are rendered, then scrubbed.
		a.Value = slog.StringValue(r.Redact(fmt.Sprint(a.Value.Any())))
	case slog.KindGroup:
		attrs := a.Value.Group()
		out := make([]slog.Attr, len(attrs))
		for i, ga := range attrs {
			out[i] = redactAttr(r, ga)
		}
		a.Value = slog.GroupValue(out...)
	}
	return a
}

// redactingHandler scrubs the record's message; attribute values are
// scrubbed by ReplaceAttr of the wrapped handler.
type redactingHandler struct {
	slog.Handler
	redactor *Redactor
}

func (h *redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	rec.Message = h.redactor.Redact(rec.Message)
	return h.Handler.Handle(ctx, rec)
}

func (h *redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &redactingHandler{Handler: h.Handler.WithAttrs(attrs), redactor: h.redactor}
}

func (h *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{Handler: h.Handler.WithGroup(name), redactor: h.redactor}
}

// RouteKlog sends everything klog logs (client-go's reflectors, leader
// election, warnings from the API server) through log's handler, with
// logger=klog on each record: one stream, one format, one redaction. klog
// is process-wide, so this is called once, by the command that owns the
// process (bot serve, bot repair). klog's Warning lines arrive at INFO
// (klog passes no severity for them); its Error lines at ERROR.
func RouteKlog(log *slog.Logger) {
	klog.SetSlogLogger(log.With("logger", "klog"))
}

// KlogContext returns ctx carrying log (with logger=klog) as klog's
// contextual logger: what client-go logs for work started with this ctx
// (informers' list and watch errors, leader election) goes through log,
// with its attributes (a cluster's name), rather than through the
// process-wide logger RouteKlog sets.
func KlogContext(ctx context.Context, log *slog.Logger) context.Context {
	return klog.NewContext(ctx, logr.FromSlogHandler(log.With("logger", "klog").Handler()))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
