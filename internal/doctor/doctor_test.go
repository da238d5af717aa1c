// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package doctor

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kafka-chatops/kafkabot/internal/config"
	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/slackview"
	"github.com/kafka-chatops/kafkabot/internal/testkit/hostile"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const (
	alertChannel    = "C0KAFKAOPS"
	approvalChannel = "C0APPROVE"
)

// legacyImage is a Bitnami image from the repository Bitnami moved its
// catalogue to in 2025, which deploy/'s default allow-list does not name.
const legacyImage = "docker.io/bitnamilegacy/kafka@sha256:" + "0d0c1b2a3f4e5d6c7b8a9f0e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c"

// install is a Kafka namespace with the bot's RBAC and one Bitnami broker
// running image, on the shared API server.
func install(t *testing.T, env *testenv.Env, name, image string) string {
	t.Helper()
	ns := env.KafkaNamespace(t, name, nil)
	startBroker(t, env, ns, image)
	waitEnforced(t, env.BotConfig(), ns)
	return ns
}

// waitEnforced returns once deploy/'s policy refuses the self-check's
// probe in ns: a new namespace's policy takes a moment to apply.
func waitEnforced(t *testing.T, cfg *rest.Config, ns string) {
	t.Helper()
	client := kube.New(clientFor(t, cfg), kube.Options{})
	testenv.WaitFor(t, "the admission policy to apply in "+ns, func(ctx context.Context) (bool, error) {
		return client.CheckAdmission(ctx, ns).Enforced(), nil
	})
}

// startBroker creates the Bitnami layout's broker pod in ns, its Kafka
// container reported as running image (by digest, as a kubelet does).
func startBroker(t *testing.T, env *testenv.Env, ns, image string) {
	t.Helper()
	if _, err := hostile.CreateRunningBroker(t.Context(), env.Clientset, ns, image); err != nil {
		t.Fatal(err)
	}
}

// settings are a valid configuration for the emulator and namespaces.
func settings(emu *slackemu.Server, botNamespace string, namespaces ...string) *config.Config {
	return &config.Config{
		SlackAppToken: slackemu.DefaultAppToken, SlackBotToken: slackemu.DefaultBotToken, SlackAPIURL: emu.APIURL(),
		ApprovalSecret: strings.Repeat("k", 32), AlertChannel: alertChannel, ApprovalChannels: []string{approvalChannel},
		KafkaNamespaces: namespaces, PodNamespace: botNamespace,
	}
}

func newEmulator(t *testing.T, opts slackemu.Options) *slackemu.Server {
	t.Helper()
	emu, err := slackemu.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emu.Close)
	return emu
}

func clientFor(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// problems are the report's problem lines, as printed.
func problems(r Report) []string {
	var out []string
	for _, res := range r.Results {
		if res.Severity == Problem {
			out = append(out, res.Area+": "+res.Message+" | fix: "+res.Fix)
		}
	}
	return out
}

// wantProblem fails unless exactly one problem of area mentions every
// part of want.
func wantProblem(t *testing.T, r Report, area string, want ...string) {
	t.Helper()
	var found []string
	for _, res := range r.Results {
		if res.Severity != Problem || res.Area != area {
			continue
		}
		line := res.Message + " | fix: " + res.Fix
		if !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(line, w) }) {
			found = append(found, line)
		}
		if res.Fix == "" {
			t.Errorf("problem %q says nothing about what to do", res.Message)
		}
	}
	if len(found) != 1 {
		t.Errorf("want one %s problem saying %q, found %d; problems:\n  %s", area, want, len(found), strings.Join(problems(r), "\n  "))
	}
}

