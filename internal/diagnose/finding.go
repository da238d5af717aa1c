// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// findings turns the scan's state into ordered findings for s.
func (sc *scan) findings(s *Snapshot) []Finding {
	role, roleSource := sc.role.resolveRole(s)
	crash := sc.tail.readCrash()
	end := lastTermination(s)
	type ranked struct {
		f           Finding
		specificity int
	}
	var out []ranked
	for i, r := range sc.e.rules {
		st := &sc.rules[i]
		statusEvidence, statusOK := r.statusHolds(s, st)
		if !r.fires(st, statusOK) {
			continue
		}
		f := sc.build(r, st, s, role, roleSource, &crash)
		f.Evidence = append(f.Evidence, statusEvidence...)
		if len(statusEvidence) == 0 {
			capByTermination(&f, end)
		}
		out = append(out, ranked{f: f, specificity: st.specificity + len(statusEvidence)})
	}
	slices.SortStableFunc(out, func(a, b ranked) int {
		return cmp.Or(
			cmp.Compare(severityRank(b.f.Severity), severityRank(a.f.Severity)),
			cmp.Compare(b.f.Confidence, a.f.Confidence),
			cmp.Compare(b.specificity, a.specificity),
			cmp.Compare(a.f.Rule, b.f.Rule),
		)
	})
	findings := make([]Finding, 0, len(out)+2)
	sev, why, sick := sickness(s)
	if !sick && s.Kafka() == nil {
		// No pod status (a log file given to bot explain): a log that shows
		// Kafka dying is a sick pod too.
		if t := crash.terminal(); t != nil {
			sev, why, sick = SeverityHigh, "the log shows the process dying: "+shorten(t.text, 300), true
		}
	}
	hasMedium := slices.ContainsFunc(out, func(r ranked) bool {
		return severityRank(r.f.Severity) >= severityRank(SeverityMedium)
	})
	// The structure of the crash names a class: where no rule explains a
	// sick pod, or where an operating-system root cause of the chain
	// contradicts the best rule, that class goes first.
	if cls := classifyCrash(&crash); cls.class != "" {
		top := len(out) > 0 && severityRank(out[0].f.Severity) >= severityRank(SeverityHigh)
		// Quiet: the class comes from an error record, not from a fatal
		// event of the run (those have a kind).
		quiet := !hasMedium && !sick && cls.event.kind == ""
		if (!hasMedium && sick) || quiet || (top && cls.osCause && out[0].f.Class != cls.class) {
			if i := slices.IndexFunc(out, func(r ranked) bool { return r.f.Class == cls.class }); i >= 0 {
				findings = append(findings, out[i].f)
				out = slices.Delete(out, i, i+1)
			} else if f, ok := sc.structuralFinding(cls); ok {
				capByTermination(&f, end)
				if quiet && severityRank(f.Severity) > severityRank(SeverityMedium) {
					// An error the process did not die of, as far as the
					// log and the pod show: worth reading, not an alarm.
					f.Severity = SeverityMedium
				}
				findings = append(findings, f)
			}
			if len(findings) > 0 && severityRank(findings[0].Severity) >= severityRank(SeverityMedium) {
				hasMedium = true
			}
		}
	}
	if sick && !hasMedium {
		// Never silent (or green) on a sick pod.
		findings = append(findings, sc.unclassified(s, sev, why, &crash))
	}
	seen := make(map[string]bool, len(out)+len(findings))
	for _, f := range findings {
		seen[f.Class] = true
	}
	for i := range out {
		if seen[out[i].f.Class] {
			continue // a better finding of the same class is listed already
		}
		seen[out[i].f.Class] = true
		findings = append(findings, out[i].f)
	}
	return findings
}

// fires decides whether the rule matched, from its log part and status part.
func (r *compiledRule) fires(st *ruleState, statusOK bool) bool {
	if st.noneHit {
		return false
	}
	logOK := r.hasLog() && !slices.Contains(st.allHit, false) &&
		(len(r.Match.Any) == 0 || st.anyHit) && st.lines >= r.Match.MinLines
	switch {
	case r.Status == nil:
		return logOK
	case !r.hasLog():
		return statusOK
	case r.Status.Mode == StatusEither:
		return logOK || statusOK
	default:
		return logOK && statusOK
	}
}

