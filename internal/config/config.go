// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Package config is the one place that reads the bot's environment. It
// holds the envconfig specification, its defaults and its validation.
package config

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/kafka-chatops/kafkabot/internal/fleet"
)

// Config is the whole configuration of the bot. Field tags give the
// environment variable, its default and its description; the README's
// configuration table is generated from them (see TestREADMEConfigTable).
type Config struct {
	SlackAppToken string `envconfig:"SLACK_APP_TOKEN" desc:"Slack app-level token (xapp-...) for Socket Mode; required by serve"`
	SlackBotToken string `envconfig:"SLACK_BOT_TOKEN" desc:"Slack bot token (xoxb-...) for the Web API; required by serve"`
	SlackAPIURL   string `envconfig:"SLACK_API_URL" default:"https://slack.com/api/" desc:"Slack Web API base URL (an emulator, GovSlack or a proxy); must end with /"`

	Kubeconfig      string   `envconfig:"KUBECONFIG" desc:"kubeconfig path(s), standard loading rules; in-cluster config when unset inside a pod"`
	KafkaNamespaces []string `envconfig:"KAFKA_NAMESPACES" desc:"comma list of namespaces the bot may read and repair; empty = all it may read"`
	KafkaSelector   string   `envconfig:"KAFKA_POD_SELECTOR" default:"" desc:"label selector for Kafka pods; empty = the built-in Bitnami, Strimzi, Confluent and app=kafka selectors"`
	ClustersFile    string   `envconfig:"CLUSTERS_FILE" desc:"YAML/JSON file (a mounted ConfigMap) listing the Kubernetes clusters this bot serves (name, kubeconfig, context, kafkaNamespaces, approvalChannels, approvers, kafka); empty = one cluster, CLUSTER_NAME, from KUBECONFIG or the in-cluster config"`
	ClusterName     string   `envconfig:"CLUSTER_NAME" default:"kubernetes" desc:"this Kubernetes cluster's name, first in every Slack message header (cluster/namespace/pod)"`

	AlertChannel string `envconfig:"ALERT_CHANNEL" desc:"Slack channel ID for sweep alerts; empty = no alerts"`
	// AlertmanagerToken switches the Alertmanager webhook receiver on.
	AlertmanagerToken string        `envconfig:"ALERTMANAGER_TOKEN" desc:"bearer token (from a Secret; at least 16 bytes, surrounding whitespace ignored) Alertmanager must send to POST /alertmanager on HTTP_ADDR; empty = receiver off; needs ALERT_CHANNEL"`
	SweepSchedule     string        `envconfig:"SWEEP_SCHEDULE" default:"@every 5m" desc:"robfig/cron spec for full health sweeps"`
	RepeatInterval    time.Duration `envconfig:"ALERT_REPEAT_INTERVAL" default:"4h" desc:"how long before an unchanged alert is posted again"`
	ResolveGrace      time.Duration `envconfig:"ALERT_RESOLVE_GRACE" default:"5m" desc:"how long a pod must stay Ready (or gone) before its alert is resolved"`
	GroupThreshold    int           `envconfig:"ALERT_GROUP_THRESHOLD" default:"3" desc:"this many pods of one Kafka cluster alerting at once make one grouped alert"`
	GroupWait         time.Duration `envconfig:"ALERT_GROUP_WAIT" default:"10s" desc:"how long to gather pod changes before alerting, so a cluster-wide crash is one alert"`
	SweepSummary      string        `envconfig:"SWEEP_SUMMARY" default:"unhealthy" desc:"when scheduled sweeps post a summary: unhealthy (only if something fires), always or never"`
	RestartAlerts     int           `envconfig:"RESTART_ALERT_THRESHOLD" default:"3" desc:"alert on a Kafka pod restarting more than this many times within RESTART_ALERT_WINDOW"`
	RestartWindow     time.Duration `envconfig:"RESTART_ALERT_WINDOW" default:"10m" desc:"window of RESTART_ALERT_THRESHOLD (and of recent OOMKilled exits)"`

	Approvers                      []string      `envconfig:"APPROVERS" desc:"comma list of Slack user IDs allowed to approve repairs (of every cluster whose CLUSTERS_FILE entry has no approvers) and silence alerts"`
	ApprovalSecret                 string        `envconfig:"APPROVAL_SECRET" desc:"HMAC key for approval button tokens (at least 32 bytes); required by serve"`
	ApprovalTTL                    time.Duration `envconfig:"APPROVAL_TTL" default:"30m" desc:"how long an Approve button stays valid"`
	ForbidSelfApproval             bool          `envconfig:"FORBID_SELF_APPROVAL" default:"true" desc:"refuse approvals by the person who asked for the diagnosis (false lets them approve their own)"`
	RequiredApprovals              int           `envconfig:"REQUIRED_APPROVALS" default:"1" desc:"distinct approvers a repair needs; with 2 the first Approve is recorded (the message says 1 of 2) and the second starts the repair"`
	ApprovalChannels               []string      `envconfig:"APPROVAL_CHANNELS" desc:"comma list of channel IDs where Approve counts, besides ALERT_CHANNEL; anywhere else (other channels, DMs) it is refused"`
	DryRun                         bool          `envconfig:"DRY_RUN" default:"false" desc:"run repairs up to the first write, then show the pod spec and script"`
	DebugImage                     string        `envconfig:"DEBUG_IMAGE" desc:"image for the repair debug pod, pinned by digest (repo@sha256:...); empty = the broker's own image by the digest the kubelet reported"`
	AllowRootBroker                bool          `envconfig:"ALLOW_ROOT_BROKER" default:"false" desc:"let the repair debug pod run as root for a broker that runs as uid 0 (the bot's namespace needs the annotation kafkabot.io/allow-root-broker=true too); otherwise such a broker gets the manual runbook"`
	AcceptNoPolicy                 bool          `envconfig:"ACKNOWLEDGE_NO_ADMISSION_POLICY" default:"false" desc:"run repairs even when the startup self-check finds the admission policy not enforced (clusters before Kubernetes 1.30); otherwise repairs are disabled there"`
	RepairTimeout                  time.Duration `envconfig:"REPAIR_TIMEOUT" default:"10m" desc:"upper bound on waiting for the debug pod and the restarted broker"`
	RepairSettle                   time.Duration `envconfig:"REPAIR_SETTLE" default:"2m" desc:"how long a recreated broker must stay Ready before a repair is called a success (a crash in that time ends it as crashed again); 0 = success at the first Ready"`
	RepairWithoutVisibleController bool          `envconfig:"REPAIR_WITHOUT_VISIBLE_CONTROLLER" default:"false" desc:"let repairs proceed (with a warning) when no controller pod of the broker's cluster is visible to the bot; by default the quorum gate refuses"`
	KafkaBootstrap                 string        `envconfig:"KAFKA_BOOTSTRAP" desc:"Kafka brokers the repair gates ask for Kafka's own view of health (metadata quorum, fenced brokers, ISR), one cluster: entries separated by ';', each namespace[/cluster-label]=host:port[,host:port]; empty = not asked (the thread says the quorum was not checked); with CLUSTERS_FILE use each entry's kafka list instead"`
	KafkaTLS                       bool          `envconfig:"KAFKA_TLS" default:"false" desc:"use TLS to the KAFKA_BOOTSTRAP brokers (CA from KAFKA_SECRET's ca.crt when present, else the system roots)"`
	KafkaSASLMechanism             string        `envconfig:"KAFKA_SASL_MECHANISM" desc:"SASL for the KAFKA_BOOTSTRAP brokers: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; empty = none"`
	KafkaSecret                    string        `envconfig:"KAFKA_SECRET" desc:"Secret of the bot's namespace, mounted in its pod at /etc/kafkabot/kafka/<name>, holding username, password and ca.crt for the Kafka connection"`
	KafkaCatchUpTimeout            time.Duration `envconfig:"KAFKA_CATCHUP_TIMEOUT" default:"5m" desc:"how long after a repair the bot waits for the broker to be registered, unfenced and caught up as a quorum observer (with KAFKA_BOOTSTRAP or a CLUSTERS_FILE kafka entry)"`
	LogTailBytes                   int64         `envconfig:"LOG_TAIL_BYTES" default:"262144" desc:"bytes of the previous container's log read per diagnosis"`
	LogTailLines                   int64         `envconfig:"LOG_TAIL_LINES" default:"2000" desc:"lines of the previous container's log read per diagnosis"`
	RulesFile                      string        `envconfig:"RULES_FILE" desc:"optional YAML file of site-specific diagnosis rules, added to the built-in ones"`
	Workers                        int           `envconfig:"WORKERS" default:"8" desc:"background workers for Slack commands and clicks"`
	QueueSize                      int           `envconfig:"QUEUE_SIZE" default:"256" desc:"commands and clicks that may wait for a worker, taken round-robin across users; only a full queue refuses (0 = none wait)"`
	ShareWindow                    time.Duration `envconfig:"DIAGNOSIS_SHARE_WINDOW" default:"1m" desc:"how long a diagnosis answers new requests for the same pod UID and restart count without reading the cluster again (0 = no sharing)"`
	LeaderElection                 bool          `envconfig:"LEADER_ELECTION" default:"true" desc:"only the leader replica sweeps and alerts"`
	PodNamespace                   string        `envconfig:"POD_NAMESPACE" default:"kafka-bot" desc:"namespace of the bot itself (leases for leadership and alert state)"`

	LogLevel  string `envconfig:"LOG_LEVEL" default:"info" desc:"debug, info, warn or error"`
	LogFormat string `envconfig:"LOG_FORMAT" default:"auto" desc:"json, text, or auto (json in a pod, text on a terminal)"`
	HTTPAddr  string `envconfig:"HTTP_ADDR" default:":8080" desc:"listen address for /metrics, /healthz and /readyz"`
}

