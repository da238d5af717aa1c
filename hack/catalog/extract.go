// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package main

import (
	"path"
	"regexp"
	"sort"
	"strings"
)

// site is one place in the code that prints or throws a message.
type site struct {
	Kind      string // throw, require, log-fatal, log-error, fault, stderr
	Exception string // exception class (fully qualified when it could be resolved)
	Thrower   string // package.Class of the code that throws or logs
	Text      string // template: literals with Placeholder for values
	Fatal     bool   // printed on the way to the process exiting
	File      string // path inside the artifact
	Line      int
}

var (
	reNewExc    = regexp.MustCompile(`\bnew\s+([A-Za-z_][\w.]*)\s*(?:\[[^\]()]*\])?\s*\(`)
	reThrowNew  = regexp.MustCompile(`\bthrow\s+new\s+$`)
	reRequire   = regexp.MustCompile(`\brequire\s*\(`)
	reLogQual   = regexp.MustCompile(`\b(?:log|LOG|logger|LOGGER|log\(\)|logger\(\)|this\.log|this\.logger|stateChangeLogger|stateLogger)\s*\.\s*(error|fatal)\s*\(`)
	reLogBare   = regexp.MustCompile(`(?:^|[^\w.])(error|fatal)\s*\(`)
	reFault     = regexp.MustCompile(`\b(\w+)(?:\(\))?\s*\.\s*handleFault\s*\(`)
	reStderr    = regexp.MustCompile(`\b(?:System\.err\.println|System\.err\.print|Console\.err\.println|printUsageAndExit|printUsageAndDie|CommandLineUtils\.printUsageAndDie|CommandLineUtils\.printUsageAndExit)\s*\(`)
	reExit      = regexp.MustCompile(`\b(?:Exit\.exit|Exit\.halt|System\.exit|Runtime\.getRuntime(?:\(\))?\.halt|ServiceUtils\.requestSystemExit|exitProcess|Exit\.haltAndExit|Utils\.exit)\s*\(`)
	rePackage   = regexp.MustCompile(`(?m)^\s*package\s+([\w.]+)`)
	reImport    = regexp.MustCompile(`(?m)^\s*import\s+(?:static\s+)?([\w.]+)\.(\w+|\{[^}]*\})\s*;?`)
	reDecl      = regexp.MustCompile(`\b(?:class|object|trait|interface|enum|record)\s+([A-Z]\w*)`)
	reIdent     = regexp.MustCompile(`^[a-zA-Z_]\w*$`)
	excNameLike = regexp.MustCompile(`(?:Exception|Error|Throwable|Fault)$`)
)

// javaLang names the java.lang exceptions Kafka throws without an import.
var javaLang = map[string]bool{
	"RuntimeException": true, "IllegalArgumentException": true, "IllegalStateException": true,
	"NullPointerException": true, "UnsupportedOperationException": true, "Exception": true,
	"Error": true, "IndexOutOfBoundsException": true, "ArithmeticException": true,
	"InterruptedException": true, "NumberFormatException": true, "ClassCastException": true,
	"SecurityException": true, "AssertionError": true, "OutOfMemoryError": true,
	"ArrayIndexOutOfBoundsException": true, "Throwable": true, "StackOverflowError": true,
	"IllegalMonitorStateException": true, "CloneNotSupportedException": true,
	"ClassNotFoundException": true, "NoSuchFieldException": true, "NoSuchMethodException": true,
	"ReflectiveOperationException": true, "InternalError": true,
}

// fileInfo is what the extractor knows about one source file.
type fileInfo struct {
	pkg     string
	imports map[string]string // simple name -> fully qualified
	decls   []declSpan        // top-level type spans
	base    string            // file name without extension
}

type declSpan struct {
	name       string
	start, end int
}

