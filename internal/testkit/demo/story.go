// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package demo

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/handlers"
	"github.com/kafka-chatops/kafkabot/internal/kube"
	"github.com/kafka-chatops/kafkabot/internal/recovery"
	"github.com/kafka-chatops/kafkabot/internal/testkit/slackemu"
)

// The people and the channel of the story.
const (
	Channel     = "C0KAFKAOPS"
	ChannelName = "kafka-ops"
	Requester   = "U0ALICE" // on call; types the command
	Approver    = "U0BOB"   // in APPROVERS; approves
)

// users names the story's Slack users in rendered text.
var users = Users{Requester: "alice", Approver: "bob", slackemu.DefaultBotUserID: "kafkabot"}

// approveAction is the action_id of the bot's Approve button.
const approveAction = "kafkabot.approve"

// DefaultTimeout bounds the whole story.
const DefaultTimeout = 2 * time.Minute

// Options configure Run.
type Options struct {
	// Out receives the story.
	Out io.Writer
	// In is read for the approval (Enter) unless Yes is set.
	In io.Reader
	// Yes approves without asking.
	Yes bool
	// Engine diagnoses (diagnose.Default() when nil).
	Engine *diagnose.Engine
	// Shell picks the shell the debug pod's script runs under.
	Shell ShellChoice
	// Log receives the bot's and the kubelet stand-in's logs (nil: dropped).
	Log io.Writer
	// LogLevel filters Log (default info).
	LogLevel slog.Level
	// Logger, when set, is the bot's logger and replaces Log and LogLevel
	// (bot demo passes the one klog is routed through).
	Logger *slog.Logger
	// Timeout bounds the story (DefaultTimeout when 0).
	Timeout time.Duration
	// Metrics shows a /metrics excerpt at the end, while the bot still runs.
	Metrics bool
	// CrashLog replaces the crashing broker's previous log (default: the
	// seed incident's, CrashLog()); tests use it to make the story fail.
	CrashLog string
}

// Result is what the story produced, for tests and the screenshot tool.
type Result struct {
	// Alert is the health sweep's alert as first posted, with its buttons.
	Alert slackemu.Message
	// ResolvedAlert is the same message once the sweep resolved it.
	ResolvedAlert slackemu.Message
	// AlertThread holds the replies in the alert's thread.
	AlertThread []slackemu.Message
	// Diagnosis is the bot's message as first posted, with its buttons.
	Diagnosis slackemu.Message
	// Final is the same message once the repair finished.
	Final slackemu.Message
	// Details is the diagnosis' first thread reply: everything the
	// message leaves out.
	Details slackemu.Message
	// Thread holds the replies in the message's thread.
	Thread []slackemu.Message
	// Backup is where the metadata log went, relative to the volume root.
	Backup string
	// Shell says what ran the repair script.
	Shell Shell
}

// ErrStoryFailed marks a story that ran but did not end with the broker
// repaired: the demo's exit status must say so.
var ErrStoryFailed = errors.New("the demo story failed")

// Run plays the whole story: the crash-looping broker, the health sweep's
// alert in #kafka-alerts, `/kafka diagnose broker-0` typed in Slack, the
// bot's diagnosis, the approval, each repair step in the thread, the
// volume before and after, the recovered broker, the alert resolved.
// Everything runs in process: client-go's fake clientset driven by
// kubesim, the Slack emulator, and the real bot (handlers, kube, diagnose,
// recovery, the sweep) connected to the emulator over a real WebSocket. It
// returns an error wrapping ErrStoryFailed when the alert was not posted,
// the broker was not repaired or the alert was not resolved.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.Engine == nil {
		opts.Engine = diagnose.Default()
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	s := &story{opts: opts, out: opts.Out, res: &Result{}}
	s.log = opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(opts.Log, &slog.HandlerOptions{Level: opts.LogLevel}))
	}
	defer s.stop()
	if err := s.setUp(ctx); err != nil {
		return nil, err
	}
	repairsBefore := repairsRecorded()
	err := s.play(ctx)
	if opts.Metrics {
		// The bot counts a repair once its thread is written: wait for it.
		if err == nil {
			err = s.eventually(ctx, "the bot to count the repair", func() bool { return repairsRecorded() > repairsBefore })
		}
		if merr := PrintMetrics(s.out); merr != nil && err == nil {
			err = merr
		}
	}
	return s.res, err
}

