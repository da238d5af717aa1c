// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package integration

import (
	"go/types"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"

	"github.com/kafka-chatops/kafkabot/internal/testkit/testenv"
)

// clientResources maps client-go's typed client interfaces to the resource
// they address. A call on an interface of client-go's typed clients that is
// not listed fails the test: a new kind of request must be mapped (and
// granted) before it ships.
var clientResources = map[string]string{
	"k8s.io/client-go/kubernetes/typed/core/v1.PodInterface":                              "pods",
	"k8s.io/client-go/kubernetes/typed/core/v1.EventInterface":                            "events",
	"k8s.io/client-go/kubernetes/typed/core/v1.PersistentVolumeClaimInterface":            "persistentvolumeclaims",
	"k8s.io/client-go/kubernetes/typed/core/v1.ConfigMapInterface":                        "configmaps",
	"k8s.io/client-go/kubernetes/typed/core/v1.SecretInterface":                           "secrets",
	"k8s.io/client-go/kubernetes/typed/core/v1.NamespaceInterface":                        "namespaces",
	"k8s.io/client-go/kubernetes/typed/core/v1.NodeInterface":                             "nodes",
	"k8s.io/client-go/kubernetes/typed/core/v1.ServiceAccountInterface":                   "serviceaccounts",
	"k8s.io/client-go/kubernetes/typed/coordination/v1.LeaseInterface":                    "leases",
	"k8s.io/client-go/kubernetes/typed/authorization/v1.SelfSubjectAccessReviewInterface": "selfsubjectaccessreviews",
}

// everyUser are requests Kubernetes grants every authenticated user (the
// default ClusterRole system:basic-user), so deploy/ grants nothing for
// them: `bot doctor` asks the API server what the bot may do.
var everyUser = map[codeUse]bool{{"selfsubjectaccessreviews", "create"}: true}

// clientVerbs maps a typed client's method to the RBAC verb (and
// subresource) it needs.
var clientVerbs = map[string]struct{ verb, sub string }{
	"Get": {"get", ""}, "List": {"list", ""}, "Watch": {"watch", ""},
	"Create": {"create", ""}, "Update": {"update", ""}, "Delete": {"delete", ""},
	"DeleteCollection": {"deletecollection", ""}, "Patch": {"patch", ""}, "Apply": {"patch", ""},
	"UpdateStatus": {"update", "status"}, "ApplyStatus": {"patch", "status"},
	"GetLogs": {"get", "log"}, "UpdateEphemeralContainers": {"update", "ephemeralcontainers"},
	"Evict": {"create", "eviction"}, "EvictV1": {"create", "eviction"}, "EvictV1beta1": {"create", "eviction"},
	"Bind": {"create", "binding"}, "ProxyGet": {"get", "proxy"},
}

// notTheBot are packages reachable from cmd/bot that never act with the
// bot's token: `bot demo` builds a fake cluster and Slack in-process.
var notTheBot = []string{
	"/internal/testkit/demo", "/internal/testkit/kubesim", "/internal/testkit/fakeapi", "/internal/testkit/slackemu", "/internal/testkit/benchutil",
}

// codeUse is one (resource[/subresource], verb) the code needs.
type codeUse struct {
	resource, verb string
}