// extractFile finds every message site in one Java or Scala source file.
// resolve qualifies a simple exception name seen in package pkg ("" when it
// does not know it).
func extractFile(filePath, text string, resolve func(pkg, simple string) string) []site {
	isScala := strings.HasSuffix(filePath, ".scala")
	m := maskSource(text)
	fi := scanFile(m, filePath)
	var out []site
	add := func(off int, kind, exc, msgExpr string, slf4j, fatal bool, prefix string) {
		msgExpr = resolveLocal(m, off, msgExpr)
		text := prefix + exprTemplate(msgExpr, slf4j)
		if literalLen(text)-len(prefix) < 4 {
			return // no words of its own: nothing to match on
		}
		out = append(out, site{
			Kind:      kind,
			Exception: qualify(exc, fi, resolve),
			Thrower:   fi.thrower(off),
			Text:      text,
			Fatal:     fatal,
			File:      filePath,
			Line:      m.line(off),
		})
	}
	code := m.src
	inCode := func(off int) bool { return off < len(m.inString) && !m.inString[off] }

	for _, loc := range reNewExc.FindAllStringSubmatchIndex(code, -1) {
		if !inCode(loc[0]) {
			continue
		}
		name := code[loc[2]:loc[3]]
		simple := name[strings.LastIndexByte(name, '.')+1:]
		isThrow := reThrowNew.MatchString(code[max(0, loc[0]-40):loc[0]] + "new ")
		if !isThrow && !excNameLike.MatchString(simple) {
			continue
		}
		// throw new Something(...) of a class not named like an exception
		// is still a throwable: kept.
		args, _, ok := m.args(loc[1] - 1)
		if !ok || len(args) == 0 {
			continue
		}
		kind := "throw"
		if !isThrow {
			kind = "exception"
		}
		if simple == "ConfigException" {
			switch len(args) {
			case 2:
				add(loc[0], kind, name, `"Invalid value " + v + " for configuration " + n`, false, false, "")
				continue
			case 3:
				add(loc[0], kind, name, `"Invalid value " + v + " for configuration " + n + ": " + `+args[2], false, false, "")
				continue
			}
		}
		add(loc[0], kind, name, args[0], false, false, "")
	}
	for _, loc := range reRequire.FindAllStringIndex(code, -1) {
		if !inCode(loc[0]) || isDef(code, loc[0]) {
			continue
		}
		args, _, ok := m.args(loc[1] - 1)
		if !ok || len(args) != 2 {
			continue
		}
		add(loc[0], "require", "java.lang.IllegalArgumentException", args[1], false, false, "requirement failed: ")
	}
	logCall := func(start, nameStart, open int, level string, slf4j bool) {
		args, end, ok := m.args(open)
		if !ok || len(args) == 0 {
			return
		}
		msg := args[0]
		if strings.HasPrefix(msg, "marker") || strings.HasPrefix(msg, "MARKER") || strings.Contains(msg, "Marker") {
			if len(args) < 2 {
				return
			}
			msg = args[1]
		}
		fatal := level == "fatal" || nearExit(m, end)
		kind := "log-" + level
		add(nameStart, kind, "", msg, slf4j, fatal, "")
	}
	seenLog := map[int]bool{}
	for _, loc := range reLogQual.FindAllStringSubmatchIndex(code, -1) {
		if !inCode(loc[0]) {
			continue
		}
		seenLog[loc[2]] = true
		logCall(loc[0], loc[0], loc[1]-1, code[loc[2]:loc[3]], true)
	}
	if isScala {
		for _, loc := range reLogBare.FindAllStringSubmatchIndex(code, -1) {
			if seenLog[loc[2]] || !inCode(loc[2]) || isDef(code, loc[2]) {
				continue
			}
			logCall(loc[2], loc[2], loc[1]-1, code[loc[2]:loc[3]], false)
		}
	}
	for _, loc := range reFault.FindAllStringSubmatchIndex(code, -1) {
		if !inCode(loc[0]) {
			continue
		}
		args, _, ok := m.args(loc[1] - 1)
		if !ok || len(args) == 0 {
			continue
		}
		recv := code[loc[2]:loc[3]]
		exc := ""
		if len(args) > 1 {
			if mm := reNewExc.FindStringSubmatch(args[1]); mm != nil {
				exc = mm[1]
			}
		}
		add(loc[0], "fault", exc, args[0], false, strings.Contains(strings.ToLower(recv), "fatal"), "")
	}
	for _, loc := range reStderr.FindAllStringIndex(code, -1) {
		if !inCode(loc[0]) || isDef(code, loc[0]) {
			continue
		}
		args, end, ok := m.args(loc[1] - 1)
		if !ok || len(args) == 0 {
			continue
		}
		msg := args[len(args)-1]
		if strings.Contains(code[loc[0]:loc[1]], "Usage") {
			if len(args) < 2 {
				continue
			}
			msg = args[1]
		}
		fatal := strings.Contains(code[loc[0]:loc[1]], "Usage") || nearExit(m, end)
		add(loc[0], "stderr", "", msg, false, fatal, "")
	}
	return out
}