func report(t *testing.T, r Report) string {
	t.Helper()
	var b strings.Builder
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestDoctorPassesACorrectInstall: deploy/'s RBAC and policy on the real
// API server, a Bitnami broker whose image the allow-list names, a Slack
// app with the manifest's scopes in its channels: no problem, exit 0.
func TestDoctorPassesACorrectInstall(t *testing.T) {
	env := testenv.Start(t)
	ns := install(t, env, "doctor-clean", hostile.BrokerImage)
	emu := newEmulator(t, slackemu.Options{})
	r := Run(t.Context(), Options{Config: settings(emu, testenv.BotNamespace, ns),
		Clusters: []Cluster{{Client: clientFor(t, env.BotConfig()), KafkaNamespaces: []string{ns}}}})
	if n := r.Problems(); n != 0 {
		t.Fatalf("%d problems on a correct install:\n%s", n, report(t, r))
	}
	out := report(t, r)
	for _, want := range []string{
		"✓ config: every setting is valid",
		"✓ slack: SLACK_APP_TOKEN opens Socket Mode connections",
		"✓ slack: the bot token has every scope",
		"✓ slack: the bot is a member of #", alertChannel, approvalChannel,
		"✓ rbac: Kafka namespace " + ns + ": the bot may make each of its",
		"✓ rbac: bot namespace (POD_NAMESPACE) " + testenv.BotNamespace,
		"✓ admission: namespace " + ns + ": admission policy kafka-bot-guard enforced",
		"✓ images: " + ns + "/kafka-broker-0: its repair's debug pod (image docker.io/bitnami/kafka) is admitted",
		"no problems found",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestDoctorFindsEachProblem: each way an installation goes wrong is
// found, in one run with the others, and says what to do.
func TestDoctorFindsEachProblem(t *testing.T) {
	env := testenv.Start(t)

	t.Run("a wrong channel, a missing one and missing scopes", func(t *testing.T) {
		emu := newEmulator(t, slackemu.Options{Scopes: []string{"chat:write", "commands", "groups:read"}})
		emu.SetChannelMissing("C0GONE")
		emu.SetNotInChannel("G0PRIVATE")
		cfg := settings(emu, testenv.BotNamespace)
		cfg.AlertChannel, cfg.ApprovalChannels = "G0PRIVATE", []string{"C0GONE"}
		r := Run(t.Context(), Options{Config: cfg})
		wantProblem(t, r, "slack", "the bot is not a member of", "G0PRIVATE", "ALERT_CHANNEL", "/invite")
		wantProblem(t, r, "slack", "lacks the scopes channels:read", "reinstall")
		// C0GONE needs channels:read to be looked at at all.
		wantProblem(t, r, "slack", "C0GONE", "APPROVAL_CHANNELS", "cannot be checked without channels:read")
		emu2 := newEmulator(t, slackemu.Options{})
		emu2.SetChannelMissing("C0GONE")
		cfg.SlackAPIURL = emu2.APIURL()
		wantProblem(t, Run(t.Context(), Options{Config: cfg}), "slack", "C0GONE", "does not exist", "check the ID")
	})

	t.Run("a token Slack refuses", func(t *testing.T) {
		emu := newEmulator(t, slackemu.Options{})
		cfg := settings(emu, testenv.BotNamespace)
		cfg.SlackBotToken, cfg.SlackAppToken = "xoxb-revoked-token-value", "xapp-revoked-token-value"
		r := Run(t.Context(), Options{Config: cfg})
		wantProblem(t, r, "slack", "Slack refuses SLACK_BOT_TOKEN", "Bot User OAuth Token")
		wantProblem(t, r, "slack", "Slack refuses SLACK_APP_TOKEN", "connections:write")
		if out := report(t, r); strings.Contains(out, "revoked-token-value") {
			t.Errorf("the report shows a token:\n%s", out)
		}
	})

	t.Run("a missing grant", func(t *testing.T) {
		ns := install(t, env, "doctor-grant", hostile.BrokerImage)
		removeVerb(t, env, ns, "pods", "patch")
		emu := newEmulator(t, slackemu.Options{})
		r := Run(t.Context(), Options{Config: settings(emu, testenv.BotNamespace, ns),
			Clusters: []Cluster{{Client: clientFor(t, env.BotConfig()), KafkaNamespaces: []string{ns}}}})
		wantProblem(t, r, "rbac", "Kafka namespace "+ns, "may not patch pods", "go-signal annotation", "Role and RoleBinding")
		if n := r.Problems(); n != 1 {
			t.Errorf("%d problems, want only the missing grant:\n%s", n, report(t, r))
		}
	})

	t.Run("the policy not bound", func(t *testing.T) {
		// An install whose bot namespace lacks the policy's parameter
		// label: the cluster-wide policy does not apply to its bot.
		botNS := "doctor-unbound"
		bot := env.InstallBot(t, botNS, "kafka-bot", false)
		ns := env.KafkaNamespaceOf(t, "doctor-unbound-kafka", botNS, "kafka-bot")
		emu := newEmulator(t, slackemu.Options{})
		r := Run(t.Context(), Options{Config: settings(emu, botNS, ns),
			Clusters: []Cluster{{Client: clientFor(t, bot), KafkaNamespaces: []string{ns}}}})
		wantProblem(t, r, "admission", "namespace "+ns, "NOT enforced", "repairs are disabled", "install deploy/'s admission policy")
		// Acknowledged: a note, not a problem.
		cfg := settings(emu, botNS, ns)
		cfg.AcceptNoPolicy = true
		if r := Run(t.Context(), Options{Config: cfg, Clusters: []Cluster{{Client: clientFor(t, bot), KafkaNamespaces: []string{ns}}}}); r.Problems() != 0 {
			t.Errorf("with ACKNOWLEDGE_NO_ADMISSION_POLICY=true:\n%s", report(t, r))
		}
	})

	t.Run("a bitnamilegacy image outside the allow-list", func(t *testing.T) {
		ns := install(t, env, "doctor-legacy", legacyImage)
		emu := newEmulator(t, slackemu.Options{})
		r := Run(t.Context(), Options{Config: settings(emu, testenv.BotNamespace, ns),
			Clusters: []Cluster{{Client: clientFor(t, env.BotConfig()), KafkaNamespaces: []string{ns}}}})
		wantProblem(t, r, "images", ns+"/kafka-broker-0 runs image docker.io/bitnamilegacy/kafka", "not in the debug-image allow-list",
			"would refuse its repair after Approve", "kafkabot.io/debug-image-repositories", "admissionPolicy.debugImageRepositories")
		// bot serve's probe records the verdict, and the diagnosis of that
		// broker then offers no Approve and says why.
		client := kube.New(clientFor(t, env.BotConfig()), kube.Options{Namespaces: []string{ns}})
		verdicts, err := ProbeImages(t.Context(), client, "", false, ns)
		if err != nil || len(verdicts) != 1 || !verdicts[0].OutsideAllowList {
			t.Fatalf("ProbeImages = %+v, %v; want the bitnamilegacy repository outside the allow-list", verdicts, err)
		}
		in, err := client.Inspect(t.Context(), ns, "kafka-broker-0")
		if err != nil {
			t.Fatal(err)
		}
		finding := diagnose.Finding{Rule: "metadata-log-offset-mismatch",
			Remedy: diagnose.Remedy{Automated: true, Action: diagnose.ActionMoveMetadataLog, Target: "__cluster_metadata-0"}}
		why := slackview.WhyNoButtons(in.Snapshot, finding)
		if slackview.Repairable(in.Snapshot, finding) || !strings.Contains(why, "docker.io/bitnamilegacy/kafka is not in the debug-image allow-list") ||
			!strings.Contains(why, "kafkabot.io/debug-image-repositories") {
			t.Errorf("the diagnosis would offer Approve (or not say why): repairable %v, why %q", slackview.Repairable(in.Snapshot, finding), why)
		}
		// The same broker on an allowed image: Approve is offered again.
		client.RecordImageVerdict(ns, "docker.io/bitnamilegacy/kafka", "")
		if in, err = client.Inspect(t.Context(), ns, "kafka-broker-0"); err != nil || in.Snapshot.RepairRefusal != "" {
			t.Errorf("after an admitted verdict: refusal %q, %v", in.Snapshot.RepairRefusal, err)
		}
		// The dry run stored nothing.
		pods, err := env.Clientset.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil || len(pods.Items) != 1 {
			t.Errorf("pods in %s after the doctor: %d (%v), want only the broker", ns, len(pods.Items), err)
		}
	})

	t.Run("a missing namespace", func(t *testing.T) {
		ns := install(t, env, "doctor-present", hostile.BrokerImage)
		emu := newEmulator(t, slackemu.Options{})
		r := Run(t.Context(), Options{Config: settings(emu, testenv.BotNamespace, ns, "doctor-absent"),
			Clusters: []Cluster{{Client: clientFor(t, env.BotConfig()), KafkaNamespaces: []string{ns, "doctor-absent"}}}})
		wantProblem(t, r, "namespace", "Kafka namespace doctor-absent", "does not exist", "kubectl get namespace doctor-absent")
		if n := r.Problems(); n != 1 {
			t.Errorf("%d problems, want only the missing namespace:\n%s", n, report(t, r))
		}
	})

	t.Run("an unreachable API server", func(t *testing.T) {
		emu := newEmulator(t, slackemu.Options{})
		refuser := testenv.StartRefuser(t)
		r := Run(t.Context(), Options{Config: settings(emu, testenv.BotNamespace, "kafka"),
			Clusters: []Cluster{{Name: "far", Client: clientFor(t, refuser.Config()), KafkaNamespaces: []string{"kafka"}}}})
		wantProblem(t, r, "rbac", "could not be asked", "network path")
	})
}

// removeVerb takes verb on resource out of the bot's Role in ns, as a
// hand-edited install would.
func removeVerb(t *testing.T, env *testenv.Env, ns, resource, verb string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	roles, err := env.Clientset.RbacV1().Roles(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(roles.Items) != 1 {
		t.Fatalf("the bot's Role in %s: %d roles, %v", ns, len(roles.Items), err)
	}
	role := roles.Items[0]
	for i, rule := range role.Rules {
		if slices.Contains(rule.Resources, resource) && slices.Contains(rule.Verbs, verb) {
			role.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return v == verb })
		}
	}
	if _, err := env.Clientset.RbacV1().Roles(ns).Update(ctx, &role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	bot := clientFor(t, env.BotConfig())
	testenv.WaitFor(t, "the edited Role to take effect", func(ctx context.Context) (bool, error) {
		r, err := checkRBACAllowed(ctx, bot, ns, resource, verb)
		return !r, err
	})
}

// checkRBACAllowed asks one SelfSubjectAccessReview.
func checkRBACAllowed(ctx context.Context, cs kubernetes.Interface, ns, resource, verb string) (bool, error) {
	out, _, err := checkRBAC(ctx, Cluster{Client: cs}, ns, 0)
	if err != nil {
		return false, err
	}
	for _, r := range out {
		if strings.Contains(r.Message, "may not "+verb+" "+resource) {
			return false, nil
		}
	}
	return true, nil
}

// TestConfigErrorsAreEachAProblem: every configuration error is its own
// problem line, with what to do.
func TestConfigErrorsAreEachAProblem(t *testing.T) {
	errs := config.Errors{errors.New(`WORKERS "many": want a whole number`), errors.New("APPROVAL_SECRET: missing or shorter than 32 bytes")}
	r := Run(t.Context(), Options{ConfigErr: errs})
	if r.Problems() != 2 {
		t.Fatalf("%d problems, want 2:\n%s", r.Problems(), report(t, r))
	}
	out := report(t, r)
	for _, want := range []string{`✗ config: WORKERS "many": want a whole number`, "✗ config: APPROVAL_SECRET", "fix: correct it", "2 problem(s) found"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestAlertmanagerTokenWhenTheReceiverIsOn: a receiver meant to be on
// without its token is a problem; off on purpose is a note.
func TestAlertmanagerTokenWhenTheReceiverIsOn(t *testing.T) {
	cfg := &config.Config{}
	if got := alertmanagerResults(cfg, true); got[0].Severity != Problem || !strings.Contains(got[0].Fix, "ALERTMANAGER_TOKEN") {
		t.Errorf("expected receiver without a token: %+v", got)
	}
	if got := alertmanagerResults(cfg, false); got[0].Severity != Note {
		t.Errorf("receiver off: %+v", got)
	}
	cfg.AlertmanagerToken = strings.Repeat("t", 16)
	if got := alertmanagerResults(cfg, true); got[0].Severity != OK {
		t.Errorf("receiver on with a token: %+v", got)
	}
}
