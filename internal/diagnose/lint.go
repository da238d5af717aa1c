// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// LintIssue is one finding of LintRules, located in the rules file.
type LintIssue struct {
	// Line is the 1-based line of the YAML node the issue is about (0 when
	// the file cannot be parsed far enough to tell).
	Line int
	// Rule is the id of the rule (or "" for the file).
	Rule string
	// Field is the path of the field, e.g. "match.all[1]" ("" for the rule).
	Field string
	// Message says what is wrong.
	Message string
	// Warning marks an issue that does not stop the rules from loading
	// (for example a pattern that makes the engine read every line).
	Warning bool
}

// String formats the issue as "LINE: rule "id": field: message".
func (i LintIssue) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d: ", i.Line)
	if i.Warning {
		b.WriteString("warning: ")
	}
	if i.Rule != "" {
		fmt.Fprintf(&b, "rule %q: ", i.Rule)
	}
	if i.Field != "" {
		b.WriteString(i.Field + ": ")
	}
	b.WriteString(i.Message)
	return b.String()
}

// LintRules checks a rules file (the schema of rules.yaml) and returns its
// issues ordered by line: everything ParseRules rejects, located at the
// line of the offending field, plus warnings about what loads but costs or
// surprises (a pattern without a literal of 4+ bytes runs on every line
// and turns the fast scan off; a rule that replaces a built-in one).
// builtin lists the ids of the built-in rules (nil to skip that check).
func LintRules(data []byte, builtin []string) []LintIssue {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return []LintIssue{{Line: yamlErrorLine(err), Message: "not valid YAML: " + err.Error()}}
	}
	if len(doc.Content) == 0 {
		return []LintIssue{{Line: 1, Message: "empty file (expected a top-level \"rules\" list)"}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return []LintIssue{{Line: root.Line, Message: "the top level must be a mapping with a \"rules\" list"}}
	}
	var issues []LintIssue
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value == "rules" {
			list = v
			continue
		}
		issues = append(issues, LintIssue{Line: k.Line, Field: k.Value, Message: "unknown top-level field (only \"rules\" is read)"})
	}
	if list == nil || list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		line := root.Line
		if list != nil {
			line = list.Line
		}
		return append(issues, LintIssue{Line: line, Message: "no rules (expected a top-level \"rules\" list)"})
	}
	seen := map[string]int{}
	for _, item := range list.Content {
		issues = append(issues, lintRule(item, seen, builtin)...)
	}
	sort.SliceStable(issues, func(a, b int) bool { return issues[a].Line < issues[b].Line })
	return issues
}

// lintRule checks one item of the rules list.
func lintRule(item *yaml.Node, seen map[string]int, builtin []string) []LintIssue {
	id := ""
	if v := mapValue(item, "id"); v != nil {
		id = v.Value
	}
	at := func(field, format string, args ...any) LintIssue {
		return LintIssue{Line: fieldLine(item, field), Rule: id, Field: field, Message: fmt.Sprintf(format, args...)}
	}
	if item.Kind != yaml.MappingNode {
		return []LintIssue{{Line: item.Line, Message: "a rule must be a mapping"}}
	}
	var issues []LintIssue
	var generic any
	if err := item.Decode(&generic); err != nil {
		return []LintIssue{{Line: item.Line, Rule: id, Message: err.Error()}}
	}
	js, err := json.Marshal(generic)
	if err != nil {
		return []LintIssue{{Line: item.Line, Rule: id, Message: "cannot be read: " + err.Error()}}
	}
	var r Rule
	if err := decodeStrict(js, &r); err != nil {
		var field string
		if _, after, ok := strings.Cut(err.Error(), "unknown field "); ok {
			field, _ = strconv.Unquote(after)
		}
		line := item.Line
		if field != "" {
			if n := findKey(item, field); n != nil {
				line = n.Line
			}
			return []LintIssue{{Line: line, Rule: id, Field: field, Message: "unknown field (a typo would silently switch a condition off)"}}
		}
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return []LintIssue{at(typeErr.Field, "has the wrong type: %v", typeErr.Value)}
		}
		return []LintIssue{{Line: line, Rule: id, Message: err.Error()}}
	}
	for _, p := range r.problems() {
		issues = append(issues, at(p.Field, "%s", p.Message))
	}
	if id != "" {
		if first, dup := seen[id]; dup {
			issues = append(issues, at("id", "is defined twice in this file (first on line %d)", first))
		} else {
			seen[id] = fieldLine(item, "id")
		}
		for _, b := range builtin {
			if b == id {
				issues = append(issues, LintIssue{Line: fieldLine(item, "id"), Rule: id, Field: "id", Warning: true,
					Message: "replaces the built-in rule of the same id completely"})
			}
		}
	}
	for _, g := range []struct {
		field string
		list  []string
	}{{"match.all", r.Match.All}, {"match.any", r.Match.Any}, {"match.none", r.Match.None}} {
		for i, p := range g.list {
			if _, err := regexp.Compile(p); err == nil && len(requiredLiterals(p)) == 0 {
				issues = append(issues, LintIssue{Line: fieldLine(item, fmt.Sprintf("%s[%d]", g.field, i)), Rule: id,
					Field: fmt.Sprintf("%s[%d]", g.field, i), Warning: true,
					Message: "has no literal of 4+ bytes: it runs on every line and turns the fast scan off (add an exception class or fixed phrase)"})
			}
		}
	}
	return issues
}

// fieldLine returns the line of a field path ("match.all[1]",
// "downgrades[0].when") in a rule's node, or of the deepest part found.
func fieldLine(node *yaml.Node, path string) int {
	line := node.Line
	for _, part := range strings.Split(path, ".") {
		name, index := part, -1
		if i := strings.IndexByte(part, '['); i >= 0 && strings.HasSuffix(part, "]") {
			name = part[:i]
			if n, err := strconv.Atoi(part[i+1 : len(part)-1]); err == nil {
				index = n
			}
		}
		v := mapValue(node, name)
		if v == nil {
			return line
		}
		node, line = v, v.Line
		if index >= 0 {
			if v.Kind != yaml.SequenceNode || index >= len(v.Content) {
				return line
			}
			node, line = v.Content[index], v.Content[index].Line
		}
	}
	return line
}

// mapValue returns the value of key in a mapping node, or nil.
func mapValue(node *yaml.Node, key string) *yaml.Node {
	if node == nil || node.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == key {
			return node.Content[i+1]
		}
	}
	return nil
}

// findKey returns the first key node named key anywhere under node.
func findKey(node *yaml.Node, key string) *yaml.Node {
	if node.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(node.Content); i += 2 {
			if node.Content[i].Value == key {
				return node.Content[i]
			}
		}
	}
	for _, c := range node.Content {
		if n := findKey(c, key); n != nil {
			return n
		}
	}
	return nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlErrorLine reads the line number out of a YAML parser error.
func yamlErrorLine(err error) int {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}
