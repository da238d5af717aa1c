// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig renders cfg as a kubeconfig file with one cluster, user and
// context, all named name, as current context: the server, its CA, the
// client certificate or bearer token, and the impersonation (so a
// kubeconfig made from BotConfig acts as the bot's ServiceAccount, RBAC
// enforced). It is what a site mounts from a Secret for each cluster of
// CLUSTERS_FILE.
func Kubeconfig(cfg *rest.Config, name string) ([]byte, error) {
	if cfg.Host == "" || name == "" {
		return nil, fmt.Errorf("testenv: Kubeconfig needs a server and a name (got %q, %q)", cfg.Host, name)
	}
	if cfg.CAFile != "" || cfg.CertFile != "" || cfg.KeyFile != "" || cfg.BearerTokenFile != "" {
		return nil, fmt.Errorf("testenv: Kubeconfig embeds credentials; %s's come from files", name)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
		InsecureSkipTLSVerify:    cfg.Insecure,
		TLSServerName:            cfg.ServerName,
	}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
		Username:              cfg.Username,
		Password:              cfg.Password,
		Impersonate:           cfg.Impersonate.UserName,
		ImpersonateUID:        cfg.Impersonate.UID,
		ImpersonateGroups:     cfg.Impersonate.Groups,
		ImpersonateUserExtra:  cfg.Impersonate.Extra,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("testenv: writing the kubeconfig of %s: %w", name, err)
	}
	return data, nil
}

// WriteKubeconfig writes Kubeconfig(cfg, name) to a file of mode 0600 in a
// directory of t's and returns its path.
func WriteKubeconfig(t testing.TB, cfg *rest.Config, name string) string {
	t.Helper()
	data, err := Kubeconfig(cfg, name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
