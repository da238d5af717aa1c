// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package deploy_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// maxTokenSeconds is README's "a short-lived projected ServiceAccount token
// (1 hour, bound to the pod)".
const maxTokenSeconds = 3600

// TestBotTokenIsShortLivedAndProjected backs README's Security section: the
// bot's only API credential is a projected ServiceAccount token (which the
// kubelet binds to the pod) valid for at most an hour, for the API server's
// own audience, mounted where client-go's in-cluster config reads it; the
// default automount, which an older cluster may back with a long-lived
// token, is off, and deploy/ mounts no Secret volume (a ServiceAccount token
// Secret would be a credential that never expires). The chart renders the
// same Deployment (TestChartMatchesKustomize); its optional Kafka and
// cluster-kubeconfig Secrets are other credentials, documented apart.
func TestBotTokenIsShortLivedAndProjected(t *testing.T) {
	eachBuild(t, func(t *testing.T, objs []map[string]any) {
		var deployments int
		for _, o := range objs {
			if o["kind"] != "Deployment" {
				continue
			}
			deployments++
			var d struct {
				Spec struct {
					Template struct {
						Spec corev1.PodSpec `json:"spec"`
					} `json:"template"`
				} `json:"spec"`
			}
			convert(t, o, &d)
			for _, problem := range tokenProblems(d.Spec.Template.Spec) {
				t.Errorf("Deployment %v: %s", nested(o, "metadata", "name"), problem)
			}
		}
		if deployments != 1 {
			t.Fatalf("%d Deployments, want the bot's one", deployments)
		}
	})
}

// claimBuilds are deploy/ and its example overlays, which the claims tests
// of this package check.
var claimBuilds = []string{".", "overlays/bitnami", "overlays/strimzi"}

// eachBuild runs check, as a subtest named by the directory, on the
// objects of each of claimBuilds' kustomize builds.
func eachBuild(t *testing.T, check func(t *testing.T, objs []map[string]any)) {
	t.Helper()
	for _, dir := range claimBuilds {
		t.Run(dir, func(t *testing.T) { check(t, parseObjects(t, string(buildDir(t, dir)))) })
	}
}

// tokenProblems says how the pod's API credential differs from one
// projected ServiceAccount token of at most maxTokenSeconds, for the API
// server's audience, mounted read-only at the in-cluster path in every
// container.
func tokenProblems(spec corev1.PodSpec) []string {
	var problems []string
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		problems = append(problems, "automountServiceAccountToken is not false")
	}
	var tokenVolume string
	for _, v := range spec.Volumes {
		if v.Secret != nil {
			problems = append(problems, "volume "+v.Name+" mounts a Secret")
		}
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.Secret != nil {
				problems = append(problems, "projected volume "+v.Name+" carries a Secret")
			}
			t := s.ServiceAccountToken
			if t == nil {
				continue
			}
			if tokenVolume != "" {
				problems = append(problems, "more than one projected token volume")
			}
			tokenVolume = v.Name
			if t.ExpirationSeconds == nil || *t.ExpirationSeconds > maxTokenSeconds {
				problems = append(problems, "the projected token lives longer than an hour (or the kubelet's default)")
			}
			if t.Audience != "" {
				problems = append(problems, "the projected token is for audience "+t.Audience+", not the API server")
			}
		}
	}
	if tokenVolume == "" {
		return append(problems, "no projected ServiceAccount token volume")
	}
	for _, c := range spec.Containers {
		mounted := false
		for _, m := range c.VolumeMounts {
			if m.Name == tokenVolume && m.MountPath == "/var/run/secrets/kubernetes.io/serviceaccount" && m.ReadOnly {
				mounted = true
			}
		}
		if !mounted {
			problems = append(problems, "container "+c.Name+" does not mount the token read-only at the in-cluster path")
		}
	}
	return problems
}

// TestTokenProblems shows tokenProblems refuses what the claim excludes.
func TestTokenProblems(t *testing.T) {
	hour, day := int64(3600), int64(86400)
	no, yes := false, true
	good := func() corev1.PodSpec {
		return corev1.PodSpec{
			AutomountServiceAccountToken: &no,
			Volumes: []corev1.Volume{{Name: "api", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &hour}}}}}}},
			Containers: []corev1.Container{{Name: "bot", VolumeMounts: []corev1.VolumeMount{
				{Name: "api", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}}}},
		}
	}
	cases := []struct {
		name   string
		change func(*corev1.PodSpec)
		want   string
	}{
		{"as shipped", func(*corev1.PodSpec) {}, ""},
		{"automount on", func(s *corev1.PodSpec) { s.AutomountServiceAccountToken = &yes }, "automountServiceAccountToken"},
		{"automount unset", func(s *corev1.PodSpec) { s.AutomountServiceAccountToken = nil }, "automountServiceAccountToken"},
		{"a day", func(s *corev1.PodSpec) {
			s.Volumes[0].Projected.Sources[0].ServiceAccountToken.ExpirationSeconds = &day
		}, "longer than an hour"},
		{"kubelet's default", func(s *corev1.PodSpec) { s.Volumes[0].Projected.Sources[0].ServiceAccountToken.ExpirationSeconds = nil }, "longer than an hour"},
		{"another audience", func(s *corev1.PodSpec) { s.Volumes[0].Projected.Sources[0].ServiceAccountToken.Audience = "vault" }, "audience vault"},
		{"a token Secret", func(s *corev1.PodSpec) {
			s.Volumes = append(s.Volumes, corev1.Volume{Name: "sa", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "kafka-bot-token"}}})
		}, "mounts a Secret"},
		{"no token", func(s *corev1.PodSpec) { s.Volumes = nil }, "no projected"},
		{"not mounted", func(s *corev1.PodSpec) { s.Containers[0].VolumeMounts = nil }, "does not mount"},
		{"mounted writable", func(s *corev1.PodSpec) { s.Containers[0].VolumeMounts[0].ReadOnly = false }, "does not mount"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := good()
			c.change(&spec)
			got := strings.Join(tokenProblems(spec), "; ")
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("tokenProblems = %q, want one saying %q", got, c.want)
			}
		})
	}
}
