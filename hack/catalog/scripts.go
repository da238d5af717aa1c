// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"bufio"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/kafka-chatops/kafkabot/internal/diagnose/catalog"
)

// scriptSource is one repository of start scripts: the revisions to read and
// which files in them are the broker's start scripts.
type scriptSource struct {
	Repo  string          // owner/name
	Revs  func() []string // git revisions (tags) to read
	Files *regexp.Regexp  // paths of the scripts in a revision
	// Thrower turns a path into the stable name of the script (version
	// directories of a path dropped).
	Thrower func(path string) string
}

// scriptSources: Apache's bin scripts at each release tag the mirror has,
// Strimzi's kafka image scripts, Confluent's image scripts and dub/cub,
// Bitnami's older standalone image repository. bitnami/containers (the
// current Bitnami images) is over the fetch tool's size limit: its
// validation messages are in bitnami.go.
var scriptSources = []scriptSource{
	{
		Repo: "apache/kafka",
		Revs: func() []string {
			var tags []string
			for _, r := range kafkaReleases {
				tags = append(tags, r.Version)
			}
			return tags
		},
		Files:   regexp.MustCompile(`^bin/(kafka-run-class|kafka-server-start|kafka-storage)\.sh$`),
		Thrower: func(p string) string { return "apache/kafka:" + p },
	},
	{
		Repo:    "strimzi/strimzi-kafka-operator",
		Revs:    fixed("0.10.0", "0.15.0", "0.20.0", "0.25.0", "0.30.0", "0.35.0", "0.40.0", "0.45.0", "0.51.0", "HEAD"),
		Files:   regexp.MustCompile(`^docker-images/(?:kafka-based/)?kafka/scripts/(?:kafka_(?:run|config_generator|tls_prepare_certificates|liveness|readiness)|dynamic_resources|tls_utils|zookeeper_run)\.sh$`),
		Thrower: func(p string) string { return "strimzi:" + filepath.Base(p) },
	},
	{
		Repo:    "confluentinc/kafka-images",
		Revs:    fixed("v5.5.15", "v6.2.15", "v7.0.16", "v7.5.13", "v7.9.6", "v8.0.4", "v8.2.0", "HEAD"),
		Files:   regexp.MustCompile(`^(?:kafka|server)/include/etc/confluent/docker/(?:run|configure|ensure|launch)$`),
		Thrower: func(p string) string { return "confluent:" + filepath.Base(p) },
	},
	{
		Repo:    "confluentinc/confluent-docker-utils",
		Revs:    fixed("0.0.26", "v0.0.100", "HEAD"),
		Files:   regexp.MustCompile(`^confluent/docker_utils/(?:dub|cub)\.py$`),
		Thrower: func(p string) string { return "confluent:" + filepath.Base(p) },
	},
	{
		Repo:    "bitnami/bitnami-docker-kafka",
		Revs:    fixed("0.10.2.1-r1", "1.1.1-ol-7-r391", "2.2.1-ol-7-r34", "2.4.1-debian-10-r58", "2.6.0-debian-10-r115", "2.8.0-debian-10-r55", "HEAD"),
		Files:   regexp.MustCompile(`(?:^|/)(?:rootfs/)?(?:opt/bitnami/scripts/)?(?:libkafka\.sh|kafka-env\.sh|kafka/(?:entrypoint|run|setup)\.sh|(?:app-)?entrypoint\.sh|run\.sh|setup\.sh)$`),
		Thrower: func(p string) string { return "bitnami:" + filepath.Base(p) },
	},
}

// newestTagOfLine returns the highest release tag of version's line
// (major.minor) in the mirror, or "".
func newestTagOfLine(repo, version string) string {
	parts := strings.Split(version, ".")
	if len(parts) < 3 {
		return ""
	}
	line := strings.Join(parts[:len(parts)-1], ".") + "."
	out, err := git(repo, "tag", "--list", line+"*")
	if err != nil {
		return ""
	}
	var best string
	bestPatch := -1
	for _, t := range strings.Fields(out) {
		var patch int
		if _, err := fmt.Sscanf(strings.TrimPrefix(t, line), "%d", &patch); err != nil || strings.TrimPrefix(t, line) != fmt.Sprint(patch) {
			continue // rc and other suffixes
		}
		if patch > bestPatch {
			best, bestPatch = t, patch
		}
	}
	return best
}