// TestBotUsesAreWhatTheCodeCalls derives, from the bot's code, every
// Kubernetes request it can make: it builds the SSA form of cmd/bot and our
// packages, walks what is reachable from main (class hierarchy analysis for
// interface calls, plus every function value a reachable function takes),
// and collects the calls on client-go's typed clients, the interfaces those
// clients are converted to (a List/Watch helper), and client-go's leader
// election (its LeaseLock gets, creates and updates a Lease). The verbs of
// botUses (which TestDeployGrantsNothingElse holds deploy/'s RBAC to) must
// be exactly these: a grant no reachable code path needs fails here, and
// so does a call nobody granted.
func TestBotUsesAreWhatTheCodeCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("loads and analyses the whole bot (-short)")
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedTypes |
			packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedModule,
		Dir: root,
	}
	pkgs, err := packages.Load(cfg, "./cmd/bot", "./internal/...")
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("the bot's packages do not load")
	}
	prog, ssaPkgs := ssautil.Packages(pkgs, ssa.InstantiateGenerics)
	prog.Build()
	var mainPkg *ssa.Package
	for _, p := range ssaPkgs {
		if p != nil && p.Pkg.Path() == "github.com/kafka-chatops/kafkabot/cmd/bot" {
			mainPkg = p
		}
	}
	if mainPkg == nil || mainPkg.Func("main") == nil {
		t.Fatal("cmd/bot's main not found")
	}

	// Only packages cmd/bot is built from: the analysis over-approximates
	// calls of function values, which must not pull in test helpers.
	built := importClosure(pkgs, "github.com/kafka-chatops/kafkabot/cmd/bot")
	reachable := reachableFrom(prog, mainPkg.Func("main"), mainPkg.Func("init"))
	uses := map[codeUse][]string{}
	add := func(u codeUse, at *ssa.Function) {
		uses[u] = append(uses[u], at.String())
	}
	var unmapped []string
	for fn := range reachable {
		if fn.Pkg == nil || !built[fn.Pkg.Pkg.Path()] ||
			slices.ContainsFunc(notTheBot, func(p string) bool { return strings.HasSuffix(fn.Pkg.Pkg.Path(), p) }) {
			continue
		}
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				switch in := instr.(type) {
				case ssa.CallInstruction:
					c := in.Common()
					if c.IsInvoke() {
						res, ok := clientResource(c.Value.Type())
						if !ok {
							continue
						}
						v, ok := clientVerbs[c.Method.Name()]
						if !ok || res == "" {
							unmapped = append(unmapped, c.Value.Type().String()+"."+c.Method.Name()+" in "+fn.String())
							continue
						}
						add(codeUse{joinSub(res, v.sub), v.verb}, fn)
					} else if callee := c.StaticCallee(); callee != nil && callee.Pkg != nil &&
						callee.Pkg.Pkg.Path() == "k8s.io/client-go/tools/leaderelection" &&
						(callee.Name() == "NewLeaderElector" || callee.Name() == "RunOrDie") {
						// resourcelock.LeaseLock: Get, Create, Update of the Lease.
						for _, verb := range []string{"get", "create", "update"} {
							add(codeUse{"leases", verb}, fn)
						}
					}
				case *ssa.ChangeInterface:
					// A typed client handed on as a smaller interface (the
					// List/Watch helper): each of that interface's methods
					// may be called on it.
					res, ok := clientResource(in.X.Type())
					if !ok {
						continue
					}
					iface, _ := in.Type().Underlying().(*types.Interface)
					for i := 0; iface != nil && i < iface.NumMethods(); i++ {
						name := iface.Method(i).Name()
						v, ok := clientVerbs[name]
						if !ok || res == "" {
							unmapped = append(unmapped, in.X.Type().String()+"."+name+" in "+fn.String())
							continue
						}
						add(codeUse{joinSub(res, v.sub), v.verb}, fn)
					}
				}
			}
		}
	}
	if len(unmapped) > 0 {
		t.Errorf("calls on client-go typed clients this test cannot map to RBAC (extend clientResources/clientVerbs):\n  %s",
			strings.Join(unmapped, "\n  "))
	}
	if len(uses) == 0 {
		t.Fatal("found no Kubernetes calls at all: the analysis is broken")
	}

	listed := map[codeUse]bool{}
	for _, u := range botUses {
		for _, v := range u.verbs {
			listed[codeUse{u.resource, v}] = true
		}
	}
	var notListed, notCalled []string
	for u, at := range uses {
		if !listed[u] && !everyUser[u] {
			sort.Strings(at)
			notListed = append(notListed, u.verb+" "+u.resource+" (called in "+at[0]+")")
		}
	}
	for u := range listed {
		if _, ok := uses[u]; !ok {
			notCalled = append(notCalled, u.verb+" "+u.resource)
		}
	}
	sort.Strings(notListed)
	sort.Strings(notCalled)
	if len(notListed) > 0 {
		t.Errorf("the code makes requests botUses (and so deploy/'s RBAC) does not list:\n  %s", strings.Join(notListed, "\n  "))
	}
	if len(notCalled) > 0 {
		t.Errorf("botUses lists requests no code path reachable from cmd/bot makes (remove them, and their grants in deploy/base/rbac.yaml):\n  %s",
			strings.Join(notCalled, "\n  "))
	}
	var found []string
	for u := range uses {
		found = append(found, u.verb+" "+u.resource)
	}
	sort.Strings(found)
	t.Logf("requests the code makes (%d functions reachable): %s", len(reachable), strings.Join(found, ", "))
}

// importClosure returns the import paths of our module's packages that
// the package at root is built from (root included).
func importClosure(pkgs []*packages.Package, root string) map[string]bool {
	byPath := map[string]*packages.Package{}
	for _, p := range pkgs {
		byPath[p.PkgPath] = p
	}
	out := map[string]bool{}
	var visit func(path string)
	visit = func(path string) {
		p, ok := byPath[path]
		if !ok || out[path] || !strings.HasPrefix(path, "github.com/kafka-chatops/kafkabot/") {
			return
		}
		out[path] = true
		for imp := range p.Imports {
			visit(imp)
		}
	}
	visit(root)
	return out
}

// joinSub is resource or resource/subresource.
func joinSub(resource, sub string) string {
	if sub == "" {
		return resource
	}
	return resource + "/" + sub
}

// clientResource reports whether t is one of client-go's typed client
// interfaces and, if mapped, its resource ("" when unmapped).
func clientResource(t types.Type) (string, bool) {
	named, ok := types.Unalias(t).(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return "", false
	}
	path := named.Obj().Pkg().Path()
	if !strings.HasPrefix(path, "k8s.io/client-go/kubernetes/typed/") {
		return "", false
	}
	if _, isIface := named.Underlying().(*types.Interface); !isIface || !strings.HasSuffix(named.Obj().Name(), "Interface") ||
		strings.HasSuffix(named.Obj().Name(), "V1Interface") {
		return "", false // a group client (CoreV1Interface), not a resource's
	}
	return clientResources[path+"."+named.Obj().Name()], true
}

// reachableFrom returns the functions reachable from roots: call edges of
// class hierarchy analysis, and every function a reachable function uses
// as a value (closures and method values handed to client-go, which calls
// them where the analysis cannot see).
func reachableFrom(prog *ssa.Program, roots ...*ssa.Function) map[*ssa.Function]bool {
	cg := cha.CallGraph(prog)
	seen := map[*ssa.Function]bool{}
	var queue []*ssa.Function
	push := func(f *ssa.Function) {
		if f != nil && !seen[f] {
			seen[f] = true
			queue = append(queue, f)
		}
	}
	for _, r := range roots {
		push(r)
	}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		if n := cg.Nodes[f]; n != nil {
			for _, e := range n.Out {
				push(e.Callee.Func)
			}
		}
		for _, b := range f.Blocks {
			for _, instr := range b.Instrs {
				for _, op := range instr.Operands(nil) {
					if op == nil {
						continue
					}
					if g, ok := (*op).(*ssa.Function); ok {
						push(g)
					}
				}
			}
		}
	}
	return seen
}