// statusHolds evaluates the rule's status conditions against the pod and
// returns a description of each condition that held.
func (r *compiledRule) statusHolds(s *Snapshot, st *ruleState) ([]string, bool) {
	cond := r.Status
	if cond == nil {
		return nil, false
	}
	var evidence []string
	c := s.Kafka()
	if c != nil {
		for _, t := range []struct {
			label string
			term  *Termination
		}{{"last terminated", c.LastTerminated}, {"terminated", c.Terminated}} {
			if t.term == nil {
				continue
			}
			if slices.Contains(cond.ExcludeReasons, t.term.Reason) {
				return nil, false
			}
			if slices.Contains(cond.Reasons, t.term.Reason) || slices.Contains(cond.ExitCodes, t.term.ExitCode) {
				evidence = append(evidence, fmt.Sprintf("pod status: container %q %s with reason %q, exit code %d",
					c.Name, t.label, t.term.Reason, t.term.ExitCode))
			}
		}
		if c.WaitingReason != "" && slices.Contains(cond.WaitingReasons, c.WaitingReason) {
			evidence = append(evidence, fmt.Sprintf("pod status: container %q waiting: %s", c.Name, c.WaitingReason))
		} else if t, ok := c.CrashLoop(true); ok && c.WaitingReason == "" && slices.Contains(cond.WaitingReasons, WaitingCrashLoopBackOff) {
			// Between two restarts a real kubelet shows a crash-looping
			// container as Terminated, not as waiting in CrashLoopBackOff
			// (see CrashLoop): the condition means the loop, so it holds.
			evidence = append(evidence, fmt.Sprintf("pod status: container %q is crash-looping (%s): terminated with reason %q, exit code %d, after %d restarts",
				c.Name, WaitingCrashLoopBackOff, t.Reason, t.ExitCode, c.RestartCount))
		}
	}
	for _, re := range r.events {
		for _, ev := range s.Events {
			if re.MatchString(ev) {
				evidence = append(evidence, "event: "+validUTF8(ev))
				break
			}
		}
	}
	return evidence, len(evidence) > 0 || st.statusLogHit
}

