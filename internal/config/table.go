package config

import (
	"fmt"
	"reflect"
	"strings"
)

// MarkdownTable renders the configuration as a Markdown table (variable,
// default, meaning), straight from the Config struct tags, so the README's
// table cannot drift from the code (TestREADMEConfigTable checks it).
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n|---|---|---|\n")
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("envconfig")
		if name == "" {
			continue
		}
		def := f.Tag.Get("default")
		if def != "" {
			def = "`" + def + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, def, f.Tag.Get("desc"))
	}
	return b.String()
}
