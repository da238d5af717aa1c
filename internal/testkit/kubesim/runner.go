// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package kubesim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// EnvMountRoot is the debug script's variable naming where the claims are
// mounted; the Runner points it at the host directories standing in for
// the mounts.
const EnvMountRoot = "KB_MOUNT_ROOT"

// RunResult is how a pod's command ended.
type RunResult struct {
	// ExitCode is the command's exit status (137 when killed).
	ExitCode int32
	// Output is stdout and stderr interleaved, as the container log holds them.
	Output string
	// Reason and Message are set on the pod when the run ended for a reason
	// of the pod's own (DeadlineExceeded) or could not start.
	Reason, Message string
	// Started and Finished bound the run.
	Started, Finished time.Time
}

// Runner runs a pod's single container on the host with busybox: its
// command under `busybox sh` (or a busybox applet), its environment with
// Kubernetes' $(VAR) expansion, a PATH holding only busybox applets, and
// its PersistentVolumeClaim mounts provided by host directories.
//
// A claim's host directory is moved (one rename) to where the pod mounts it
// under a private root for the duration of the run, and moved back after,
// so the command sees real directories on the claim's own filesystem, not
// symbolic links; KB_MOUNT_ROOT is rewritten to lie under that root.
type Runner struct {
	busybox   string
	appletDir string
	// DefaultTimeout bounds a run when the pod has no activeDeadlineSeconds.
	DefaultTimeout time.Duration

	claimLocks sync.Map // host dir -> *sync.Mutex: one pod mounts a dir at a time

	downMu sync.Mutex
	// downward holds the downwardAPI volumes of running pods, by pod UID,
	// so RefreshDownwardAPI can update them as the kubelet does.
	downward map[string][]downwardVolume
	// latest is the newest object seen of each debug pod, by UID: a change
	// that arrives before the volume is set up is not lost.
	latest map[string]*corev1.Pod
}

// downwardVolume is one downwardAPI volume of a running pod: its host
// directory and the items projected into it.
type downwardVolume struct {
	dir   string
	items []corev1.DownwardAPIVolumeFile
}

// NewRunner prepares a Runner using the busybox binary at busyboxPath
// ("" finds busybox in PATH) with applet links in a new directory under
// workDir.
func NewRunner(busyboxPath, workDir string) (*Runner, error) {
	if busyboxPath == "" {
		p, err := exec.LookPath("busybox")
		if err != nil {
			return nil, fmt.Errorf("kubesim runs debug pods with busybox, which is not installed (apt-get install busybox): %w", err)
		}
		busyboxPath = p
	}
	out, err := exec.Command(busyboxPath, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("listing busybox applets: %w", err)
	}
	dir, err := os.MkdirTemp(workDir, "busybox-applets-")
	if err != nil {
		return nil, fmt.Errorf("creating busybox applet dir: %w", err)
	}
	for _, applet := range strings.Fields(string(out)) {
		if err := os.Symlink(busyboxPath, filepath.Join(dir, applet)); err != nil {
			return nil, fmt.Errorf("linking busybox applet %s: %w", applet, err)
		}
	}
	return &Runner{busybox: busyboxPath, appletDir: dir, DefaultTimeout: 5 * time.Minute}, nil
}

// ClaimDirs maps a claim name in the pod's namespace to its host directory.
type ClaimDirs func(claim string) (dir string, ok bool)

// Run runs pod's container to completion or until ctx ends (the pod was
// deleted). A pod the Runner cannot run (no busybox-compatible command, an
// unknown claim, a valueFrom it cannot resolve) gets exit code 128 and a
// Message saying why, like a container that fails to start.
func (r *Runner) Run(ctx context.Context, pod *corev1.Pod, claims ClaimDirs) RunResult {
	started := time.Now()
	res, err := r.run(ctx, pod, claims)
	if err != nil {
		res = RunResult{ExitCode: 128, Reason: "StartError", Message: err.Error(), Output: "kubesim: " + err.Error() + "\n"}
	}
	res.Started, res.Finished = started, time.Now()
	return res
}