// build makes the finding of a rule that fired.
func (sc *scan) build(r *compiledRule, st *ruleState, s *Snapshot, role Role, roleSource string, crash *crashReading) Finding {
	f := Finding{
		Rule:       r.ID,
		Class:      r.ClassID(),
		Title:      r.Title,
		Severity:   r.Severity,
		Confidence: r.Confidence,
		Risk:       r.Risk,
		Evidence:   []string{},
	}
	slices.SortFunc(st.evidence, func(a, b evidenceLine) int { return cmp.Compare(a.n, b.n) })
	for _, ev := range st.evidence {
		f.Evidence = append(f.Evidence, ev.text)
	}
	notes := []string{strings.TrimSpace(r.Explanation)}
	f.Remedy = Remedy{Action: r.Remedy.Label, Steps: slices.Clone(r.Remedy.Steps)}
	manualOnly := false
	for i, d := range r.Downgrades {
		if !st.downHit[i] {
			continue
		}
		if d.Severity != "" {
			f.Severity = d.Severity
		}
		if d.Confidence > 0 {
			f.Confidence = d.Confidence
		}
		manualOnly = manualOnly || d.Manual
		notes = append(notes, strings.TrimSpace(d.Note))
		if len(d.Steps) > 0 {
			f.Remedy = Remedy{Action: d.Label, Steps: slices.Clone(d.Steps)}
		}
	}

	if !r.hasLog() && sc.lineNo == 0 {
		notes = append(notes, "The container log is empty: this finding comes from the pod status alone.")
	}
	auto := r.Remedy.Automated
	if auto == nil {
		f.Explanation = strings.Join(notes, "\n\n")
		return f
	}

	// Rules with an automated repair: the role decides, then the triage.
	f.Role, f.RoleSource = role, roleSource
	if role != RoleBroker && r.NonBrokerRisk != "" {
		f.Risk = r.NonBrokerRisk
	}
	target := auto.Target
	if auto.TargetFrom != "" {
		target = trimPath(st.captures[auto.TargetFrom], auto.TargetKeep)
	}
	f.Remedy.Target = target
	notes = append(notes, describeRole(role, roleSource))

	allowed := !manualOnly
	if r.Triage == TriageMetadataOffsets {
		triage, note := metadataOffsets(st.offsets)
		f.Offsets = triage
		notes = append(notes, note)
		switch {
		case triage == nil:
			allowed = false
		case st.offsetSets > 1 && triage.LocalDivergence:
			allowed = false
			notes = append(notes, fmt.Sprintf("The log holds %d different offset sets for __cluster_metadata-0 (the numbers above are the last); "+
				"the bot cannot tell which one describes the volume now, so the repair is left to a person.", st.offsetSets))
		case !triage.LocalDivergence && r.Remedy.Escalate != nil:
			esc := r.Remedy.Escalate
			notes = append(notes, strings.TrimSpace(esc.Explanation))
			f.Remedy = Remedy{Action: esc.Label, Steps: slices.Clone(esc.Steps)}
			f.Explanation = strings.Join(notes, "\n\n")
			return f
		case !triage.LocalDivergence:
			allowed = false
		}
	}
	if allowed {
		why, tie := terminalVeto(r, st, s, crash)
		switch {
		case why != "":
			allowed = false
			notes = append(notes, why)
		case tie != nil:
			// The halt names the log dir: quote it with the file's lines.
			notes = append(notes, tie.note())
			if len(f.Evidence) < MaxEvidenceLines && !slices.Contains(f.Evidence, tie.halt.text) {
				f.Evidence = append(f.Evidence, tie.halt.text)
			}
		}
	}
	switch {
	case !allowed:
	case target == "":
		allowed = false
		notes = append(notes, "The bot could not read what to act on from the log, so the repair is left to a person.")
	case role != RoleBroker:
		allowed = false
		notes = append(notes, "Not automated: the bot repairs volumes only on broker-only KRaft nodes; "+
			"on a "+roleName(role)+" node a person follows the steps below.")
	}
	if allowed {
		f.Remedy = Remedy{Automated: true, Action: auto.Action, Target: target, Steps: slices.Clone(auto.Steps)}
	}
	f.Explanation = strings.Join(notes, "\n\n")
	return f
}

func roleName(r Role) string {
	if r == RoleUnknown {
		return "unknown-role"
	}
	return string(r)
}

// trimPath keeps the last keep elements of a captured path (all when keep
// is 0), trimming quotes and spaces around it.
func trimPath(p string, keep int) string {
	p = strings.Trim(strings.TrimSpace(p), `'"`)
	if p == "" || keep <= 0 {
		return p
	}
	parts := strings.Split(strings.Trim(path.Clean(p), "/"), "/")
	if len(parts) > keep {
		parts = parts[len(parts)-keep:]
	}
	return strings.Join(parts, "/")
}

// metadataOffsets says in a sentence what the offsets of the last
// UnexpectedAppendOffsetException on __cluster_metadata-0 mean. vals is nil
// when no line (or line and continuation) held all three.
func metadataOffsets(vals *[3]int64) (*OffsetTriage, string) {
	if vals == nil {
		return nil, "The offsets (First offset, next offset, Log start offset) could not all be read from the " +
			"__cluster_metadata-0 line (or its continuation), so the bot cannot tell a local divergence from a " +
			"controller-side problem; the repair is left to a person."
	}
	t := &OffsetTriage{FirstOffset: vals[0], NextOffset: vals[1], LogStartOffset: vals[2]}
	t.LocalDivergence = t.NextOffset > t.LogStartOffset
	if t.LocalDivergence {
		return t, fmt.Sprintf("Offsets: first %d, next %d, log start %d. The next offset is above the log start offset: "+
			"this node's own copy of the metadata log diverged from the quorum after it was loaded, "+
			"so discarding that copy and re-fetching it is the remedy.", t.FirstOffset, t.NextOffset, t.LogStartOffset)
	}
	return t, fmt.Sprintf("Offsets: first %d, next %d, log start %d. The next offset is not above the log start offset.",
		t.FirstOffset, t.NextOffset, t.LogStartOffset)
}

