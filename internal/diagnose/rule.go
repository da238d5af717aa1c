// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"fmt"
	"regexp"
	"strings"
)

// Rule is one entry of the knowledge base: how to recognise one failure
// class in a pod's log and status, and what to do about it. Rules are data:
// the built-in ones live in rules.yaml, a site can add or override rules
// with LoadRulesFile. The JSON tags are the YAML field names.
type Rule struct {
	// ID names the rule, e.g. "metadata-log-offset-mismatch". For most
	// rules it is also the failure class.
	ID string `json:"id"`
	// Class is the failure class (an id of failure-classes.md) the rule
	// recognises, when it differs from ID: several rules may recognise one
	// class by different evidence. The engine reports the best finding of
	// each class only.
	Class string `json:"class,omitempty"`
	// Sources say where the rule's patterns come from (file and version of
	// the program that prints the message), so that the next person can
	// extend them. They do not change matching.
	Sources []Source `json:"sources,omitempty"`
	// Title is a one-line summary for people.
	Title string `json:"title"`
	// Severity is how bad the problem is for the pod.
	Severity Severity `json:"severity"`
	// Confidence is how sure a match makes us, in (0, 1].
	Confidence float64 `json:"confidence"`
	// Risk is the risk of applying the remedy on a broker-only node.
	Risk Risk `json:"risk"`
	// NonBrokerRisk, when set, is the remedy's risk on every other role
	// (controller, combined, unknown, ZooKeeper mode).
	NonBrokerRisk Risk `json:"nonBrokerRisk,omitempty"`
	// Explanation says what the problem means, for people.
	Explanation string `json:"explanation"`
	// Match holds the log patterns.
	Match LogMatch `json:"match,omitempty"`
	// Status holds optional pod-status conditions.
	Status *StatusMatch `json:"status,omitempty"`
	// Downgrades soften a finding when the log shows a mitigating sign.
	Downgrades []Downgrade `json:"downgrades,omitempty"`
	// Triage names a built-in analysis that refines the finding; the only
	// one is "metadata-offsets" (see TriageMetadataOffsets).
	Triage string `json:"triage,omitempty"`
	// Remedy is what to do.
	Remedy RemedySpec `json:"remedy"`
}

// Source is where one recognition key of a rule comes from.
type Source struct {
	// Key is the message, exception class or structure the patterns look for.
	Key string `json:"key"`
	// From is the program file that prints it, e.g.
	// "apache/kafka core/src/main/scala/kafka/log/UnifiedLog.scala".
	From string `json:"from"`
	// Versions are the versions the text was checked in, e.g. "2.8.0 .. 3.8.0, trunk".
	Versions string `json:"versions,omitempty"`
}

// ClassID returns the failure class the rule recognises (Class, or ID).
func (r *Rule) ClassID() string {
	if r.Class != "" {
		return r.Class
	}
	return r.ID
}

// TriageMetadataOffsets is the Rule.Triage value that parses First offset,
// next offset and Log start offset from an UnexpectedAppendOffsetException
// (named groups first, next, logstart) into Finding.Offsets and allows the
// automated remedy only when next offset > log start offset.
const TriageMetadataOffsets = "metadata-offsets"

// LogMatch lists regular expressions (Go RE2 syntax) matched against each
// log line. A rule's log part matches when every All pattern matched some
// line, at least one Any pattern matched (if Any is not empty), and at
// least MinLines lines matched an All or Any pattern. A None pattern that
// matches any line vetoes the rule entirely.
type LogMatch struct {
	All      []string `json:"all,omitempty"`
	Any      []string `json:"any,omitempty"`
	None     []string `json:"none,omitempty"`
	MinLines int      `json:"minLines,omitempty"`
	// ByClass marks a rule without patterns of its own: the structural
	// reader (crash.go, classify.go) and the catalogue name its class, and
	// the rule gives that class its finding (title, explanation, remedy).
	ByClass bool `json:"byClass,omitempty"`
}

// Status modes: how a rule's status conditions combine with its log part.
const (
	// StatusRequire needs both the log part and a status condition.
	StatusRequire = "require"
	// StatusEither fires on the log part or on a status condition alone.
	StatusEither = "either"
)

// StatusMatch is a set of pod-status conditions; it holds when any one of
// them holds and no terminated reason is in ExcludeReasons. A rule with a
// status block and no log patterns fires on status alone.
type StatusMatch struct {
	// Mode is StatusRequire (the default) or StatusEither.
	Mode string `json:"mode,omitempty"`
	// ExitCodes match the Kafka container's current or last termination.
	ExitCodes []int32 `json:"exitCodes,omitempty"`
	// Reasons match the termination reason, e.g. "OOMKilled".
	Reasons []string `json:"reasons,omitempty"`
	// ExcludeReasons veto the status part when a termination has one of them.
	ExcludeReasons []string `json:"excludeReasons,omitempty"`
	// WaitingReasons match the waiting reason, e.g. "CrashLoopBackOff".
	WaitingReasons []string `json:"waitingReasons,omitempty"`
	// Events are regular expressions matched against the pod's events.
	Events []string `json:"events,omitempty"`
	// Log are regular expressions for log lines that count as the same
	// evidence as the status (e.g. "Terminating process due to signal SIGTERM").
	Log []string `json:"log,omitempty"`
}

