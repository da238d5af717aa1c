// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package amreceiver is the bot's Prometheus Alertmanager webhook receiver.
// Alertmanager posts its webhook payload (version "4") with a bearer token;
// every alert that names a Kafka pod (labels namespace and pod) is handed to
// the health sweep (internal/sweep), which diagnoses the pod and posts the
// usual alert message with its buttons, sharing the sweep's alert state: a
// crash that the sweep and Alertmanager both see is posted once. A resolved
// alert resolves the message once the pod is Ready (or gone).
//
// The receiver refuses, before reading the body, any request without the
// configured token (401); it reads at most MaxBodyBytes of strict JSON
// (unknown fields, trailing data and other versions are refused with 400)
// and acts on nothing unless every alert of the payload is well formed and
// names a channel the bot posts approvals to (otherwise the whole payload
// is refused with 400). Alerts without pod labels are acknowledged and
// ignored; an alert whose cluster label names another cluster than
// CLUSTER_NAME is refused with a log line and not acted on.
package amreceiver

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kafka-chatops/kafkabot/internal/alert"
)

// Defaults and limits.
const (
	// DefaultMaxBodyBytes bounds a webhook body (Alertmanager's max_alerts
	// keeps real payloads far smaller).
	DefaultMaxBodyBytes = 1 << 20
	// DefaultTimeout bounds the handling of one webhook (diagnosing and
	// posting its alerts); Alertmanager's own timeout should be longer.
	DefaultTimeout = 50 * time.Second
	// MinTokenBytes is the shortest bearer token accepted as configuration.
	MinTokenBytes = 16
	// ChannelLabel is the alert label that names the Slack channel.
	ChannelLabel = "slack_channel"
	// ChannelQuery is the receiver URL's query parameter naming the channel.
	ChannelQuery = "channel"
	// ClusterLabel names the Kubernetes cluster an alert is about.
	ClusterLabel = "cluster"
	// DefaultSource is how the alert messages name the sender.
	DefaultSource = "Alertmanager"
	// bodyReadTimeout bounds reading one request body.
	bodyReadTimeout = 30 * time.Second
)

// Sink takes the alerts the receiver accepted (*sweep.Sweeper).
type Sink interface {
	External(ctx context.Context, a alert.External) (alert.ExternalOutcome, error)
}

// Options configure a Receiver.
type Options struct {
	// Token is the bearer token Alertmanager must send (ALERTMANAGER_TOKEN);
	// at least MinTokenBytes.
	Token string
	// Sink acts on accepted alerts; required unless Clusters is set.
	Sink Sink
	// Clusters, on a bot serving several Kubernetes clusters, route each
	// alert by its cluster label to that cluster's sweep: an alert without
	// the label, or naming a cluster not listed, is refused (logged and
	// counted in OtherCluster), never guessed. Sink and ClusterName must
	// then be unset.
	Clusters map[string]Cluster
	// DefaultChannel is where alerts go when their route names no channel
	// (ALERT_CHANNEL); required.
	DefaultChannel string
	// Channels are the other channels a route may name (APPROVAL_CHANNELS):
	// only channels where the bot's Approve counts are accepted.
	Channels []string
	// ClusterName is this cluster's name (CLUSTER_NAME): an alert whose
	// cluster label names another cluster is refused. Empty: not checked.
	ClusterName string
	// MaxBodyBytes bounds a request body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Timeout bounds the handling of one request; 0 means DefaultTimeout.
	Timeout time.Duration
	// Logger receives the receiver's logs; nil means slog.Default().
	Logger *slog.Logger
	// Source is how the alert messages name the sender ("Alert from
	// Alertmanager", with the alertname); "" means DefaultSource.
	Source string
}

// Cluster is one Kubernetes cluster of Options.Clusters.
type Cluster struct {
	// Sink acts on the cluster's alerts (its *sweep.Sweeper); required.
	Sink Sink
	// Channels are channels a route may name for this cluster's alerts,
	// besides DefaultChannel and Options.Channels (its approval channels).
	Channels []string
}

// Receiver is the webhook's http.Handler.
type Receiver struct {
	opts     Options
	tokenSum [sha256.Size]byte
	channels map[string]bool
	// clusterChannels are, per cluster of Options.Clusters, the channels a
	// route may name for its alerts.
	clusterChannels map[string]map[string]bool
	log             *slog.Logger
}

