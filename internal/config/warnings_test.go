// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package config

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestWarnings: a complete configuration warns about nothing; each
// setting that disables a feature or weakens a safeguard warns once,
// naming the setting and the consequence.
func TestWarnings(t *testing.T) {
	complete := map[string]string{
		"APPROVERS": "U0APPROVER", "ALERT_CHANNEL": "C0ALERTS", "KAFKA_NAMESPACES": "kafka",
	}
	tests := []struct {
		name    string
		env     map[string]string
		want    []string // settings warned about, in order
		message string   // a phrase of the first warning
	}{
		{"complete", nil, nil, ""},
		{"no approvers", map[string]string{"APPROVERS": ""}, []string{"APPROVERS"}, "nobody can approve a repair"},
		{"no alert channel", map[string]string{"ALERT_CHANNEL": "", "APPROVAL_CHANNELS": "C0APPROVE"}, []string{"ALERT_CHANNEL"}, "no health sweeps and no crash-loop alerts"},
		{"no alert nor approval channel", map[string]string{"ALERT_CHANNEL": ""}, []string{"ALERT_CHANNEL", "APPROVAL_CHANNELS"}, "no health sweeps"},
		{"no namespaces", map[string]string{"KAFKA_NAMESPACES": ""}, []string{"KAFKA_NAMESPACES"}, "cluster-wide RBAC"},
		{"whitespace-only namespaces", map[string]string{"KAFKA_NAMESPACES": " , "}, []string{"KAFKA_NAMESPACES"}, "every namespace"},
		{"dry run", map[string]string{"DRY_RUN": "true"}, []string{"DRY_RUN"}, "no broker is repaired"},
		{"self approval", map[string]string{"FORBID_SELF_APPROVAL": "false"}, []string{"FORBID_SELF_APPROVAL"}, "may approve its repair alone"},
		{"no visible controller", map[string]string{"REPAIR_WITHOUT_VISIBLE_CONTROLLER": "true"}, []string{"REPAIR_WITHOUT_VISIBLE_CONTROLLER"}, "quorum gate"},
		{"no admission policy", map[string]string{"ACKNOWLEDGE_NO_ADMISSION_POLICY": "true"}, []string{"ACKNOWLEDGE_NO_ADMISSION_POLICY"}, "admission policy"},
		{"no settle", map[string]string{"REPAIR_SETTLE": "0"}, []string{"REPAIR_SETTLE"}, "first Ready"},
		{"no leader election", map[string]string{"LEADER_ELECTION": "false"}, []string{"LEADER_ELECTION"}, "posted more than once"},
		{"no leader election, no sweep", map[string]string{"LEADER_ELECTION": "false", "ALERT_CHANNEL": "", "APPROVAL_CHANNELS": "C0APPROVE"}, []string{"ALERT_CHANNEL"}, ""},
		{"plain http Slack", map[string]string{"SLACK_API_URL": "http://slack-proxy.example:8080/api/"}, []string{"SLACK_API_URL"}, "unencrypted"},
		{"plain http loopback emulator", map[string]string{"SLACK_API_URL": "http://127.0.0.1:9999/api/"}, nil, ""},
		{"plain http localhost", map[string]string{"SLACK_API_URL": "http://localhost:9999/api/"}, nil, ""},
		{"nothing set", map[string]string{"APPROVERS": "", "ALERT_CHANNEL": "", "KAFKA_NAMESPACES": ""}, []string{"APPROVERS", "ALERT_CHANNEL", "KAFKA_NAMESPACES", "APPROVAL_CHANNELS"}, ""},
		// With CLUSTERS_FILE, each cluster's scope is ClusterWarnings'.
		{"clusters file", map[string]string{"CLUSTERS_FILE": "/etc/kafkabot/clusters.yaml", "ALERT_CHANNEL": "", "KAFKA_NAMESPACES": ""}, []string{"ALERT_CHANNEL"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range complete {
				env[k] = v
			}
			for k, v := range tt.env {
				env[k] = v
			}
			// Not in setEnv's list: cleared here, so a developer's value cannot leak in.
			t.Setenv("ACKNOWLEDGE_NO_ADMISSION_POLICY", "")
			os.Unsetenv("ACKNOWLEDGE_NO_ADMISSION_POLICY")
			setEnv(t, env)
			c, err := Load()
			if err != nil {
				t.Fatal(err)
			}
			ws := c.Warnings()
			var got []string
			for _, w := range ws {
				got = append(got, w.Setting)
				if !strings.Contains(w.Message, w.Setting) || strings.Contains(w.Message, "\n") {
					t.Errorf("warning %q does not name %s on one line", w.Message, w.Setting)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("warnings about %q, want %q", got, tt.want)
			}
			if tt.message != "" && (len(ws) == 0 || !strings.Contains(ws[0].Message, tt.message)) {
				t.Errorf("warnings %+v; want the first to say %q", ws, tt.message)
			}
		})
	}
}

// TestClusterWarnings: with CLUSTERS_FILE, a cluster whose effective
// namespaces or approval channels are empty is named in the warning.
func TestClusterWarnings(t *testing.T) {
	tests := []struct {
		name              string
		env               Config
		namespaces, chans []string
		want              []string
	}{
		{"scoped", Config{AlertChannel: "C0A"}, []string{"kafka"}, nil, nil},
		{"global namespaces apply", Config{AlertChannel: "C0A", KafkaNamespaces: []string{"kafka"}}, nil, nil, nil},
		{"no namespaces anywhere", Config{AlertChannel: "C0A"}, nil, nil, []string{"cluster east: no kafkaNamespaces in CLUSTERS_FILE and KAFKA_NAMESPACES is empty"}},
		{"cluster's own approval channel", Config{}, []string{"kafka"}, []string{"C0EAST"}, nil},
		{"global approval channel", Config{ApprovalChannels: []string{"C0ALL"}}, []string{"kafka"}, nil, nil},
		{"no approval channel anywhere", Config{}, []string{"kafka"}, nil, []string{"cluster east: no approvalChannels in CLUSTERS_FILE, and APPROVAL_CHANNELS and ALERT_CHANNEL are empty"}},
	}
	for _, tt := range tests {
		var got []string
		for _, w := range tt.env.ClusterWarnings("east", tt.namespaces, tt.chans) {
			if w.Setting != "CLUSTERS_FILE" {
				t.Errorf("%s: setting %s, want CLUSTERS_FILE", tt.name, w.Setting)
			}
			got = append(got, w.Message)
		}
		if len(got) != len(tt.want) {
			t.Errorf("%s: warnings %q, want %q", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], tt.want[i]) {
				t.Errorf("%s: warning %q, want %q", tt.name, got[i], tt.want[i])
			}
		}
	}
}
