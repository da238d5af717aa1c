// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/logging"
)

// Evidence and list bounds of the details reply.
const (
	maxEvidenceLines    = 12
	maxEvidenceLineText = 400
	maxAlsoFindings     = 5
	maxCauseText        = 100
)

// Diagnosis is everything a diagnosis message shows.
type Diagnosis struct {
	// ClusterName names the Kubernetes cluster (CLUSTER_NAME) in the header.
	ClusterName string
	Snapshot    diagnose.Snapshot
	Findings    []diagnose.Finding // best first
	// Requester is the Slack user who asked (SweepRequester for an alert).
	Requester string
	// Source is who raised the alert this diagnosis answers (with
	// Requester SweepRequester): the zero value is the health sweep.
	Source Source
	// Token is the signed approval for Findings[0]; empty means no buttons.
	Token string
	// Kafka is Kafka's own view of the broker's cluster, read just before
	// a card with buttons was posted; the card shows it in one line above
	// the buttons (the zero value says it was not checked). Ignored
	// without Token: a diagnosis that offers no repair does not ask Kafka.
	Kafka     KafkaView
	ExpiresAt time.Time
	Now       time.Time
}

// Title is "cluster/namespace/pod", the name the header gives the pod.
func Title(clusterName, namespace, pod string) string {
	parts := make([]string, 0, 3)
	for _, p := range []string{clusterName, namespace, pod} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/")
}

func (d Diagnosis) title() string {
	return Title(d.ClusterName, d.Snapshot.Namespace, d.Snapshot.Pod)
}

// Level is the message's severity: the pod's state and the best finding's.
func (d Diagnosis) Level() Level { return StateLevel(d.Snapshot, d.Findings) }

// Verdict is what is wrong, in a few words: the best finding's title, or
// the pod's state when no rule matched.
func (d Diagnosis) Verdict() string {
	if len(d.Findings) > 0 {
		return OneLine(d.Findings[0].Title)
	}
	if PodReady(d.Snapshot) {
		return "Ready, no known failure pattern in its log"
	}
	return StateSummary(d.Snapshot) + ", no rule matched its log"
}

// Message is the top-level diagnosis message: header, one line of cause,
// one line of the decision asked of the reader, the compact facts, then,
// with buttons, Kafka's own view (one line), the status line and the
// buttons. The rest is in Details.
func (d Diagnosis) Message() Message {
	blocks := []slack.Block{
		Header(d.Level().Icon() + " " + PlainSafe(d.title()) + ": " + PlainSafe(d.Verdict())),
		Section(BlockCause, d.causeText()),
	}
	if ask := d.askText(); ask != "" {
		blocks = append(blocks, Section(BlockAsk, ask))
	}
	blocks = append(blocks, slack.NewSectionBlock(nil, compactFacts(d.Snapshot), nil, slack.SectionBlockOptionBlockID(BlockFacts)))
	if d.Token != "" {
		f := d.Findings[0]
		blocks = append(blocks,
			Section(BlockKafka, d.Kafka.Text()),
			StatusLine(fmt.Sprintf("⏳ Awaiting approval until %s · %s · details in the thread",
				Date(d.ExpiresAt, TimeOnly), d.askedBy())),
			ApprovalActions(d.Token, RepairDescription(d.Snapshot, f)))
	} else {
		blocks = append(blocks, Context(BlockContext, fmt.Sprintf("%s · %s · read-only: nothing was changed · details in the thread",
			capitalize(d.askedBy()), Date(d.Now, DateTime))))
	}
	return Message{Blocks: CapBlocks(blocks), Fallback: d.fallback("Kafka diagnosis of ")}
}

func (d Diagnosis) fallback(prefix string) string {
	return Truncate(EscapeMrkdwn(prefix+d.Level().Icon()+" "+d.title()+": "+d.Verdict()), MaxFallbackText)
}

// causeText is one line: the first sentence of the best finding's
// explanation, and how sure the rule is.
func (d Diagnosis) causeText() string {
	if len(d.Findings) == 0 {
		if PodReady(d.Snapshot) {
			return "*Cause:* none found: the pod is Ready and none of my rules matched its log."
		}
		return "*Cause:* unknown: none of my rules matched the last " + HumanBytes(d.Snapshot.LogBytes) +
			" of its log. Events and facts are in the thread."
	}
	f := d.Findings[0]
	cause := firstSentence(OneLine(logging.ScrubSecrets(f.Explanation)), maxCauseText)
	if cause == "" {
		cause = OneLine(f.Title)
	}
	return fmt.Sprintf("*Cause:* %s. _(%d%% sure)_", EscapeMrkdwn(strings.TrimRight(cause, ".")), percent(f.Confidence))
}