func fixed(revs ...string) func() []string { return func() []string { return revs } }

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// readScripts reads every script source from its mirror under dir
// (dir/owner+name/repo, as the fetch tool lays them out).
func (b *builder) readScripts(dir string) error {
	for _, src := range scriptSources {
		repo := filepath.Join(dir, strings.ReplaceAll(src.Repo, "/", "+"), "repo")
		if _, err := os.Stat(repo); err != nil {
			b.missing = append(b.missing, catalog.Missing{Name: src.Repo, Why: "no mirror at " + repo})
			continue
		}
		for _, rev := range src.Revs() {
			commit, err := git(repo, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
			if err != nil && src.Repo == "apache/kafka" {
				// The mirror's snapshot may lack the last patch of a line:
				// read the newest tag of that line it has.
				if alt := newestTagOfLine(repo, rev); alt != "" {
					rev = alt
					commit, err = git(repo, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
				}
			}
			if err != nil {
				b.missing = append(b.missing, catalog.Missing{Name: src.Repo + "@" + rev, Why: "not in the mirror"})
				continue
			}
			commit = strings.TrimSpace(commit)
			list, err := git(repo, "ls-tree", "-r", "--name-only", commit)
			if err != nil {
				return err
			}
			var files []string
			for _, p := range strings.Split(list, "\n") {
				if src.Files.MatchString(p) {
					files = append(files, p)
				}
			}
			if len(files) == 0 {
				continue
			}
			sort.Strings(files)
			version := rev
			if rev == "HEAD" {
				version = "HEAD@" + commit[:12]
			}
			ri := b.newRelease("scripts", src.Repo+"@"+version, []string{src.Repo + "@" + commit})
			n := 0
			for _, p := range files {
				text, err := git(repo, "show", commit+":"+p)
				if err != nil {
					return err
				}
				for _, s := range extractScript(p, text, src.Thrower(p)) {
					n++
					b.add(ri, s, catalog.Provenance{Repo: src.Repo, Version: version + " (" + commit[:12] + ")", File: p, Line: s.Line})
				}
			}
			log.Printf("scripts %s@%s: %d files, %d messages", src.Repo, version, len(files), n)
		}
	}
	b.missing = append(b.missing, catalog.Missing{Name: "bitnami/containers",
		Why: "the current Bitnami images' repository is larger than the fetch tool brings (746 MB > 500 MB): only the validation messages of its 4.3 libkafka.sh are in (bitnami.go, read by hand)"})
	b.addBitnamiCurrent()
	return nil
}

var (
	// error "..." / print_validation_error "..." / echo "..." >&2 / die "..."
	shCmd     = regexp.MustCompile(`^\s*(?:.*?(?:\|\||&&|then|;)\s*)?(error|print_validation_error|warn|echo|printf|die|fail|log_error|stderr_print)\s+(-[a-z]+\s+)?(.*)$`)
	shExit    = regexp.MustCompile(`\bexit\s+(?:[1-9]\d*|\$\{?\w+\}?|"\$\{?\w+\}?")`)
	shVar     = regexp.MustCompile(`\$(?:\{[^}]*\}|\([^)]*\)|[A-Za-z_][A-Za-z0-9_]*|[0-9@#?*])`)
	pyCall    = regexp.MustCompile(`\b(print|sys\.exit|logging\.error|logging\.critical|logger\.error|log\.error|raise\s+\w+)\s*\(`)
	pyFormat  = regexp.MustCompile(`\{[^{}]*\}`)
	pyPercent = regexp.MustCompile(`%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdrifx]`)
)

// extractScript finds the error and exit messages of a shell or Python script.
func extractScript(path, text, thrower string) []site {
	if strings.HasSuffix(path, ".py") {
		return extractPython(path, text, thrower)
	}
	lines := strings.Split(text, "\n")
	var out []site
	for i, line := range lines {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "#") {
			continue
		}
		m := shCmd.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		cmd, rest := m[1], m[3]
		toStderr := strings.Contains(rest, ">&2") || strings.Contains(rest, "1>&2")
		fatal := cmd == "print_validation_error" || cmd == "die" || cmd == "fail"
		for j := i; j < len(lines) && j <= i+3; j++ {
			if shExit.MatchString(lines[j]) {
				fatal = true
				break
			}
			if j > i && (strings.TrimSpace(lines[j]) == "fi" || shCmd.MatchString(lines[j])) {
				break // the exit, if any, belongs to a later message
			}
		}
		if (cmd == "echo" || cmd == "printf") && !toStderr && !fatal {
			continue
		}
		if cmd == "warn" && !fatal {
			continue
		}
		msg := shellWords(rest)
		if literalLen(msg) < 8 {
			continue
		}
		out = append(out, site{Kind: catalog.KindScript, Thrower: thrower, Text: msg, Fatal: fatal, File: path, Line: i + 1})
	}
	return out
}

// shellWords turns the arguments of an echo/error call into a template:
// quoted and bare words joined by spaces, $VAR/${...}/$(...) as placeholders,
// redirections dropped.
func shellWords(s string) string {
	var t tmpl
	var words []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Split(bufio.ScanRunes)
	var cur strings.Builder
	quote := rune(0)
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
		}
		cur.Reset()
		inWord = false
	}
	for sc.Scan() {
		r := []rune(sc.Text())[0]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote = r
			inWord = true
		case r == ' ' || r == '\t':
			flush()
		case r == '>' || r == '|' || r == ';' || r == '&':
			flush()
			goto done
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	flush()
done:
	for i, w := range words {
		if i > 0 {
			t.lit(" ")
		}
		last := 0
		for _, loc := range shVar.FindAllStringIndex(w, -1) {
			t.lit(w[last:loc[0]])
			t.hole()
			last = loc[1]
		}
		t.lit(w[last:])
	}
	return strings.TrimSpace(t.String())
}

