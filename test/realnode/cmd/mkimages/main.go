// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Command mkimages builds the real-node tests' container images from this
// tree, without Docker or a registry, as OCI image-layout tarballs
// (internal/ociimage) that `ctr -n k8s.io images import` loads:
//
//   - kafkabot.local/pause:realnode, containerd's pod sandbox image;
//   - kafkabot.local/kafka-standin:realnode, the broker stand-in
//     (test/realnode/cmd/broker-standin) with a static busybox shell and
//     applets in /bin, uid 1001 like Bitnami's Kafka image;
//   - docker.io/bitnamilegacy/kafka:3.9.0-realnode, the same stand-in under
//     the name of Bitnami's 2025 legacy catalogue (its own digest: one
//     environment variable more), which no debug-image allow-list of the
//     tests names: `bot doctor` must report it before anyone presses Approve;
//   - kafkabot.local/kafkabot:realnode, the product image as
//     hack/build-image.sh builds it (internal/ociimage/botimage: the static
//     bot at /bot, Debian's CA bundle, user 65532:65532, no shell), under
//     this name.
//
// It writes <out>/<name>.tar and <out>/images.json (name, manifest digest,
// config digest of each), which the tests read to refer to images by digest.
// The static busybox comes from Debian's busybox-static package, fetched
// once with `apt-get download` into the -cache dir and unpacked with
// `dpkg-deb -x` (never installed: it conflicts with the busybox package);
// the bot image's ca-certificates package is cached there too.
//
//	go run ./test/realnode/cmd/mkimages -out DIR -cache DIR
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kafka-chatops/kafkabot/internal/ociimage"
	"github.com/kafka-chatops/kafkabot/internal/ociimage/botimage"
)

// Image names the tests use.
const (
	PauseImage  = "kafkabot.local/pause:realnode"
	BrokerImage = "kafkabot.local/kafka-standin:realnode"
	BotImage    = "kafkabot.local/kafkabot:realnode"
	// LegacyBrokerImage is the stand-in named as Bitnami's legacy
	// catalogue's Kafka, outside every allow-list the tests configure.
	LegacyBrokerImage = "docker.io/bitnamilegacy/kafka:3.9.0-realnode"
)

func main() {
	out := flag.String("out", "", "output directory")
	cache := flag.String("cache", "", "cache directory for the busybox-static package")
	flag.Parse()
	if *out == "" || *cache == "" {
		fmt.Fprintln(os.Stderr, "usage: mkimages -out DIR -cache DIR")
		os.Exit(2)
	}
	if err := run(*out, *cache); err != nil {
		fmt.Fprintf(os.Stderr, "mkimages: %v\n", err)
		os.Exit(1)
	}
}

func run(out, cache string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "mkimages-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	pause, err := goBuild(work, "pause", "./test/realnode/cmd/pause")
	if err != nil {
		return err
	}
	broker, err := goBuild(work, "broker-standin", "./test/realnode/cmd/broker-standin")
	if err != nil {
		return err
	}
	botOpts, err := botimage.FromTree(botimage.TreeOptions{Root: ".", DebCache: cache})
	if err != nil {
		return err
	}
	botOpts.Name, botOpts.AlsoByDigest = BotImage, true
	bot, err := botimage.Image(botOpts)
	if err != nil {
		return err
	}
	busybox, applets, err := staticBusybox(cache, work)
	if err != nil {
		return err
	}

	brokerFiles := []ociimage.File{
		{Path: "opt/kafka-standin/broker", Mode: 0o755, Data: broker},
		{Path: "bin/busybox", Mode: 0o755, Data: busybox},
		{Path: "tmp", Dir: true, Mode: 0o777},
		{Path: "bitnami/kafka", Dir: true, Mode: 0o775, UID: 1001, GID: 1001},
	}
	for _, a := range applets {
		if a != "busybox" {
			brokerFiles = append(brokerFiles, ociimage.File{Path: "bin/" + a, Link: "busybox"})
		}
	}
	images := []ociimage.Image{
		{
			Name:   PauseImage,
			Files:  []ociimage.File{{Path: "pause", Mode: 0o755, Data: pause}},
			Config: ociimage.Config{Entrypoint: []string{"/pause"}, User: "65535:65535"},
		},
		{
			Name:         BrokerImage,
			Files:        brokerFiles,
			AlsoByDigest: true,
			Config: ociimage.Config{
				Entrypoint: []string{"/opt/kafka-standin/broker"},
				Env:        []string{"PATH=/bin"},
				User:       "1001",
				WorkingDir: "/",
			},
		},
		bot,
	}
	// The same stand-in under another repository, with a digest of its own
	// (the kubelet then reports that repository, not the stand-in's).
	legacy := images[1]
	legacy.Name = LegacyBrokerImage
	legacy.Config.Env = append(slices.Clone(legacy.Config.Env), "KAFKABOT_TEST_IMAGE=bitnamilegacy")
	images = append(images, legacy)
	var refs []ociimage.Ref
	for _, img := range images {
		short := img.Name[strings.LastIndex(img.Name, "/")+1 : strings.LastIndex(img.Name, ":")]
		var buf bytes.Buffer
		ref, err := ociimage.Write(&buf, img)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, short+".tar"), buf.Bytes(), 0o644); err != nil {
			return err
		}
		refs = append(refs, ref)
		fmt.Fprintf(os.Stderr, "mkimages: %s %s (%d KiB)\n", ref.Name, ref.ManifestDigest, buf.Len()/1024)
	}
	b, err := json.MarshalIndent(refs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "images.json"), b, 0o644)
}

// goBuild builds a static binary of pkg and returns its bytes.
func goBuild(work, name, pkg string) ([]byte, error) {
	path := filepath.Join(work, name)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", path, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return os.ReadFile(path)
}

// staticBusybox returns Debian's static busybox and its applet names.
func staticBusybox(cache, work string) ([]byte, []string, error) {
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, nil, err
	}
	debs, _ := filepath.Glob(filepath.Join(cache, "busybox-static_*.deb"))
	if len(debs) == 0 {
		cmd := exec.Command("apt-get", "download", "busybox-static")
		cmd.Dir = cache
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, nil, fmt.Errorf("apt-get download busybox-static: %v\n%s", err, b)
		}
		debs, _ = filepath.Glob(filepath.Join(cache, "busybox-static_*.deb"))
		if len(debs) == 0 {
			return nil, nil, fmt.Errorf("apt-get download left no busybox-static_*.deb in %s", cache)
		}
	}
	dir := filepath.Join(work, "busybox-static")
	if b, err := exec.Command("dpkg-deb", "-x", debs[len(debs)-1], dir).CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("dpkg-deb -x: %v\n%s", err, b)
	}
	path := filepath.Join(dir, "bin", "busybox")
	bin, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	list, err := exec.Command(path, "--list").Output()
	if err != nil {
		return nil, nil, fmt.Errorf("busybox --list: %w", err)
	}
	return bin, strings.Fields(string(list)), nil
}
