// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"os"
	"slices"
	"testing"
)

// TestClassSites reads testdata/bytecode/Thrower.class (compiled from
// Thrower.java next to it): every exception built from constants, thrown or
// handed on, with its line; nothing for a message built by a StringBuilder
// or for a class that is not an exception.
func TestClassSites(t *testing.T) {
	b, err := os.ReadFile("testdata/bytecode/Thrower.class")
	if err != nil {
		t.Fatal(err)
	}
	cf, err := parseClass(b)
	if err != nil {
		t.Fatal(err)
	}
	if cf.name != "lab.Thrower" {
		t.Errorf("class name %q", cf.name)
	}
	want := []byteSite{
		{"throw", "java.lang.IllegalStateException", "Configured voter set: {} is different from the state file", 10},
		{"throw", "java.lang.IllegalArgumentException", "Unable to open snapshot {} at offset {}", 14},
		{"exception", "java.lang.RuntimeException", "Handed on with its cause", 18},
		{"throw", "java.lang.UnsupportedOperationException", "Case one is not supported", 23},
		{"throw", "java.lang.UnsupportedOperationException", "Case two is not supported", 24},
		{"throw", "java.lang.UnsupportedOperationException", "Case three is not supported", 25},
		{"exception", "java.lang.IllegalArgumentException", "Inner message", 36},
		{"throw", "java.lang.IllegalStateException", "Outer message", 36},
	}
	got := cf.sites()
	if !slices.Equal(got, want) {
		t.Errorf("sites:\n got  %v\n want %v", got, want)
	}
	if _, err := parseClass(b[:len(b)/2]); err == nil {
		t.Error("a cut class file parsed")
	}
}

func TestUsefulText(t *testing.T) {
	for text, want := range map[string]bool{
		"Configured voter set: {} is different": true,
		"{}: {}":                                false,
		"Not ok":                                false,
		"12345678 {}":                           false,
	} {
		if got := usefulText(text); got != want {
			t.Errorf("usefulText(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestGeneratedClass(t *testing.T) {
	tests := []struct {
		cf   classFile
		want bool
	}{
		{classFile{name: "org.apache.kafka.raft.QuorumState"}, false},
		{classFile{name: "org.apache.kafka.common.message.FetchRequestData", interfaces: []string{"org/apache/kafka/common/protocol/ApiMessage"}}, true},
		{classFile{name: "org.apache.kafka.common.message.FetchRequestData$FetchTopic", interfaces: []string{"org/apache/kafka/common/protocol/Message"}}, true},
		{classFile{name: "org.apache.kafka.common.metadata.PartitionRecordJsonConverter$PartitionRecordJson"}, true},
		{classFile{name: "org.apache.kafka.shaded.com.google.protobuf.FieldSet"}, true},
	}
	for _, tc := range tests {
		if got := tc.cf.generatedClass(); got != tc.want {
			t.Errorf("%s: generated %v, want %v", tc.cf.name, got, tc.want)
		}
	}
}
