// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// EphemeralVolumeError says the claim to repair belongs to a generic
// ephemeral volume: the claim lives and dies with the broker pod, so the
// restart that ends every repair deletes it, backup included.
type EphemeralVolumeError struct {
	Claim  string
	Volume string
}

func (e *EphemeralVolumeError) Error() string {
	return fmt.Sprintf("claim %s is the generic ephemeral volume %q of the broker pod: restarting the broker deletes it "+
		"with everything on it, the backup included; repair it by hand, and give the broker a PersistentVolumeClaim", e.Claim, e.Volume)
}

// NoShellError says the debug pod's image most likely has no POSIX shell,
// so the script could not run: found before anything is written.
type NoShellError struct {
	Image string
	Why   string
}

func (e *NoShellError) Error() string {
	return fmt.Sprintf("the broker image %s has no shell (%s), and the debug pod runs the repair script with sh: "+
		"set DEBUG_IMAGE to an image with a POSIX sh and find, stat, readlink, mkdir, mv, date and tr "+
		"(for example busybox, pinned by digest) and restart the bot", e.Image, e.Why)
}

// shellLessMarkers are image reference parts of images built without a
// shell: Google's distroless (except its :debug tags) and Chainguard's
// production images (their -dev tags have a shell).
var shellLessMarkers = []string{"distroless", "cgr.dev/chainguard/"}

// checkShell reports a NoShellError when the debug pod would use the
// broker's own image and that image is known to have no shell. Evidence
// that it has one (the broker's command, args or an exec probe running sh,
// bash or a .sh script) wins over the name.
func checkShell(override, image string, kafka *corev1.Container) error {
	if override != "" {
		return nil
	}
	if usesShell(kafka) {
		return nil
	}
	ref := strings.ToLower(image)
	_, tag, _ := strings.Cut(ref[strings.LastIndex(ref, "/")+1:], ":")
	if strings.Contains(tag, "debug") || strings.Contains(tag, "-dev") || strings.HasSuffix(tag, "dev") {
		return nil
	}
	for _, m := range shellLessMarkers {
		if strings.Contains(ref, m) {
			return &NoShellError{Image: image, Why: "a " + strings.TrimSuffix(m, "/") + " image"}
		}
	}
	return nil
}

// usesShell reports whether the container itself runs a shell or a shell
// script, which proves the image has one.
func usesShell(c *corev1.Container) bool {
	var argv []string
	argv = append(argv, c.Command...)
	argv = append(argv, c.Args...)
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p != nil && p.Exec != nil {
			argv = append(argv, p.Exec.Command...)
		}
	}
	for _, a := range argv {
		base := a[strings.LastIndex(a, "/")+1:]
		switch {
		case base == "sh", base == "bash", base == "ash", base == "dash", strings.HasSuffix(base, ".sh"):
			return true
		}
	}
	return false
}
