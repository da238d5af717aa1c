// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Command mkkafkaimage builds the real-node tests' Kafka images, without
// Docker or a registry, with go-containerregistry: a real root filesystem
// like the images users run, made of
//
//   - Debian's OpenJDK 17 JRE (openjdk-17-jre-headless) and the libraries it
//     links (libc6, libgcc-s1, libstdc++6, zlib1g), plus Debian's static
//     busybox with every applet in /bin (the shell, mv), all from the exact
//     package versions pinned in hack/kafka/image-debs.txt, fetched with
//     `apt-get download` and unpacked with `dpkg-deb -x` (never installed);
//   - real Apache Kafka's jars and console log config from
//     `hack/fetch-kafka.sh VERSION` at /opt/kafka;
//   - our entrypoint (entrypoint.sh here), which lays the volume out as
//     Bitnami's chart or Strimzi does and configures Kafka from KAFKA_CFG_*;
//     user 1001, as Bitnami's image.
//
// One image per Kafka version, named kafkabot.local/kafka:<version> and by
// its manifest digest, written as an OCI image-layout tar that
// `ctr -n k8s.io images import` loads. The layers are uncompressed tars with
// fixed owners and times, so the same inputs give the same digest; a built
// image is kept in -cache under a key of all its inputs, and a warm run only
// links it.
//
//	go run ./test/realnode/cmd/mkkafkaimage -out DIR -cache DIR -debs hack/kafka/image-debs.txt \
//	    4.4.0=.cache/kafka/4.4.0 3.7.2=.cache/kafka/3.7.2
//
// It writes <out>/kafka-<version>.tar and <out>/kafka-images.json (name,
// manifest digest and config digest of each, as mkimages' images.json).
package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

//go:embed entrypoint.sh
var entrypoint []byte

// builderVersion changes the cache key when this program changes what it
// builds.
const builderVersion = "mkkafkaimage/1"

// Repository is the images' repository; the tag is the Kafka version.
const Repository = "kafkabot.local/kafka"

// kafkaUID is the image's user, as in Bitnami's Kafka image.
const kafkaUID = 1001

// epoch is every file's and the image's time, for reproducible digests.
var epoch = time.Unix(0, 0).UTC()

// Ref names a built image (the JSON of mkimages' images.json).
type Ref struct {
	Name           string
	ManifestDigest string
	ConfigDigest   string
}

func main() {
	out := flag.String("out", "", "output directory")
	cache := flag.String("cache", "", "cache directory (the .debs and built images)")
	debs := flag.String("debs", "", "the pinned Debian packages (hack/kafka/image-debs.txt)")
	flag.Parse()
	if *out == "" || *cache == "" || *debs == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: mkkafkaimage -out DIR -cache DIR -debs FILE VERSION=KAFKADIR...")
		os.Exit(2)
	}
	if err := run(*out, *cache, *debs, flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "mkkafkaimage: %v\n", err)
		os.Exit(1)
	}
}

func run(out, cache, pinsFile string, args []string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	pins, err := readPins(pinsFile)
	if err != nil {
		return err
	}
	debs, err := fetchDebs(filepath.Join(cache, "debs"), pins)
	if err != nil {
		return err
	}
	var base []byte // built once, shared by every version
	var refs []Ref
	for _, arg := range args {
		version, dir, ok := strings.Cut(arg, "=")
		if !ok || version == "" || dir == "" {
			return fmt.Errorf("argument %q is not VERSION=KAFKADIR", arg)
		}
		start := time.Now()
		key, err := cacheKey(version, dir, debs)
		if err != nil {
			return err
		}
		cached := filepath.Join(cache, "images", key)
		ref, err := readRef(cached + ".json")
		if err != nil {
			if base == nil {
				if base, err = baseLayer(debs); err != nil {
					return err
				}
			}
			if ref, err = build(cached, version, dir, base); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "mkkafkaimage: built %s %s in %.1fs\n", ref.Name, ref.ManifestDigest, time.Since(start).Seconds())
		} else {
			fmt.Fprintf(os.Stderr, "mkkafkaimage: %s %s from the cache\n", ref.Name, ref.ManifestDigest)
		}
		dst := filepath.Join(out, "kafka-"+version+".tar")
		_ = os.Remove(dst)
		if err := os.Link(cached+".tar", dst); err != nil {
			if err := copyFile(cached+".tar", dst); err != nil {
				return err
			}
		}
		refs = append(refs, ref)
	}
	b, err := json.MarshalIndent(refs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "kafka-images.json"), b, 0o644)
}

// readPins reads "package=version" lines (comments and blank lines skipped).
func readPins(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pins []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if name, version, ok := strings.Cut(line, "="); !ok || name == "" || version == "" {
			return nil, fmt.Errorf("%s: %q is not package=version", path, line)
		}
		pins = append(pins, line)
	}
	if len(pins) == 0 {
		return nil, fmt.Errorf("%s pins no package", path)
	}
	return pins, nil
}

