package handlers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// Slack's Block Kit limits (see the project's Slack notes, limits.md).
const (
	maxBlocks          = 50
	maxSectionText     = 3000
	maxFieldText       = 2000
	maxFields          = 10
	maxHeaderText      = 150
	maxContextElements = 10
	maxConfirmText     = 300
	maxFallbackText    = 3000 // top-level text: Slack advises 4000
)

// Block and action IDs of the bot's messages.
const (
	blockHeader   = "kafkabot.header"
	blockSummary  = "kafkabot.summary"
	blockEvidence = "kafkabot.evidence"
	blockFacts    = "kafkabot.facts"
	blockRemedy   = "kafkabot.remedy"
	blockAlso     = "kafkabot.also"
	blockContext  = "kafkabot.context"
	blockStatus   = "kafkabot.status"
	blockDecision = "kafkabot.decision"
	blockActions  = "kafkabot.actions"

	actionApprove = "kafkabot.approve"
	actionReject  = "kafkabot.reject"
)

// Evidence rendering bounds.
const (
	maxEvidenceLines    = 12
	maxEvidenceLineText = 400
	maxAlsoFindings     = 5
)

// diagnosisView is everything a diagnosis message shows.
type diagnosisView struct {
	Snapshot diagnose.Snapshot
	Findings []diagnose.Finding // best first
	// Requester is the Slack user who asked.
	Requester string
	// Token is the signed approval for Findings[0]; empty means no buttons.
	Token     string
	ExpiresAt time.Time
	Now       time.Time
}

// renderDiagnosis builds the Block Kit message for a diagnosis and its
// plain-text fallback.
func renderDiagnosis(v diagnosisView) ([]slack.Block, string) {
	snap := v.Snapshot
	var blocks []slack.Block
	verdict := "no known failure pattern matched"
	icon := "🟢"
	if len(v.Findings) > 0 {
		verdict = v.Findings[0].Title
		icon = severityIcon(v.Findings[0].Severity)
	}
	podName := podRef(snap)
	blocks = append(blocks, slack.NewHeaderBlock(
		plain(truncateRunes(icon+" "+plainSafe(podName)+": "+plainSafe(oneLine(verdict)), maxHeaderText)),
		slack.HeaderBlockOptionBlockID(blockHeader)))

	if len(v.Findings) == 0 {
		blocks = append(blocks, section(blockSummary,
			"I read the pod, its last container log and its volumes, and none of my rules matched. "+
				"If the pod keeps crashing, its log tail may not contain the cause (see *Log read* below)."))
	} else {
		f := v.Findings[0]
		blocks = append(blocks, section(blockSummary, summaryText(f)))
		if ev := evidenceText(f.Evidence); ev != "" {
			blocks = append(blocks, section(blockEvidence, ev))
		}
	}
	if fields := factFields(snap); len(fields) > 0 {
		blocks = append(blocks, slack.NewSectionBlock(nil, fields, nil, slack.SectionBlockOptionBlockID(blockFacts)))
	}
	if len(v.Findings) > 0 {
		blocks = append(blocks, section(blockRemedy, remedyText(snap, v.Findings[0], v.Token != "")))
	}
	if len(v.Findings) > 1 {
		blocks = append(blocks, section(blockAlso, alsoText(v.Findings[1:])))
	}
	blocks = append(blocks, slack.NewContextBlock(blockContext, mrkdwn(fmt.Sprintf(
		"Requested by %s · diagnosed %s · read-only so far: nothing was changed",
		mention(v.Requester), v.Now.UTC().Format("2006-01-02 15:04:05 MST")))))
	if v.Token != "" {
		blocks = append(blocks,
			statusBlock(fmt.Sprintf("⏳ Awaiting approval (valid until %s)", v.ExpiresAt.UTC().Format("15:04 MST"))),
			approvalActions(v.Token, repairDescription(snap, v.Findings[0])))
	}
	return capBlocks(blocks), diagnosisFallback(podName, verdict)
}

func summaryText(f diagnose.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%s* — severity *%s*, confidence %d%%, rule `%s`\n",
		escapeTruncate(oneLine(f.Title), 200), escapeMrkdwn(string(f.Severity)),
		int(f.Confidence*100+0.5), escapeTruncate(f.Rule, 100))
	if f.Explanation != "" {
		b.WriteString(escapeTruncate(f.Explanation, 1800))
		b.WriteString("\n")
	}
	// The offsets triage is part of the engine's explanation (one source
	// of truth); it is not repeated here.
	if f.Risk != "" {
		fmt.Fprintf(&b, "*Risk of the remedy:* %s", escapeMrkdwn(string(f.Risk)))
	}
	return truncateRunes(strings.TrimRight(b.String(), "\n"), maxSectionText)
}

