// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package recovery

import (
	_ "embed"
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-chatops/kafkabot/internal/diagnose"
)

// Script is the POSIX sh program the debug pod runs (busybox ash, dash or
// bash). It moves one thing out of a Kafka log dir into a dated backup folder
// at the root of the same volume with a single rename, after checking node id,
// filesystem and free space. It reads its inputs only from the environment
// built by ScriptInput.Env and prints one ResultPrefix line; see repair.sh.
//
//go:embed repair.sh
var Script string

// DefaultMountRoot is where the debug pod mounts the broker's claims: the
// n-th claim at DefaultMountRoot/<n>.
const DefaultMountRoot = "/kafka-data"

// Environment variables the script reads. Nothing else reaches it.
const (
	EnvAction      = "KB_ACTION"
	EnvTarget      = "KB_TARGET"
	EnvNodeID      = "KB_NODE_ID"
	EnvNodeIDCheck = "KB_NODE_ID_CHECK"
	EnvClusterID   = "KB_CLUSTER_ID"
	EnvMountRoot   = "KB_MOUNT_ROOT"
	EnvBackupName  = "KB_BACKUP_NAME"
	EnvMode        = "KB_MODE"
	EnvGoWant      = "KB_GO_WANT"
	EnvGoWait      = "KB_GO_WAIT"
)

// Script modes (KB_MODE).
const (
	ModeApply = "apply"
	ModeCheck = "check"
)

// backupPrefix starts every backup folder name. The script refuses any other
// name, so a backup can never be named like a log dir ("data", "kafka-log0")
// and land inside one.
const backupPrefix = "kafkabot-backup-"

// backupTimeLayout is the UTC timestamp inside a backup name.
const backupTimeLayout = "20060102T150405Z"

// knownActions are the actions the script implements.
var knownActions = map[string]bool{
	diagnose.ActionMoveMetadataLog:    true,
	diagnose.ActionMoveForeignDir:     true,
	diagnose.ActionMoveCheckpointFile: true,
	diagnose.ActionMoveIndexFiles:     true,
}

// checkpointFiles are the log-dir checkpoint files the bot may move aside:
// Kafka treats a missing one as empty (see kraft-recovery.md §6). Never
// bootstrap.checkpoint, meta.properties or a partition's files.
var checkpointFiles = map[string]bool{
	"recovery-point-offset-checkpoint": true,
	"replication-offset-checkpoint":    true,
	"log-start-offset-checkpoint":      true,
	"cleaner-offset-checkpoint":        true,
}