// fetchDebs returns the .deb file of every pin, downloading the missing ones
// with `apt-get download package=version` into dir.
func fetchDebs(dir string, pins []string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, pin := range pins {
		name, version, _ := strings.Cut(pin, "=")
		// apt-get download names the file name_version_arch.deb with the
		// epoch's colon escaped as %3a.
		pattern := filepath.Join(dir, name+"_"+strings.ReplaceAll(version, ":", "%3a")+"_*.deb")
		found, _ := filepath.Glob(pattern)
		if len(found) == 0 {
			cmd := exec.Command("apt-get", "download", pin)
			cmd.Dir = dir
			if b, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("apt-get download %s: %w\n%s", pin, err, b)
			}
			if found, _ = filepath.Glob(pattern); len(found) == 0 {
				return nil, fmt.Errorf("apt-get download %s left no %s", pin, pattern)
			}
		}
		files = append(files, found[0])
	}
	return files, nil
}

// cacheKey hashes everything an image is made of: this program's version,
// the entrypoint, the .debs, and the Kafka version's jars and log config.
func cacheKey(version, kafkaDir string, debs []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", builderVersion, version)
	h.Write(entrypoint)
	files := append([]string{}, debs...)
	jars, err := filepath.Glob(filepath.Join(kafkaDir, "libs", "*.jar"))
	if err != nil {
		return "", err
	}
	if len(jars) == 0 {
		return "", fmt.Errorf("%s/libs has no jars: run hack/fetch-kafka.sh %s", kafkaDir, version)
	}
	sort.Strings(jars)
	files = append(files, jars...)
	for _, name := range []string{"log4j.properties", "log4j2.properties"} {
		if _, err := os.Stat(filepath.Join(kafkaDir, name)); err == nil {
			files = append(files, filepath.Join(kafkaDir, name))
		}
	}
	for _, f := range files {
		fmt.Fprintf(h, "%s\n", filepath.Base(f))
		r, err := os.Open(f)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, r)
		r.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

func readRef(path string) (Ref, error) {
	var ref Ref
	b, err := os.ReadFile(path)
	if err != nil {
		return ref, err
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		return ref, err
	}
	if _, err := os.Stat(strings.TrimSuffix(path, ".json") + ".tar"); err != nil {
		return ref, err
	}
	return ref, nil
}

// baseLayer is the JRE, its libraries and busybox, unpacked from the .debs.
func baseLayer(debs []string) ([]byte, error) {
	root, err := os.MkdirTemp("", "mkkafkaimage-root-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	for _, deb := range debs {
		if b, err := exec.Command("dpkg-deb", "-x", deb, root).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("dpkg-deb -x %s: %w\n%s", deb, err, b)
		}
	}
	// What a package's maintainer scripts or other packages would add:
	// busybox's applets, the java alternative, nothing else.
	list, err := exec.Command(filepath.Join(root, "bin", "busybox"), "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("busybox --list: %w", err)
	}
	for _, applet := range strings.Fields(string(list)) {
		if applet == "busybox" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, "bin", applet)); err == nil {
			continue
		}
		if err := os.Symlink("busybox", filepath.Join(root, "bin", applet)); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "usr", "bin"), 0o755); err != nil {
		return nil, err
	}
	if err := os.Symlink("/usr/lib/jvm/java-17-openjdk-amd64/bin/java", filepath.Join(root, "usr", "bin", "java")); err != nil {
		return nil, err
	}
	// Documentation is not part of the runtime.
	for _, dir := range []string{"usr/share/doc", "usr/share/man", "usr/share/lintian", "usr/share/gdb", "usr/share/bug"} {
		if err := os.RemoveAll(filepath.Join(root, dir)); err != nil {
			return nil, err
		}
	}
	return tarTree(root, "")
}