// isDef reports whether the call at off is a method definition (def error(...)).
func isDef(code string, off int) bool {
	before := strings.TrimRight(code[max(0, off-12):off], " \t")
	return strings.HasSuffix(before, "def") || strings.HasSuffix(before, "void") ||
		strings.HasSuffix(before, "String") || strings.HasSuffix(before, "public") || strings.HasSuffix(before, "private")
}

// nearExit reports whether an exit or halt call follows the statement that
// ends at end within the same block (or just precedes it).
func nearExit(m *masked, end int) bool {
	code := m.src
	limit := min(len(code), end+500)
	depth := 0
	for i := end; i < limit; i++ {
		if m.inString[i] {
			continue
		}
		switch code[i] {
		case '{', '(':
			depth++
		case '}', ')':
			depth--
			if depth < 0 {
				limit = i
			}
		}
	}
	return reExit.MatchString(code[end:limit])
}

// resolveLocal replaces a bare identifier message argument by the expression
// of the local val/var/String it was assigned from, when that assignment is
// shortly before off.
func resolveLocal(m *masked, off int, expr string) string {
	expr = strings.TrimSpace(expr)
	if !reIdent.MatchString(expr) {
		return expr
	}
	from := max(0, off-2000)
	window := m.src[from:off]
	// The last "val NAME =", "var NAME =" or "String NAME =" before off.
	best := -1
	for _, kw := range []string{"val ", "var ", "String "} {
		for i := len(window); ; {
			j := strings.LastIndex(window[:i], kw+expr)
			if j < 0 {
				break
			}
			rest := window[j+len(kw)+len(expr):]
			k := len(rest) - len(strings.TrimLeft(rest, " \t"))
			if strings.HasPrefix(rest[k:], ":") { // Scala type ascription ": String"
				rest2 := strings.TrimLeft(rest[k+1:], " \t")
				if strings.HasPrefix(rest2, "String") {
					k = len(rest) - len(strings.TrimLeft(strings.TrimPrefix(rest2, "String"), " \t"))
				}
			}
			if strings.HasPrefix(rest[k:], "=") && !strings.HasPrefix(rest[k:], "==") && (j == 0 || !isIdentByte(window[j-1])) {
				if p := j + len(kw) + len(expr) + k + 1; p > best {
					best = p
				}
				break
			}
			i = j
		}
	}
	if best < 0 {
		return expr
	}
	start := from + best
	return statementAt(m, start)
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// statementAt returns the expression starting at off up to the end of its
// statement (';' or a line end at depth 0 that does not continue with '+').
func statementAt(m *masked, off int) string {
	code := m.src
	depth := 0
	for i := off; i < len(code) && i < off+3000; i++ {
		if m.inString[i] {
			continue
		}
		switch code[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth < 0 {
				return code[off:i]
			}
		case ';':
			if depth == 0 {
				return code[off:i]
			}
		case '\n':
			if depth == 0 {
				prev := strings.TrimRight(code[off:i], " \t\r")
				rest := strings.TrimLeft(code[i:], " \t\r\n")
				if !strings.HasSuffix(prev, "+") && !strings.HasPrefix(rest, "+") && !strings.HasPrefix(rest, ".") {
					return code[off:i]
				}
			}
		}
	}
	return code[off:min(len(code), off+3000)]
}

func scanFile(m *masked, filePath string) *fileInfo {
	fi := &fileInfo{imports: map[string]string{}}
	base := path.Base(filePath)
	fi.base = strings.TrimSuffix(strings.TrimSuffix(base, ".java"), ".scala")
	var pkgs []string
	for _, mm := range rePackage.FindAllStringSubmatch(m.src, -1) {
		pkgs = append(pkgs, mm[1])
	}
	fi.pkg = strings.Join(pkgs, ".")
	if fi.pkg == "" {
		fi.pkg = strings.ReplaceAll(path.Dir(filePath), "/", ".")
	}
	for _, mm := range reImport.FindAllStringSubmatch(m.src, -1) {
		if strings.HasPrefix(mm[2], "{") {
			for _, n := range strings.Split(strings.Trim(mm[2], "{}"), ",") {
				n = strings.TrimSpace(n)
				if i := strings.Index(n, "=>"); i >= 0 {
					// import a.{B => C}: C is the local name of a.B
					orig, local := strings.TrimSpace(n[:i]), strings.TrimSpace(n[i+2:])
					fi.imports[local] = mm[1] + "." + orig
					continue
				}
				if n != "_" && n != "" {
					fi.imports[n] = mm[1] + "." + n
				}
			}
			continue
		}
		if mm[2] != "_" && mm[2] != "*" {
			fi.imports[mm[2]] = mm[1] + "." + mm[2]
		}
	}
	// Top-level type spans by brace depth.
	code := m.src
	depth := 0
	pending := ""
	var open *declSpan
	decls := reDecl.FindAllStringSubmatchIndex(code, -1)
	di := 0
	for i := 0; i < len(code); i++ {
		for di < len(decls) && decls[di][0] == i {
			if !m.inString[i] && depth == 0 {
				pending = code[decls[di][2]:decls[di][3]]
			}
			di++
		}
		if m.inString[i] {
			continue
		}
		switch code[i] {
		case '{':
			if depth == 0 && pending != "" {
				open = &declSpan{name: pending, start: i}
				pending = ""
			}
			depth++
		case '}':
			depth--
			if depth == 0 && open != nil {
				open.end = i
				fi.decls = append(fi.decls, *open)
				open = nil
			}
		}
	}
	if open != nil {
		open.end = len(code)
		fi.decls = append(fi.decls, *open)
	}
	return fi
}

// thrower names the top-level type around offset off.
func (fi *fileInfo) thrower(off int) string {
	name := fi.base
	for _, d := range fi.decls {
		if d.start <= off && off <= d.end {
			name = d.name
			break
		}
	}
	return fi.pkg + "." + name
}

func qualify(exc string, fi *fileInfo, resolve func(pkg, simple string) string) string {
	if exc == "" || strings.Contains(exc, ".") {
		return exc
	}
	if q, ok := fi.imports[exc]; ok {
		return q
	}
	if javaLang[exc] {
		return "java.lang." + exc
	}
	if resolve != nil {
		if q := resolve(fi.pkg, exc); q != "" {
			return q
		}
	}
	return exc
}

// classIndex knows the fully qualified names of the classes in a set of
// source jars (from their file paths), to qualify simple names.
type classIndex struct {
	byPkg    map[string]bool     // "pkg.Name"
	bySimple map[string][]string // Name -> fully qualified names
}

func newClassIndex() *classIndex {
	return &classIndex{byPkg: map[string]bool{}, bySimple: map[string][]string{}}
}

func (ci *classIndex) addPath(p string) {
	if !strings.HasSuffix(p, ".java") && !strings.HasSuffix(p, ".scala") {
		return
	}
	fq := strings.ReplaceAll(strings.TrimSuffix(strings.TrimSuffix(p, ".java"), ".scala"), "/", ".")
	if ci.byPkg[fq] {
		return
	}
	ci.byPkg[fq] = true
	simple := fq[strings.LastIndexByte(fq, '.')+1:]
	ci.bySimple[simple] = append(ci.bySimple[simple], fq)
}

func (ci *classIndex) resolve(pkg, simple string) string {
	if ci.byPkg[pkg+"."+simple] {
		return pkg + "." + simple
	}
	if c := ci.bySimple[simple]; len(c) == 1 {
		return c[0]
	}
	if c := ci.bySimple[simple]; len(c) > 1 {
		s := append([]string(nil), c...)
		sort.Strings(s)
		// Prefer the one in the closest package.
		best, bestLen := "", -1
		for _, q := range s {
			n := commonPrefix(q, pkg)
			if n > bestLen {
				best, bestLen = q, n
			}
		}
		return best
	}
	return ""
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
