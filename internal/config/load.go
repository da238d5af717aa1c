// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package config

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"
)

// Errors is every problem of a configuration, each naming its variable.
// Its message lists them all, one per line, so one run shows what to fix.
type Errors []error

// Error says how many problems there are and lists them.
func (e Errors) Error() string {
	if len(e) == 1 {
		return e[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d configuration errors:", len(e))
	for _, err := range e {
		b.WriteString("\n  - " + err.Error())
	}
	return b.String()
}

// Unwrap returns the problems (errors.Is and errors.As look at each).
func (e Errors) Unwrap() []error { return e }

// names reports whether one of e is about the variable name.
func (e Errors) names(name string) bool {
	for _, err := range e {
		if name != "" && settingOf(err) == name {
			return true
		}
	}
	return false
}

// settingOf is the variable an error of this package names: the message's
// first word, up to a space or a colon.
func settingOf(err error) string {
	msg := err.Error()
	if i := strings.IndexAny(msg, " :"); i >= 0 {
		return msg[:i]
	}
	return msg
}

// decodeEnv sets every field of c from its variable (the envconfig tag),
// or its default (the default tag) when the variable is unset, with
// envconfig (github.com/kelseyhightower/envconfig). envconfig stops at the
// first value it cannot read, so each setting is read on its own, as a
// struct of that one field with its tags: a value it cannot read leaves
// the default and becomes one error naming the variable and the kind of
// value wanted, and every variable is read, so all such errors come at once.
func decodeEnv(c *Config) Errors {
	var errs Errors
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("envconfig")
		if name == "" {
			continue
		}
		value, err := readSetting(f, f.Tag)
		if err != nil {
			raw, _ := os.LookupEnv(name)
			errs = append(errs, fmt.Errorf("%s %q: %s", name, raw, wanted(f.Type)))
			def := f.Tag.Get("default")
			if value, err = readSetting(f, reflect.StructTag(fmt.Sprintf("envconfig:%q default:%q", unsetName, def))); err != nil {
				panic(fmt.Sprintf("config: the default of %s, %q, does not parse: %v", name, def, err))
			}
		}
		v.Field(i).Set(value)
	}
	return errs
}

// unsetName is a variable name no environment holds (a name cannot
// contain '='): a setting read under it gets its default.
const unsetName = "=DEFAULT"

// readSetting reads field f with tags tag from the environment.
func readSetting(f reflect.StructField, tag reflect.StructTag) (reflect.Value, error) {
	one := reflect.New(reflect.StructOf([]reflect.StructField{{Name: f.Name, Type: f.Type, Tag: tag}}))
	if err := envconfig.Process("", one.Interface()); err != nil {
		return reflect.Value{}, err
	}
	return one.Elem().Field(0), nil
}

// wanted says in words what kind of value a setting of type t takes (never
// a Go type name).
func wanted(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return "want a duration such as 30s, 5m or 1h30m"
	case t.Kind() == reflect.Bool:
		return "want true or false"
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		return "want a whole number"
	}
	return "not a value this setting takes"
}
