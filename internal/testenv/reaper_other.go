//go:build !linux

package testenv

// reaper is a no-op off Linux: the control plane is stopped by Main only.
type reaper struct{}

func startReaper() *reaper { return nil }

func (r *reaper) disarm() {}

func (r *reaper) fire() {}