func (r *Runner) run(ctx context.Context, pod *corev1.Pod, claims ClaimDirs) (RunResult, error) {
	if len(pod.Spec.Containers) != 1 || len(pod.Spec.InitContainers) != 0 {
		return RunResult{}, fmt.Errorf("pod %s/%s: kubesim runs pods with exactly one container and no init containers", pod.Namespace, pod.Name)
	}
	c := &pod.Spec.Containers[0]
	env, err := containerEnv(pod, c)
	if err != nil {
		return RunResult{}, err
	}
	vars := map[string]string{}
	for _, kv := range env {
		vars[kv[0]] = kv[1]
	}
	argv := make([]string, 0, len(c.Command)+len(c.Args))
	for _, a := range append(slices.Clone(c.Command), c.Args...) {
		argv = append(argv, expand(a, vars))
	}
	argv, err = r.busyboxArgv(argv)
	if err != nil {
		return RunResult{}, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}

	root, restore, err := r.mountClaims(pod, c, claims)
	if err != nil {
		return RunResult{}, err
	}
	res, runErr := r.exec(ctx, pod, argv, r.processEnv(pod, env, root))
	if err := restore(); err != nil {
		return RunResult{}, errors.Join(runErr, err)
	}
	return res, runErr
}

// busyboxArgv maps a container command onto the host's busybox: a shell
// (sh, ash, bash, dash, any path) runs as `busybox sh`, `busybox X` stays,
// and a bare applet name runs as that applet.
func (r *Runner) busyboxArgv(argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("the container has no command: kubesim cannot run an image's entrypoint")
	}
	switch base := path.Base(argv[0]); base {
	case "sh", "ash", "bash", "dash":
		return append([]string{r.busybox, "sh"}, argv[1:]...), nil
	case "busybox":
		return append([]string{r.busybox}, argv[1:]...), nil
	default:
		if _, err := os.Lstat(filepath.Join(r.appletDir, base)); err != nil {
			return nil, fmt.Errorf("command %q is neither a shell nor a busybox applet", argv[0])
		}
		return append([]string{r.busybox, base}, argv[1:]...), nil
	}
}

// containerEnv resolves the container's env in order, expanding $(VAR)
// references to earlier entries as the kubelet does. valueFrom is resolved
// for the pod's own fields; anything else (Secrets, ConfigMaps, resources)
// is refused rather than guessed.
func containerEnv(pod *corev1.Pod, c *corev1.Container) ([][2]string, error) {
	if len(c.EnvFrom) > 0 {
		return nil, fmt.Errorf("pod %s/%s: kubesim does not resolve envFrom", pod.Namespace, pod.Name)
	}
	vars := map[string]string{}
	var env [][2]string
	for _, e := range c.Env {
		v := expand(e.Value, vars)
		if e.ValueFrom != nil {
			if e.ValueFrom.FieldRef == nil {
				return nil, fmt.Errorf("pod %s/%s: env %s: kubesim resolves valueFrom.fieldRef only", pod.Namespace, pod.Name, e.Name)
			}
			var err error
			if v, err = podField(pod, e.ValueFrom.FieldRef.FieldPath); err != nil {
				return nil, fmt.Errorf("pod %s/%s: env %s: %w", pod.Namespace, pod.Name, e.Name, err)
			}
		}
		vars[e.Name] = v
		env = append(env, [2]string{e.Name, v})
	}
	return env, nil
}

func podField(pod *corev1.Pod, field string) (string, error) {
	switch field {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		return hostIP, nil
	}
	if k, ok := strings.CutPrefix(field, "metadata.labels['"); ok {
		return pod.Labels[strings.TrimSuffix(k, "']")], nil
	}
	if k, ok := strings.CutPrefix(field, "metadata.annotations['"); ok {
		return pod.Annotations[strings.TrimSuffix(k, "']")], nil
	}
	return "", fmt.Errorf("kubesim does not resolve fieldRef %q", field)
}

