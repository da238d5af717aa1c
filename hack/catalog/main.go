// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

// Command catalog generates Kafka's failure catalogue
// (internal/diagnose/catalog/data/catalog.json.gz) and its coverage report
// (docs/CATALOGUE.md). It is run by hand; CI does not run it.
//
//	go run ./hack/catalog                      # every release in releases.go
//	go run ./hack/catalog -releases 3.9.2,4.0.2  # some releases only (for a try)
//	go run ./hack/catalog -report-only         # rewrite docs/CATALOGUE.md from the checked-in data
//
// For each Kafka release (the last patch of each line from 0.10 to 4.x,
// listed in releases.go) it asks Maven for the -sources jars of kafka_2.1x and
// of every org.apache.kafka and org.apache.zookeeper artifact that release's
// POM pulls in (mvn dependency:copy-dependencies -Dclassifier=sources, so
// Maven Central is the only host contacted and ~/.m2 keeps the downloads),
// copies them to .cache/catalog/<release>/, and reads every .java and .scala
// file in them. It extracts each message Kafka can print on its way to dying
// or failing a component: throw new X(...) and new X(...) of exceptions,
// Scala require(cond, msg), fatal(...) and error(...) logs (fatal when an
// Exit.exit/halt follows in the same block), handleFault(...) calls, and
// messages printed to stderr before exiting. ConfigException(name, value,
// msg) becomes ConfigException's own "Invalid value {} for configuration {}:
// msg". Each message becomes a template: its literal parts with "{}" where
// the code interpolates a value (Java concatenation, String.format, Scala
// s"...", slf4j "{}").
//
// ZooKeeper's releases come with the Kafka releases that depend on them,
// plus the last patch of each ZooKeeper line (releases.go). The JVM's fatal
// outputs and the operating system's error texts are a hand list with
// provenance (handlists.go). The start scripts of Apache Kafka, Bitnami,
// Strimzi and Confluent are read from git mirrors given with -scripts (see
// scripts.go).
//
// The output keeps templates and provenance only (artifact, version, file,
// line), not code.
package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/kafka-chatops/kafkabot/internal/diagnose/catalog"
)

