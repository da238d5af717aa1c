// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"fmt"
	"slices"
	"strings"
)

// ClassInfo is one failure class the engine can report, with what it
// offers: the table `bot explain --list` prints and docs/FAILURE-CLASSES.md
// holds.
type ClassInfo struct {
	// Class is the failure class id (Finding.Class).
	Class string
	// Rules are the ids of the rules that recognise it, the class's own first.
	Rules []string
	// Title is the title of the class's main rule.
	Title string
	// Severity is the highest severity of its rules.
	Severity Severity
	// Remedy is the remedy kind: "automated: ACTION (broker-only)" when a
	// rule has an automated repair, else "manual: LABEL"; a rule that can
	// escalate adds ", escalates".
	Remedy string
	// Risk is the highest risk of the remedy on any role.
	Risk Risk
}

// Classes returns every class the engine can report, sorted by id, with the
// catch-all unclassified finding last.
func (e *Engine) Classes() []ClassInfo {
	byClass := map[string]*ClassInfo{}
	var order []string
	for _, cr := range e.rules {
		r := &cr.Rule
		id := r.ClassID()
		c, ok := byClass[id]
		if !ok {
			c = &ClassInfo{Class: id}
			byClass[id] = c
			order = append(order, id)
		}
		if r.ID == id {
			c.Rules = append([]string{r.ID}, c.Rules...)
			c.Title = r.Title
		} else {
			c.Rules = append(c.Rules, r.ID)
			if c.Title == "" {
				c.Title = r.Title
			}
		}
		c.Severity = maxSeverity(c.Severity, r.Severity)
		c.Risk = maxRisk(c.Risk, maxRisk(r.Risk, r.NonBrokerRisk))
		c.Remedy = mergeRemedy(c.Remedy, remedyKind(r))
	}
	slices.Sort(order)
	out := make([]ClassInfo, 0, len(order)+1)
	for _, id := range order {
		out = append(out, *byClass[id])
	}
	return append(out, ClassInfo{Class: UnclassifiedRule, Rules: []string{UnclassifiedRule},
		Title: "Crash-looping, failed or dying, and no known failure pattern matched", Severity: SeverityHigh,
		Remedy: "manual: investigate", Risk: RiskNone})
}

// remedyKind says in a few words what a rule's remedy is.
func remedyKind(r *Rule) string {
	s := "manual: " + r.Remedy.Label
	if a := r.Remedy.Automated; a != nil {
		s = "automated: " + a.Action + " (broker-only)"
	}
	if r.Remedy.Escalate != nil {
		s += ", escalates"
	}
	return s
}

// mergeRemedy keeps an automated remedy over a manual one.
func mergeRemedy(have, add string) string {
	switch {
	case have == "":
		return add
	case strings.HasPrefix(add, "automated") && !strings.HasPrefix(have, "automated"):
		return add
	}
	return have
}

func maxSeverity(a, b Severity) Severity {
	if severityRank(b) > severityRank(a) {
		return b
	}
	return a
}

func maxRisk(a, b Risk) Risk {
	if slices.Index(risks, b) > slices.Index(risks, a) {
		return b
	}
	return a
}

// ClassTableMarkdown renders classes as the Markdown table of
// docs/FAILURE-CLASSES.md.
func ClassTableMarkdown(classes []ClassInfo) string {
	var b strings.Builder
	b.WriteString("| class | remedy | risk | severity | rules | title |\n|---|---|---|---|---|---|\n")
	for _, c := range classes {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", c.Class, c.Remedy, c.Risk, c.Severity,
			strings.Join(c.Rules, ", "), strings.ReplaceAll(c.Title, "|", `\|`))
	}
	return b.String()
}