// Load reads the configuration from the environment and validates it. It
// reports every wrong variable at once (an Errors), never only the first.
func Load() (*Config, error) {
	c, errs := load()
	if len(errs) > 0 {
		return nil, errs
	}
	return c, nil
}

// LoadServe is Load and ValidateServe in one: what `bot serve` (and `bot
// doctor`) need, with the problems of both in one Errors.
func LoadServe() (*Config, error) {
	c, errs := load()
	errs = append(errs, c.serveProblems()...)
	if len(errs) > 0 {
		return nil, errs
	}
	return c, nil
}

// Check is LoadServe for a checker (`bot doctor`): it also returns the
// configuration it read, with defaults where a value could not be read,
// so the other checks can go on. c is never nil.
func Check() (c *Config, err error) {
	c, errs := load()
	errs = append(errs, c.serveProblems()...)
	if len(errs) > 0 {
		return c, errs
	}
	return c, nil
}

// load reads and checks the environment; c holds what could be read (a
// default where a value could not) even when errs is not empty.
func load() (c *Config, errs Errors) {
	c = &Config{}
	errs = decodeEnv(c)
	c.KafkaNamespaces = trimList(c.KafkaNamespaces)
	c.Approvers = trimList(c.Approvers)
	c.ApprovalChannels = trimList(c.ApprovalChannels)
	// A Secret mounted from a file often ends with a newline; Alertmanager
	// trims its credentials_file the same way.
	c.AlertmanagerToken = strings.TrimSpace(c.AlertmanagerToken)
	// A variable that could not be read keeps its default, so its own
	// checks below would only repeat the complaint: skip them.
	for _, err := range c.problems() {
		if !errs.names(settingOf(err)) {
			errs = append(errs, err)
		}
	}
	return c, errs
}