// Downgrade softens a finding when any of its When patterns matches a line.
type Downgrade struct {
	When []string `json:"when"`
	// Severity and Confidence replace the rule's when set.
	Severity   Severity `json:"severity,omitempty"`
	Confidence float64  `json:"confidence,omitempty"`
	// Manual withdraws the automated remedy.
	Manual bool `json:"manual,omitempty"`
	// Note is appended to the explanation.
	Note string `json:"note"`
	// Label and Steps, when Steps is set, replace the manual remedy.
	Label string   `json:"label,omitempty"`
	Steps []string `json:"steps,omitempty"`
}

// RemedySpec is a rule's remedy. Label and Steps are the manual remedy,
// used whenever the automated one is absent or not allowed.
type RemedySpec struct {
	Label     string          `json:"label"`
	Steps     []string        `json:"steps"`
	Automated *AutomatedSpec  `json:"automated,omitempty"`
	Escalate  *EscalationSpec `json:"escalate,omitempty"`
}

// AutomatedSpec is a repair the bot can run itself, after approval, on a
// broker-only node (never on a controller, combined or unknown-role node).
type AutomatedSpec struct {
	// Action is one of the Action* constants.
	Action string `json:"action"`
	// Target is a fixed target relative to the log dir...
	Target string `json:"target,omitempty"`
	// ...or TargetFrom names a regex capture group that holds it, of which
	// TargetKeep (when > 0) keeps the last path elements.
	TargetFrom string `json:"targetFrom,omitempty"`
	TargetKeep int    `json:"targetKeep,omitempty"`
	// Steps describe what the automated repair does.
	Steps []string `json:"steps"`
}

// EscalationSpec replaces the remedy when a triage decides a person must
// take over (e.g. next offset == log start offset).
type EscalationSpec struct {
	Label       string   `json:"label"`
	Explanation string   `json:"explanation"`
	Steps       []string `json:"steps"`
}