// kafkaLayer is /opt/kafka: the jars, the log config and a VERSION file.
func kafkaLayer(version, kafkaDir string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, dir := range []string{"opt/", "opt/kafka/", "opt/kafka/libs/", "opt/kafka/config/", "opt/kafka/bin/"} {
		if err := tw.WriteHeader(dirHeader(dir, 0o755, 0)); err != nil {
			return nil, err
		}
	}
	jars, err := filepath.Glob(filepath.Join(kafkaDir, "libs", "*.jar"))
	if err != nil {
		return nil, err
	}
	sort.Strings(jars)
	type entry struct{ src, dst string }
	var files []entry
	for _, j := range jars {
		files = append(files, entry{j, "opt/kafka/libs/" + filepath.Base(j)})
	}
	for _, name := range []string{"log4j.properties", "log4j2.properties"} {
		if _, err := os.Stat(filepath.Join(kafkaDir, name)); err == nil {
			files = append(files, entry{filepath.Join(kafkaDir, name), "opt/kafka/config/" + name})
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f.src)
		if err != nil {
			return nil, err
		}
		if err := writeFile(tw, f.dst, 0o644, 0, b); err != nil {
			return nil, err
		}
	}
	if err := writeFile(tw, "opt/kafka/VERSION", 0o644, 0, []byte("Apache Kafka "+version+"\n")); err != nil {
		return nil, err
	}
	if err := writeFile(tw, "opt/kafka/bin/entrypoint.sh", 0o755, 0, entrypoint); err != nil {
		return nil, err
	}
	// The user and the volumes' mount points, owned by it as in Bitnami's
	// image; /tmp for the config (the root file system is read-only).
	if err := tw.WriteHeader(dirHeader("etc/", 0o755, 0)); err != nil {
		return nil, err
	}
	if err := writeFile(tw, "etc/passwd", 0o644, 0, []byte("root:x:0:0:root:/root:/bin/sh\nkafka:x:1001:1001:kafka:/tmp:/bin/sh\n")); err != nil {
		return nil, err
	}
	if err := writeFile(tw, "etc/group", 0o644, 0, []byte("root:x:0:\nkafka:x:1001:\n")); err != nil {
		return nil, err
	}
	for _, d := range []struct {
		path string
		mode int64
		uid  int
	}{{"tmp/", 0o1777, 0}, {"bitnami/", 0o755, 0}, {"bitnami/kafka/", 0o775, kafkaUID}, {"var/", 0o755, 0}, {"var/lib/", 0o755, 0}, {"var/lib/kafka/", 0o775, kafkaUID}} {
		if err := tw.WriteHeader(dirHeader(d.path, d.mode, d.uid)); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// build builds one version's image and writes <cached>.tar and .json.
func build(cached, version, kafkaDir string, base []byte) (Ref, error) {
	var ref Ref
	top, err := kafkaLayer(version, kafkaDir)
	if err != nil {
		return ref, err
	}
	img, err := mutate.AppendLayers(empty.Image,
		static.NewLayer(base, types.OCIUncompressedLayer),
		static.NewLayer(top, types.OCIUncompressedLayer))
	if err != nil {
		return ref, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return ref, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Created = v1.Time{Time: epoch}
	cf.Config = v1.Config{
		Entrypoint: []string{"/opt/kafka/bin/entrypoint.sh"},
		Env:        []string{"PATH=/usr/bin:/bin", "JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64"},
		User:       fmt.Sprint(kafkaUID),
		WorkingDir: "/",
		Labels:     map[string]string{"org.opencontainers.image.version": version},
	}
	for i := range cf.History {
		cf.History[i].Created = v1.Time{Time: epoch}
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return ref, err
	}
	name := Repository + ":" + version
	digest, err := img.Digest()
	if err != nil {
		return ref, err
	}
	cfgDigest, err := img.ConfigName()
	if err != nil {
		return ref, err
	}
	dir, err := os.MkdirTemp("", "mkkafkaimage-layout-")
	if err != nil {
		return ref, err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return ref, err
	}
	// Two index entries, as containerd names what it imports: by tag and by
	// digest (as a registry pull records the image).
	for _, n := range []string{name, Repository + "@" + digest.String()} {
		ann := map[string]string{"io.containerd.image.name": n}
		if n == name {
			ann["org.opencontainers.image.ref.name"] = version
		}
		if err := p.AppendImage(img, layout.WithAnnotations(ann)); err != nil {
			return ref, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
		return ref, err
	}
	tarball, err := tarTree(dir, "")
	if err != nil {
		return ref, err
	}
	if err := os.WriteFile(cached+".tar.tmp", tarball, 0o644); err != nil {
		return ref, err
	}
	if err := os.Rename(cached+".tar.tmp", cached+".tar"); err != nil {
		return ref, err
	}
	ref = Ref{Name: name, ManifestDigest: digest.String(), ConfigDigest: cfgDigest.String()}
	b, err := json.Marshal(ref)
	if err != nil {
		return ref, err
	}
	return ref, os.WriteFile(cached+".json", b, 0o644)
}

// tarTree tars the tree under root in name order with fixed times and root
// ownership (the mode and symlinks are kept), prefixing prefix.
func tarTree(root, prefix string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	var paths []string
	if err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root {
			paths = append(paths, p)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	sort.Strings(paths)
	for _, p := range paths {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil, err
		}
		name := prefix + filepath.ToSlash(rel)
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		switch {
		case fi.IsDir():
			if err := tw.WriteHeader(dirHeader(name+"/", int64(fi.Mode().Perm()), 0)); err != nil {
				return nil, err
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return nil, err
			}
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777,
				ModTime: epoch, Format: tar.FormatPAX}); err != nil {
				return nil, err
			}
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			if err := writeFile(tw, name, int64(fi.Mode().Perm()), 0, b); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%s: unsupported file type %v", p, fi.Mode().Type())
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func dirHeader(name string, mode int64, uid int) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, Uid: uid, Gid: uid, ModTime: epoch, Format: tar.FormatPAX}
}

func writeFile(tw *tar.Writer, name string, mode int64, uid int, data []byte) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Uid: uid, Gid: uid,
		Size: int64(len(data)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return errors.Join(err, os.Remove(dst))
	}
	return out.Close()
}
