// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package alerting

import (
	"reflect"
	"testing"
	"time"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
	"github.com/kafka-chatops/kafkabot/internal/sweep"
)

// TestAlertConversionKeepsEveryField fails when sweep.Alert or
// handlers.Alert gains a field that the conversion does not carry over.
func TestAlertConversionKeepsEveryField(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	in := sweep.Alert{
		Key: "kafka/p/r", Namespace: "kafka", Pod: "p", PodUID: "uid", Cluster: "c", Rule: "r", Title: "t",
		Severity: diagnose.SeverityHigh, Reason: sweep.ReasonCrashLoop, Detail: "d",
		Findings: []diagnose.Finding{{Rule: "r"}}, Snapshot: diagnose.Snapshot{Pod: "p"}, ReadError: "e",
		StartsAt: at, Repeat: true, Changed: true, Group: "g", Channel: "C0ROUTED", Source: "Alertmanager", SourceAlert: "KubePodCrashLooping", Resolution: sweep.ResolutionRecovered, ResolvedAt: at.Add(time.Hour),
	}
	out := slackAlert(in)
	iv, ov := reflect.ValueOf(in), reflect.ValueOf(out)
	if iv.NumField() != ov.NumField() {
		t.Fatalf("sweep.Alert has %d fields, handlers.Alert %d", iv.NumField(), ov.NumField())
	}
	for i := range iv.NumField() {
		name := iv.Type().Field(i).Name
		o := ov.FieldByName(name)
		if !o.IsValid() {
			t.Errorf("handlers.Alert has no field %s", name)
			continue
		}
		if o.IsZero() {
			t.Errorf("field %s was not carried over", name)
		}
		if o.Kind() == reflect.String && o.String() != iv.Field(i).String() {
			t.Errorf("field %s = %q, want %q", name, o.String(), iv.Field(i).String())
		}
	}
	g := slackGroup(sweep.Group{Key: "cluster:kafka/c", Namespace: "kafka", Cluster: "c", Alerts: []sweep.Alert{in},
		Ref: sweep.MessageRef{Channel: "C1", TS: "1.2"}, Firing: 4})
	if g.Key != "cluster:kafka/c" || g.Ref.TS != "1.2" || g.Firing != 4 || len(g.Alerts) != 1 || g.Alerts[0].Pod != "p" {
		t.Errorf("group = %+v", g)
	}
}
