// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package deploy_test

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kafka-chatops/kafkabot/internal/fleet"
	"github.com/kafka-chatops/kafkabot/internal/serve"
)

// TestChartMountsKafkaSecrets: every Secret of Kafka credentials the bot's
// configuration names (kafka.secret for KAFKA_SECRET, each secret.name of a
// cluster's kafka list in the CLUSTERS_FILE) is mounted whole and read-only
// at serve.KafkaSecretsDir/<name>, where the repair gates read it, in the
// bot's pods and in the helm test pod (bot doctor), once each, and no other
// Secret is mounted there.
func TestChartMountsKafkaSecrets(t *testing.T) {
	for _, h := range helms(t) {
		for _, tc := range []struct {
			values string
			// named reads the Secrets' names from the rendered configuration,
			// as the bot reads them.
			named func(t *testing.T, objs []map[string]any) []string
		}{
			{"kafka-access", func(t *testing.T, objs []map[string]any) []string {
				data := findObject(t, objs, "ConfigMap", releaseNamespace, "kafka-bot")["data"].(map[string]any)
				access, err := fleet.ParseKafkaBootstrap(str(data, "KAFKA_BOOTSTRAP"), data["KAFKA_TLS"] == "true", str(data, "KAFKA_SASL_MECHANISM"), str(data, "KAFKA_SECRET"))
				if err != nil {
					t.Fatalf("the bot would refuse the chart's KAFKA_* settings %v: %v", data, err)
				}
				return secretNames(access)
			}},
			{"multi-cluster", func(t *testing.T, objs []map[string]any) []string {
				cm := findObject(t, objs, "ConfigMap", releaseNamespace, "kafka-bot-clusters")
				specs, err := fleet.Parse([]byte(cm["data"].(map[string]any)["clusters.yaml"].(string)))
				if err != nil {
					t.Fatalf("the bot would refuse the chart's clusters file: %v", err)
				}
				var access []fleet.KafkaAccess
				for _, s := range specs {
					access = append(access, s.Kafka...)
				}
				return secretNames(access)
			}},
			{"default", func(*testing.T, []map[string]any) []string { return nil }},
		} {
			t.Run(h.name+"/"+tc.values, func(t *testing.T) {
				out, stderr, ok := h.template(t, releaseNamespace, "-f", filepath.Join(chartTestdata, "values", tc.values+".yaml"))
				if !ok {
					t.Fatal(stderr)
				}
				objs := parseObjects(t, out)
				named := tc.named(t, objs)
				if tc.values != "default" && len(named) == 0 {
					t.Fatalf("%s names no Kafka Secret: the test is stale", tc.values)
				}
				pods := map[string]map[string]any{
					"the bot's pods":    nested(findObject(t, objs, "Deployment", releaseNamespace, "kafka-bot"), "spec", "template", "spec").(map[string]any),
					"the helm test pod": nested(findObject(t, objs, "Pod", releaseNamespace, "kafka-bot-doctor"), "spec").(map[string]any),
				}
				for which, pod := range pods {
					got := map[string]bool{}
					for path, m := range podMounts(pod) {
						if dir, ok := strings.CutPrefix(path, serve.KafkaSecretsDir+"/"); ok {
							if m.from != "secret "+dir {
								t.Errorf("%s: %s comes from %s, want the whole Secret %s", which, path, m.from, dir)
							}
							if !m.readOnly {
								t.Errorf("%s: %s is mounted writable", which, path)
							}
							got[dir] = true
						}
					}
					if mounted := slices.Sorted(maps.Keys(got)); !slices.Equal(mounted, named) {
						t.Errorf("%s mount the Kafka Secrets %v under %s, want those the configuration names: %v", which, mounted, serve.KafkaSecretsDir, named)
					}
				}
			})
		}
	}
}

// secretNames are the Secrets the Kafka access entries name, sorted, once each.
func secretNames(access []fleet.KafkaAccess) []string {
	var out []string
	for _, a := range access {
		if a.Secret != nil && !slices.Contains(out, a.Secret.Name) {
			out = append(out, a.Secret.Name)
		}
	}
	slices.Sort(out)
	return out
}

// mount is where a path in a pod's first container comes from.
type mount struct {
	// from is "configmap NAME KEY" (a subPath mount), "secret NAME KEY" (a
	// Secret's items) or "secret NAME" (a whole Secret as a directory).
	from     string
	readOnly bool
}

// podMounts lists the first container's mounts by mount path.
func podMounts(pod map[string]any) map[string]mount {
	volumes := podVolumes(pod)
	out := map[string]mount{}
	for _, m := range pod["containers"].([]any)[0].(map[string]any)["volumeMounts"].([]any) {
		mm := m.(map[string]any)
		v := volumes[mm["name"].(string)]
		from := "volume " + mm["name"].(string)
		switch {
		case mm["subPath"] != nil && v["configMap"] != nil:
			from = "configmap " + nested(v, "configMap", "name").(string) + " " + mm["subPath"].(string)
		case v["secret"] != nil && nested(v, "secret", "items") == nil:
			from = "secret " + nested(v, "secret", "secretName").(string)
		}
		out[mm["mountPath"].(string)] = mount{from: from, readOnly: mm["readOnly"] == true}
	}
	return out
}

// mountedFrom says which file a path in the pod's first container comes
// from: "configmap NAME KEY" (a subPath mount) or "secret NAME KEY" (an
// item of a mounted Secret); "nothing" when no mount holds it.
func mountedFrom(pod map[string]any, path string) string {
	volumes := podVolumes(pod)
	for _, m := range pod["containers"].([]any)[0].(map[string]any)["volumeMounts"].([]any) {
		mm := m.(map[string]any)
		mountPath := mm["mountPath"].(string)
		v := volumes[mm["name"].(string)]
		switch {
		case mm["subPath"] != nil && mountPath == path:
			return "configmap " + nested(v, "configMap", "name").(string) + " " + mm["subPath"].(string)
		case mm["subPath"] == nil && strings.HasPrefix(path, mountPath+"/"):
			file := strings.TrimPrefix(path, mountPath+"/")
			if s, ok := v["secret"].(map[string]any); ok {
				items, _ := s["items"].([]any)
				for _, it := range items {
					if it.(map[string]any)["path"] == file {
						return "secret " + s["secretName"].(string) + " " + it.(map[string]any)["key"].(string)
					}
				}
			}
		}
	}
	return "nothing"
}

// podVolumes are a pod spec's volumes by name.
func podVolumes(pod map[string]any) map[string]map[string]any {
	volumes := map[string]map[string]any{}
	for _, v := range pod["volumes"].([]any) {
		volumes[v.(map[string]any)["name"].(string)] = v.(map[string]any)
	}
	return volumes
}