// askText is one line: what the reader must decide, the risk and what the
// repair does.
func (d Diagnosis) askText() string {
	if len(d.Findings) == 0 {
		if PodReady(d.Snapshot) {
			return ""
		}
		return "*Decide:* investigate by hand (nothing here can be repaired automatically); the thread has what I read."
	}
	f := d.Findings[0]
	risk := ""
	if f.Risk != "" {
		risk = " · risk *" + EscapeMrkdwn(string(f.Risk)) + "*"
	}
	switch {
	case d.Token != "":
		return fmt.Sprintf("*Decide:* approve to %s · nothing deleted%s", shortRepair(d.Snapshot, f), risk)
	case f.Remedy.Automated && !Repairable(d.Snapshot, f):
		return fmt.Sprintf("*Decide:* repair by hand with the runbook in the thread%s. I will not: %s.",
			risk, EscapeMrkdwn(WhyNoButtons(d.Snapshot, f)))
	case f.Remedy.Automated:
		return fmt.Sprintf("*Decide:* repair by hand with the runbook in the thread%s (no approval could be offered).", risk)
	}
	return fmt.Sprintf("*Decide:* follow the runbook in the thread%s; there is no automated repair for this.", risk)
}

// shortRepair is the repair in a few words, for the ask line; the confirm
// dialog and the details reply say it in full.
func shortRepair(s diagnose.Snapshot, f diagnose.Finding) string {
	target := InlineCode(OneLine(f.Remedy.Target), 60)
	switch f.Remedy.Action {
	case diagnose.ActionMoveMetadataLog, diagnose.ActionMoveForeignDir, diagnose.ActionMoveCheckpointFile:
		return "move " + target + " to a backup on its volume, restart the broker"
	case diagnose.ActionMoveIndexFiles:
		return "move the index " + target + " to a backup (Kafka rebuilds it) and restart the broker"
	}
	return "run " + InlineCode(f.Remedy.Action, 40) + " on " + target + " and restart the broker"
}

// firstSentence is s up to the end of its first sentence or clause
// (". ", ": " or "; " after at least 40 characters), cut to max.
func firstSentence(s string, max int) string {
	for i := 40; i+1 < len(s); i++ {
		if (s[i] == '.' || s[i] == ':' || s[i] == ';') && s[i+1] == ' ' {
			s = s[:i]
			break
		}
	}
	return Truncate(strings.TrimSpace(s), max)
}

func percent(c float64) int { return int(c*100 + 0.5) }

// compactFacts are the four facts a reader needs to decide: role and node
// id, node, restarts, last exit. One line each, two a row.
func compactFacts(s diagnose.Snapshot) []*slack.TextBlockObject {
	role := "unknown"
	if s.Role != diagnose.RoleUnknown {
		role = EscapeTruncate(string(s.Role), 40)
	}
	if s.NodeID != "" {
		role += " · node.id " + EscapeTruncate(s.NodeID, 20)
	}
	restarts, exit := "-", "-"
	if k := s.Kafka(); k != nil {
		restarts = strconv.Itoa(int(k.RestartCount))
		if !k.Ready {
			restarts += " · " + EscapeTruncate(ContainerState(*k), 60)
		}
		if t := k.LastTerminated; t != nil {
			exit = shortTermination(*t)
		}
	}
	node := "-"
	if s.Node != "" {
		node = InlineCode(s.Node, 120)
	}
	return []*slack.TextBlockObject{
		Mrkdwn("*Role:* " + role), Mrkdwn("*Node:* " + node),
		Mrkdwn("*Restarts:* " + restarts), Mrkdwn("*Last exit:* " + exit),
	}
}

func shortTermination(t diagnose.Termination) string {
	s := fmt.Sprintf("code %d", t.ExitCode)
	if t.Reason != "" {
		s = EscapeTruncate(t.Reason, 40) + ", " + s
	}
	if !t.FinishedAt.IsZero() {
		s += ", " + Date(t.FinishedAt, TimeOnly)
	}
	return s
}