// lastTermination is the end of the container run the log belongs to: the
// current instance's when it has ended (internal/kube then reads its log),
// else the previous instance's; nil when the pod status is unknown.
func lastTermination(s *Snapshot) *Termination {
	c := s.Kafka()
	switch {
	case c == nil:
		return nil
	case c.Terminated != nil:
		return c.Terminated
	default:
		return c.LastTerminated
	}
}

// killedNotExited reports whether a termination was the kernel's or a
// signal's (OOMKilled, 137 SIGKILL, 143 SIGTERM), not one of Kafka's own
// fatal exits (which exit 1).
func killedNotExited(t *Termination) bool {
	return t != nil && (t.Reason == "OOMKilled" || t.ExitCode == 137 || t.ExitCode == 143)
}

// memoryClasses explain a kill by memory: a log line of theirs agrees
// with an OOMKilled or SIGKILLed container.
var memoryClasses = []string{"container-oom-killed", "heap-oom", "direct-memory-oom", "jvm-native-memory-insufficient", "mmap-limit"}

// capByTermination softens a high or critical finding from the log alone
// when the container was killed rather than exiting by a Kafka fatal
// fault: the logged fault is not what ended the process.
func capByTermination(f *Finding, end *Termination) {
	if !killedNotExited(end) || severityRank(f.Severity) < severityRank(SeverityHigh) || slices.Contains(memoryClasses, f.Class) {
		return
	}
	f.Severity = SeverityMedium
	f.Explanation += fmt.Sprintf("\n\nThe container did not end by a Kafka fatal exit (those exit with code 1): it ended with exit code %d (%s). "+
		"This finding names an error in the log, not what stopped the process.", end.ExitCode, end.Reason)
}

// terminalVeto says why an automated remedy read from the log must be
// left to a person (why is "" when nothing vetoes it): the line that names
// the remedy's target is not in the exception chain of the terminal event
// of the log's last run (so it may be quoted text, or an error Kafka
// survived), that run ends with several distinct fatal causes, the log
// names different targets, or the container's termination is not a Kafka
// fatal exit. One shape stands in for the chain: move-checkpoint-file
// after a log dir failure halt the run ties to that file
// (crashReading.checkpointTie), returned as tie.
func terminalVeto(r *compiledRule, st *ruleState, s *Snapshot, crash *crashReading) (why string, tie *checkpointTie) {
	if end := lastTermination(s); end != nil && (end.ExitCode != 1 || end.Reason == "OOMKilled") {
		return fmt.Sprintf("Not automated: the container's last run ended with exit code %d (%s), not with the exit code 1 of Kafka's fatal exits, "+
			"so this error is not what stopped the process.", end.ExitCode, end.Reason), nil
	}
	term := crash.terminal()
	if term == nil {
		return "Not automated: the end of the log shows no terminal event after the last start of the process (a Kafka fatal exit such as " +
			"\"Encountered fatal fault\" or \"Fatal error during ... startup\" with its exception), so the bot cannot tell that this error is " +
			"where the process ended.", nil
	}
	if causes := crash.causes(); len(causes) > 1 {
		return fmt.Sprintf("Not automated: the last run ends with %d distinct fatal causes (%s); a person decides which one to repair.",
			len(causes), strings.Join(causes, ", ")), nil
	}
	line := st.lastLine
	switch {
	case r.Triage == TriageMetadataOffsets:
		line = st.offsetsLine
	case r.Remedy.Automated.TargetFrom != "":
		line = st.targetLine
		if st.targetSets > 1 {
			return "Not automated: the log names more than one target for this repair; a person decides.", nil
		}
	}
	if crash.inChain(line) {
		return "", nil
	}
	if r.Remedy.Automated.Action == ActionMoveCheckpointFile {
		t, why := crash.checkpointTie(st.lastTarget, line)
		switch {
		case t != nil:
			return "", t
		case why != "":
			return "Not automated: " + why, nil
		}
	}
	return fmt.Sprintf("Not automated: the line that names this repair (line %d) is not part of the exception chain of the terminal event "+
		"(line %d: %s), so it may be text quoted in another message or an error the process survived.", line, term.line, shorten(term.text, 160)), nil
}

// shorten cuts s to at most n bytes (on a rune boundary), marking the cut.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
