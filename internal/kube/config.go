// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kube

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/homedir"
)

// ConfigFlags are kubectl's connection flags, with kubectl's meaning.
type ConfigFlags struct {
	// Kubeconfig is one kubeconfig file (--kubeconfig). It must exist, and
	// it replaces KUBECONFIG and ~/.kube/config.
	Kubeconfig string
	// Context is the kubeconfig context to use (--context); empty means
	// the kubeconfig's current-context.
	Context string
	// EnvOnly says the command takes no connection flags (bot serve, bot
	// doctor): its errors point at KUBECONFIG alone, never at --kubeconfig.
	EnvOnly bool
}

// fix says what to do when no kubeconfig could be found.
func (f ConfigFlags) fix() string {
	if f.EnvOnly {
		return "set KUBECONFIG to an existing kubeconfig file, or run the bot in a pod with a service account (this command takes no --kubeconfig flag)"
	}
	return "set KUBECONFIG to an existing kubeconfig file, or pass --kubeconfig FILE"
}

// Connection is a loaded client configuration.
type Connection struct {
	// REST is the configuration of the API client.
	REST *rest.Config
	// Namespace is the namespace the kubeconfig context names, "" when it
	// names none (and always "" in-cluster).
	Namespace string
	// Context is the kubeconfig context used, "" in-cluster.
	Context string
	// Source says where the configuration came from, for messages:
	// "kubeconfig /path (--kubeconfig)", "KUBECONFIG=/a:/b", "in-cluster".
	Source string
}

// LoadConnection loads the client configuration the way kubectl does:
// flags.Kubeconfig when set (it must exist), else the files of
// kubeconfigEnv (the KUBECONFIG variable: a path list, merged, files that
// do not exist skipped, at least one must exist), else ~/.kube/config
// when it exists, else the in-cluster configuration of a pod's service
// account. flags.Context picks a context other than the current one.
//
// Every error names the file or variable at fault and says what to do;
// none ends in client-go's "try setting KUBERNETES_MASTER".
func LoadConnection(kubeconfigEnv string, flags ConfigFlags) (Connection, error) {
	var files []string
	var source string
	switch {
	case flags.Kubeconfig != "":
		source = "--kubeconfig " + flags.Kubeconfig
		if _, err := os.Stat(flags.Kubeconfig); err != nil {
			return Connection{}, fmt.Errorf("kubeconfig %s (--kubeconfig): %w; pass the path of an existing kubeconfig file", flags.Kubeconfig, statErr(err))
		}
		files = []string{flags.Kubeconfig}
	case kubeconfigEnv != "":
		source = "KUBECONFIG=" + kubeconfigEnv
		listed := filepath.SplitList(kubeconfigEnv)
		for _, f := range listed {
			if f == "" {
				continue
			}
			if _, err := os.Stat(f); err == nil || !errors.Is(err, os.ErrNotExist) {
				files = append(files, f)
			}
		}
		if len(files) == 0 {
			return Connection{}, fmt.Errorf("KUBECONFIG=%s: no such file (none of %q exists); %s", kubeconfigEnv, listed, flags.fix())
		}
	default:
		home := filepath.Join(homedir.HomeDir(), clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)
		if _, err := os.Stat(home); err != nil && errors.Is(err, os.ErrNotExist) {
			return inCluster(home, flags)
		}
		source = "kubeconfig " + home
		files = []string{home}
	}

	// Read and parse each file here, so that a bad one is named with what
	// is wrong with it.
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return Connection{}, fmt.Errorf("kubeconfig %s: cannot read it: %w; fix its permissions or point --kubeconfig or KUBECONFIG at another file", f, err)
		}
		if _, err := clientcmd.Load(data); err != nil {
			return Connection{}, fmt.Errorf("kubeconfig %s: not a valid kubeconfig: %w", f, err)
		}
	}
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: files}
	if flags.Kubeconfig != "" {
		rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: flags.Kubeconfig}
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: flags.Context})
	raw, err := cc.RawConfig()
	if err != nil {
		return Connection{}, fmt.Errorf("%s: %w", source, err)
	}
	name := flags.Context
	if name == "" {
		name = raw.CurrentContext
	}
	if name == "" {
		return Connection{}, fmt.Errorf("%s: no current-context is set; pass --context NAME (contexts: %s) or run kubectl config use-context NAME", source, contextNames(raw))
	}
	kctx, ok := raw.Contexts[name]
	if !ok {
		return Connection{}, fmt.Errorf("%s: context %q does not exist (contexts: %s)", source, name, contextNames(raw))
	}
	rc, err := cc.ClientConfig()
	if err != nil {
		return Connection{}, fmt.Errorf("%s, context %s: %w", source, name, err)
	}
	return Connection{REST: rc, Namespace: kctx.Namespace, Context: name, Source: source}, nil
}

// inCluster is the fallback when no kubeconfig is given or found.
func inCluster(home string, flags ConfigFlags) (Connection, error) {
	if flags.Context != "" {
		return Connection{}, fmt.Errorf("--context %s: there is no kubeconfig to take it from (%s does not exist and KUBECONFIG is not set); pass --kubeconfig FILE", flags.Context, home)
	}
	rc, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		fix := "pass --kubeconfig FILE or set KUBECONFIG"
		if flags.EnvOnly {
			fix = flags.fix()
		}
		return Connection{}, fmt.Errorf("no Kubernetes configuration: %s does not exist, KUBECONFIG is not set and this is not a pod with a service account; %s", home, fix)
	}
	if err != nil {
		return Connection{}, fmt.Errorf("in-cluster configuration (no kubeconfig: %s does not exist and KUBECONFIG is not set): %w", home, err)
	}
	return Connection{REST: rc, Source: "in-cluster"}, nil
}

func contextNames(c clientcmdapi.Config) string {
	names := make([]string, 0, len(c.Contexts))
	for n := range c.Contexts {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "none"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// statErr shortens os.Stat's error to what a person needs.
func statErr(err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("no such file")
	}
	return err
}