func main() {
	var (
		only       = flag.String("releases", "", "comma-separated Kafka releases to read (default: all in releases.go)")
		out        = flag.String("out", "internal/diagnose/catalog/data/catalog.json.gz", "catalogue file to write")
		doc        = flag.String("doc", "docs/CATALOGUE.md", "coverage report to write")
		cache      = flag.String("cache", ".cache/catalog", "where the -sources jars are copied")
		reportOnly = flag.Bool("report-only", false, "only rewrite the report from the existing catalogue file")
		scripts    = flag.String("scripts", "/work/.mirror", "directory of git mirrors (owner+name/repo) of apache/kafka and the scripts' repositories; empty: skip the scripts")
		measureDir = flag.String("measure", "", "only measure the checked-in catalogue on the crash logs of this directory (with an INDEX.tsv)")
		verbose    = flag.Bool("v", false, "with -measure: one line per log")
	)
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("catalog: ")

	if *measureDir != "" {
		c, err := catalog.Load()
		if err != nil {
			log.Fatal(err)
		}
		res, err := measure(c, *measureDir)
		if err != nil {
			log.Fatal(err)
		}
		if *verbose {
			for _, r := range res.Rows {
				fmt.Println(r)
			}
		}
		fmt.Printf("%d logs: %d with an error or exception line matched by a template; %d with a class from the catalogue's templates alone, %d with the right class; %d right with ClassFor on unmatched exceptions too\n",
			res.Logs, res.AnyTemplate, res.Matched, res.Right, res.RightWithClassFor)
		return
	}
	if *reportOnly {
		if err := writeReport(*out, *doc); err != nil {
			log.Fatal(err)
		}
		return
	}
	rels := kafkaReleases
	if *only != "" {
		rels = nil
		for _, v := range strings.Split(*only, ",") {
			r, ok := findRelease(v)
			if !ok {
				log.Fatalf("release %s is not in releases.go", v)
			}
			rels = append(rels, r)
		}
	}
	b := newBuilder()
	zkSeen := map[string]bool{}
	for _, r := range rels {
		jars, err := fetchSources(*cache, r)
		if errors.Is(err, errNoSources) {
			log.Printf("kafka %s: %v; reading its class files", r.Version, err)
			if err := b.readClassFiles(*cache, r); err != nil {
				log.Fatal(err)
			}
			continue
		}
		if err != nil {
			log.Fatal(err)
		}
		var kafkaJars, zkJars []string
		for _, j := range jars {
			if strings.HasPrefix(filepath.Base(j), "zookeeper") {
				zkJars = append(zkJars, j)
			} else {
				kafkaJars = append(kafkaJars, j)
			}
		}
		if err := b.readRelease("kafka", r.Version, "org.apache.kafka", kafkaJars); err != nil {
			log.Fatal(err)
		}
		zkv := zkVersionOf(zkJars)
		if zkv != "" && !zkSeen[zkv] {
			zkSeen[zkv] = true
			if err := b.readRelease("zookeeper", zkv, "org.apache.zookeeper", zkJars); err != nil {
				log.Fatal(err)
			}
		}
	}
	if *only == "" {
		for _, zv := range zookeeperReleases {
			if zkSeen[zv] {
				continue
			}
			jars, err := fetchZooKeeper(*cache, zv)
			if err != nil {
				log.Printf("zookeeper %s: %v", zv, err)
				b.missing = append(b.missing, catalog.Missing{Name: "zookeeper-" + zv, Why: "Maven could not resolve its -sources jar (its parent POM is missing on Maven Central)"})
				continue
			}
			zkSeen[zv] = true
			if err := b.readRelease("zookeeper", zv, "org.apache.zookeeper", jars); err != nil {
				log.Fatal(err)
			}
		}
	}
	b.addHandLists()
	if *scripts != "" {
		if err := b.readScripts(*scripts); err != nil {
			log.Fatal(err)
		}
	}
	f := b.file(strings.Join(os.Args[1:], " "))
	if err := writeFile(*out, f); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d templates from %d releases written to %s", len(f.Templates), len(f.Releases), *out)
	if err := writeReport(*out, *doc); err != nil {
		log.Fatal(err)
	}
}

// builder merges the sites of every release into templates.
type builder struct {
	releases  []catalog.Release
	missing   []catalog.Missing
	templates map[string]*catalog.FileTemplate
	order     []string
}

func newBuilder() *builder {
	return &builder{templates: map[string]*catalog.FileTemplate{}}
}

// addHandLists adds the JVM's and the operating system's hand-listed
// templates (catalog.HandList) under their releases.
func (b *builder) addHandLists() {
	index := map[string]int{}
	for _, r := range catalog.HandReleases {
		index[r.Name] = b.newRelease(r.Product, r.Name, r.Artifacts)
	}
	for _, h := range catalog.HandList {
		ri, ok := index[h.Release]
		if !ok {
			log.Fatalf("hand-listed template %q: release %q is not in catalog.HandReleases", h.Text, h.Release)
		}
		b.add(ri, site{Kind: h.Kind, Exception: h.Exception, Thrower: h.Thrower, Text: h.Text, Fatal: h.Fatal}, h.Source)
	}
}

// add records one site of release index ri.
func (b *builder) add(ri int, s site, src catalog.Provenance) {
	id := catalog.TemplateID(s.Kind, s.Exception, s.Thrower, s.Text)
	t, ok := b.templates[id]
	if !ok {
		t = &catalog.FileTemplate{ID: id, Text: s.Text, Kind: s.Kind, Exception: s.Exception, Thrower: s.Thrower}
		b.templates[id] = t
		b.order = append(b.order, id)
	}
	t.Fatal = t.Fatal || s.Fatal
	if n := len(t.In); n == 0 || t.In[n-1] != ri {
		t.In = append(t.In, ri)
		t.Lines = append(t.Lines, src.Line)
		// Provenance: the newest release read (releases are read oldest first).
		t.Source = src
	}
}

func (b *builder) newRelease(product, name string, artifacts []string) int {
	b.releases = append(b.releases, catalog.Release{Name: name, Product: product, Artifacts: artifacts})
	return len(b.releases) - 1
}