// processEnv is the run's whole environment: the container's, plus what a
// container runtime sets, with KB_MOUNT_ROOT moved under root.
func (r *Runner) processEnv(pod *corev1.Pod, env [][2]string, root string) []string {
	out := []string{"PATH=" + r.appletDir, "HOSTNAME=" + pod.Name, "HOME=/"}
	for _, kv := range env {
		name, value := kv[0], kv[1]
		if name == EnvMountRoot && root != "" && path.IsAbs(value) {
			value = filepath.Join(root, value)
		}
		out = append(out, name+"="+value)
	}
	return out
}

// mountClaims moves each claim's host directory to root+mountPath and
// returns root and a function that moves them back. root is created next to
// the first claim's directory so the moves stay on one filesystem.
func (r *Runner) mountClaims(pod *corev1.Pod, c *corev1.Container, claims ClaimDirs) (string, func() error, error) {
	type move struct {
		from, to string
		downward []corev1.DownwardAPIVolumeFile
	}
	var moves []move
	for _, m := range c.VolumeMounts {
		vol := findVolume(pod, m.Name)
		if vol == nil {
			return "", nil, fmt.Errorf("pod %s/%s: mount %s names no volume", pod.Namespace, pod.Name, m.Name)
		}
		switch {
		case vol.PersistentVolumeClaim != nil:
			dir, ok := claims(vol.PersistentVolumeClaim.ClaimName)
			if !ok {
				return "", nil, fmt.Errorf("pod %s/%s: claim %s has no host directory (kubesim SetVolumeDir)", pod.Namespace, pod.Name, vol.PersistentVolumeClaim.ClaimName)
			}
			if m.SubPath != "" {
				return "", nil, fmt.Errorf("pod %s/%s: kubesim does not support subPath mounts", pod.Namespace, pod.Name)
			}
			moves = append(moves, move{from: dir, to: m.MountPath})
		case vol.EmptyDir != nil:
			moves = append(moves, move{to: m.MountPath})
		case vol.DownwardAPI != nil:
			moves = append(moves, move{to: m.MountPath, downward: vol.DownwardAPI.Items})
		default:
			return "", nil, fmt.Errorf("pod %s/%s: kubesim mounts only PersistentVolumeClaims, emptyDirs and downwardAPI volumes (volume %s)", pod.Namespace, pod.Name, m.Name)
		}
	}
	if len(moves) == 0 {
		return "", func() error { return nil }, nil
	}
	base := os.TempDir()
	for _, mv := range moves {
		if mv.from != "" {
			base = filepath.Dir(mv.from)
			break
		}
	}
	root, err := os.MkdirTemp(base, ".kubesim-root-")
	if err != nil {
		return "", nil, fmt.Errorf("creating mount root: %w", err)
	}

	var done []move
	var unlock []func()
	restore := func() error {
		var errs []error
		for i := len(done) - 1; i >= 0; i-- {
			if err := os.Rename(done[i].to, done[i].from); err != nil {
				errs = append(errs, fmt.Errorf("moving claim directory back to %s: %w", done[i].from, err))
			}
		}
		for _, u := range unlock {
			u()
		}
		r.forgetDownward(pod)
		if len(errs) > 0 {
			// Leave root in place: it may still hold a claim's data.
			return errors.Join(errs...)
		}
		if err := os.RemoveAll(root); err != nil {
			return fmt.Errorf("removing mount root: %w", err)
		}
		return nil
	}
	for _, mv := range moves {
		target := filepath.Join(root, mv.to)
		if mv.from == "" { // emptyDir or downwardAPI
			if err := os.MkdirAll(target, 0o777); err != nil {
				return "", nil, errors.Join(fmt.Errorf("creating emptyDir %s: %w", mv.to, err), restore())
			}
			if mv.downward != nil {
				if err := r.addDownward(pod, downwardVolume{dir: target, items: mv.downward}); err != nil {
					return "", nil, errors.Join(err, restore())
				}
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return "", nil, errors.Join(fmt.Errorf("creating mount point %s: %w", mv.to, err), restore())
		}
		mu := r.claimLock(mv.from)
		mu.Lock()
		if err := os.Rename(mv.from, target); err != nil {
			mu.Unlock()
			return "", nil, errors.Join(fmt.Errorf("mounting %s at %s: %w", mv.from, mv.to, err), restore())
		}
		unlock = append(unlock, mu.Unlock)
		done = append(done, move{from: mv.from, to: target})
	}
	return root, restore, nil
}

func (r *Runner) claimLock(dir string) *sync.Mutex {
	mu, _ := r.claimLocks.LoadOrStore(filepath.Clean(dir), &sync.Mutex{})
	return mu.(*sync.Mutex)
}

func findVolume(pod *corev1.Pod, name string) *corev1.Volume {
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == name {
			return &pod.Spec.Volumes[i]
		}
	}
	return nil
}