// Validate checks the values that do not depend on the subcommand. It
// returns every problem at once, as an Errors; each names the variable
// that is wrong and what it wants.
func (c *Config) Validate() error {
	if errs := Errors(c.problems()); len(errs) > 0 {
		return errs
	}
	return nil
}

// problems lists what Validate reports, in the order of the settings.
func (c *Config) problems() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if u, err := url.Parse(c.SlackAPIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("SLACK_API_URL %q: want an http(s) URL", c.SlackAPIURL)
	} else if !strings.HasSuffix(c.SlackAPIURL, "/") {
		bad("SLACK_API_URL %q: must end with /", c.SlackAPIURL)
	}
	if n := len(c.ClusterName); n > 63 || strings.ContainsAny(c.ClusterName, "\n\r\t") {
		bad("CLUSTER_NAME %q: want at most 63 characters on one line", c.ClusterName)
	}
	if _, err := cron.ParseStandard(c.SweepSchedule); err != nil {
		bad("SWEEP_SCHEDULE %q: %w", c.SweepSchedule, err)
	}
	if _, err := ParseLevel(c.LogLevel); err != nil {
		errs = append(errs, err)
	}
	switch c.LogFormat {
	case "json", "text", "auto":
	default:
		bad("LOG_FORMAT %q: want json, text or auto", c.LogFormat)
	}
	if _, _, err := net.SplitHostPort(c.HTTPAddr); err != nil {
		bad("HTTP_ADDR %q: want host:port or :port (%w)", c.HTTPAddr, err)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"ALERT_REPEAT_INTERVAL", c.RepeatInterval}, {"ALERT_RESOLVE_GRACE", c.ResolveGrace}, {"RESTART_ALERT_WINDOW", c.RestartWindow},
		{"APPROVAL_TTL", c.ApprovalTTL}, {"REPAIR_TIMEOUT", c.RepairTimeout}} {
		if d.v <= 0 {
			bad("%s %v: must be positive", d.name, d.v)
		}
	}
	if _, err := c.KafkaAccess(); err != nil {
		errs = append(errs, err)
	}
	if c.KafkaCatchUpTimeout <= 0 {
		bad("KAFKA_CATCHUP_TIMEOUT %v: must be positive", c.KafkaCatchUpTimeout)
	}
	if c.RepairSettle < 0 {
		bad("REPAIR_SETTLE %v: must not be negative", c.RepairSettle)
	}
	errs = append(errs, c.alertProblems()...)
	if c.LogTailBytes <= 0 || c.LogTailBytes > 16<<20 {
		bad("LOG_TAIL_BYTES %d: want 1..16777216", c.LogTailBytes)
	}
	if c.LogTailLines <= 0 {
		bad("LOG_TAIL_LINES %d: must be positive", c.LogTailLines)
	}
	if c.Workers <= 0 || c.Workers > 256 {
		bad("WORKERS %d: want 1..256", c.Workers)
	}
	if c.QueueSize < 0 || c.QueueSize > 100000 {
		bad("QUEUE_SIZE %d: want 0..100000", c.QueueSize)
	}
	if c.ShareWindow < 0 || c.ShareWindow > time.Hour {
		bad("DIAGNOSIS_SHARE_WINDOW %v: want 0 (no sharing) up to 1h", c.ShareWindow)
	}
	for _, a := range c.Approvers {
		if !isSlackUserID(a) {
			bad("APPROVERS: %q is not a Slack user ID (like U012ABCDEF)", a)
		}
	}
	return append(errs, c.approvalProblems()...)
}