// Details is the first thread reply, posted with the message: everything
// the message leaves out (the full explanation with the offsets triage,
// severity, confidence, rule, evidence, every fact, the runbook steps, the
// other findings, who asked and when).
func (d Diagnosis) Details() Message {
	var blocks []slack.Block
	if len(d.Findings) == 0 {
		blocks = append(blocks, Section(BlockSummary,
			"*Details* — I read the pod, its last container log and its volumes, and none of my rules matched. "+
				"If the pod keeps crashing, its log tail may not contain the cause (see *Log read*)."))
	} else {
		f := d.Findings[0]
		blocks = append(blocks, Section(BlockSummary, detailSummary(f)))
		if ev := EvidenceText(f.Evidence); ev != "" {
			blocks = append(blocks, Section(BlockEvidence, ev))
		}
	}
	if fields := FactFields(d.Snapshot); len(fields) > 0 {
		blocks = append(blocks, slack.NewSectionBlock(nil, fields, nil, slack.SectionBlockOptionBlockID(BlockDetailsFacts)))
	}
	if len(d.Snapshot.Events) > 0 {
		blocks = append(blocks, Section("kafkabot.events", eventsText(d.Snapshot.Events)))
	}
	if len(d.Findings) > 0 {
		blocks = append(blocks, Section(BlockRemedy, RemedyText(d.Snapshot, d.Findings[0], d.Token != "")))
	}
	if len(d.Findings) > 1 {
		blocks = append(blocks, Section(BlockAlso, alsoText(d.Findings[1:])))
	}
	ctx := fmt.Sprintf("%s · diagnosed %s · read-only so far: nothing was changed", capitalize(d.askedBy()), Date(d.Now, DateTime))
	if d.Token != "" {
		ctx += " · the buttons are valid until " + Date(d.ExpiresAt, DateTime)
	}
	blocks = append(blocks, Context(BlockDetailsContext, ctx))
	return Message{Blocks: CapBlocks(blocks), Fallback: Truncate(EscapeMrkdwn("Details of the diagnosis of "+d.title()), MaxFallbackText)}
}

func detailSummary(f diagnose.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%s* — severity *%s*, confidence %d%%, rule `%s`\n",
		EscapeTruncate(OneLine(f.Title), 200), EscapeMrkdwn(string(f.Severity)),
		percent(f.Confidence), EscapeTruncate(f.Rule, 100))
	if f.Explanation != "" {
		// The explanation may quote the log (the line where the process ended).
		b.WriteString(EscapeTruncate(logging.ScrubSecrets(f.Explanation), 1800))
		b.WriteString("\n")
	}
	// The offsets triage is part of the engine's explanation (one source
	// of truth); it is not repeated here.
	if f.Risk != "" {
		fmt.Fprintf(&b, "*Risk of the remedy:* %s", EscapeMrkdwn(string(f.Risk)))
	}
	return Truncate(strings.TrimRight(b.String(), "\n"), MaxSectionText)
}

