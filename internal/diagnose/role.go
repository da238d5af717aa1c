// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package diagnose

import (
	"regexp"
	"strings"
)

// Kinds of role markers a log can contain.
const (
	markProcessRoles = iota // process.roles = [broker] (authoritative)
	markBroker              // [BrokerServer id=N]: a KRaft broker runs here
	markController          // [ControllerServer id=N] and friends: a KRaft controller runs here
	markZooKeeper           // [KafkaServer id=N]: a ZooKeeper-mode broker
	markKinds
)

// roleMarkerPatterns are indexed by marker kind. The process.roles pattern
// must have a group named "roles".
var roleMarkerPatterns = [markKinds]string{
	markProcessRoles: `(?:process\.roles\s*=\s*|KAFKA_CFG_PROCESS_ROLES=|KAFKA_PROCESS_ROLES=)\[?(?P<roles>[a-z]+(?:\s*,\s*[a-z]+)?)`,
	markBroker:       `\[BrokerServer id=\d+\]`,
	markController:   `\[(?:ControllerServer|QuorumController) id=\d+\]|SocketServer listenerType=CONTROLLER`,
	markZooKeeper:    `\[KafkaServer id=\d+\]|\[Kafka Server \d+\]`,
}

// roleMarks records the first line of each marker kind seen in a log.
type roleMarks struct {
	line  [markKinds]string
	roles string // value of the first process.roles
	// controllerRoles is the first process.roles line (of any) that lists
	// the controller role.
	controllerRoles string
}

func (m *roleMarks) note(kind int, re *regexp.Regexp, text []byte, loc []int, line []byte) {
	if kind == markProcessRoles {
		// Every process.roles line is seen (the pattern runs on each):
		// one that lists controller is evidence even after a broker one.
		roles := ""
		if i := re.SubexpIndex("roles"); i >= 0 && loc[2*i] >= 0 {
			roles = string(text[loc[2*i]:loc[2*i+1]])
		}
		if m.controllerRoles == "" && strings.Contains(roles, "controller") {
			m.controllerRoles = quoteForSource(line)
		}
		if m.line[kind] == "" {
			m.roles = roles
		}
	}
	if m.line[kind] != "" {
		return
	}
	m.line[kind] = quoteForSource(line)
}

// controllerEvidence returns the first log line that shows a KRaft
// controller runs in this process, or "".
func (m *roleMarks) controllerEvidence() string {
	if m.controllerRoles != "" {
		return m.controllerRoles
	}
	return m.line[markController]
}

// quoteForSource shortens a log line for the RoleSource field.
func quoteForSource(line []byte) string {
	const max = 200
	s := strings.TrimSpace(validUTF8(string(line)))
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// resolveRole decides which role the remedies are for: the Snapshot's role
// when known, else what the log says, else RoleUnknown. The second result
// says where the role came from.
//
// The log can veto a broker label but never turn another label into
// broker (it gives the role only to a pod that has none): when the pod says
// broker and the log shows a controller (process.roles listing controller,
// ControllerServer or QuorumController lines, a CONTROLLER listener), the
// role is combined, so no automated remedy is offered.
func (m *roleMarks) resolveRole(s *Snapshot) (Role, string) {
	if s.Role == RoleBroker {
		if ev := m.controllerEvidence(); ev != "" {
			return RoleCombined, contradictedPrefix + ev
		}
	}
	if s.Role != RoleUnknown {
		return s.Role, "pod"
	}
	if m.roles != "" {
		broker := strings.Contains(m.roles, "broker")
		controller := strings.Contains(m.roles, "controller")
		switch {
		case broker && controller:
			return RoleCombined, "log: " + m.line[markProcessRoles]
		case controller:
			return RoleController, "log: " + m.line[markProcessRoles]
		case broker:
			return RoleBroker, "log: " + m.line[markProcessRoles]
		}
	}
	broker, controller := m.line[markBroker], m.line[markController]
	switch {
	case broker != "" && controller != "":
		return RoleCombined, "log: " + controller + " and " + broker
	case controller != "":
		return RoleController, "log: " + controller
	case broker != "":
		return RoleBroker, "log: " + broker
	case m.line[markZooKeeper] != "":
		return RoleZooKeeper, "log: " + m.line[markZooKeeper]
	}
	return RoleUnknown, "unknown"
}

// contradictedPrefix starts a RoleSource when the log showed a controller
// in a pod labelled broker.
const contradictedPrefix = "pod says broker, but log: "

// describeRole says in a sentence which role a remedy was decided for.
func describeRole(role Role, source string) string {
	switch {
	case strings.HasPrefix(source, contradictedPrefix):
		return "Node role: the pod is labelled broker, but its log shows a KRaft controller in the same process (" +
			strings.TrimPrefix(source, contradictedPrefix) + "), so it is treated as a combined broker and controller node."
	case source == "pod" && role != RoleUnknown:
		return "Node role: " + string(role) + " (from the pod)."
	case strings.HasPrefix(source, "log: "):
		return "Node role: " + string(role) + ", inferred from the log (" + strings.TrimPrefix(source, "log: ") + "); confirm it before approving any repair."
	}
	return "Node role: unknown (neither the pod nor the log states it), so it is treated like a controller."
}
