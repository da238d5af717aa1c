// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package hack_test

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kafka-chatops/kafkabot/internal/ociimage"
	"github.com/kafka-chatops/kafkabot/internal/ociimage/botimage"
	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// TestVersionSourcesAgree: the VERSION file is a semantic version, and the
// chart's version and appVersion, the changelog's section for it, the
// image's default repository in the chart and the image build's default
// name agree with it.
func TestVersionSourcesAgree(t *testing.T) {
	root := repoRoot(t)
	version, err := botimage.ReadVersion(root)
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		Version    string `json:"version"`
		AppVersion string `json:"appVersion"`
	}
	readYAML(t, filepath.Join(root, "deploy", "helm", "kafkabot", "Chart.yaml"), &chart)
	if chart.Version != version || chart.AppVersion != version {
		t.Errorf("Chart.yaml: version %q, appVersion %q; VERSION says %q", chart.Version, chart.AppVersion, version)
	}
	var values struct {
		Image struct {
			Repository string `json:"repository"`
			Digest     string `json:"digest"`
		} `json:"image"`
	}
	readYAML(t, filepath.Join(root, "deploy", "helm", "kafkabot", "values.yaml"), &values)
	if values.Image.Repository != botimage.DefaultRepository || values.Image.Digest != "" {
		t.Errorf("values.yaml image %+v: want repository %s and no digest (the release pins it in the packaged chart)", values.Image, botimage.DefaultRepository)
	}
	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## [Unreleased]", "## [" + version + "]", "[" + version + "]: https://github.com/kafka-chatops/kafkabot/releases/tag/v" + version} {
		if !bytes.Contains(changelog, []byte(want)) {
			t.Errorf("CHANGELOG.md has no %q", want)
		}
	}
	if botimage.Tag(version) != version {
		t.Errorf("the image tag of version %s would be %s", version, botimage.Tag(version))
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// require fails the test in CI and skips it elsewhere when a tool is missing.
func require(t *testing.T, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv(testenv.EnvCI) == "true" {
		t.Fatalf("required in CI: %s (hack/test.sh provides it)", why)
	}
	t.Skipf("%s (hack/test.sh provides it)", why)
}

// releaseEnv is the environment the release script runs with here: Helm 3
// and 4 from hack/build-helm.sh with private homes, no registry.
func releaseEnv(t *testing.T) []string {
	t.Helper()
	_, err := exec.LookPath("skopeo")
	require(t, err == nil, "skopeo is not installed")
	helm := os.Getenv("HELM_BIN")
	if helm == "" {
		out, err := exec.Command("bash", filepath.Join(repoRoot(t), "hack", "build-helm.sh"), "--print-path").Output()
		if err != nil {
			t.Fatal(err)
		}
		helm = strings.TrimSpace(string(out))
	}
	_, err = os.Stat(helm)
	require(t, err == nil, "Helm is not built (bash hack/build-helm.sh)")
	home := t.TempDir()
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GITHUB_") && !strings.HasPrefix(e, "REGISTRY=") && !strings.HasPrefix(e, "HELM") {
			env = append(env, e)
		}
	}
	return append(env,
		"HELM="+helm, "HELM4="+filepath.Join(filepath.Dir(helm), "helm4"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"), "KUBECONFIG="+filepath.Join(home, "none"))
}

// TestReleaseBuildsEverythingButThePush runs hack/release.sh as the release
// workflow does, but without --push, on a two-platform base standing in for
// distroless, and checks what it leaves for the push: both architectures'
// binaries, the multi-architecture image (read back with skopeo), an SBOM
// each, and the chart packaged with the image's digest pinned, which Helm 3
// and 4 lint and render with no flags. --push is refused outside the
// workflow, before anything is built.
func TestReleaseBuildsEverythingButThePush(t *testing.T) {
	root := repoRoot(t)
	env := releaseEnv(t)
	version, err := botimage.ReadVersion(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()

	// --push here: refused, nothing built.
	pushOut := filepath.Join(dir, "pushed")
	cmd := exec.Command("bash", filepath.Join(root, "hack", "release.sh"), "--out", pushOut, "--push")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "--push is for the release workflow") {
		t.Errorf("release.sh --push outside the workflow: %v\n%s", err, out)
	}
	if _, err := os.Stat(pushOut); !os.IsNotExist(err) {
		t.Errorf("the refused --push left %s behind", pushOut)
	}

	// The base, as `skopeo copy --all docker://gcr.io/distroless/...` gives.
	var images []ociimage.Image
	for _, arch := range []string{"amd64", "arm64"} {
		images = append(images, ociimage.Image{
			Architecture: arch,
			Files:        []ociimage.File{{Path: "etc/passwd", Mode: 0o644, Data: []byte("nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")}},
			Config:       ociimage.Config{User: "65532", Env: []string{"PATH=/usr/bin"}},
		})
	}
	var base bytes.Buffer
	if _, err := ociimage.WriteIndex(&base, "example.local/static:nonroot", images, false, time.Time{}); err != nil {
		t.Fatal(err)
	}
	basePath := filepath.Join(dir, "base.tar")
	if err := os.WriteFile(basePath, base.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(dir, "dist")
	cmd = exec.Command("bash", filepath.Join(root, "hack", "release.sh"), "--out", out, "--base", basePath)
	cmd.Dir = root
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hack/release.sh: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "not pushed") {
		t.Errorf("release.sh did not say it pushed nothing:\n%s", stderr.String())
	}

	relEnv := map[string]string{}
	b, err := os.ReadFile(filepath.Join(out, "release.env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		relEnv[k] = v
	}
	digest := relEnv["DIGEST"]
	if relEnv["VERSION"] != version || relEnv["IMAGE"] != botimage.DefaultRepository || !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(digest) {
		t.Fatalf("release.env %v", relEnv)
	}
	sums := exec.Command("sha256sum", "--check", "--quiet", "SHA256SUMS")
	sums.Dir = out
	if b, err := sums.CombinedOutput(); err != nil {
		t.Errorf("sha256sum --check SHA256SUMS: %v\n%s", err, b)
	}

	// The image, as skopeo (no code of ours) reads it.
	raw, err := exec.Command("skopeo", "inspect", "--raw", "oci-archive:"+filepath.Join(out, "kafkabot-image.tar")).Output()
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		MediaType string `json:"mediaType"`
		Manifests []struct {
			Digest   string `json:"digest"`
			Platform struct{ Architecture, OS string }
		} `json:"manifests"`
	}
	if err := json.Unmarshal(raw, &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Manifests) != 2 || idx.Manifests[0].Platform.Architecture != "amd64" || idx.Manifests[1].Platform.Architecture != "arm64" ||
		idx.Manifests[0].Digest != relEnv["DIGEST_AMD64"] || idx.Manifests[1].Digest != relEnv["DIGEST_ARM64"] {
		t.Errorf("skopeo reads the index %s, release.env says %v", raw, relEnv)
	}

	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	for arch, machine := range map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64} {
		bin := filepath.Join(out, "bot-linux-"+arch)
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		if f.Machine != machine {
			t.Errorf("%s is for %v", bin, f.Machine)
		}
		f.Close()
		if arch == "amd64" {
			v, err := exec.Command(bin, "version").Output()
			if want := "bot " + version + " (commit " + string(head[:12]) + ", go"; err != nil || !strings.HasPrefix(string(v), want) {
				t.Errorf("%s version: %q, %v; want %q...", bin, v, err, want)
			}
		}
		var sbom struct {
			BOMFormat string `json:"bomFormat"`
			Metadata  struct {
				Component struct{ Name, Version string }
			}
			Components []struct{ Name, Version string }
		}
		b, err := os.ReadFile(filepath.Join(out, "sbom-linux-"+arch+".cdx.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &sbom); err != nil {
			t.Fatalf("the %s SBOM: %v", arch, err)
		}
		var hasSlack bool
		for _, c := range sbom.Components {
			hasSlack = hasSlack || c.Name == "github.com/slack-go/slack"
		}
		if sbom.BOMFormat != "CycloneDX" || sbom.Metadata.Component.Version != version || !hasSlack {
			t.Errorf("the %s SBOM: format %q, component %+v, slack-go listed: %v", arch, sbom.BOMFormat, sbom.Metadata.Component, hasSlack)
		}
	}

	// The chart: packaged, the digest pinned, linted and rendered with no
	// flags by both Helms.
	chart := filepath.Join(out, "kafkabot-"+version+".tgz")
	for _, helm := range []string{envValue(env, "HELM"), envValue(env, "HELM4")} {
		run := func(args ...string) string {
			cmd := exec.Command(helm, args...)
			cmd.Env = env
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", filepath.Base(helm), strings.Join(args, " "), err, b)
			}
			return string(b)
		}
		meta := run("show", "chart", chart)
		if !strings.Contains(meta, "\nversion: "+version+"\n") || !strings.Contains(meta, "appVersion: "+version) {
			t.Errorf("%s show chart:\n%s", helm, meta)
		}
		run("lint", "--strict", chart)
		if rendered := run("template", chart); !strings.Contains(rendered, `image: "`+botimage.DefaultRepository+"@"+digest+`"`) {
			t.Errorf("%s template of the released chart does not run the released image by digest", filepath.Base(helm))
		}
	}
}