// approvalProblems checks who may approve, how many, and where.
func (c *Config) approvalProblems() []error {
	var errs []error
	if c.RequiredApprovals < 1 {
		errs = append(errs, fmt.Errorf("REQUIRED_APPROVALS %d: want at least 1", c.RequiredApprovals))
	}
	if c.RequiredApprovals > 1 && c.RequiredApprovals > len(c.Approvers) {
		errs = append(errs, fmt.Errorf("REQUIRED_APPROVALS %d: APPROVERS lists only %d people, so no repair could ever be approved", c.RequiredApprovals, len(c.Approvers)))
	}
	for _, ch := range c.ApprovalChannels {
		if !isSlackChannelID(ch) {
			errs = append(errs, fmt.Errorf("APPROVAL_CHANNELS: %q is not a channel ID (like C012ABCDEF); DMs cannot be approval channels", ch))
		}
	}
	return errs
}

// alertProblems checks the health sweep's settings.
func (c *Config) alertProblems() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.AlertChannel != "" && !isSlackChannelID(c.AlertChannel) {
		bad("ALERT_CHANNEL %q: want a channel ID (like C012ABCDEF), not a name", c.AlertChannel)
	}
	if c.GroupThreshold < 2 {
		bad("ALERT_GROUP_THRESHOLD %d: want at least 2", c.GroupThreshold)
	}
	if c.GroupWait < 0 || c.GroupWait > 5*time.Minute {
		bad("ALERT_GROUP_WAIT %v: want 0s..5m", c.GroupWait)
	}
	switch c.SweepSummary {
	case "unhealthy", "always", "never":
	default:
		bad("SWEEP_SUMMARY %q: want unhealthy, always or never", c.SweepSummary)
	}
	if c.AlertmanagerToken != "" {
		if c.AlertChannel == "" {
			bad("ALERTMANAGER_TOKEN: the Alertmanager receiver needs ALERT_CHANNEL (it posts through the health sweep)")
		}
		if len(c.AlertmanagerToken) < minAlertmanagerToken {
			bad("ALERTMANAGER_TOKEN: shorter than %d bytes", minAlertmanagerToken)
		}
	}
	if c.RestartAlerts < 1 {
		bad("RESTART_ALERT_THRESHOLD %d: want at least 1", c.RestartAlerts)
	}
	return errs
}