// evidenceText renders matched log lines as a code block, cut to fit one
// section, with a note saying how much was left out.
func evidenceText(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	const head = "*Evidence* (from the log)\n```\n"
	const tail = "\n```"
	budget := maxSectionText - runeLen(head) - runeLen(tail) - 80 // room for the note
	var shown []string
	used, cut := 0, false
	for i, l := range lines {
		if i == maxEvidenceLines {
			break
		}
		s := sanitizeLine(l)
		if runeLen(escapeMrkdwn(s)) > maxEvidenceLineText {
			cut = true
		}
		s = escapeTruncate(s, maxEvidenceLineText)
		if used+runeLen(s)+1 > budget {
			break
		}
		shown = append(shown, s)
		used += runeLen(s) + 1
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

func factFields(s diagnose.Snapshot) []*slack.TextBlockObject {
	var fields []*slack.TextBlockObject
	add := func(label, value string) {
		if value == "" || len(fields) == maxFields {
			return
		}
		fields = append(fields, mrkdwn("*"+label+"*\n"+value))
	}
	const maxFact = 300
	role := string(s.Role)
	if role == "" {
		role = "unknown (treated as controller: no automated repair)"
	}
	if s.NodeID != "" {
		role += ", node.id " + s.NodeID
	}
	add("Role", escapeTruncate(role, maxFact))
	if s.Cluster != "" {
		add("Cluster", escapeTruncate(s.Cluster, maxFact))
	}
	if k := s.Kafka(); k != nil {
		add("Restarts", strconv.Itoa(int(k.RestartCount)))
		add("State", escapeTruncate(containerState(*k), maxFact))
		if t := k.LastTerminated; t != nil {
			add("Last exit", escapeTruncate(terminationText(*t), maxFact))
		}
	}
	add("Node", inlineCodeOrEmpty(s.Node, maxFact))
	var claims []string
	for _, c := range s.Claims {
		claims = append(claims, c.ClaimName)
	}
	add("PVC", inlineCodeOrEmpty(strings.Join(claims, ", "), maxFact))
	logRead := humanBytes(s.LogBytes)
	if s.LogTruncated {
		logRead += " (older output cut off)"
	}
	add("Log read", logRead)
	add("Pod UID", inlineCodeOrEmpty(s.UID, maxFact))
	return fields
}

func inlineCodeOrEmpty(s string, max int) string {
	if s == "" {
		return ""
	}
	return inlineCode(s, max)
}

func containerState(c diagnose.ContainerState) string {
	switch {
	case c.Ready:
		return "Ready"
	case c.WaitingReason != "":
		return c.WaitingReason
	case c.Running:
		return "Running, not ready"
	case c.Terminated != nil:
		return "Terminated: " + c.Terminated.Reason
	}
	return "unknown"
}

func terminationText(t diagnose.Termination) string {
	s := fmt.Sprintf("exit code %d", t.ExitCode)
	if t.Reason != "" {
		s = t.Reason + ", " + s
	}
	if !t.FinishedAt.IsZero() {
		s += " at " + t.FinishedAt.UTC().Format("2006-01-02 15:04:05 MST")
	}
	return s
}

func remedyText(s diagnose.Snapshot, f diagnose.Finding, buttons bool) string {
	var b strings.Builder
	switch {
	case f.Remedy.Automated && buttons:
		b.WriteString("*Repair (runs only after approval):* ")
		b.WriteString(repairDescriptionMrkdwn(s, f))
		b.WriteString("\n")
	case f.Remedy.Automated:
		b.WriteString("*Repair:* the bot could run this repair, but not on this pod (")
		b.WriteString(escapeMrkdwn(whyNoButtons(s, f)))
		b.WriteString("). Do it by hand:\n")
	default:
		b.WriteString("*What to do:*\n")
	}
	for i, step := range f.Remedy.Steps {
		line := fmt.Sprintf("%d. %s\n", i+1, escapeTruncate(oneLine(step), 600))
		if runeLen(b.String())+runeLen(line) > maxSectionText-60 {
			fmt.Fprintf(&b, "_… %d more step(s) not shown_", len(f.Remedy.Steps)-i)
			break
		}
		b.WriteString(line)
	}
	return truncateRunes(strings.TrimRight(b.String(), "\n"), maxSectionText)
}

func alsoText(rest []diagnose.Finding) string {
	var b strings.Builder
	b.WriteString("*Also matched:*\n")
	for i, f := range rest {
		if i == maxAlsoFindings {
			fmt.Fprintf(&b, "_… and %d more_", len(rest)-i)
			break
		}
		fmt.Fprintf(&b, "• %s (`%s`, %s)\n", escapeTruncate(oneLine(f.Title), 200),
			escapeTruncate(f.Rule, 100), escapeMrkdwn(string(f.Severity)))
	}
	return truncateRunes(strings.TrimRight(b.String(), "\n"), maxSectionText)
}

// repairable says whether the bot may offer Approve/Reject for f on s. The
// engine decides Automated; these are the handler's own belt-and-braces
// checks of the non-negotiables (broker-only nodes, local divergence).
func repairable(s diagnose.Snapshot, f diagnose.Finding) bool {
	return f.Remedy.Automated && whyNoButtons(s, f) == ""
}

func whyNoButtons(s diagnose.Snapshot, f diagnose.Finding) string {
	switch {
	case s.Role != diagnose.RoleBroker:
		return "automated repair runs only on broker-only nodes; this one is " + roleName(s.Role)
	case f.Offsets != nil && !f.Offsets.LocalDivergence:
		return "the controllers hold the bad state"
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

// repairDescription says exactly what the repair moves, where, on which
// pod, PVC and node, as plain text: the confirm dialog's text, so it stays
// within its 300 characters.
func repairDescription(s diagnose.Snapshot, f diagnose.Finding) string {
	name := func(v string) string { return plainSafe(truncateRunes(oneLine(v), 60)) }
	return truncateRunes(describeRepair(s, f, name, "<volume root>"), maxConfirmText)
}

// repairDescriptionMrkdwn is the same sentence for a message, with the
// names as inline code (so underscores in __cluster_metadata-0 stay literal).
func repairDescriptionMrkdwn(s diagnose.Snapshot, f diagnose.Finding) string {
	name := func(v string) string { return inlineCode(oneLine(v), 120) }
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

func approvalActions(token, description string) *slack.ActionBlock {
	confirm := slack.NewConfirmationBlockObject(
		plain("Approve repair?"),
		plain(truncateRunes(description, maxConfirmText)),
		plain("Approve"),
		plain("Cancel"),
	).WithStyle(slack.StylePrimary)
	approve := slack.NewButtonBlockElement(actionApprove, token, plain("Approve repair")).
		WithStyle(slack.StylePrimary).WithConfirm(confirm)
	reject := slack.NewButtonBlockElement(actionReject, token, plain("Reject")).WithStyle(slack.StyleDanger)
	return slack.NewActionBlock(blockActions, approve, reject)
}

func statusBlock(text string) *slack.ContextBlock {
	return slack.NewContextBlock(blockStatus, mrkdwn(truncateRunes("*Status:* "+text, maxSectionText)))
}

func diagnosisFallback(pod, verdict string) string {
	return truncateRunes(escapeMrkdwn("Kafka diagnosis of "+pod+": "+oneLine(verdict)), maxFallbackText)
}

// capBlocks keeps a message within Slack's block count, keeping the
// actions block (the buttons) if there is one.
func capBlocks(blocks []slack.Block) []slack.Block {
	if len(blocks) <= maxBlocks {
		return blocks
	}
	last := blocks[len(blocks)-1]
	out := slices.Clone(blocks[:maxBlocks-2])
	out = append(out, slack.NewContextBlock("kafkabot.more", mrkdwn(fmt.Sprintf("_%d more block(s) not shown_", len(blocks)-maxBlocks+1))))
	if last.BlockType() == slack.MBTAction {
		return append(out, last)
	}
	return append(out, blocks[maxBlocks-2])
}

func section(blockID, text string) *slack.SectionBlock {
	return slack.NewSectionBlock(mrkdwn(truncateRunes(text, maxSectionText)), nil, nil, slack.SectionBlockOptionBlockID(blockID))
}

func mrkdwn(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, nonEmpty(text), false, false)
}

func plain(text string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, nonEmpty(text), false, false)
}

func nonEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// mention renders a Slack user ID as a mention, or escaped text when it
// does not look like one.
func mention(user string) string {
	if isUserID(user) {
		return "<@" + user + ">"
	}
	if user == "" {
		return "someone"
	}
	return escapeTruncate(user, 40)
}

func isUserID(s string) bool {
	if len(s) < 3 || len(s) > 32 || (s[0] != 'U' && s[0] != 'W') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func podRef(s diagnose.Snapshot) string {
	if s.Namespace == "" {
		return s.Pod
	}
	return s.Namespace + "/" + s.Pod
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(sanitizeLine(s)), " ")
}

func severityIcon(s diagnose.Severity) string {
	switch s {
	case diagnose.SeverityCritical, diagnose.SeverityHigh:
		return "🔴"
	case diagnose.SeverityMedium:
		return "🟠"
	case diagnose.SeverityLow:
		return "🟡"
	}
	return "🔵"
}

func humanBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