// story is one run's world and progress.
type story struct {
	opts Options
	out  io.Writer
	log  *slog.Logger
	res  *Result

	workDir  string
	volumes  string
	cluster  *Cluster
	emu      *slackemu.Server
	bot      *handlers.Bot
	botStop  context.CancelFunc
	botDone  chan error
	brokerID string // UID of the crash-looping pod
	scenes   int    // scenes printed so far

	alerts *alertWiring
	// sweepDone yields once the sweep stopped: an error, or
	// errSweepStopped; nil once read.
	sweepDone chan error
}

func (s *story) printf(format string, args ...any) { fmt.Fprintf(s.out, format, args...) }

// scene starts the next scene of the story.
func (s *story) scene(title string) {
	s.scenes++
	line := fmt.Sprintf("── %d. %s ", s.scenes, title)
	s.printf("\n%s%s\n\n", line, strings.Repeat("─", max(0, 78-displayWidth(line))))
}

// setUp starts the cluster, the emulator and the bot.
func (s *story) setUp(ctx context.Context) error {
	var err error
	if s.workDir, err = os.MkdirTemp("", "kafkabot-demo-"); err != nil {
		return fmt.Errorf("creating the demo's work dir: %w", err)
	}
	s.volumes = filepath.Join(s.workDir, "volumes")
	shell, err := FindShell(s.opts.Shell, filepath.Join(s.workDir, "shell"))
	if err != nil {
		return err
	}
	s.res.Shell = shell
	s.cluster, err = StartCluster(ctx, ClusterOptions{
		Namespace: Namespace, Busybox: shell.Busybox, WorkDir: s.workDir,
		Logf: func(format string, args ...any) { s.log.Debug(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		return err
	}
	if err := Seed(ctx, s.cluster, SeedOptions{VolumeRoot: s.volumes, CrashLog: s.opts.CrashLog}); err != nil {
		return fmt.Errorf("seeding the incident: %w", err)
	}
	botCS, err := s.cluster.BotClientset()
	if err != nil {
		return err
	}

	// From here on, production code: the same constructors `bot serve` calls.
	kc := kube.New(botCS, kube.Options{Namespaces: []string{Namespace}})
	repairer := recovery.NewRepairer(kc, s.opts.Engine, recovery.RepairOptions{
		Timeout: time.Minute, Identity: "kafkabot-demo", Logger: s.log,
	})
	if s.emu, err = slackemu.New(slackemu.Options{}); err != nil {
		return err
	}
	s.emu.SetChannelName(AlertChannel, AlertChannelName)
	if s.alerts, err = newAlertWiring(kc, s.opts.Engine, s.log); err != nil {
		return err
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	s.bot, err = handlers.New(s.alerts.botOptions(handlers.Options{
		AppToken: slackemu.DefaultAppToken, BotToken: slackemu.DefaultBotToken, APIURL: s.emu.APIURL(),
		ApprovalSecret: []byte(hex.EncodeToString(secret)), Approvers: []string{Approver},
		Diagnoser: s.opts.Engine, Logger: s.log, ApprovalChannels: []string{Channel},
		Clusters: []handlers.ClusterOptions{{Name: ClusterName, Reader: kc, Repairer: repairer, Resumer: repairer,
			Decisions: kc.Decisions([]byte(hex.EncodeToString(secret)))}},
	}))
	if err != nil {
		return err
	}
	botCtx, botStop := context.WithCancel(context.WithoutCancel(ctx))
	s.botStop, s.botDone = botStop, make(chan error, 1)
	go func() { s.botDone <- s.bot.Run(botCtx) }()
	if err := s.eventually(ctx, "the bot to connect to the Slack emulator", s.bot.Connected); err != nil {
		return err
	}
	// The sweep starts once the bot is connected, so that its first
	// evaluation (the alert) is posted by a running bot.
	s.sweepDone = make(chan error, 1)
	go func() {
		err := s.alerts.sweeper.Run(botCtx)
		if err == nil {
			err = errSweepStopped
		}
		s.sweepDone <- err
	}()
	return nil
}

// stop shuts everything down in order: the bot (it waits for its
// repairs) and the sweep, the emulator, the kubelet, then the files.
func (s *story) stop() {
	if s.botStop != nil {
		s.botStop()
		if err := <-s.botDone; err != nil {
			s.log.Error("the bot stopped with an error", "error", err)
		}
	}
	if s.sweepDone != nil {
		if err := <-s.sweepDone; !errors.Is(err, errSweepStopped) {
			s.log.Error("the health sweep stopped with an error", "error", err)
		}
	}
	if s.emu != nil {
		s.emu.Close()
	}
	if s.cluster != nil {
		s.cluster.Stop()
	}
	if s.workDir != "" {
		_ = os.RemoveAll(s.workDir)
	}
}

// eventually polls cond (the bot's connection state has no notification).
func (s *story) eventually(ctx context.Context, what string, cond func() bool) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

func (s *story) play(ctx context.Context) error {
	s.printf("kafkabot demo: the whole story on an in-process Kubernetes (client-go fake + kubelet stand-in)\n")
	s.printf("and a Slack emulator, with the real bot in between. Nothing leaves this machine.\n")
	if err := s.showIncident(ctx); err != nil {
		return err
	}
	alert, err := s.showAlert(ctx)
	if err != nil {
		return err
	}
	diag, err := s.askForDiagnosis(ctx)
	if err != nil {
		return err
	}
	if err := s.approve(ctx, diag); err != nil {
		return err
	}
	if err := s.followThread(ctx, diag); err != nil {
		return err
	}
	if err := s.showAfter(ctx); err != nil {
		return err
	}
	if err := s.showResolution(ctx, alert); err != nil {
		return err
	}
	s.printf("\nThe broker is back and its alert is resolved. That is the whole story.\n")
	return nil
}

// showIncident prints the cluster, the crash log and the volume.
func (s *story) showIncident(ctx context.Context) error {
	s.scene("The incident")
	pod, err := s.cluster.Clientset.CoreV1().Pods(Namespace).Get(ctx, BrokerPod, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading %s: %w", BrokerPod, err)
	}
	s.brokerID = string(pod.UID)
	s.printf("Namespace %s: the Bitnami chart's release %q in KRaft mode.\n\n", Namespace, Release)
	if err := s.printPods(ctx); err != nil {
		return err
	}
	crashLog, _ := s.cluster.Kubelet.Logs().Get(Namespace, BrokerPod, "kafka", true)
	s.printf("\nThe last words of %s's previous container (the seed incident's real log):\n\n", BrokerPod)
	for _, l := range importantLines(crashLog, 3) {
		s.printf("    %s\n", l)
	}
	s.printf("\nIts volume (claim data-%s, mounted at %s; here a directory on this machine):\n\n", BrokerPod, MountPath)
	return s.printVolume()
}

func (s *story) printPods(ctx context.Context) error {
	pods, err := s.cluster.Clientset.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	s.printf("    %-28s %-20s %-6s %-17s %s\n", "NAME", "ROLE", "READY", "STATUS", "RESTARTS")
	for _, p := range pods.Items {
		if p.Labels["app.kubernetes.io/name"] != "kafka" {
			continue
		}
		s.printf("    %-28s %-20s %-6s %-17s %d\n", p.Name, p.Labels["app.kubernetes.io/component"],
			readyCount(&p), podStatus(&p), restarts(&p))
	}
	return nil
}

func (s *story) printVolume() error {
	lines, err := VolumeTree(filepath.Join(s.volumes, "data-"+BrokerPod))
	if err != nil {
		return err
	}
	for _, l := range lines {
		s.printf("    %s\n", l)
	}
	return nil
}

// importantLines returns the log's ERROR/FATAL lines and the exception
// line after each, at most n.
func importantLines(log string, n int) []string {
	var out []string
	lines := strings.Split(log, "\n")
	for i, l := range lines {
		if strings.Contains(l, " ERROR ") || strings.Contains(l, " FATAL ") {
			out = append(out, l)
			if i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "[") {
				out = append(out, lines[i+1])
			}
		}
	}
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// askForDiagnosis types the command and waits for the bot's message.
func (s *story) askForDiagnosis(ctx context.Context) (slackemu.Message, error) {
	s.scene("In Slack, #" + ChannelName)
	s.emu.SetChannelName(Channel, ChannelName)
	s.printf("The alert's own Approve button would start the same repair. @%s, on call, asks for a\n", users.name(Requester))
	s.printf("fresh diagnosis where the team works (any channel the bot is in):\n\n")
	s.printf("@%s (on call) types:  /kafka diagnose broker-0\n\n", users.name(Requester))
	id, err := s.emu.SendSlashCommand(ctx, slackemu.SlashCommand{
		ChannelID: Channel, ChannelName: ChannelName, UserID: Requester, UserName: users.name(Requester),
		Command: "/kafka", Text: "diagnose broker-0",
	})
	if err != nil {
		return slackemu.Message{}, fmt.Errorf("typing the command: %w", err)
	}
	ack, err := s.emu.WaitAck(ctx, id)
	if err != nil {
		return slackemu.Message{}, fmt.Errorf("waiting for the bot's ack: %w", err)
	}
	s.printf("The bot acknowledged the Socket Mode envelope in %s (Slack allows 3 s).\n", ack.Latency.Round(10*time.Microsecond))
	var shown int
	var msg slackemu.Message
	err = s.emu.WaitFor(ctx, func() bool {
		if list := s.emu.Messages(Channel); len(list) > 0 {
			msg = list[0]
			return true
		}
		return len(s.emu.Ephemerals(Channel, Requester)) > 1
	})
	for _, e := range s.emu.Ephemerals(Channel, Requester) {
		s.printf("Only @%s sees: %s\n", users.name(Requester), MrkdwnToText(e.Text, users))
		shown++
	}
	if err != nil {
		return msg, fmt.Errorf("%w: no diagnosis was posted: %w", ErrStoryFailed, err)
	}
	if msg.TS == "" {
		return msg, fmt.Errorf("%w: the bot answered only @%s, and posted no diagnosis", ErrStoryFailed, users.name(Requester))
	}
	s.res.Diagnosis = msg
	s.printf("\nkafkabot posts in #%s:\n\n", ChannelName)
	if err := s.printMessage(msg); err != nil {
		return msg, err
	}
	var details []slackemu.Message
	if err := s.emu.WaitFor(ctx, func() bool { details = s.emu.Thread(Channel, msg.TS); return len(details) > 0 }); err != nil {
		return msg, fmt.Errorf("%w: the diagnosis came without its details reply: %w", ErrStoryFailed, err)
	}
	s.res.Details = details[0]
	s.printf("\nand, as the first reply in its thread, the details (evidence, every fact, the runbook):\n\n")
	if err := s.printMessage(details[0]); err != nil {
		return msg, err
	}
	return msg, nil
}

// printMessage prints a message's blocks as text in a frame.
func (s *story) printMessage(m slackemu.Message) error {
	text, err := RenderText(m.Blocks, m.Text, users)
	if err != nil {
		return err
	}
	s.printf("    ┌%s\n", strings.Repeat("─", 76))
	for line := range strings.Lines(text) {
		s.printf("    │ %s\n", strings.TrimRight(line, "\n"))
	}
	s.printf("    └%s\n", strings.Repeat("─", 76))
	return nil
}

// approve waits for Enter (or --yes) and clicks Approve as the approver.
func (s *story) approve(ctx context.Context, diag slackemu.Message) error {
	s.scene("The approval")
	buttons, err := Buttons(diag.Blocks)
	if err != nil {
		return err
	}
	var approveBtn *Button
	for i := range buttons {
		if buttons[i].ActionID == approveAction {
			approveBtn = &buttons[i]
		}
	}
	if approveBtn == nil {
		return fmt.Errorf("%w: the diagnosis offers no %q button", ErrStoryFailed, approveAction)
	}
	s.printf("@%s is in APPROVERS. Slack asks first: %q %s\n", users.name(Approver), approveBtn.ConfirmTitle, approveBtn.ConfirmText)
	if s.opts.Yes {
		s.printf("(--yes) @%s clicks [ %s ] and confirms.\n", users.name(Approver), approveBtn.Label)
	} else {
		s.printf("\nPress Enter to click [ %s ] as @%s (Ctrl-C to stop): ", approveBtn.Label, users.name(Approver))
		if err := waitForEnter(ctx, s.opts.In); err != nil {
			return err
		}
	}
	_, err = s.emu.SendClick(ctx, slackemu.Click{
		ChannelID: Channel, UserID: Approver, UserName: users.name(Approver),
		MessageTS: diag.TS, ActionID: approveAction,
	})
	if err != nil {
		return fmt.Errorf("clicking Approve: %w", err)
	}
	return nil
}

// waitForEnter reads one line from in, or gives up when ctx ends.
func waitForEnter(ctx context.Context, in io.Reader) error {
	if in == nil {
		return errors.New("no input to read the approval from: use --yes")
	}
	line := make(chan error, 1)
	go func() {
		_, err := bufio.NewReader(in).ReadString('\n')
		line <- err
	}()
	select {
	case err := <-line:
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading the approval: %w", err)
		}
		if errors.Is(err, io.EOF) {
			return errors.New("no approval: input ended (use --yes to approve without a terminal)")
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the approval: %w", ctx.Err())
	}
}

// podPaths shows paths as the debug pod sees them: kubesim runs the
// script on this machine with the claims under a private directory, so
// the script reports host paths where a real pod reports /kafka-data/...
func (s *story) podPaths(text string) string {
	return regexp.MustCompile(regexp.QuoteMeta(s.volumes)+`/\.kubesim-root-[^/]+`).ReplaceAllString(text, "")
}

// finishedRe matches the fallback text of the thread reply the bot posts
// when a repair ends.
var finishedRe = regexp.MustCompile(`^\S+ \*?Repair [^*]+\.`)

// followThread prints each reply in the diagnosis' thread as it arrives,
// until the bot posts the repair's outcome.
func (s *story) followThread(ctx context.Context, diag slackemu.Message) error {
	s.scene("The repair, as the thread shows it")
	s.printf("(Paths are shown as the debug pod sees its mount; kubesim runs it on this machine.)\n\n")
	printed, refusals := 0, len(s.emu.Ephemerals(Channel, Approver))
	var finish string
	for finish == "" {
		var thread []slackemu.Message
		var refused []slackemu.Message
		err := s.emu.WaitFor(ctx, func() bool {
			thread = s.emu.Thread(Channel, diag.TS)
			refused = s.emu.Ephemerals(Channel, Approver)
			return len(thread) > printed || len(refused) > refusals
		})
		if err != nil {
			return fmt.Errorf("%w: the repair did not finish: %w", ErrStoryFailed, err)
		}
		if len(refused) > refusals {
			return fmt.Errorf("%w: the bot refused the approval: %s", ErrStoryFailed, MrkdwnToText(refused[len(refused)-1].Text, users))
		}
		for _, m := range thread[printed:] {
			if finishedRe.MatchString(m.Text) {
				finish = m.Text
			}
		}
		printed = len(thread)
	}
	// The checklist is one reply, edited in place as the steps ran: print
	// every reply as it stands at the end (the details came with the
	// diagnosis and are shown there).
	for _, m := range s.emu.Thread(Channel, diag.TS)[1:] {
		rendered, err := RenderText(m.Blocks, m.Text, users)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrStoryFailed, err)
		}
		text := s.podPaths(rendered)
		first, rest, _ := strings.Cut(text, "\n")
		s.printf("  🧵 %s\n", first)
		for line := range strings.Lines(rest) {
			s.printf("       %s\n", strings.TrimRight(line, "\n"))
		}
		if m.Updated > 0 {
			s.printf("       (this reply was edited %d times as the steps ran; Slack notifies nobody of edits)\n", m.Updated)
		}
	}
	s.res.Thread = s.emu.Thread(Channel, diag.TS)
	// The message's status line is updated after the last reply is posted.
	err := s.emu.WaitFor(ctx, func() bool {
		m, ok := s.emu.Message(Channel, diag.TS)
		return ok && strings.Contains(string(m.Blocks), "see the thread")
	})
	if err != nil {
		return fmt.Errorf("%w: the diagnosis message was not marked finished: %w", ErrStoryFailed, err)
	}
	s.res.Final, _ = s.emu.Message(Channel, diag.TS)
	if !strings.HasPrefix(finish, "✅") {
		return fmt.Errorf("%w: %s", ErrStoryFailed, MrkdwnToText(finish, users))
	}
	return nil
}

// showAfter prints the message's final state, the volume, the pods and
// the bot's records, and checks each against the cluster: a story that
// only looks right is not enough.
func (s *story) showAfter(ctx context.Context) error {
	s.scene("After")
	s.printf("The diagnosis message now ends with:\n\n")
	blocks, err := parseBlocks(s.res.Final.Blocks)
	if err != nil {
		return err
	}
	for _, b := range blocks {
		if b.Type == "context" && (b.BlockID == "kafkabot.decision" || b.BlockID == "kafkabot.status") {
			for _, e := range b.Elements {
				s.printf("    %s\n", MrkdwnToText(e.text(), users))
			}
		}
	}

	volume := filepath.Join(s.volumes, "data-"+BrokerPod)
	backup, err := FindBackup(volume, "data", MetadataLog)
	if err != nil {
		return err
	}
	s.printf("\nThe volume: %s left the log dir data/ for a backup at the volume root (nothing deleted):\n\n", MetadataLog)
	if err := s.printVolume(); err != nil {
		return err
	}
	var problems []string
	if backup == "" {
		problems = append(problems, "no kafkabot-backup-*/data/"+MetadataLog+" at the volume root")
	}
	if _, err := os.Stat(filepath.Join(volume, "data", MetadataLog)); !os.IsNotExist(err) {
		problems = append(problems, MetadataLog+" is still in the log dir")
	}
	if backup != "" {
		s.res.Backup = backup
		s.printf("\nmoved %s to the backup %s\n", MetadataLog, backup)
		if readme, err := os.ReadFile(filepath.Join(volume, strings.SplitN(backup, "/", 2)[0], "README.txt")); err == nil {
			s.printf("\nThe backup's README.txt says how to undo it:\n\n")
			for line := range strings.Lines(string(readme)) {
				if strings.HasPrefix(line, "undo:") || strings.HasPrefix(line, "           mv ") {
					s.printf("    %s", line)
				}
			}
		}
	}

	s.printf("\nThe pods:\n\n")
	if err := s.printPods(ctx); err != nil {
		return err
	}
	pod, err := s.cluster.Clientset.CoreV1().Pods(Namespace).Get(ctx, BrokerPod, metav1.GetOptions{})
	switch {
	case err != nil:
		problems = append(problems, "reading "+BrokerPod+": "+err.Error())
	case string(pod.UID) == s.brokerID:
		problems = append(problems, BrokerPod+" was not recreated")
	case !podReady(pod):
		problems = append(problems, BrokerPod+" is not Ready: "+podStatus(pod))
	default:
		s.printf("\n%s is Ready: a new pod (UID %s). The startup log kubesim gives it is a real\n", BrokerPod, pod.UID)
		s.printf("broker-only KRaft start (RECOVERY -> RUNNING) recorded on another cluster, hence node id 4.\n")
	}

	lease, err := s.cluster.Clientset.CoordinationV1().Leases(Namespace).Get(ctx, kube.RepairLeaseName(BrokerPod), metav1.GetOptions{})
	if err != nil {
		problems = append(problems, "reading the repair Lease: "+err.Error())
	} else {
		a := lease.Annotations
		s.printf("\nThe repair's record, Lease %s: state %s, approved by %s, approval %s.\n",
			lease.Name, a["kafkabot/state"], a["kafkabot/approver"], a["kafkabot/approval-id"])
		if a["kafkabot/state"] != "done" {
			problems = append(problems, "the repair Lease says state "+a["kafkabot/state"])
		}
	}
	if err := s.printEvents(ctx); err != nil {
		return err
	}
	s.printf("\nThe debug pod's script ran under %s.\n", s.res.Shell.Description)
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrStoryFailed, strings.Join(problems, "; "))
	}
	return nil
}