// New checks the options and returns the receiver.
func New(opts Options) (*Receiver, error) {
	if len(opts.Token) < MinTokenBytes {
		return nil, fmt.Errorf("amreceiver: the bearer token must be at least %d bytes", MinTokenBytes)
	}
	switch {
	case len(opts.Clusters) > 0 && (opts.Sink != nil || opts.ClusterName != ""):
		return nil, errors.New("amreceiver: set Options.Clusters or Options.Sink (and ClusterName), not both")
	case len(opts.Clusters) == 0 && opts.Sink == nil:
		return nil, errors.New("amreceiver: Options.Sink is required")
	}
	for name, c := range opts.Clusters {
		if c.Sink == nil || name == "" {
			return nil, fmt.Errorf("amreceiver: cluster %q has no name or no Sink", name)
		}
	}
	if opts.DefaultChannel == "" {
		return nil, errors.New("amreceiver: Options.DefaultChannel (ALERT_CHANNEL) is required")
	}
	opts.MaxBodyBytes = cmp.Or(opts.MaxBodyBytes, DefaultMaxBodyBytes)
	opts.Timeout = cmp.Or(opts.Timeout, DefaultTimeout)
	opts.Source = cmp.Or(opts.Source, DefaultSource)
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	channels := map[string]bool{opts.DefaultChannel: true}
	for _, c := range opts.Channels {
		channels[c] = true
	}
	clusterChannels := map[string]map[string]bool{}
	for name, c := range opts.Clusters {
		clusterChannels[name] = maps.Clone(channels)
		for _, ch := range c.Channels {
			clusterChannels[name][ch] = true
		}
	}
	return &Receiver{
		opts:            opts,
		tokenSum:        sha256.Sum256([]byte(opts.Token)),
		channels:        channels,
		clusterChannels: clusterChannels,
		log:             opts.Logger.With("component", "alertmanager-receiver"),
	}, nil
}

// Payload is Alertmanager's webhook body, version 4 (the fields of
// Alertmanager v0.35's notify/webhook Message; any other field is refused).
type Payload struct {
	Version            string            `json:"version"`
	GroupKey           string            `json:"groupKey"`
	TruncatedAlerts    uint64            `json:"truncatedAlerts"`
	Receiver           string            `json:"receiver"`
	Status             string            `json:"status"`
	Alerts             []Alert           `json:"alerts"`
	NotificationReason string            `json:"notification_reason"`
	GroupLabels        map[string]string `json:"groupLabels"`
	CommonLabels       map[string]string `json:"commonLabels"`
	CommonAnnotations  map[string]string `json:"commonAnnotations"`
	RouteLabels        map[string]string `json:"routeLabels"`
	ExternalURL        string            `json:"externalURL"`
}

// Alert is one alert of a Payload.
type Alert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

// action is what an accepted payload asks for one pod.
type action struct {
	alertname string
	ext       alert.External
	// cluster and sink: where the alert goes ("" and Options.Sink on a
	// single-cluster bot).
	cluster string
	sink    Sink
}

// key names the action's pod in logs and the Summary.
func (a action) key() string {
	if a.cluster == "" {
		return a.ext.Namespace + "/" + a.ext.Pod
	}
	return a.cluster + "/" + a.ext.Namespace + "/" + a.ext.Pod
}

// requestError is a refusal with its HTTP status.
type requestError struct {
	status int
	msg    string
}

func (e *requestError) Error() string { return e.msg }

func refuse(status int, format string, args ...any) *requestError {
	return &requestError{status: status, msg: fmt.Sprintf(format, args...)}
}