// extractPython finds print/sys.exit/logging.error/raise messages of dub and cub.
func extractPython(path, text, thrower string) []site {
	m := maskPython(text)
	var out []site
	for _, loc := range pyCall.FindAllStringSubmatchIndex(m.src, -1) {
		if m.inString[loc[0]] {
			continue
		}
		args, end, ok := m.args(loc[1] - 1)
		if !ok || len(args) == 0 {
			continue
		}
		call := m.src[loc[2]:loc[3]]
		msg := pyTemplate(args[0])
		if literalLen(msg) < 8 {
			continue
		}
		fatal := strings.HasPrefix(call, "sys.exit") || strings.HasPrefix(call, "raise") ||
			regexp.MustCompile(`sys\.exit\(\s*[1-9]|return False|return 1`).MatchString(m.src[end:min(len(m.src), end+200)])
		exc := ""
		if strings.HasPrefix(call, "raise") {
			exc = strings.TrimSpace(strings.TrimPrefix(call, "raise"))
		}
		out = append(out, site{Kind: catalog.KindScript, Exception: exc, Thrower: thrower, Text: msg, Fatal: fatal, File: path, Line: m.line(loc[0])})
	}
	return out
}

// maskPython blanks Python comments; strings are marked as in Java.
func maskPython(text string) *masked {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "#"); i >= 0 && !strings.ContainsAny(line[:i], `"'`) {
			line = line[:i] + strings.Repeat(" ", len(line)-i)
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	s := b.String()
	// Python's '...' strings are read as "..." by the Java scanner.
	return maskSource(strings.ReplaceAll(s, "'", `"`))
}

// pyTemplate turns a Python message expression (f-string, % formatting,
// .format, concatenation) into a template.
func pyTemplate(expr string) string {
	expr = strings.TrimSpace(expr)
	var t tmpl
	for _, piece := range splitTop(expr, '+') {
		piece = strings.TrimSpace(piece)
		fstr := strings.HasPrefix(piece, `f"`)
		if fstr {
			piece = piece[1:]
		}
		if i := strings.Index(piece, `" %`); i >= 0 {
			piece = piece[:i+1]
		}
		fmtCall := strings.Contains(piece, `".format(`)
		if fmtCall {
			piece = piece[:strings.Index(piece, `".format(`)+1]
		}
		if !strings.HasPrefix(piece, `"`) || skipString(piece, 0) != len(piece) {
			t.hole()
			continue
		}
		body := unescape(piece[1 : len(piece)-1])
		if fstr || fmtCall {
			body = pyFormat.ReplaceAllString(body, Placeholder)
		}
		body = pyPercent.ReplaceAllString(body, Placeholder)
		slf4jString(&t, body)
	}
	return t.String()
}
