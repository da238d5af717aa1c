// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"
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
// or its default (the default tag) when the variable is unset. A value it
// cannot read leaves the default and becomes one error naming the variable
// and the kind of value wanted; every variable is read, so all such errors
// come at once.
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
		def := f.Tag.Get("default")
		if def != "" {
			if err := setField(v.Field(i), def); err != nil {
				panic(fmt.Sprintf("config: the default of %s, %q, does not parse: %v", name, def, err))
			}
		}
		raw, set := os.LookupEnv(name)
		if !set {
			continue
		}
		if err := setField(v.Field(i), raw); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", name, raw, err))
		}
	}
	return errs
}

// durationType is time.Duration, which is an int64 to reflect.
var durationType = reflect.TypeFor[time.Duration]()

// setField parses raw into field by its type. Its errors say what is
// wanted in words, never Go type names.
func setField(field reflect.Value, raw string) error {
	switch {
	case field.Type() == durationType:
		d, err := time.ParseDuration(strings.TrimSpace(raw))
		if err != nil {
			return errors.New("want a duration such as 30s, 5m or 1h30m")
		}
		field.SetInt(int64(d))
	case field.Kind() == reflect.String:
		field.SetString(raw)
	case field.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(raw))
		if err != nil {
			return errors.New("want true or false")
		}
		field.SetBool(b)
	case field.Kind() == reflect.Int || field.Kind() == reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil {
			return errors.New("want a whole number")
		}
		field.SetInt(n)
	case field.Kind() == reflect.Slice && field.Type().Elem().Kind() == reflect.String:
		var list []string
		if raw != "" {
			list = strings.Split(raw, ",")
		}
		field.Set(reflect.ValueOf(list))
	default:
		panic("config: no parser for a field of type " + field.Type().String())
	}
	return nil
}