// exec runs argv with env in its own process group, bounded by the pod's
// activeDeadlineSeconds (or DefaultTimeout) and by ctx.
func (r *Runner) exec(ctx context.Context, pod *corev1.Pod, argv, env []string) (RunResult, error) {
	timeout := r.DefaultTimeout
	if d := pod.Spec.ActiveDeadlineSeconds; d != nil {
		timeout = time.Duration(*d) * time.Second
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var out bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return RunResult{}, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	var res RunResult
	var waitErr error
	select {
	case waitErr = <-waited:
	case <-runCtx.Done():
		// Kill the whole group: the shell's children too.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		waitErr = <-waited
		if ctx.Err() == nil {
			res.Reason = "DeadlineExceeded"
			res.Message = fmt.Sprintf("Pod was active on the node longer than the specified deadline (%s)", timeout)
		}
	}
	res.Output = out.String()
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil:
		res.ExitCode = 0
	case errors.As(waitErr, &exitErr):
		res.ExitCode = int32(exitErr.ExitCode())
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.ExitCode = 128 + int32(ws.Signal())
		}
	default:
		return RunResult{}, fmt.Errorf("running %s: %w", argv[0], waitErr)
	}
	return res, nil
}

// write projects the pod's fields into the volume's files. Each file is
// replaced with one rename, so a reader sees the old or the new value.
func (dv downwardVolume) write(pod *corev1.Pod) error {
	for _, item := range dv.items {
		if item.FieldRef == nil || path.IsAbs(item.Path) || strings.Contains(item.Path, "..") {
			return fmt.Errorf("pod %s/%s: kubesim projects only fieldRef items with relative paths (%q)", pod.Namespace, pod.Name, item.Path)
		}
		v, err := podField(pod, item.FieldRef.FieldPath)
		if err != nil {
			return fmt.Errorf("pod %s/%s: downwardAPI %s: %w", pod.Namespace, pod.Name, item.Path, err)
		}
		p := filepath.Join(dv.dir, item.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		tmp := p + ".kubesim-tmp"
		if err := os.WriteFile(tmp, []byte(v), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, p); err != nil {
			return err
		}
	}
	return nil
}

// RefreshDownwardAPI rewrites the downwardAPI volumes of a running pod from
// its current object, as the kubelet does when a pod's labels or
// annotations change. A pod that is not running is ignored.
func (r *Runner) RefreshDownwardAPI(pod *corev1.Pod) error {
	r.downMu.Lock()
	defer r.downMu.Unlock()
	if r.latest == nil {
		r.latest = map[string]*corev1.Pod{}
	}
	r.latest[string(pod.UID)] = pod.DeepCopy()
	var errs []error
	for _, dv := range r.downward[string(pod.UID)] {
		errs = append(errs, dv.write(pod))
	}
	return errors.Join(errs...)
}

// addDownward writes a new downwardAPI volume from the newest object seen
// of the pod and keeps it for RefreshDownwardAPI.
func (r *Runner) addDownward(pod *corev1.Pod, dv downwardVolume) error {
	r.downMu.Lock()
	defer r.downMu.Unlock()
	if p := r.latest[string(pod.UID)]; p != nil {
		pod = p
	}
	if err := dv.write(pod); err != nil {
		return err
	}
	if r.downward == nil {
		r.downward = map[string][]downwardVolume{}
	}
	r.downward[string(pod.UID)] = append(r.downward[string(pod.UID)], dv)
	return nil
}

func (r *Runner) forgetDownward(pod *corev1.Pod) {
	r.downMu.Lock()
	defer r.downMu.Unlock()
	delete(r.downward, string(pod.UID))
	delete(r.latest, string(pod.UID))
}