// minAlertmanagerToken is the shortest ALERTMANAGER_TOKEN accepted
// (amreceiver.MinTokenBytes; config imports nothing of ours).
const minAlertmanagerToken = 16

// ValidateServe checks what `bot serve` needs beyond Validate: the Slack
// tokens and the approval secret, every problem at once (an Errors).
// Values are never echoed back.
func (c *Config) ValidateServe() error {
	if errs := Errors(c.serveProblems()); len(errs) > 0 {
		return errs
	}
	return nil
}

// serveProblems lists what ValidateServe reports.
func (c *Config) serveProblems() []error {
	var errs []error
	if !strings.HasPrefix(c.SlackAppToken, "xapp-") {
		errs = append(errs, fmt.Errorf("SLACK_APP_TOKEN: missing or not an app-level token (want xapp-...)"))
	}
	if !strings.HasPrefix(c.SlackBotToken, "xoxb-") {
		errs = append(errs, fmt.Errorf("SLACK_BOT_TOKEN: missing or not a bot token (want xoxb-...)"))
	}
	if len(c.ApprovalSecret) < 32 {
		errs = append(errs, fmt.Errorf("APPROVAL_SECRET: missing or shorter than 32 bytes"))
	}
	return errs
}

// Secrets returns the secret values in the configuration, for redaction.
func (c *Config) Secrets() []string {
	var s []string
	for _, v := range []string{c.SlackAppToken, c.SlackBotToken, c.ApprovalSecret, c.AlertmanagerToken} {
		if v != "" {
			s = append(s, v)
		}
	}
	return s
}

// KafkaAccess returns the single-cluster Kafka connections of
// KAFKA_BOOTSTRAP (with KAFKA_TLS, KAFKA_SASL_MECHANISM and KAFKA_SECRET);
// none when it is unset.
func (c *Config) KafkaAccess() ([]fleet.KafkaAccess, error) {
	a, err := fleet.ParseKafkaBootstrap(c.KafkaBootstrap, c.KafkaTLS, c.KafkaSASLMechanism, c.KafkaSecret)
	if err != nil {
		return nil, fmt.Errorf("KAFKA_BOOTSTRAP: %w", err)
	}
	return a, nil
}

// ParseLevel maps LOG_LEVEL to a slog level.
func ParseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("LOG_LEVEL %q: want debug, info, warn or error", s)
	}
	return l, nil
}

func trimList(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// isSlackChannelID reports whether s looks like a public (C…) or private
// (G…) channel ID.
func isSlackChannelID(s string) bool {
	if len(s) < 3 || len(s) > 32 || (s[0] != 'C' && s[0] != 'G') {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func isSlackUserID(s string) bool {
	if len(s) < 3 || len(s) > 32 || (s[0] != 'U' && s[0] != 'W') {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
