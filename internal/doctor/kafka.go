// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// kafkaSecretFix says how to mount a Kafka credentials Secret.
const kafkaSecretFix = "create the Secret in the bot's namespace and mount it read-only at %s: the chart does it for kafka.secret and each clusters[].kafka[].secret.name; with kustomize, add the Secret volume and its mount to the Deployment"

// checkKafkaSecrets checks that every Secret a Kafka access entry of c
// names is mounted under dir (the pod's KafkaSecretsDir), where the repair
// gates read it, with the keys the entry needs: the username and password
// with SASL; the CA certificate is optional (else the system roots).
func checkKafkaSecrets(c Cluster, dir string) []Result {
	res := func(sev Severity, msg, fix string) Result {
		return Result{Area: "kafka", Cluster: c.Name, Severity: sev, Message: msg, Fix: fix}
	}
	var out []Result
	for _, a := range c.Kafka {
		where := "namespace " + a.Namespace
		if a.Cluster != "" {
			where += " cluster " + a.Cluster
		}
		if a.Secret == nil {
			out = append(out, res(OK, where+": Kafka is asked with no credentials (no Secret configured)", ""))
			continue
		}
		keys := a.Secret.WithDefaults()
		mount := filepath.Join(dir, keys.Name)
		present, err := secretKeys(mount)
		if err != nil {
			out = append(out, res(Problem, fmt.Sprintf("%s: the Secret %s is not mounted at %s, so the repair gates cannot reach Kafka there: %v", where, keys.Name, mount, err),
				fmt.Sprintf(kafkaSecretFix, mount)))
			continue
		}
		var missing []string
		if a.SASLMechanism != "" {
			for _, k := range []string{keys.UsernameKey, keys.PasswordKey} {
				if !slices.Contains(present, k) {
					missing = append(missing, k)
				}
			}
		}
		if len(missing) > 0 {
			out = append(out, res(Problem, fmt.Sprintf("%s: the Secret %s (mounted at %s) lacks the key(s) %s that %s needs (it has: %s)",
				where, keys.Name, mount, strings.Join(missing, ", "), a.SASLMechanism, strings.Join(present, ", ")),
				"add them to the Secret (or name its keys with usernameKey and passwordKey); the mount follows within about a minute"))
			continue
		}
		msg := fmt.Sprintf("%s: the Secret %s is mounted at %s", where, keys.Name, mount)
		if a.TLS && !slices.Contains(present, keys.CAKey) {
			msg += " (no " + keys.CAKey + ": the system's CA roots check Kafka's certificate)"
		}
		out = append(out, res(OK, msg, ""))
	}
	return out
}

// secretKeys lists the keys of a Secret mounted at dir (a file each;
// Kubernetes' "..data" links and other dot files are not keys).
func secretKeys(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			keys = append(keys, e.Name())
		}
	}
	return keys, nil
}
