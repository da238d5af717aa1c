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
		{"nothing set", map[string]string{"APPROVERS": "", "ALERT_CHANNEL": "", "KAFKA_NAMESPACES": ""}, []string{"APPROVERS", "ALERT_CHANNEL", "APPROVAL_CHANNELS", "KAFKA_NAMESPACES"}, ""},
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