// printEvents prints the audit Events the bot wrote, oldest first.
func (s *story) printEvents(ctx context.Context) error {
	events, err := s.cluster.Clientset.CoreV1().Events(Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: kube.LabelManagedBy + "=" + kube.ManagedByBot,
	})
	if err != nil {
		return fmt.Errorf("listing the bot's Events: %w", err)
	}
	if len(events.Items) == 0 {
		return nil
	}
	s.printf("\nAudit Events on %s (kubectl get events):\n\n", BrokerPod)
	for _, e := range events.Items {
		s.printf("    %-8s %-22s %s\n", e.Type, e.Reason, oneLine(e.Message, 100))
	}
	return nil
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func readyCount(p *corev1.Pod) string {
	ready := 0
	for _, c := range p.Status.ContainerStatuses {
		if c.Ready {
			ready++
		}
	}
	return fmt.Sprintf("%d/%d", ready, len(p.Spec.Containers))
}

func podStatus(p *corev1.Pod) string {
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Waiting != nil && c.State.Waiting.Reason != "" {
			return c.State.Waiting.Reason
		}
	}
	if p.Status.Phase == "" {
		return "Pending"
	}
	return string(p.Status.Phase)
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, c := range p.Status.ContainerStatuses {
		n += c.RestartCount
	}
	return n
}