// readClassFiles handles a release without -sources jars: the templates of
// the last release read are kept for it when its class files still hold
// their text (see classfile.go).
func (b *builder) readClassFiles(cache string, r kafkaRelease) error {
	prev := -1
	for i := len(b.releases) - 1; i >= 0; i-- {
		if b.releases[i].Product == "kafka" {
			prev = i
			break
		}
	}
	if prev < 0 {
		return fmt.Errorf("kafka %s has no -sources jars and no earlier release was read to compare its class files with", r.Version)
	}
	jars, err := fetchBinaries(cache, r)
	if err != nil {
		return err
	}
	cs, sites, err := readClassStrings(jars)
	if err != nil {
		return err
	}
	var arts []string
	for _, j := range jars {
		arts = append(arts, "org.apache.kafka:"+strings.TrimSuffix(strings.TrimSuffix(filepath.Base(j), ".jar"), "-"+r.Version)+":"+r.Version+" (class files)")
	}
	sort.Strings(arts)
	ri := b.newRelease("kafka", r.Version, arts)
	b.missing = append(b.missing, catalog.Missing{Name: r.Version, Why: "no -sources jars on Maven Central: the templates of " +
		b.releases[prev].Name + " whose text its class files still hold are counted for it, and the exception messages its bytecode builds from constants are added (bytecode.go); its new log messages and messages built otherwise are not in the catalogue"})
	kept, total := 0, 0
	// The earlier release's templates by thrower and literal text: a site
	// of the bytecode with the same key is the same message (its line is
	// then the template's line in this release).
	known := map[string]*catalog.FileTemplate{}
	for _, id := range b.order {
		t := b.templates[id]
		if n := len(t.In); n == 0 || t.In[n-1] != prev {
			continue
		}
		total++
		known[t.Thrower+"\x00"+literalKey(t.Text)] = t
		if cs.hasTemplate(t.Thrower, t.Text) {
			t.In = append(t.In, ri)
			t.Lines = append(t.Lines, 0)
			kept++
		}
	}
	added := 0
	for _, s := range sites {
		key := s.Thrower + "\x00" + literalKey(s.Text)
		if t := known[key]; t != nil {
			if n := len(t.In); t.In[n-1] == ri && t.Lines[n-1] == 0 {
				t.Lines[n-1] = s.Line
			}
			continue
		}
		if !usefulText(s.Text) {
			continue
		}
		id := catalog.TemplateID(s.Kind, s.Exception, s.Thrower, s.Text)
		if b.templates[id] == nil {
			added++
		}
		b.add(ri, site{Kind: s.Kind, Exception: s.Exception, Thrower: s.Thrower, Text: s.Text},
			catalog.Provenance{Repo: "org.apache.kafka:" + strings.TrimSuffix(strings.TrimSuffix(s.Jar, ".jar"), "-"+r.Version) + " (class files)",
				Version: r.Version, File: s.File, Line: s.Line})
		known[key] = b.templates[id]
	}
	log.Printf("kafka %s: %d of the %d templates of %s found in its class files; %d exception sites in its bytecode, %d new templates from them",
		r.Version, kept, total, b.releases[prev].Name, len(sites), added)
	return nil
}

// literalKey is a template's text without its placeholders and spaces: two
// readings of one message (the source's, the bytecode's) share it.
func literalKey(text string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(text, catalog.Placeholder, " ")), "")
}

// usefulText says whether a message read from bytecode can stand as a
// template: a word of three letters and eight literal bytes at least.
func usefulText(text string) bool {
	return len(literalKey(text)) >= 8 && reWord.MatchString(text)
}

var reWord = regexp.MustCompile(`[A-Za-z]{3}`)

