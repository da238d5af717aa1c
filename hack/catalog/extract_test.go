// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"strings"
	"testing"
)

// The snippets below are written for this test in Java's and Scala's syntax;
// they are not Kafka's code.
func TestExprTemplate(t *testing.T) {
	tests := []struct {
		expr  string
		slf4j bool
		want  string
	}{
		{`"Disk " + dir + " is full"`, false, "Disk {} is full"},
		{`s"Disk $dir is full at ${x.y(1)}."`, false, "Disk {} is full at {}."},
		{`String.format("Found %d of %s (%.2f%%)", n, what, p)`, false, "Found {} of {} ({}%)"},
		{`"Found %s entries".format(n)`, false, "Found {} entries"},
		{`"Failed on {} after {} ms"`, true, "Failed on {} after {} ms"},
		{`"Failed on {} after {} ms"`, false, "Failed on {} after {} ms"},
		{`"quote \" and tab\t" + (a + b) + "end"`, false, "quote \" and tab\t{}end"},
		{`s"""multi $x line"""`, false, "multi {} line"},
		{`f"value $v%d ok"`, false, "value {} ok"},
		{`msg`, false, "{}"},
		{`s"Points ${p.mkString(",")} in" + s" use by ${b.id}"`, false, "Points {} in use by {}"},
		{`"a" + "b" + c + d + "e"`, false, "ab{}e"},
		{`s"cost $$5 for $$x"`, false, "cost $5 for $x"},
		{"s\"\"\"If $a, either $b must\n          |contain x\"\"\".stripMargin.replace(\"\\n\", \" \")", false, "If {}, either {} must contain x"},
		{"\"\"\"one\n   |two\"\"\".stripMargin", false, "one\ntwo"},
	}
	for _, tc := range tests {
		if got := exprTemplate(tc.expr, tc.slf4j); got != tc.want {
			t.Errorf("exprTemplate(%s) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestExtractFile(t *testing.T) {
	src := `package org.example.storage;

import org.example.errors.DiskGoneException;
import java.io.IOException;

// throw new IOException("in a comment")
public class Store {
    void open(String dir) throws IOException {
        String what = "the store at " + dir + " is gone";
        if (dir == null) throw new DiskGoneException(what);
        throw new IOException("Cannot open " + dir + ": not a directory", cause);
    }
    void check() {
        log.error("Store {} failed; exiting", name);
        Exit.exit(1);
    }
    void cfg() {
        throw new ConfigException(NAME, value, "must be positive");
    }
    void text() {
        String s = "throw new IOException(\"inside a string\")";
    }
}
`
	sites := extractFile("org/example/storage/Store.java", src, nil)
	want := []site{
		{Kind: "throw", Exception: "org.example.errors.DiskGoneException", Thrower: "org.example.storage.Store", Text: "the store at {} is gone", Line: 10},
		{Kind: "throw", Exception: "java.io.IOException", Thrower: "org.example.storage.Store", Text: "Cannot open {}: not a directory", Line: 11},
		{Kind: "throw", Exception: "ConfigException", Thrower: "org.example.storage.Store", Text: "Invalid value {} for configuration {}: must be positive", Line: 18},
		{Kind: "log-error", Thrower: "org.example.storage.Store", Text: "Store {} failed; exiting", Fatal: true, Line: 14},
	}
	if len(sites) != len(want) {
		t.Fatalf("got %d sites, want %d: %+v", len(sites), len(want), sites)
	}
	for i, w := range want {
		g := sites[i]
		g.File = ""
		if g != w {
			t.Errorf("site %d = %+v, want %+v", i, g, w)
		}
	}
}

func TestExtractScala(t *testing.T) {
	src := `package org.example.server

object Server extends Logging {
  def start(): Unit = {
    require(port > 0, s"port must be positive, was $port")
    require(common.isEmpty, s"End points ${common.mkString(",")} are taken by ${other.id}")
    try run()
    catch {
      case e: Throwable =>
        fatal("Server died, shutting down", e)
    }
  }
  def error(msg: String): Unit = ()
  def stop(): Unit = faultHandler.handleFault(s"Stopping failed for $name")
  def die(): Unit = fatalFaultHandler.handleFault("Cannot go on", new IllegalStateException("bad state"))
}
`
	sites := extractFile("org/example/server/Server.scala", src, nil)
	var got []string
	for _, s := range sites {
		got = append(got, s.Kind+"|"+s.Exception+"|"+s.Text+"|"+map[bool]string{true: "fatal", false: ""}[s.Fatal])
	}
	want := []string{
		"exception|java.lang.IllegalStateException|bad state|",
		"require|java.lang.IllegalArgumentException|requirement failed: port must be positive, was {}|",
		"require|java.lang.IllegalArgumentException|requirement failed: End points {} are taken by {}|",
		"log-fatal||Server died, shutting down|fatal",
		"fault||Stopping failed for {}|",
		"fault|java.lang.IllegalStateException|Cannot go on|fatal",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sites:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, s := range sites {
		if s.Thrower != "org.example.server.Server" {
			t.Errorf("thrower %q", s.Thrower)
		}
	}
}
