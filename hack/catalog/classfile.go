// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Releases without -sources jars (4.2 and later on Maven Central) are read
// from their class files: the string constants of each class (plain
// literals, and the recipes of Java's invokedynamic string concatenation,
// where \u0001 stands for a value). A template of an earlier release is
// taken to exist in such a release when every literal part of its text is in
// a string constant of its throwing class (or the classes nested in it).
// New messages of those releases are not found this way.

// classStrings maps a top-level class name (a.b.C) to the string constants
// of it and its nested classes (C$D, C$, lambdas).
type classStrings map[string][]string

// classSite is an exception construction read from a class file, with the
// top-level class it belongs to and where it was read.
type classSite struct {
	byteSite
	Thrower, Jar, File string
}

// readClassStrings reads every .class file of the jars: their string
// constants, and their exception constructions (bytecode.go).
func readClassStrings(jars []string) (classStrings, []classSite, error) {
	cs := classStrings{}
	var sites []classSite
	for _, j := range jars {
		zr, err := zip.OpenReader(j)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", j, err)
		}
		for _, zf := range zr.File {
			if !strings.HasSuffix(zf.Name, ".class") {
				continue
			}
			rc, err := zf.Open()
			if err != nil {
				zr.Close()
				return nil, nil, err
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				zr.Close()
				return nil, nil, err
			}
			strs, err := constantStrings(data)
			if err != nil {
				zr.Close()
				return nil, nil, fmt.Errorf("%s %s: %w", j, zf.Name, err)
			}
			cf, err := parseClass(data)
			if err != nil {
				zr.Close()
				return nil, nil, fmt.Errorf("%s %s: %w", j, zf.Name, err)
			}
			name := strings.ReplaceAll(strings.TrimSuffix(zf.Name, ".class"), "/", ".")
			if i := strings.IndexByte(name, '$'); i >= 0 {
				name = name[:i]
			}
			for _, s := range strs {
				cs[name] = append(cs[name], strings.ReplaceAll(s, "\x01", "{}"))
			}
			if cf.generatedClass() {
				continue
			}
			for _, bs := range cf.sites() {
				sites = append(sites, classSite{byteSite: bs, Thrower: name, Jar: filepath.Base(j), File: zf.Name})
			}
		}
		zr.Close()
	}
	return cs, sites, nil
}

var errClassFormat = errors.New("not a class file")

// constantStrings returns the CONSTANT_String values of a class file.
func constantStrings(b []byte) ([]string, error) {
	if len(b) < 10 || binary.BigEndian.Uint32(b) != 0xCAFEBABE {
		return nil, errClassFormat
	}
	n := int(binary.BigEndian.Uint16(b[8:]))
	utf8 := make(map[int]string)
	var strIdx []int
	p := 10
	for i := 1; i < n; i++ {
		if p >= len(b) {
			return nil, errClassFormat
		}
		tag := b[p]
		p++
		switch tag {
		case 1: // Utf8 (modified UTF-8; fine for message text)
			if p+2 > len(b) {
				return nil, errClassFormat
			}
			l := int(binary.BigEndian.Uint16(b[p:]))
			if p+2+l > len(b) {
				return nil, errClassFormat
			}
			utf8[i] = string(b[p+2 : p+2+l])
			p += 2 + l
		case 8: // String
			strIdx = append(strIdx, int(binary.BigEndian.Uint16(b[p:])))
			p += 2
		case 7, 16, 19, 20:
			p += 2
		case 15:
			p += 3
		case 3, 4, 9, 10, 11, 12, 17, 18:
			p += 4
		case 5, 6:
			p += 8
			i++
		default:
			return nil, fmt.Errorf("%w: constant tag %d", errClassFormat, tag)
		}
	}
	out := make([]string, 0, len(strIdx))
	for _, k := range strIdx {
		out = append(out, utf8[k])
	}
	return out, nil
}

// syntheticPrefixes are template prefixes the extractor adds from what
// another class prints (ConfigException's constructor, Scala's require).
var syntheticPrefixes = []string{"Invalid value {} for configuration {}: ", "Invalid value {} for configuration {}", "requirement failed: "}

// hasTemplate reports whether the string constants of the template's
// throwing class hold every literal part of its text.
func (cs classStrings) hasTemplate(thrower, text string) bool {
	strs, ok := cs[thrower]
	if !ok {
		return false
	}
	for _, p := range syntheticPrefixes {
		if strings.HasPrefix(text, p) {
			text = strings.TrimPrefix(text, p)
			break
		}
	}
	for _, part := range strings.Split(text, "{}") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		found := false
		for _, s := range strs {
			if strings.Contains(s, part) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
