// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

//go:build !linux

package testenv

// reaper is a no-op off Linux: the control plane is stopped by Main only.
type reaper struct{ groups []int }

func startReaper([]int) *reaper { return nil }

func controlPlaneGroups(int) ([]int, error) { return nil, nil }

func (r *reaper) disarm() {}

func (r *reaper) fire() {}