// ServeHTTP handles one webhook: authenticate, parse, check, act.
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	remote := r.RemoteAddr
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed: POST Alertmanager's webhook payload", http.StatusMethodNotAllowed)
		return
	}
	if problem := rc.authenticate(r.Header.Get("Authorization")); problem != "" {
		// The header's value is never logged: it may be a real token sent
		// to the wrong place.
		rc.log.Warn("alertmanager webhook refused: "+problem, "remote", remote, "user_agent", r.UserAgent())
		w.Header().Set("WWW-Authenticate", `Bearer realm="kafkabot"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	// A body trickled in slowly must not hold the connection: the server's
	// own timeouts cover only the headers. (Not every ResponseWriter
	// supports deadlines; httptest's does not, and needs none.)
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadTimeout))
	actions, ignored, err := rc.parse(w, r)
	if err != nil {
		var re *requestError
		if !errors.As(err, &re) {
			re = refuse(http.StatusBadRequest, "%v", err)
		}
		rc.log.Warn("alertmanager webhook refused", "remote", remote, "status", re.status, "reason", re.msg)
		http.Error(w, re.msg, re.status)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), rc.opts.Timeout)
	defer cancel()
	status, summary := rc.act(ctx, actions)
	summary.Ignored, summary.OtherCluster = ignored.ignored, ignored.refused
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(summary)
}

// authenticate returns "" when the Authorization header carries the
// token, else what is wrong (without the header's value).
func (rc *Receiver) authenticate(header string) string {
	if header == "" {
		return "no bearer token (no Authorization header)"
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "the Authorization header is not a bearer token"
	}
	// Comparing digests keeps the comparison constant-time whatever the
	// lengths.
	sum := sha256.Sum256([]byte(token))
	if subtle.ConstantTimeCompare(sum[:], rc.tokenSum[:]) != 1 {
		return "wrong bearer token"
	}
	return ""
}

// parse reads and checks the payload and returns what to do per pod and
// how many alerts are ignored (no pod labels).
func (rc *Receiver) parse(w http.ResponseWriter, r *http.Request) ([]action, ignoredCounts, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, ignoredCounts{}, refuse(http.StatusUnsupportedMediaType, "content type %q: want application/json", ct)
		}
	}
	query := r.URL.Query()[ChannelQuery]
	if len(query) > 1 {
		return nil, ignoredCounts{}, refuse(http.StatusBadRequest, "the receiver URL names %d channels; want at most one", len(query))
	}
	routeChannel := ""
	if len(query) == 1 {
		routeChannel = query[0]
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, rc.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, ignoredCounts{}, refuse(http.StatusRequestEntityTooLarge, "body larger than %d bytes", rc.opts.MaxBodyBytes)
		}
		return nil, ignoredCounts{}, refuse(http.StatusBadRequest, "reading the body: %v", err)
	}
	p, err := DecodePayload(body)
	if err != nil {
		return nil, ignoredCounts{}, err
	}
	return rc.plan(p, routeChannel)
}

// DecodePayload parses a webhook body strictly: one JSON object of the
// version 4 fields, nothing else.
func DecodePayload(body []byte) (*Payload, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var p Payload
	if err := dec.Decode(&p); err != nil {
		return nil, refuse(http.StatusBadRequest, "not Alertmanager's webhook payload: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, refuse(http.StatusBadRequest, "not Alertmanager's webhook payload: data after the JSON object")
	}
	if p.Version != "4" {
		return nil, refuse(http.StatusBadRequest, "webhook payload version %q: want \"4\"", p.Version)
	}
	return &p, nil
}

// plan checks every alert and returns one action per pod (firing wins
// over resolved when a payload has both for one pod, e.g. one alert per
// container), or the refusal of the whole payload.
func (rc *Receiver) plan(p *Payload, routeChannel string) ([]action, ignoredCounts, error) {
	if routeChannel != "" && !rc.channels[routeChannel] && !rc.anyClusterChannel(routeChannel) {
		return nil, ignoredCounts{}, refuse(http.StatusBadRequest, "channel %q of the receiver URL is not one the bot posts alerts or approvals to (ALERT_CHANNEL, APPROVAL_CHANNELS)", routeChannel)
	}
	byPod := map[string]*action{}
	ignored, refused := 0, 0
	for i, a := range p.Alerts {
		firing := false
		switch a.Status {
		case "firing":
			firing = true
		case "resolved":
		default:
			return nil, ignoredCounts{}, refuse(http.StatusBadRequest, "alert %d: status %q: want firing or resolved", i, a.Status)
		}
		name := a.Labels["alertname"]
		ns, pod := a.Labels["namespace"], a.Labels["pod"]
		if ns == "" || pod == "" {
			rc.log.Debug("alertmanager alert without namespace and pod labels ignored", "alertname", name, "status", a.Status)
			ignored++
			continue
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, ignoredCounts{}, refuse(http.StatusBadRequest, "alert %d: namespace label is not a namespace name: %s", i, strings.Join(errs, "; "))
		}
		if errs := validation.IsDNS1123Subdomain(pod); len(errs) > 0 {
			return nil, ignoredCounts{}, refuse(http.StatusBadRequest, "alert %d: pod label is not a pod name: %s", i, strings.Join(errs, "; "))
		}
		sink, channels, cluster := rc.opts.Sink, rc.channels, ""
		if len(rc.opts.Clusters) > 0 {
			cluster = a.Labels[ClusterLabel]
			c, ok := rc.opts.Clusters[cluster]
			if !ok {
				// Several clusters may have a pod of this name: an alert
				// that does not say which (or names one this bot does
				// not serve) is never acted on.
				rc.log.Warn("alertmanager alert refused: its cluster label names no cluster this bot serves (CLUSTERS_FILE); not acted on",
					"alertname", name, "pod", ns+"/"+pod, "cluster_label", cluster)
				refused++
				continue
			}
			sink, channels = c.Sink, rc.clusterChannels[cluster]
		} else if c := a.Labels[ClusterLabel]; c != "" && rc.opts.ClusterName != "" && c != rc.opts.ClusterName {
			// Another cluster's pod of the same name must never be
			// diagnosed (or repaired) here. The payload's other alerts
			// still count: one Alertmanager may group several clusters.
			rc.log.Warn("alertmanager alert refused: its cluster label names another cluster than CLUSTER_NAME; not acted on",
				"alertname", name, "pod", ns+"/"+pod, "cluster_label", c, "cluster_name", rc.opts.ClusterName)
			refused++
			continue
		}
		channel := cmp.Or(a.Labels[ChannelLabel], routeChannel, rc.opts.DefaultChannel)
		if !channels[channel] {
			return nil, ignoredCounts{}, refuse(http.StatusBadRequest, "alert %d (%s/%s): channel %q of label %s is not one the bot posts alerts or approvals to (ALERT_CHANNEL, APPROVAL_CHANNELS)", i, ns, pod, channel, ChannelLabel)
		}
		if channel == rc.opts.DefaultChannel {
			channel = "" // the notifier's own channel
		}
		next := action{alertname: name, cluster: cluster, sink: sink, ext: alert.External{Namespace: ns, Pod: pod, Firing: firing, Channel: channel,
			Source: rc.opts.Source, SourceAlert: name}}
		key := next.key()
		act, ok := byPod[key]
		if !ok {
			byPod[key] = &next
			continue
		}
		if firing && !act.ext.Firing {
			act.alertname, act.ext.Firing, act.ext.Channel, act.ext.SourceAlert = name, true, channel, name
		}
	}
	out := make([]action, 0, len(byPod))
	for _, k := range slices.Sorted(maps.Keys(byPod)) {
		out = append(out, *byPod[k])
	}
	return out, ignoredCounts{ignored: ignored, refused: refused}, nil
}

// ignoredCounts are the alerts of a payload not acted on.
type ignoredCounts struct {
	// ignored had no namespace and pod labels; refused named another cluster
	// (or, on a multi-cluster bot, none it serves).
	ignored, refused int
}

// Summary is the receiver's JSON answer: what it did with each pod.
type Summary struct {
	// Pods maps "namespace/pod" ("cluster/namespace/pod" on a multi-cluster
	// bot) to the sweep's outcome (or "error").
	Pods map[string]string `json:"pods"`
	// Ignored counts alerts without pod labels.
	Ignored int `json:"ignored"`
	// OtherCluster counts alerts refused because their cluster label names
	// another cluster (on a multi-cluster bot: none it serves, or none).
	OtherCluster int `json:"otherCluster"`
	// Error says why the request failed, when it did.
	Error string `json:"error,omitempty"`
}

// act hands every action to the sink and returns the HTTP status:
// 200 when all succeeded, 503 when this replica does not lead the sweep
// (Alertmanager retries, and the Service may route it to the leader), 500
// when an alert could not be acted on (Alertmanager retries; the shared
// alert state keeps a retry from posting twice).
func (rc *Receiver) act(ctx context.Context, actions []action) (int, Summary) {
	sum := Summary{Pods: map[string]string{}}
	status := http.StatusOK
	var errs []string
	for _, a := range actions {
		key := a.key()
		outcome, err := a.sink.External(ctx, a.ext)
		state := "firing"
		if !a.ext.Firing {
			state = "resolved"
		}
		if err != nil {
			sum.Pods[key] = "error"
			errs = append(errs, key+": "+err.Error())
			if errors.Is(err, alert.ErrNotLeader) {
				status = max(status, http.StatusServiceUnavailable)
			} else {
				status = max(status, http.StatusInternalServerError)
			}
			rc.log.Error("alertmanager alert not acted on", "alertname", a.alertname, "pod", key, "status", state, "err", err)
			continue
		}
		sum.Pods[key] = string(outcome)
		level := slog.LevelInfo
		if outcome == alert.ExternalUnknownPod {
			level = slog.LevelDebug // not a Kafka pod this bot watches
		}
		rc.log.Log(ctx, level, "alertmanager alert", "alertname", a.alertname, "pod", key, "status", state,
			"channel", cmp.Or(a.ext.Channel, rc.opts.DefaultChannel), "outcome", string(outcome))
	}
	if len(errs) > 0 {
		sum.Error = strings.Join(errs, "; ")
	}
	return status, sum
}

// anyClusterChannel reports whether ch is a channel some cluster's alerts
// may be routed to (the receiver URL's channel applies to every alert; each
// alert's own cluster is checked again).
func (rc *Receiver) anyClusterChannel(ch string) bool {
	for _, chans := range rc.clusterChannels {
		if chans[ch] {
			return true
		}
	}
	return false
}
