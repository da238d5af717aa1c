// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package config

import (
	"fmt"
	"reflect"
	"strings"
)

// setting is one environment variable of the Config struct tags.
type setting struct {
	name, def, desc string
}

// settings lists the variables in the order of the Config struct.
func settings() []setting {
	var out []setting
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("envconfig")
		if name == "" {
			continue
		}
		out = append(out, setting{name: name, def: f.Tag.Get("default"), desc: f.Tag.Get("desc")})
	}
	return out
}

// MarkdownTable renders the configuration as a Markdown table (variable,
// default, meaning), straight from the Config struct tags, so the README's
// table cannot drift from the code (TestREADMEConfigTable checks it).
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n|---|---|---|\n")
	for _, s := range settings() {
		def := s.def
		if def != "" {
			def = "`" + def + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", s.name, def, s.desc)
	}
	return b.String()
}

// TextTable renders the same table as plain text for a terminal (`bot
// serve --help`): each variable with its default on one line, its meaning
// wrapped below it at width columns.
func TextTable(width int) string {
	var b strings.Builder
	for _, s := range settings() {
		b.WriteString("  " + s.name)
		if s.def != "" {
			fmt.Fprintf(&b, " (default %s)", s.def)
		}
		b.WriteByte('\n')
		col := 0
		for _, word := range strings.Fields(s.desc) {
			switch {
			case col == 0:
				b.WriteString("      ")
				col = 6
			case col+1+len(word) > width:
				b.WriteString("\n      ")
				col = 6
			default:
				b.WriteByte(' ')
				col++
			}
			b.WriteString(word)
			col += len(word)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