var (
	// dirNameRE is one directory name: ASCII letters, digits and ._+@- only
	// (lost+found needs '+'). Anything else, including look-alike unicode,
	// spaces, quotes and shell metacharacters, is rejected.
	dirNameRE = regexp.MustCompile(`^[A-Za-z0-9._+@-]{1,255}$`)
	// partitionDirRE is a topic-partition directory: a legal topic name
	// (at most 249 of [A-Za-z0-9._-]) and a partition number.
	partitionDirRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,249}-[0-9]{1,10}$`)
	// segmentIndexRE is one index file of a segment: 20-digit base offset.
	segmentIndexRE = regexp.MustCompile(`^[0-9]{20}\.(index|timeindex|txnindex)$`)
	// kafkaNamedRE matches names Kafka itself gives directories in a log
	// dir; a "foreign dir" with such a name is not foreign.
	kafkaNamedRE = regexp.MustCompile(`(-[0-9]+|-delete|-future)$|^__cluster_metadata|^remote-log-index-cache$`)
	nodeIDRE     = regexp.MustCompile(`^[0-9]{1,10}$`)
	clusterIDRE  = regexp.MustCompile(`^[A-Za-z0-9_-]{0,64}$`)
	goSignalRE   = regexp.MustCompile(`^[A-Za-z0-9._-]{1,63}$`)
	mountRootRE  = regexp.MustCompile(`^(/[A-Za-z0-9._-]+)+$`)
	backupNameRE = regexp.MustCompile(`^kafkabot-backup-[0-9]{8}T[0-9]{6}Z(-[a-z0-9]+)*$`)
)

// maxBackupName bounds a backup folder name (filesystems allow 255 bytes).
const maxBackupName = 100

// ScriptInput is what one run of the script does. Every field is checked by
// Validate against an allowlist before it becomes an environment variable;
// no value is ever written into shell source.
type ScriptInput struct {
	// Action is one of the diagnose.Action* constants.
	Action string
	// Target is the path to move, relative to the log dir:
	// "__cluster_metadata-0", a foreign directory name such as "lost+found",
	// a checkpoint file name, or "<partition-dir>/<segment>.index".
	Target string
	// NodeID is the node.id (KRaft) or broker.id (ZooKeeper mode) that the
	// log dir's meta.properties must hold.
	NodeID string
	// SkipNodeIDCheck allows an empty NodeID: the script then moves without
	// checking meta.properties. Only for callers that could not learn the id
	// and had a person approve that explicitly.
	SkipNodeIDCheck bool
	// ClusterID is the cluster.id every meta.properties on the volume must
	// hold; "" makes the script check only that all log dirs agree.
	ClusterID string `json:",omitempty"`
	// MountRoot is where the claims are mounted (DefaultMountRoot).
	MountRoot string
	// BackupName is the backup folder at the volume root (see BackupName).
	BackupName string
	// CheckOnly runs every check and reports what would move, moving nothing.
	CheckOnly bool
	// GoSignal is the value the script waits for in its go file (the
	// kafkabot/go annotation of its own pod) before it moves anything, and
	// GoWait how long it waits. DebugPod sets both: the repair id, and the
	// pod's deadline less a margin. Required by the script in apply mode.
	GoSignal string        `json:",omitempty"`
	GoWait   time.Duration `json:",omitempty"`
}

// Validate checks every field against its allowlist.
func (in ScriptInput) Validate() error {
	var errs []error
	if err := validateTarget(in.Action, in.Target); err != nil {
		errs = append(errs, err)
	}
	switch {
	case in.SkipNodeIDCheck && in.NodeID != "":
		errs = append(errs, errors.New("node id is set but its check is skipped: drop one"))
	case !in.SkipNodeIDCheck && !nodeIDRE.MatchString(in.NodeID):
		errs = append(errs, fmt.Errorf("node id %q is not a number (an empty id needs SkipNodeIDCheck)", in.NodeID))
	}
	if in.GoSignal != "" && (!goSignalRE.MatchString(in.GoSignal) || in.GoWait < time.Second || in.GoWait > time.Hour) {
		errs = append(errs, fmt.Errorf("go signal %q / wait %s: want a label-like repair id and 1s..1h", in.GoSignal, in.GoWait))
	}
	if !clusterIDRE.MatchString(in.ClusterID) {
		errs = append(errs, fmt.Errorf("cluster id %q is not up to 64 of [A-Za-z0-9_-]", in.ClusterID))
	}
	if !mountRootRE.MatchString(in.MountRoot) || path.Clean(in.MountRoot) != in.MountRoot || hasDotComponent(in.MountRoot) {
		errs = append(errs, fmt.Errorf("mount root %q is not a clean absolute path of [A-Za-z0-9._-] components", in.MountRoot))
	}
	if err := validateBackupName(in.BackupName); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid repair script input: %w", err)
	}
	return nil
}

// validateTarget checks target against the allowlist of action.
func validateTarget(action, target string) error {
	switch action {
	case diagnose.ActionMoveMetadataLog:
		if target != "__cluster_metadata-0" {
			return fmt.Errorf("%s moves only __cluster_metadata-0, not %q", action, target)
		}
	case diagnose.ActionMoveForeignDir:
		if !dirNameRE.MatchString(target) || target == "." || target == ".." {
			return fmt.Errorf("%s target %q is not one directory name of [A-Za-z0-9._+@-]", action, target)
		}
		if kafkaNamedRE.MatchString(target) {
			return fmt.Errorf("%s target %q is named like Kafka data, not a foreign directory", action, target)
		}
	case diagnose.ActionMoveCheckpointFile:
		if !checkpointFiles[target] {
			return fmt.Errorf("%s target %q is not one of the four log-dir checkpoint files", action, target)
		}
	case diagnose.ActionMoveIndexFiles:
		partition, segment, ok := strings.Cut(target, "/")
		if !ok || !partitionDirRE.MatchString(partition) || !segmentIndexRE.MatchString(segment) {
			return fmt.Errorf("%s target %q is not <topic>-<n>/<20-digit offset>.index", action, target)
		}
	default:
		return fmt.Errorf("unknown repair action %q", action)
	}
	return nil
}

// validateBackupName checks a backup folder name (see BackupName).
func validateBackupName(name string) error {
	if len(name) > maxBackupName || !backupNameRE.MatchString(name) {
		return fmt.Errorf("backup name %q is not %s<yyyymmddThhmmssZ>[-<lowercase id>] of at most %d bytes",
			name, backupPrefix, maxBackupName)
	}
	return nil
}

// hasDotComponent reports whether p has a "." or ".." component.
func hasDotComponent(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == "." || c == ".." {
			return true
		}
	}
	return false
}

// Env returns the validated environment of the script, in a fixed order.
func (in ScriptInput) Env() ([]corev1.EnvVar, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	mode, check := ModeApply, "require"
	if in.CheckOnly {
		mode = ModeCheck
	}
	if in.SkipNodeIDCheck {
		check = "skip"
	}
	return []corev1.EnvVar{
		{Name: EnvAction, Value: in.Action},
		{Name: EnvTarget, Value: in.Target},
		{Name: EnvNodeID, Value: in.NodeID},
		{Name: EnvNodeIDCheck, Value: check},
		{Name: EnvClusterID, Value: in.ClusterID},
		{Name: EnvMountRoot, Value: in.MountRoot},
		{Name: EnvBackupName, Value: in.BackupName},
		{Name: EnvMode, Value: mode},
		{Name: EnvGoWant, Value: in.GoSignal},
		{Name: EnvGoWait, Value: goWait(in.GoWait)},
	}, nil
}

// goWait is KB_GO_WAIT: whole seconds, "" when unset.
func goWait(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return strconv.Itoa(int(d / time.Second))
}

// BackupName returns the backup folder name for an approval at time t:
// "kafkabot-backup-<UTC yyyymmddThhmmssZ>-<id>", where id is the approval id
// lower-cased with every run of characters outside [a-z0-9] turned into one
// "-" and cut to keep the name within bounds. Call it once per repair and
// keep the result (e.g. in the repair's Lease): a re-run must reuse the same
// name for the script to recognise its own earlier move.
func BackupName(approvalID string, t time.Time) string {
	name := backupPrefix + t.UTC().Format(backupTimeLayout)
	var id strings.Builder
	dash := false
	for _, r := range strings.ToLower(approvalID) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && id.Len() > 0 {
				id.WriteByte('-')
			}
			id.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	suffix := id.String()
	if room := maxBackupName - len(name) - 1; len(suffix) > room {
		suffix = strings.TrimRight(suffix[:room], "-")
	}
	if suffix != "" {
		name += "-" + suffix
	}
	return name
}

// ResultPrefix starts the script's one machine-readable line.
const ResultPrefix = "KAFKABOT_RESULT"

// Script result statuses.
const (
	StatusMoved        = "moved"
	StatusAlreadyMoved = "already-moved"
	StatusCheckOK      = "check-ok"
	StatusRefused      = "refused"
	StatusError        = "error"
)

// Reasons the script gives with status refused (and "unexpected-error" with
// status error).
const (
	ReasonInvalidInput          = "invalid-input"
	ReasonNoVolume              = "no-volume"
	ReasonNoLogDir              = "no-log-dir"
	ReasonNotFound              = "not-found"
	ReasonAmbiguous             = "ambiguous"
	ReasonNodeIDMissing         = "node-id-missing"
	ReasonNodeIDMismatch        = "node-id-mismatch"
	ReasonLogDirIsVolumeRoot    = "logdir-is-volume-root"
	ReasonTargetIsSymlink       = "target-is-symlink"
	ReasonTargetEscapes         = "target-escapes-logdir"
	ReasonWrongType             = "wrong-type"
	ReasonDestinationExists     = "destination-exists"
	ReasonCrossFilesystem       = "cross-filesystem"
	ReasonNotWritable           = "not-writable"
	ReasonNoSpace               = "no-space"
	ReasonClusterIDMissing      = "cluster-id-missing"
	ReasonClusterIDMismatch     = "cluster-id-mismatch"
	ReasonNodeIsVoter           = "node-is-voter"
	ReasonRoleUnknown           = "role-unknown"
	ReasonQuorumStateUnreadable = "quorum-state-unreadable"
	ReasonCannotMeasure         = "cannot-measure"
	ReasonKafkaRunning          = "kafka-running"
	ReasonDestIsSymlink         = "destination-is-symlink"
	ReasonNoGoSignal            = "no-go-signal"
	ReasonUnexpectedError       = "unexpected-error"
)

// reasonText explains each reason to a person.
var reasonText = map[string]string{
	ReasonInvalidInput:          "the script rejected its input (the bot's validation and the script's disagree: a bug)",
	ReasonNoVolume:              "no claim was mounted in the debug pod",
	ReasonNoLogDir:              "no Kafka log dir (a directory with meta.properties) was found on the volume",
	ReasonNotFound:              "the target is in no log dir and not in the backup",
	ReasonAmbiguous:             "the target is in more than one log dir; the bot does not guess",
	ReasonNodeIDMissing:         "meta.properties has no node.id or broker.id",
	ReasonNodeIDMismatch:        "meta.properties belongs to another node: wrong volume",
	ReasonLogDirIsVolumeRoot:    "the log dir is the volume root, so there is no place on the volume outside it for a backup",
	ReasonTargetIsSymlink:       "the target is a symbolic link",
	ReasonTargetEscapes:         "the target resolves outside its log dir",
	ReasonWrongType:             "the target is not the kind of file the action expects",
	ReasonDestinationExists:     "the backup destination already exists; nothing is overwritten",
	ReasonCrossFilesystem:       "source and backup are on different filesystems, so the move would be a copy",
	ReasonNotWritable:           "the debug pod cannot write the log dir or the volume root (fsGroup?)",
	ReasonNoSpace:               "the volume has no room for the broker to rebuild what is moved",
	ReasonClusterIDMissing:      "a meta.properties on the volume has no cluster.id",
	ReasonClusterIDMismatch:     "meta.properties belongs to another cluster (or the log dirs disagree): wrong volume",
	ReasonNodeIsVoter:           "what Kafka wrote on the volume (quorum-state, or a Voters record of the metadata log) lists the node as a controller-quorum voter: it is a controller, not a broker-only node",
	ReasonRoleUnknown:           "nothing Kafka wrote on the volume tells whether the node is a controller (no quorum-state listing the voters, no Voters record matching its directory id)",
	ReasonQuorumStateUnreadable: "the node's quorum-state cannot be read, so its role is unknown",
	ReasonCannotMeasure:         "the size of what would move could not be measured (find failed), so the free-space check cannot be trusted",
	ReasonKafkaRunning:          "Kafka holds its lock on the log dir (or is writing it) right before the move: it is running; nothing was moved",
	ReasonDestIsSymlink:         "a symbolic link inside the backup folder would redirect the move; nothing was moved",
	ReasonNoGoSignal:            "the bot gave no go signal in time (it never saw Kafka stopped); nothing was moved",
	ReasonUnexpectedError:       "a command in the script failed unexpectedly",
}

// ScriptResult is the parsed result line of one script run.
type ScriptResult struct {
	// Status is one of the Status* constants.
	Status string
	Action string
	// Source and Destination are paths as seen inside the debug pod.
	Source      string
	Destination string
	// Reason is one of the Reason* constants when Status is refused or error.
	Reason string
	// Bytes and Files measure what was (or would be) moved.
	Bytes int64
	Files int
}

// OK reports whether the run succeeded: moved, already moved, or checked.
func (r ScriptResult) OK() bool {
	return r.Status == StatusMoved || r.Status == StatusAlreadyMoved || r.Status == StatusCheckOK
}

// Explain returns a one-line human explanation of a refusal or error, or ""
// for a successful run.
func (r ScriptResult) Explain() string {
	if r.OK() {
		return ""
	}
	if text, ok := reasonText[r.Reason]; ok {
		return text
	}
	return "the script refused for an unknown reason " + strconv.Quote(r.Reason)
}

// ParseScriptResult finds the script's result line in its log and parses it.
// The log must hold exactly one such line, with version 1, a known status,
// a known action, and a reason when the status is refused or error.
func ParseScriptResult(log string) (ScriptResult, error) {
	var line string
	count := 0
	for l := range strings.Lines(log) {
		l = strings.TrimRight(l, "\r\n")
		if strings.HasPrefix(l, ResultPrefix+" ") {
			line = l
			count++
		}
	}
	switch count {
	case 0:
		return ScriptResult{}, errors.New("the repair script printed no " + ResultPrefix + " line")
	case 1:
	default:
		return ScriptResult{}, fmt.Errorf("the repair script printed %d %s lines, expected one", count, ResultPrefix)
	}
	fields := map[string]string{}
	for _, f := range strings.Fields(strings.TrimPrefix(line, ResultPrefix)) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return ScriptResult{}, fmt.Errorf("garbled result field %q", f)
		}
		dec, err := url.PathUnescape(v)
		if err != nil {
			return ScriptResult{}, fmt.Errorf("garbled result field %q: %w", k, err)
		}
		if _, dup := fields[k]; dup {
			return ScriptResult{}, fmt.Errorf("result field %q appears twice", k)
		}
		fields[k] = dec
	}
	if fields["v"] != "1" {
		return ScriptResult{}, fmt.Errorf("result line version %q, expected 1", fields["v"])
	}
	r := ScriptResult{
		Status:      fields["status"],
		Action:      fields["action"],
		Source:      fields["source"],
		Destination: fields["destination"],
		Reason:      fields["reason"],
	}
	switch r.Status {
	case StatusMoved, StatusAlreadyMoved, StatusCheckOK:
		if !knownActions[r.Action] {
			return ScriptResult{}, fmt.Errorf("result has unknown action %q", r.Action)
		}
		if r.Source == "" || r.Destination == "" {
			return ScriptResult{}, fmt.Errorf("result %s without source or destination", r.Status)
		}
	case StatusRefused, StatusError:
		if r.Reason == "" {
			return ScriptResult{}, fmt.Errorf("result %s without a reason", r.Status)
		}
	default:
		return ScriptResult{}, fmt.Errorf("result has unknown status %q", r.Status)
	}
	var err error
	if r.Bytes, err = strconv.ParseInt(fields["bytes"], 10, 64); err != nil || r.Bytes < 0 {
		return ScriptResult{}, fmt.Errorf("result bytes %q is not a size", fields["bytes"])
	}
	if r.Files, err = strconv.Atoi(fields["files"]); err != nil || r.Files < 0 {
		return ScriptResult{}, fmt.Errorf("result files %q is not a count", fields["files"])
	}
	return r, nil
}