var (
	ruleIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*[a-z0-9]$`)
	severities    = []Severity{SeverityInfo, SeverityLow, SeverityMedium, SeverityHigh, SeverityCritical}
	risks         = []Risk{RiskNone, RiskLow, RiskMedium, RiskHigh}
	actions       = []string{ActionMoveMetadataLog, ActionMoveForeignDir, ActionMoveCheckpointFile, ActionMoveIndexFiles}
)

// severityRank orders severities; unknown ones rank lowest.
func severityRank(s Severity) int {
	for i, v := range severities {
		if v == s {
			return i + 1
		}
	}
	return 0
}

// Validate checks a rule; its error names the rule and the field.
func (r *Rule) Validate() error {
	problems := r.problems()
	if len(problems) == 0 {
		return nil
	}
	errs := make([]string, len(problems))
	for i, p := range problems {
		errs[i] = p.Field + ": " + p.Message
	}
	return fmt.Errorf("rule %q: %s", r.ID, strings.Join(errs, "; "))
}

// Problem is one thing wrong with a rule: the field (a path such as
// "match.all[0]") and what is wrong with it.
type Problem struct {
	Field   string
	Message string
}

// problems lists everything wrong with the rule.
func (r *Rule) problems() []Problem {
	var errs []Problem
	fail := func(field, format string, args ...any) {
		errs = append(errs, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if !ruleIDPattern.MatchString(r.ID) {
		fail("id", "%q must be lower-case letters, digits and dashes", r.ID)
	}
	if r.Class != "" && !ruleIDPattern.MatchString(r.Class) {
		fail("class", "%q must be lower-case letters, digits and dashes", r.Class)
	}
	for i, src := range r.Sources {
		if strings.TrimSpace(src.Key) == "" || strings.TrimSpace(src.From) == "" {
			fail(fmt.Sprintf("sources[%d]", i), "needs key and from")
		}
	}
	if strings.TrimSpace(r.Title) == "" {
		fail("title", "is required")
	}
	if severityRank(r.Severity) == 0 {
		fail("severity", "%q is not one of %v", r.Severity, severities)
	}
	if r.Confidence <= 0 || r.Confidence > 1 {
		fail("confidence", "%v is not in (0, 1]", r.Confidence)
	}
	if !validRisk(r.Risk) {
		fail("risk", "%q is not one of %v", r.Risk, risks)
	}
	if r.NonBrokerRisk != "" && !validRisk(r.NonBrokerRisk) {
		fail("nonBrokerRisk", "%q is not one of %v", r.NonBrokerRisk, risks)
	}
	if strings.TrimSpace(r.Explanation) == "" {
		fail("explanation", "is required")
	}
	checkPatterns := func(field string, list []string) {
		for i, p := range list {
			if _, err := regexp.Compile(p); err != nil {
				fail(fmt.Sprintf("%s[%d]", field, i), "invalid regular expression: %v", err)
			}
		}
	}
	checkPatterns("match.all", r.Match.All)
	checkPatterns("match.any", r.Match.Any)
	checkPatterns("match.none", r.Match.None)
	if r.Match.MinLines < 0 {
		fail("match.minLines", "%d is negative", r.Match.MinLines)
	}
	hasLog := len(r.Match.All)+len(r.Match.Any) > 0
	if r.Status != nil {
		st := r.Status
		if st.Mode != "" && st.Mode != StatusRequire && st.Mode != StatusEither {
			fail("status.mode", "%q is not %q or %q", st.Mode, StatusRequire, StatusEither)
		}
		if len(st.ExitCodes)+len(st.Reasons)+len(st.WaitingReasons)+len(st.Events)+len(st.Log) == 0 {
			fail("status", "has no condition (exitCodes, reasons, waitingReasons, events or log)")
		}
		checkPatterns("status.events", st.Events)
		checkPatterns("status.log", st.Log)
	} else if !hasLog && !r.Match.ByClass {
		fail("match", "needs at least one all or any pattern, byClass, or a status block")
	}
	if r.Match.ByClass && (hasLog || r.Remedy.Automated != nil || r.Triage != "") {
		// The reader names a class, never a value of the line: a rule
		// whose remedy reads one needs its own patterns.
		fail("match.byClass", "excludes patterns, an automated remedy and a triage")
	}
	for i, d := range r.Downgrades {
		field := fmt.Sprintf("downgrades[%d]", i)
		if len(d.When) == 0 {
			fail(field+".when", "is required")
		}
		checkPatterns(field+".when", d.When)
		if d.Severity != "" && severityRank(d.Severity) == 0 {
			fail(field+".severity", "%q is not one of %v", d.Severity, severities)
		}
		if d.Confidence < 0 || d.Confidence > 1 {
			fail(field+".confidence", "%v is not in [0, 1]", d.Confidence)
		}
		if strings.TrimSpace(d.Note) == "" {
			fail(field+".note", "is required")
		}
		if len(d.Steps) > 0 && strings.TrimSpace(d.Label) == "" {
			fail(field+".label", "is required with steps")
		}
	}
	if r.Triage != "" && r.Triage != TriageMetadataOffsets {
		fail("triage", "%q is not a known triage (known: %q)", r.Triage, TriageMetadataOffsets)
	}
	if r.Triage == TriageMetadataOffsets && !r.capturesOffsetsTogether() {
		fail("triage", "%q needs one all or any pattern that captures the groups first, next and logstart together", r.Triage)
	}
	r.validateRemedy(fail)
	return errs
}

func (r *Rule) validateRemedy(fail func(field, format string, args ...any)) {
	rem := r.Remedy
	if strings.TrimSpace(rem.Label) == "" {
		fail("remedy.label", "is required")
	}
	if len(rem.Steps) == 0 {
		fail("remedy.steps", "needs at least one manual step")
	}
	if a := rem.Automated; a != nil {
		if !validAction(a.Action) {
			fail("remedy.automated.action", "%q is not one of %v", a.Action, actions)
		}
		if (a.Target == "") == (a.TargetFrom == "") {
			fail("remedy.automated", "needs exactly one of target or targetFrom")
		}
		if a.TargetKeep < 0 {
			fail("remedy.automated.targetKeep", "%d is negative", a.TargetKeep)
		}
		if a.TargetFrom != "" && !r.capturesGroup(a.TargetFrom) {
			fail("remedy.automated.targetFrom", "no match pattern has a capture group named %q", a.TargetFrom)
		}
		if len(a.Steps) == 0 {
			fail("remedy.automated.steps", "needs at least one step")
		}
	}
	if e := rem.Escalate; e != nil {
		if e.Label == "" || e.Explanation == "" || len(e.Steps) == 0 {
			fail("remedy.escalate", "needs label, explanation and steps")
		}
	}
}

// capturesGroup reports whether an all or any pattern has the named group.
func (r *Rule) capturesGroup(name string) bool {
	for _, p := range append(append([]string(nil), r.Match.All...), r.Match.Any...) {
		re, err := regexp.Compile(p)
		if err != nil {
			continue
		}
		if re.SubexpIndex(name) >= 0 {
			return true
		}
	}
	return false
}

// capturesOffsetsTogether reports whether one all or any pattern captures
// every group a metadata-offsets triage reads.
func (r *Rule) capturesOffsetsTogether() bool {
	for _, p := range append(append([]string(nil), r.Match.All...), r.Match.Any...) {
		if re, err := regexp.Compile(p); err == nil && capturesOffsets(re) {
			return true
		}
	}
	return false
}

func validRisk(r Risk) bool {
	for _, v := range risks {
		if v == r {
			return true
		}
	}
	return false
}

func validAction(a string) bool {
	for _, v := range actions {
		if v == a {
			return true
		}
	}
	return false
}