// readRelease reads every Java and Scala file of the given source jars.
func (b *builder) readRelease(product, version, group string, jars []string) error {
	name := version
	if product != "kafka" {
		name = product + "-" + version
	}
	var arts []string
	type file struct {
		artifact, path string
		zf             *zip.File
	}
	var files []file
	ci := newClassIndex()
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	for _, j := range jars {
		art := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(j), "-sources.jar"), "-"+version)
		arts = append(arts, group+":"+art+":"+version)
		zr, err := zip.OpenReader(j)
		if err != nil {
			return fmt.Errorf("reading %s: %w", j, err)
		}
		closers = append(closers, zr)
		for _, zf := range zr.File {
			if !strings.HasSuffix(zf.Name, ".java") && !strings.HasSuffix(zf.Name, ".scala") {
				continue
			}
			if strings.Contains(zf.Name, "/test/") || strings.HasSuffix(zf.Name, "Test.java") {
				continue
			}
			ci.addPath(zf.Name)
			files = append(files, file{art, zf.Name, zf})
		}
	}
	sort.Strings(arts)
	ri := b.newRelease(product, name, arts)
	n := 0
	for _, f := range files {
		rc, err := f.zf.Open()
		if err != nil {
			return fmt.Errorf("%s %s: %w", f.artifact, f.path, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("%s %s: %w", f.artifact, f.path, err)
		}
		if generated(data) {
			// Generated protocol and record classes (org.apache.kafka.common.message,
			// ...metadata records): their serialization checks are not failure
			// vocabulary, and they would be a third of the catalogue.
			continue
		}
		for _, s := range extractFile(f.path, string(data), ci.resolve) {
			if isTool(s.Thrower) {
				// A command-line tool exiting is not the broker dying.
				s.Fatal = false
			}
			n++
			b.add(ri, s, catalog.Provenance{Repo: group + ":" + f.artifact, Version: version, File: s.File, Line: s.Line})
		}
	}
	log.Printf("%s %s: %d files, %d sites", product, version, len(files), n)
	return nil
}

// file returns the catalogue in stored form, templates sorted by id.
func (b *builder) file(generator string) *catalog.File {
	f := &catalog.File{Schema: catalog.SchemaVersion, Generator: "go run ./hack/catalog " + generator, Releases: b.releases, Missing: b.missing}
	ids := append([]string(nil), b.order...)
	sort.Strings(ids)
	for _, id := range ids {
		f.Templates = append(f.Templates, *b.templates[id])
	}
	return f
}

func writeFile(path string, f *catalog.File) error {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(zw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return fmt.Errorf("encoding the catalogue: %w", err)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func writeReport(dataPath, docPath string) error {
	raw, err := os.ReadFile(dataPath)
	if err != nil {
		return err
	}
	c, err := catalog.Read(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	return os.WriteFile(docPath, []byte(catalog.Report(c)), 0o644)
}

// fetchSources returns the -sources jars of release r: kafka_2.1x and every
// org.apache.kafka / org.apache.zookeeper artifact its POM pulls in, copied
// by Maven into cache/<version>/ (reused when already there).
func fetchSources(cache string, r kafkaRelease) ([]string, error) {
	dir := filepath.Join(cache, r.Version)
	pom := fmt.Sprintf(`<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>local.kafkabot</groupId><artifactId>catalog-%s</artifactId><version>1</version><packaging>pom</packaging>
<dependencies><dependency><groupId>org.apache.kafka</groupId><artifactId>%s</artifactId><version>%s</version></dependency></dependencies></project>
`, r.Version, r.Artifact, r.Version)
	return mavenSources(dir, pom, "org.apache.kafka,org.apache.zookeeper")
}

// fetchBinaries returns the class jars of release r (kafka_2.1x and the
// org.apache.kafka artifacts its POM pulls in), copied by Maven into
// cache/<version>/bin.
func fetchBinaries(cache string, r kafkaRelease) ([]string, error) {
	dir := filepath.Join(cache, r.Version+"-bin")
	pom := fmt.Sprintf(`<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>local.kafkabot</groupId><artifactId>catalog-bin-%s</artifactId><version>1</version><packaging>pom</packaging>
<dependencies><dependency><groupId>org.apache.kafka</groupId><artifactId>%s</artifactId><version>%s</version></dependency></dependencies></project>
`, r.Version, r.Artifact, r.Version)
	return mavenJars(dir, pom, "org.apache.kafka", "")
}

// fetchZooKeeper returns the -sources jars of ZooKeeper version v.
func fetchZooKeeper(cache, v string) ([]string, error) {
	dir := filepath.Join(cache, "zookeeper-"+v)
	pom := fmt.Sprintf(`<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>local.kafkabot</groupId><artifactId>catalog-zk-%s</artifactId><version>1</version><packaging>pom</packaging>
<dependencies><dependency><groupId>org.apache.zookeeper</groupId><artifactId>zookeeper</artifactId><version>%s</version></dependency></dependencies></project>
`, v, v)
	return mavenSources(dir, pom, "org.apache.zookeeper")
}

func mavenSources(dir, pom, groups string) ([]string, error) {
	return mavenJars(dir, pom, groups, "sources")
}

// mavenJars has Maven copy the jars (of classifier, "" for the classes) of
// the dependencies of pom in groups into dir/src, once.
func mavenJars(dir, pom, groups, classifier string) ([]string, error) {
	stamp := filepath.Join(dir, ".complete")
	if _, err := os.Stat(stamp); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "pom.xml"), []byte(pom), 0o644); err != nil {
			return nil, err
		}
		args := []string{"-q", "-B", "-f", filepath.Join(dir, "pom.xml"), "dependency:copy-dependencies",
			"-DincludeGroupIds=" + groups, "-DoutputDirectory=" + filepath.Join(dir, "src")}
		if classifier != "" {
			args = append(args, "-Dclassifier="+classifier)
		}
		cmd := exec.Command("mvn", args...)
		var outb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &outb, &outb
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("mvn for %s: %w\n%s", dir, err, tail(outb.String(), 2000))
		}
		if err := os.WriteFile(stamp, nil, 0o644); err != nil {
			return nil, err
		}
	}
	pattern := "*.jar"
	if classifier != "" {
		pattern = "*-" + classifier + ".jar"
	}
	jars, err := filepath.Glob(filepath.Join(dir, "src", pattern))
	if err != nil {
		return nil, err
	}
	if len(jars) == 0 {
		if classifier == "sources" {
			return nil, fmt.Errorf("%w in %s", errNoSources, dir)
		}
		return nil, fmt.Errorf("no jars in %s", dir)
	}
	sort.Strings(jars)
	return jars, nil
}

