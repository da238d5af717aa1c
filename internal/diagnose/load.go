// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// builtinRules is the knowledge base shipped with the bot.
//
//go:embed rules.yaml
var builtinRules []byte

// rulesFile is the top level of a rules file.
type rulesFile struct {
	Rules []json.RawMessage `json:"rules"`
}

// BuiltinRules returns the rules embedded in the binary.
func BuiltinRules() ([]Rule, error) {
	return ParseRules(builtinRules, "embedded rules.yaml")
}

// LoadRulesFile reads a site's rules file (same schema as the embedded
// rules.yaml: a top-level "rules" list). Every rule is validated; errors
// name the file, the rule and the field. A rule whose id is already a
// built-in rule replaces that rule when passed to NewEngine.
func LoadRulesFile(path string) ([]Rule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading rules file: %w", err)
	}
	return ParseRules(data, path)
}

// ParseRules decodes and validates rules from YAML (or JSON); source names
// the input in errors. Unknown fields are errors, so a typo cannot
// silently disable a condition.
func ParseRules(data []byte, source string) ([]Rule, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not valid YAML: %w", source, err)
	}
	var file rulesFile
	if err := decodeStrict(js, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(file.Rules) == 0 {
		return nil, fmt.Errorf("%s: no rules (expected a top-level \"rules\" list)", source)
	}
	rules := make([]Rule, 0, len(file.Rules))
	seen := make(map[string]bool, len(file.Rules))
	var errs []error
	for i, raw := range file.Rules {
		var r Rule
		if err := decodeStrict(raw, &r); err != nil {
			var peek struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(raw, &peek)
			errs = append(errs, fmt.Errorf("%s: rule %d (%q): %w", source, i+1, peek.ID, err))
			continue
		}
		if err := r.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: rule %d: %w", source, i+1, err))
			continue
		}
		if seen[r.ID] {
			errs = append(errs, fmt.Errorf("%s: rule %d: id %q is defined twice in this file", source, i+1, r.ID))
			continue
		}
		seen[r.ID] = true
		rules = append(rules, r)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return rules, nil
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