func eventsText(events []string) string {
	var b strings.Builder
	b.WriteString("*Recent events*\n")
	for i, e := range events {
		if i == 5 {
			fmt.Fprintf(&b, "_… %d more_", len(events)-i)
			break
		}
		b.WriteString("• " + EscapeTruncate(OneLine(e), 300) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// EvidenceText renders matched log lines as a code block, cut to fit one
// section, with a note saying how much was left out. The lines are a
// broker's log: secrets in them are scrubbed (logging.ScrubSecrets) first.
func EvidenceText(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	const head = "*Evidence* (from the log)\n```\n"
	const tail = "\n```"
	budget := MaxSectionText - RuneLen(head) - RuneLen(tail) - 80 // room for the note
	var shown []string
	used, cut := 0, false
	for i, l := range lines {
		if i == maxEvidenceLines {
			break
		}
		s := SanitizeLine(logging.ScrubSecrets(l))
		if RuneLen(EscapeMrkdwn(s)) > maxEvidenceLineText {
			cut = true
		}
		s = EscapeTruncate(s, maxEvidenceLineText)
		if used+RuneLen(s)+1 > budget {
			break
		}
		shown = append(shown, s)
		used += RuneLen(s) + 1
	}
	text := head + strings.Join(shown, "\n") + tail
	var notes []string
	if left := len(lines) - len(shown); left > 0 {
		notes = append(notes, fmt.Sprintf("%d more line(s) not shown", left))
	}
	if cut {
		notes = append(notes, fmt.Sprintf("long lines cut at %d characters", maxEvidenceLineText))
	}
	if len(notes) > 0 {
		text += "\n_" + strings.Join(notes, "; ") + "_"
	}
	return text
}

// FactFields are every fact about the pod, as section fields.
func FactFields(s diagnose.Snapshot) []*slack.TextBlockObject {
	var fields []*slack.TextBlockObject
	add := func(label, value string) {
		if value == "" || len(fields) == MaxFields {
			return
		}
		fields = append(fields, Mrkdwn("*"+label+"*\n"+value))
	}
	const maxFact = 300
	role := string(s.Role)
	if role == "" {
		role = "unknown (treated as controller: no automated repair)"
	}
	if s.NodeID != "" {
		role += ", node.id " + s.NodeID
	}
	add("Role", EscapeTruncate(role, maxFact))
	if s.KafkaCluster != "" {
		add("Kafka cluster", EscapeTruncate(s.KafkaCluster, maxFact))
	}
	if k := s.Kafka(); k != nil {
		add("Restarts", strconv.Itoa(int(k.RestartCount)))
		add("State", EscapeTruncate(ContainerState(*k), maxFact))
		if t := k.LastTerminated; t != nil {
			add("Last exit", TerminationText(*t))
		}
	}
	add("Node", InlineCodeOrEmpty(s.Node, maxFact))
	var claims []string
	for _, c := range s.Claims {
		claims = append(claims, c.ClaimName)
	}
	add("PVC", InlineCodeOrEmpty(strings.Join(claims, ", "), maxFact))
	logRead := HumanBytes(s.LogBytes)
	if s.LogTruncated {
		logRead += " (older output cut off)"
	}
	add("Log read", logRead)
	add("Pod UID", InlineCodeOrEmpty(s.UID, maxFact))
	return fields
}

// TerminationText says how a container ended: reason, exit code, when.
func TerminationText(t diagnose.Termination) string {
	s := fmt.Sprintf("exit code %d", t.ExitCode)
	if t.Reason != "" {
		s = EscapeTruncate(t.Reason, 100) + ", " + s
	}
	if !t.FinishedAt.IsZero() {
		s += " at " + Date(t.FinishedAt, DateTime)
	}
	return s
}

// RemedyText is the runbook: what the approved repair does (or why the bot
// will not run it), then the finding's numbered steps.
func RemedyText(s diagnose.Snapshot, f diagnose.Finding, buttons bool) string {
	var b strings.Builder
	switch {
	case f.Remedy.Automated && buttons:
		b.WriteString("*Repair (runs only after approval):* ")
		b.WriteString(RepairDescriptionMrkdwn(s, f))
		b.WriteString("\n")
	case f.Remedy.Automated:
		b.WriteString("*Repair:* the bot could run this repair, but not on this pod (")
		b.WriteString(EscapeMrkdwn(WhyNoButtons(s, f)))
		b.WriteString("). Do it by hand:\n")
	default:
		b.WriteString("*What to do:*\n")
	}
	for i, step := range f.Remedy.Steps {
		line := fmt.Sprintf("%d. %s\n", i+1, EscapeTruncate(OneLine(step), 600))
		if RuneLen(b.String())+RuneLen(line) > MaxSectionText-60 {
			fmt.Fprintf(&b, "_… %d more step(s) not shown_", len(f.Remedy.Steps)-i)
			break
		}
		b.WriteString(line)
	}
	return Truncate(strings.TrimRight(b.String(), "\n"), MaxSectionText)
}

func alsoText(rest []diagnose.Finding) string {
	var b strings.Builder
	b.WriteString("*Also matched:*\n")
	for i, f := range rest {
		if i == maxAlsoFindings {
			fmt.Fprintf(&b, "_… and %d more_", len(rest)-i)
			break
		}
		fmt.Fprintf(&b, "• %s (`%s`, %s)\n", EscapeTruncate(OneLine(f.Title), 200),
			EscapeTruncate(f.Rule, 100), EscapeMrkdwn(string(f.Severity)))
	}
	return Truncate(strings.TrimRight(b.String(), "\n"), MaxSectionText)
}

// Repairable says whether the bot may offer Approve/Reject for f on s. The
// engine decides Automated; these are the belt-and-braces checks of the
// non-negotiables (broker-only nodes, local divergence) and the refusal
// the repair's own checks of the pod spec gave (Snapshot.RepairRefusal).
func Repairable(s diagnose.Snapshot, f diagnose.Finding) bool {
	return f.Remedy.Automated && WhyNoButtons(s, f) == ""
}

// WhyNoButtons says why an automated remedy is not offered on s ("" when it is).
func WhyNoButtons(s diagnose.Snapshot, f diagnose.Finding) string {
	switch {
	case s.Role != diagnose.RoleBroker:
		return "automated repair runs only on broker-only nodes; this one is " + roleName(s.Role)
	case f.Offsets != nil && !f.Offsets.LocalDivergence:
		return "the controllers hold the bad state"
	case s.RepairRefusal != "":
		return s.RepairRefusal
	case s.UID == "":
		return "the pod's UID is unknown"
	case f.Remedy.Action == "":
		return "the finding names no action"
	}
	return ""
}

func roleName(r diagnose.Role) string {
	if r == diagnose.RoleUnknown {
		return "of unknown role"
	}
	return "a " + string(r)
}

// RepairDescription says exactly what the repair moves, where, on which
// pod, PVC and node, as plain text: the confirm dialog's text, so it stays
// within its 300 characters.
func RepairDescription(s diagnose.Snapshot, f diagnose.Finding) string {
	name := func(v string) string { return PlainSafe(Truncate(OneLine(v), 60)) }
	return Truncate(describeRepair(s, f, name, "<volume root>"), MaxConfirmText)
}

// RepairDescriptionMrkdwn is the same sentence for a message, with the
// names as inline code (so underscores in __cluster_metadata-0 stay literal).
func RepairDescriptionMrkdwn(s diagnose.Snapshot, f diagnose.Finding) string {
	name := func(v string) string { return InlineCode(OneLine(v), 120) }
	return describeRepair(s, f, name, "&lt;volume root&gt;")
}

func describeRepair(s diagnose.Snapshot, f diagnose.Finding, name func(string) string, volumeRoot string) string {
	claim := "the broker's data volume"
	if c := dataClaim(s.Claims); c != "" {
		claim = "PVC " + name(c)
	}
	node := "its node"
	if s.Node != "" {
		node = "node " + name(s.Node)
	}
	target := name(f.Remedy.Target)
	var what string
	switch f.Remedy.Action {
	case diagnose.ActionMoveMetadataLog, diagnose.ActionMoveForeignDir, diagnose.ActionMoveCheckpointFile:
		what = fmt.Sprintf("Move %s out of the log dir of %s", target, claim)
	case diagnose.ActionMoveIndexFiles:
		what = fmt.Sprintf("Move the index file %s out of the log dir of %s (Kafka rebuilds it)", target, claim)
	default:
		what = fmt.Sprintf("Run %s on %s in the log dir of %s", name(f.Remedy.Action), target, claim)
	}
	return fmt.Sprintf("%s to %s/kafkabot-backup-… on %s, then restart %s. Nothing is deleted.",
		what, volumeRoot, node, name(s.Pod))
}

// dataClaim picks the claim that holds the Kafka log dir: the only one, or
// the first whose name says data or log.
func dataClaim(claims []diagnose.VolumeClaim) string {
	if len(claims) == 0 {
		return ""
	}
	for _, c := range claims {
		n := strings.ToLower(c.ClaimName + " " + c.Volume + " " + c.MountPath)
		if strings.Contains(n, "data") || strings.Contains(n, "log") {
			return c.ClaimName
		}
	}
	return claims[0].ClaimName
}

// ApprovalActions are the Approve (with a confirm dialog saying what the
// repair does) and Reject buttons; extra elements (an alert's Silence
// menu) follow them.
func ApprovalActions(token, description string, extra ...slack.BlockElement) *slack.ActionBlock {
	confirm := slack.NewConfirmationBlockObject(
		Plain("Approve repair?"),
		Plain(Truncate(description, MaxConfirmText)),
		Plain("Approve"),
		Plain("Cancel"),
	).WithStyle(slack.StylePrimary)
	approve := slack.NewButtonBlockElement(ActionApprove, token, Plain("Approve repair")).
		WithStyle(slack.StylePrimary).WithConfirm(confirm)
	reject := slack.NewButtonBlockElement(ActionReject, token, Plain("Reject")).WithStyle(slack.StyleDanger)
	return slack.NewActionBlock(BlockActions, append([]slack.BlockElement{approve, reject}, extra...)...)
}

// askedBy says who asked for the diagnosis: a mention, or who raised the
// alert (the health sweep, or Alertmanager and its alert).
func (d Diagnosis) askedBy() string {
	if d.Requester == SweepRequester {
		return d.Source.foundBy()
	}
	return "asked by " + Mention(d.Requester)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