// generated reports whether a source file says it was generated (Kafka's
// message generator writes "THIS CODE IS AUTOMATICALLY GENERATED" at the top).
func generated(src []byte) bool {
	head := src[:min(len(src), 2000)]
	return bytes.Contains(head, []byte("AUTOMATICALLY GENERATED")) || bytes.Contains(head, []byte("@Generated"))
}

// toolPrefixes are the command-line tools shipped in the same jars: their
// usage errors end the tool, not a broker, so they are not fatal templates.
var toolPrefixes = []string{
	"kafka.admin.", "kafka.tools.", "org.apache.kafka.tools.", "kafka.examples.",
	"org.apache.zookeeper.server.LogFormatter", "org.apache.zookeeper.server.TraceFormatter",
	"org.apache.zookeeper.server.SnapshotFormatter", "org.apache.zookeeper.server.controller.",
	"org.apache.zookeeper.server.util.LogChopper", "org.apache.zookeeper.version.",
	"org.apache.zookeeper.cli.", "org.apache.zookeeper.ZooKeeperMain", "org.apache.zookeeper.graph.",
	"org.apache.zookeeper.server.persistence.TxnLogToolkit",
}

// isTool reports whether thrower is a command-line tool's class
// (kafka.tools.StorageTool, which formats a node's storage, is not).
func isTool(thrower string) bool {
	if strings.HasPrefix(thrower, "kafka.tools.StorageTool") {
		return false
	}
	for _, p := range toolPrefixes {
		if strings.HasPrefix(thrower, p) {
			return true
		}
	}
	return false
}

// errNoSources: Maven resolved the release but found no -sources jars.
var errNoSources = errors.New("no -sources jars")

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// zkVersionOf reads the ZooKeeper version from its jar names.
func zkVersionOf(jars []string) string {
	for _, j := range jars {
		b := filepath.Base(j)
		if strings.HasPrefix(b, "zookeeper-") && !strings.HasPrefix(b, "zookeeper-jute") {
			return strings.TrimSuffix(strings.TrimPrefix(b, "zookeeper-"), "-sources.jar")
		}
	}
	return ""
}