func envValue(env []string, key string) string {
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, key+"="); ok {
			return v
		}
	}
	return ""
}

// workflow is what the tests read of a GitHub Actions workflow.
type workflow struct {
	On          map[string]any    `json:"on"`
	Permissions map[string]string `json:"permissions"`
	Jobs        map[string]struct {
		Steps []struct {
			Run string `json:"run"`
		} `json:"steps"`
	} `json:"jobs"`
}

// runs returns every run: line of a workflow.
func (w workflow) runs() string {
	var all []string
	for _, j := range w.Jobs {
		for _, s := range j.Steps {
			all = append(all, s.Run)
		}
	}
	return strings.Join(all, "\n")
}

// TestWorkflowsCallTheTestedScripts: CI runs hack/test.sh (and the release
// without --push); the release workflow runs on v* tags and calls
// hack/release.sh --push, the only caller of --push, with the OIDC token
// cosign's keyless signing needs.
func TestWorkflowsCallTheTestedScripts(t *testing.T) {
	root := repoRoot(t)
	var ci, release workflow
	readYAML(t, filepath.Join(root, ".github", "workflows", "ci.yml"), &ci)
	readYAML(t, filepath.Join(root, ".github", "workflows", "release.yml"), &release)
	if r := ci.runs(); !strings.Contains(r, "bash hack/test.sh") || !strings.Contains(r, "bash hack/release.sh --out dist") || strings.Contains(r, "--push") {
		t.Errorf("ci.yml runs:\n%s\nwant hack/test.sh and hack/release.sh without --push", r)
	}
	if r := release.runs(); !regexp.MustCompile(`bash hack/release\.sh .*--push`).MatchString(r) {
		t.Errorf("release.yml runs:\n%s\nwant hack/release.sh --push", r)
	}
	push, _ := release.On["push"].(map[string]any)
	if tags, _ := push["tags"].([]any); len(tags) != 1 || tags[0] != "v*" {
		t.Errorf("release.yml runs on %v, want pushes of v* tags", release.On)
	}
	if release.Permissions["id-token"] != "write" || release.Permissions["packages"] != "write" {
		t.Errorf("release.yml permissions %v: cosign keyless needs id-token: write, ghcr.io packages: write", release.Permissions)
	}
}
