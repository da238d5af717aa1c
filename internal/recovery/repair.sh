# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The kafkabot Authors
# kafkabot repair script, run by the debug pod as: sh -c "<this file>".
#
# It moves ONE thing out of a Kafka log dir into a dated backup folder at the
# root of the same volume, with a single rename(2), after checking that it is
# on the right volume of the right node. It never deletes anything.
#
# Why the backup leaves the log dir: Kafka parses every directory inside a log
# dir as a topic partition. "__cluster_metadata-0-bak" there makes the broker
# die at startup ("is not in the form of topic-partition"), and names that do
# parse (e.g. "...-bak-20250428") are loaded as a partition and, since 3.7.1,
# deleted as a stray log. The volume root is outside every log dir on the
# Bitnami (<root>/data) and Strimzi (<root>/kafka-log<id>) layouts.
#
# Shell: POSIX sh (busybox ash, dash, bash). Tools: find, stat, readlink,
# mkdir, mv, date, tr, od, awk, sleep (busybox applets or
# coreutils/findutils/mawk/gawk); python3 or python, or else java and
# base64, when the image has them (Kafka's lock, see kafka_running).
#
# Inputs, environment only, validated by the bot and re-checked below:
#   KB_ACTION         move-metadata-log | move-foreign-dir | move-checkpoint-file | move-index-files
#   KB_TARGET         path relative to the log dir (allowlisted per action)
#   KB_NODE_ID        expected node.id (KRaft) or broker.id (ZooKeeper mode)
#   KB_NODE_ID_CHECK  require (default) | skip: only when the bot allowed an unknown id
#   KB_CLUSTER_ID     expected cluster.id of meta.properties ('' = only check that
#                     every log dir on the volume holds the same, non-empty one)
#   KB_MOUNT_ROOT     each claim is mounted at $KB_MOUNT_ROOT/<n>
#   KB_BACKUP_NAME    kafkabot-backup-<yyyymmddThhmmssZ>[-<id>]
#   KB_MODE           apply | check (check: every check, no change)
#   KB_GO_WANT        apply mode: the repair id the bot writes in its go signal
#   KB_GO_WAIT        apply mode: seconds to wait for a valid go (1-3600)
#
# The go signal (an interlock: Kafka must be stopped at the moment of the
# move). After every check passes, and before anything changes, the script
# waits until $KB_MOUNT_ROOT/kafkabot-go/go holds "KB_GO_WANT.<deadline>".
# That file is a downwardAPI projection of the pod's own kafkabot/go
# annotation, which the bot sets only after re-reading the broker and seeing
# its Kafka container stopped (same pod UID), with the deadline (unix
# seconds) before which the kubelet cannot restart it. The kubelet may
# refresh the file late: the script moves only while now <= deadline, else
# it waits for a newer go. No valid signal in time: refused, nothing moved.
#
# Output: human lines starting "kafkabot: ", then exactly one line
#   KAFKABOT_RESULT v=1 status=S action=A reason=R source=P destination=P bytes=N files=N
# Values are percent-encoded: every byte except A-Z a-z 0-9 . _ ~ / - becomes
# %XX, so a value never contains a space, "=" or a newline.
# status: moved | already-moved | check-ok (exit 0), refused (exit 2, reason
# says which check failed), error (exit 1, something unexpected failed).

set -eu
set -f # no pathname expansion: paths from the volume are data, not patterns
export LC_ALL=C
umask 027

NL='
'
CR=$(printf '\r')
# Free space the volume must keep besides what the broker rebuilds (KiB).
MARGIN_KIB=1024

ACTION='' SRC='' DEST='' BYTES=0 FILES=0 RESULT_PRINTED=''

say() { printf 'kafkabot: %s\n' "$*"; }

# pct VALUE: VALUE percent-encoded for the result line.
pct() {
	pct_s=$1 pct_out=''
	while [ -n "$pct_s" ]; do
		pct_rest=${pct_s#?}
		pct_c=${pct_s%"$pct_rest"}
		pct_s=$pct_rest
		case $pct_c in
		[A-Za-z0-9._~/-]) pct_out=$pct_out$pct_c ;;
		*) pct_out=$pct_out$(printf '%%%02X' "'$pct_c") ;;
		esac
	done
	printf '%s' "$pct_out"
}

# result STATUS REASON: prints the one machine-readable line.
result() {
	RESULT_PRINTED=1
	printf 'KAFKABOT_RESULT v=1 status=%s action=%s reason=%s source=%s destination=%s bytes=%s files=%s\n' \
		"$1" "$(pct "$ACTION")" "$2" "$(pct "$SRC")" "$(pct "$DEST")" "$BYTES" "$FILES"
}

# refuse REASON MESSAGE: a check failed; nothing was changed by this step.
refuse() {
	refuse_reason=$1
	shift
	say "REFUSED ($refuse_reason): $*"
	result refused "$refuse_reason"
	exit 2
}

# Anything that fails under set -e ends here: report it as an error (exit 1),
# never as a refusal, so exit status 2 always means "a check said no".
on_exit() {
	on_exit_rc=$?
	if [ -z "$RESULT_PRINTED" ]; then
		say "unexpected error (status $on_exit_rc); see the lines above"
		result error unexpected-error
		exit 1
	fi
}
trap on_exit EXIT

# is_name S: S is one path component from the allowlisted charset.
is_name() {
	case $1 in
	'' | . | .. | *[!A-Za-z0-9._+@-]*) return 1 ;;
	esac
	[ ${#1} -le 255 ]
}

# is_digits S: S is 1-10 decimal digits.
is_digits() {
	case $1 in
	'' | *[!0-9]*) return 1 ;;
	esac
	[ ${#1} -le 10 ]
}

# is_partition S: S is named like a Kafka log: <topic>-<n>, or the
# "<topic>-<n>.<id>-delete" / "-future" forms Kafka creates itself.
is_partition() {
	case $1 in
	*-delete | *-future | __cluster_metadata*) return 0 ;;
	*-*) is_digits "${1##*-}" ;;
	*) return 1 ;;
	esac
}

# is_segment_index S: <20 digits>.index|.timeindex|.txnindex
is_segment_index() {
	case ${1##*.} in
	index | timeindex | txnindex) ;;
	*) return 1 ;;
	esac
	isi_base=${1%.*}
	case $isi_base in
	*[!0-9]*) return 1 ;;
	esac
	[ ${#isi_base} -eq 20 ]
}

# --- inputs: every KB_ variable is read here, and only here ---------------
MODE=${KB_MODE:-}
TARGET=${KB_TARGET:-}
NODE_ID=${KB_NODE_ID:-}
NODE_ID_CHECK=${KB_NODE_ID_CHECK:-require}
CLUSTER_ID=${KB_CLUSTER_ID:-}
MOUNT_ROOT=${KB_MOUNT_ROOT:-}
BACKUP=${KB_BACKUP_NAME:-}
GO_WANT=${KB_GO_WANT:-}
GO_WAIT=${KB_GO_WAIT:-}

case ${KB_ACTION:-} in
move-metadata-log | move-foreign-dir | move-checkpoint-file | move-index-files) ACTION=$KB_ACTION ;;
*) refuse invalid-input "KB_ACTION is not a known action" ;;
esac
# --- end of inputs ----------------------------------------------------------

case $MODE in
apply | check) ;;
*) refuse invalid-input "KB_MODE must be apply or check" ;;
esac

case $ACTION in
move-metadata-log)
	[ "$TARGET" = __cluster_metadata-0 ] || refuse invalid-input "move-metadata-log only moves __cluster_metadata-0"
	;;
move-foreign-dir)
	is_name "$TARGET" || refuse invalid-input "the target must be one directory name"
	# Never let "foreign dir" become a way to move a partition or Kafka's own dirs.
	if is_partition "$TARGET" || [ "$TARGET" = remote-log-index-cache ]; then
		refuse invalid-input "the target is named like Kafka data, not a foreign directory"
	fi
	;;
move-checkpoint-file)
	case $TARGET in
	recovery-point-offset-checkpoint | replication-offset-checkpoint | log-start-offset-checkpoint | cleaner-offset-checkpoint) ;;
	*) refuse invalid-input "the target is not one of the four log-dir checkpoint files" ;;
	esac
	;;
move-index-files)
	case $TARGET in
	*/*/* | /* | */) refuse invalid-input "the target must be <partition-dir>/<segment>.index" ;;
	*/*) ;;
	*) refuse invalid-input "the target must be <partition-dir>/<segment>.index" ;;
	esac
	if ! is_name "${TARGET%/*}" || ! is_partition "${TARGET%/*}" || ! is_segment_index "${TARGET##*/}"; then
		refuse invalid-input "the target must be <partition-dir>/<20-digit offset>.index|.timeindex|.txnindex"
	fi
	;;
esac

case $MOUNT_ROOT in
/ | *//* | */./* | */../* | */. | */.. | */ | *[!A-Za-z0-9._/-]*) refuse invalid-input "KB_MOUNT_ROOT is not a clean absolute path" ;;
/*) ;;
*) refuse invalid-input "KB_MOUNT_ROOT is not a clean absolute path" ;;
esac

case $BACKUP in
kafkabot-backup-*) is_name "$BACKUP" || refuse invalid-input "KB_BACKUP_NAME has characters outside the allowlist" ;;
*) refuse invalid-input "KB_BACKUP_NAME must start with kafkabot-backup-" ;;
esac
case $BACKUP in
*[!A-Za-z0-9-]*) refuse invalid-input "KB_BACKUP_NAME has characters outside the allowlist" ;;
esac

case $NODE_ID_CHECK in
require) is_digits "$NODE_ID" || refuse invalid-input "KB_NODE_ID must be a number" ;;
skip) [ -z "$NODE_ID" ] || refuse invalid-input "KB_NODE_ID_CHECK=skip needs an empty KB_NODE_ID" ;;
*) refuse invalid-input "KB_NODE_ID_CHECK must be require or skip" ;;
esac

if [ "$MODE" = apply ]; then
	case $GO_WANT in
	'' | *[!A-Za-z0-9._-]*) refuse invalid-input "KB_GO_WANT must be the repair id (letters, digits, . _ -)" ;;
	esac
	[ ${#GO_WANT} -le 63 ] || refuse invalid-input "KB_GO_WANT is too long"
	is_digits "$GO_WAIT" && [ "$GO_WAIT" -ge 1 ] && [ "$GO_WAIT" -le 3600 ] || refuse invalid-input "KB_GO_WAIT must be 1-3600 seconds"
fi
GO_FILE=$MOUNT_ROOT/kafkabot-go/go

case $CLUSTER_ID in
*[!A-Za-z0-9_-]*) refuse invalid-input "KB_CLUSTER_ID has characters outside the allowlist" ;;
esac
[ ${#CLUSTER_ID} -le 64 ] || refuse invalid-input "KB_CLUSTER_ID is too long"

[ -d "$MOUNT_ROOT" ] || refuse no-volume "$MOUNT_ROOT does not exist: are the claims mounted?"

# node_id FILE: prints node.id (KRaft) or, without one, broker.id (ZooKeeper mode).
node_id() {
	nid_node='' nid_broker=''
	while IFS= read -r nid_line || [ -n "$nid_line" ]; do
		nid_line=${nid_line%"$CR"}
		case $nid_line in
		node.id=*) nid_node=${nid_line#node.id=} ;;
		broker.id=*) nid_broker=${nid_line#broker.id=} ;;
		esac
	done <"$1"
	printf '%s' "${nid_node:-$nid_broker}"
}

# cluster_id FILE: prints the cluster.id of a meta.properties.
cluster_id() {
	cid=''
	while IFS= read -r cid_line || [ -n "$cid_line" ]; do
		cid_line=${cid_line%"$CR"}
		case $cid_line in
		cluster.id=*) cid=${cid_line#cluster.id=} ;;
		esac
	done <"$1"
	printf '%s' "$cid"
}

# prop FILE KEY: prints KEY's value in a Java properties FILE (meta.properties).
prop() {
	prop_v=''
	while IFS= read -r prop_line || [ -n "$prop_line" ]; do
		prop_line=${prop_line%"$CR"}
		case $prop_line in
		"$2"=*) prop_v=${prop_line#"$2"=} ;;
		esac
	done <"$1"
	printf '%s' "$prop_v"
}

# qs_voter FILE ID: what a KRaft quorum-state FILE says about node ID.
# Prints "voter" or "not-voter" when it lists the voters (data_version 0 of
# a static quorum: currentVoters), "" when it does not (data_version 1 of a
# dynamic quorum, kraft.version=1, has no currentVoters; an observer's may be
# empty): the voter set is then in the metadata log's control records.
# Fails when FILE cannot be read. White space in the JSON is ignored.
qs_voter() {
	qv_json=$(tr -d ' \t\r\n' <"$1") || return 1
	case $qv_json in
	*'"currentVoters":[{'*) ;;
	*) return 0 ;;
	esac
	qv_voters=${qv_json#*'"currentVoters":['}
	qv_voters=${qv_voters%%]*}
	case $qv_voters in
	*'"voterId":'"$2"[!0-9]* | *'"voterId":'"$2") printf voter ;;
	*) printf not-voter ;;
	esac
}

# hex_id ID DIRID: the bytes a KRaft Voters record holds for a voter, as
# " xx" hex pairs: node ID as a 4-byte big-endian int, then the 16 bytes of
# its directory id (DIRID, meta.properties' directory.id: base64url, no
# padding). Prints nothing for a directory id that is not 16 bytes.
hex_id() {
	printf ' %02x %02x %02x %02x' $(($1 / 16777216 % 256)) $(($1 / 65536 % 256)) $(($1 / 256 % 256)) $(($1 % 256))
	printf '%s\n' "$2" | awk '{
		a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		bits = 0; n = 0; out = ""; count = 0
		if (length($0) != 22) exit
		for (i = 1; i <= 22; i++) {
			v = index(a, substr($0, i, 1)) - 1
			if (v < 0) exit
			bits = bits * 64 + v; n += 6
			if (n >= 8) {
				n -= 8; d = 1
				for (k = 0; k < n; k++) d *= 2
				b = int(bits / d); bits -= b * d
				out = out sprintf(" %02x", b); count++
			}
		}
		if (count == 16) printf "%s", out
	}'
}

# log_voters FILE WANT SNAPSHOT: scans the record batches of FILE (a segment
# or snapshot of __cluster_metadata-0, as Kafka writes them: an 8-byte base
# offset, a 4-byte length, ..., 2 attribute bytes at offset 21) and reads
# only control batches (attribute bit 0x20), where KRaft keeps its
# KRaftVersion and Voters records. Prints "voter" when a Voters record
# (control key type 6) holds WANT (hex_id of this node), "set" when Voters
# records exist without it, "" when there is none. SNAPSHOT 1 stops at the
# first data batch (a snapshot starts with its control records).
log_voters() {
	od -An -v -tx1 -w256 "$1" | awk -v want="$2" -v snap="$3" -v width=256 '
	# Lines hold 256 bytes each. mode hdr: reading the 23 header bytes of
	# the batch at bs; ctl: collecting a control batch; skip: a data batch,
	# jumping to the line that holds the next batch start ns (no per-byte
	# work on data, which is nearly all of a metadata log).
	BEGIN {
		for (x = 0; x < 256; x++) hv[sprintf("%02x", x)] = x
		bs = 0; ns = 0; mode = "hdr"; got = 0; buf = ""; found = ""
	}
	function header() {
		total = 12 + hv[h[8]] * 16777216 + hv[h[9]] * 65536 + hv[h[10]] * 256 + hv[h[11]]
		ns = bs + total
		return int(hv[h[22]] / 32) % 2
	}
	{
		base = (NR - 1) * width
		i = 1
		while (i <= NF) {
			if (mode == "skip") {
				if (ns >= base + NF) next
				i = ns - base + 1; bs = ns; mode = "hdr"; got = 0; buf = ""
				continue
			}
			if (mode == "hdr") {
				if (got == 0 && i + 22 <= NF) {
					h[8] = $(i + 8); h[9] = $(i + 9); h[10] = $(i + 10); h[11] = $(i + 11); h[22] = $(i + 22)
					if (int(hv[h[22]] / 32) % 2 == 1) for (j = 0; j < 23; j++) hb[j] = $(i + j)
					got = 23; i += 23
				} else {
					h[got] = $i; hb[got] = $i; got++; i++
				}
				if (got < 23) continue
				if (header() == 0) {
					if (total < 23 || snap) exit
					mode = "skip"
					continue
				}
				if (total < 23) exit
				for (j = 0; j < 23; j++) buf = buf " " hb[j]
				mode = "ctl"
			} else {
				buf = buf " " $i; got++; i++
			}
			if (got == total) {
				if (index(buf, " 08 00 00 00 06 ") > 0) {
					if (want != "" && index(buf, want) > 0) found = "voter"
					else if (found == "") found = "set"
				}
				bs = ns; mode = "hdr"; got = 0; buf = ""
			}
		}
	}
	END { printf "%s", found }'
}

# measure PATH: sets BYTES and FILES to the apparent size and number of the
# regular files at or under PATH.
measure() {
	BYTES=0 FILES=0
	# A find error (an unreadable directory) would under-count what the
	# broker must rebuild: refuse rather than pass the free-space check.
	measure_sizes=$(find "$1" -type f -exec stat -c %s {} +) ||
		refuse cannot-measure "could not list every file under $1 (find failed): its size, and so the room the broker needs, is unknown"
	for measure_size in $measure_sizes; do
		BYTES=$((BYTES + measure_size))
		FILES=$((FILES + 1))
	done
}

# backup_path ROOT LOGDIR [ENTRY]: where ENTRY (default TARGET) of LOGDIR
# goes: the backup folder at the volume root, then the entry's path relative
# to the volume root, so the undo is "mv <root>/<backup>/<rel> <root>/<rel>".
backup_path() {
	bp_rel=${2#"$1"}
	printf '%s' "$1/$BACKUP$bp_rel/${3:-$TARGET}"
}

# Find the log dirs: directories holding meta.properties, at most two levels
# below each claim root (Bitnami <root>/data, Strimzi <root>/kafka-log<id>,
# Strimzi JBOD one claim per data-<n>, plain: the root itself). Our backups
# and lost+found (root-only, unreadable) are not walked.
CLAIMS=$(find "$MOUNT_ROOT" -mindepth 1 -maxdepth 1 -type d -name '[0-9]*')
[ -n "$CLAIMS" ] || refuse no-volume "no claim is mounted under $MOUNT_ROOT"

# HOLDERS: log dirs that hold the target; MOVED: log dirs whose target is
# already in our backup. One per line.
LOGDIRS=0 HOLDERS='' MOVED='' ALLDIRS=''
IFS=$NL
for root in $CLAIMS; do
	dirs=$(find "$root" -maxdepth 3 \( -name 'kafkabot-backup-*' -o -name lost+found \) -prune \
		-o -type f -name meta.properties -print) || say "warning: could not read all of $root"
	for meta in $dirs; do
		[ -f "$meta" ] || continue
		dir=${meta%/meta.properties}
		LOGDIRS=$((LOGDIRS + 1))
		ALLDIRS=$ALLDIRS$dir$NL
		say "log dir: $dir (node id $(node_id "$meta"), cluster id $(cluster_id "$meta"))"
		if [ -e "$dir/$TARGET" ] || [ -L "$dir/$TARGET" ]; then
			HOLDERS=$HOLDERS$dir$NL
		elif [ -e "$(backup_path "$root" "$dir")" ]; then
			MOVED=$MOVED$dir$NL
		fi
	done
done
unset IFS

[ "$LOGDIRS" -gt 0 ] || refuse no-log-dir "no meta.properties within two levels of any claim under $MOUNT_ROOT: is the volume formatted by Kafka?"

# count_lines LIST: the number of lines in LIST.
count_lines() {
	cl_n=0
	IFS=$NL
	for cl_x in $1; do cl_n=$((cl_n + 1)); done
	unset IFS
	echo "$cl_n"
}

holders=$(count_lines "$HOLDERS")
moved=$(count_lines "$MOVED")
if [ "$holders" -gt 1 ]; then
	refuse ambiguous "$TARGET is in $holders log dirs; refusing to guess:$NL$HOLDERS"
elif [ "$holders" -eq 1 ]; then
	LOGDIR=${HOLDERS%"$NL"}
elif [ "$moved" -gt 1 ]; then
	refuse ambiguous "$TARGET was moved from $moved log dirs:$NL$MOVED"
elif [ "$moved" -eq 1 ]; then
	LOGDIR=${MOVED%"$NL"}
else
	refuse not-found "$TARGET is in none of the $LOGDIRS log dir(s) and not in backup $BACKUP"
fi
# The claim root (volume root) is the first component under the mount root.
claim=${LOGDIR#"$MOUNT_ROOT"/}
ROOT=$MOUNT_ROOT/${claim%%/*}
SRC=$LOGDIR/$TARGET
DEST=$(backup_path "$ROOT" "$LOGDIR")
SRC_PARENT=${SRC%/*}
DEST_PARENT=${DEST%/*}

# The disk must belong to the node we were asked to repair.
if [ "$NODE_ID_CHECK" = require ]; then
	found_id=$(node_id "$LOGDIR/meta.properties") || refuse node-id-missing "cannot read $LOGDIR/meta.properties"
	[ -n "$found_id" ] || refuse node-id-missing "$LOGDIR/meta.properties has no node.id or broker.id"
	[ "$found_id" = "$NODE_ID" ] || refuse node-id-mismatch "$LOGDIR/meta.properties says node $found_id, expected $NODE_ID: wrong volume"
else
	say "node id check skipped (the bot did not know the node id)"
	found_id=$(node_id "$LOGDIR/meta.properties") || found_id=''
fi

# The disk must belong to the cluster: every log dir of this node holds the
# same cluster.id (Kafka refuses to start otherwise), and it is the expected
# one when the bot knows it.
first_cid=''
IFS=$NL
for dir in $ALLDIRS; do
	cid=$(cluster_id "$dir/meta.properties") || refuse cluster-id-missing "cannot read $dir/meta.properties"
	[ -n "$cid" ] || refuse cluster-id-missing "$dir/meta.properties has no cluster.id"
	[ -n "$first_cid" ] || first_cid=$cid
	[ "$cid" = "$first_cid" ] || refuse cluster-id-mismatch "$dir/meta.properties says cluster $cid, another log dir says $first_cid: volumes of two clusters"
	if [ -n "$CLUSTER_ID" ] && [ "$cid" != "$CLUSTER_ID" ]; then
		refuse cluster-id-mismatch "$dir/meta.properties says cluster $cid, expected $CLUSTER_ID: wrong cluster"
	fi
done
unset IFS
if [ -n "$CLUSTER_ID" ]; then
	say "cluster id $first_cid is the expected one"
else
	say "cluster id $first_cid is the same in all $LOGDIRS log dir(s) (the bot did not know the expected id)"
fi

# A segment's offset index goes with its time index (Kafka rebuilds both
# from the .log): moving one leaves the other, which Kafka may then trust.
COMP='' COMP_SRC='' COMP_DEST=''
if [ "$ACTION" = move-index-files ]; then
	case $TARGET in
	*.index) COMP=${TARGET%.index}.timeindex ;;
	*.timeindex) COMP=${TARGET%.timeindex}.index ;;
	esac
fi
if [ -n "$COMP" ] && { [ -e "$LOGDIR/$COMP" ] || [ -L "$LOGDIR/$COMP" ]; }; then
	COMP_SRC=$LOGDIR/$COMP
	COMP_DEST=$(backup_path "$ROOT" "$LOGDIR" "$COMP")
fi

# Idempotent re-run: the target is gone and our backup holds it. A run that
# stopped between the index and its time index left the second one: move it
# now, with every check below.
if [ -z "$HOLDERS" ] && [ -n "$COMP_SRC" ]; then
	say "$TARGET is already in the backup; its companion $COMP is not: moving it"
	SRC=$COMP_SRC DEST=$COMP_DEST TARGET=$COMP COMP='' COMP_SRC='' COMP_DEST=''
	SRC_PARENT=${SRC%/*}
	DEST_PARENT=${DEST%/*}
elif [ -z "$HOLDERS" ]; then
	measure "$DEST"
	if [ -n "$COMP" ] && [ -f "$(backup_path "$ROOT" "$LOGDIR" "$COMP")" ]; then
		comp_bytes=$(stat -c %s "$(backup_path "$ROOT" "$LOGDIR" "$COMP")")
		BYTES=$((BYTES + comp_bytes)) FILES=$((FILES + 1))
	fi
	say "$TARGET is already in the backup: $DEST"
	result already-moved ''
	exit 0
fi

# The volume root must be outside every log dir, or the backup would be one
# more "partition" in it. (A log dir that IS the volume root, as with
# log.dirs=/var/lib/kafka/data on the mount itself, leaves no such place.)
if [ "$LOGDIR" = "$ROOT" ] || [ -e "$ROOT/meta.properties" ]; then
	refuse logdir-is-volume-root "the log dir is the volume root $ROOT: any backup folder on this volume would be inside it; a person must clear it by hand, or point log.dirs at a sub-directory"
fi

# check_entry SRC DEST ENTRY: the checks every moved entry passes. No
# symlinks: a rename would move the link, not the data, and a link could
# point outside the log dir (or outside the volume). Never overwrite or merge
# into an earlier backup.
check_entry() {
	ce_parent=${1%/*}
	if [ -L "$1" ] || [ -L "$ce_parent" ]; then
		refuse target-is-symlink "$1 is a symbolic link (or inside one)"
	fi
	ce_real=$(readlink -f "$1")
	[ "$ce_real" = "$real_logdir/$3" ] || refuse target-escapes-logdir "$1 resolves to $ce_real, outside $real_logdir"
	case $ACTION in
	move-metadata-log | move-foreign-dir) [ -d "$1" ] || refuse wrong-type "$1 is not a directory" ;;
	*) [ -f "$1" ] || refuse wrong-type "$1 is not a regular file" ;;
	esac
	if [ -e "$2" ] || [ -L "$2" ]; then
		refuse destination-exists "$2 already exists"
	fi
}

real_logdir=$(readlink -f "$LOGDIR")
real_root=$(readlink -f "$ROOT")
case $real_logdir in
"$real_root"/*) ;;
*) refuse target-escapes-logdir "$LOGDIR resolves to $real_logdir, outside the volume $ROOT" ;;
esac
if [ -L "$ROOT/$BACKUP" ] || { [ -e "$ROOT/$BACKUP" ] && [ ! -d "$ROOT/$BACKUP" ]; }; then
	refuse destination-exists "$ROOT/$BACKUP exists and is not a plain directory"
fi
check_entry "$SRC" "$DEST" "$TARGET"
[ -z "$COMP_SRC" ] || check_entry "$COMP_SRC" "$COMP_DEST" "$COMP"

# no_links_below BASE PATH: no existing component of PATH from BASE down is
# a symbolic link. A link planted inside an earlier backup folder would
# otherwise redirect mkdir -p and the rename to wherever it points.
no_links_below() {
	nl_path=$1
	nl_rest=${2#"$1"}
	while :; do
		if [ -L "$nl_path" ]; then
			refuse destination-is-symlink "$nl_path (on the way to the backup destination) is a symbolic link"
		fi
		nl_rest=${nl_rest#/}
		[ -n "$nl_rest" ] || break
		nl_path=$nl_path/${nl_rest%%/*}
		case $nl_rest in
		*/*) nl_rest=/${nl_rest#*/} ;;
		*) nl_rest='' ;;
		esac
	done
}
no_links_below "$ROOT/$BACKUP" "$DEST_PARENT"

# Defence in depth: the node's role, from what Kafka itself wrote on this
# volume, whatever the pod's labels said. A controller's metadata log is part
# of the quorum's memory; the bot never moves anything on a node that is, or
# was, a voter, nor on a node whose role it cannot read:
# - ZooKeeper mode (meta.properties version=0): no KRaft quorum on the node;
# - a static quorum (kraft.version=0): quorum-state v0 lists currentVoters;
# - a dynamic quorum (kraft.version=1, Kafka 3.9+): quorum-state v1 has no
#   voters; they are in the Voters control records of the metadata log's
#   segments and snapshots (the bootstrap checkpoint
#   00000000000000000000-0000000000.checkpoint of --standalone or
#   --initial-controllers among them), each voter with its directory.id.
# A quorum-state that cannot be read refuses.
ROLE_KNOWN='' ROLE_VOTER=''
IFS=$NL
for dir in $ALLDIRS; do
	[ "$(prop "$dir/meta.properties" version)" != 0 ] || { ROLE_KNOWN="ZooKeeper mode ($dir/meta.properties version=0)"; continue; }
	[ -n "$found_id" ] || continue
	want=$(hex_id "$found_id" "$(prop "$dir/meta.properties" directory.id)") || want=''
	[ ${#want} -eq 60 ] || want='' # no 16-byte directory.id (Kafka before 3.7): no dynamic voter can be matched
	for md in "$dir/__cluster_metadata-0" "$(backup_path "$ROOT" "$dir" __cluster_metadata-0)"; do
		[ -d "$md" ] || continue
		qs=$md/quorum-state
		if [ -e "$qs" ] || [ -L "$qs" ]; then
			[ -f "$qs" ] && [ -r "$qs" ] || refuse quorum-state-unreadable "$qs cannot be read: the node's role is unknown"
			qs_role=$(qs_voter "$qs" "$found_id") || refuse quorum-state-unreadable "$qs cannot be read: the node's role is unknown"
			case $qs_role in
			voter) ROLE_VOTER="$qs lists node $found_id among currentVoters" ;;
			not-voter) ROLE_KNOWN="$qs lists the voters without node $found_id" ;;
			esac
		fi
		for seg in $(find "$md" -maxdepth 1 -type f \( -name '*.checkpoint' -o -name '*.log' \)); do
			[ -r "$seg" ] || refuse role-unknown "$seg cannot be read: the node's role is unknown"
			snap=0
			case $seg in *.checkpoint) snap=1 ;; esac
			case $(log_voters "$seg" "$want" "$snap") in
			voter) ROLE_VOTER="a Voters record in $seg lists node $found_id with its directory id" ;;
			set) [ -z "$want" ] || ROLE_KNOWN="the Voters records in $seg do not list node $found_id with its directory id" ;;
			esac
		done
	done
done
unset IFS
[ -z "$ROLE_VOTER" ] || refuse node-is-voter "$ROLE_VOTER: this node is (or was) a controller; follow the manual runbook"
[ -n "$ROLE_KNOWN" ] || refuse role-unknown "nothing Kafka wrote on this volume says whether node ${found_id:-?} is a controller (no quorum-state listing the voters, no Voters record matching its directory.id): follow the manual runbook"
say "node role: not a voter ($ROLE_KNOWN)"

# One rename(2) is atomic and needs no copy space, but only within one
# filesystem: across filesystems mv silently copies and deletes instead.
# Within this pod each claim is one mount, so equal st_dev means rename works.
src_dev=$(stat -c %d "$SRC_PARENT")
root_dev=$(stat -c %d "$ROOT")
[ "$src_dev" = "$root_dev" ] || refuse cross-filesystem "$SRC_PARENT (device $src_dev) and $ROOT (device $root_dev) are different filesystems; a move would copy and delete"

# mount_of PATH: the id of the mount PATH is on (/proc/self/mountinfo: the
# longest mount point that is PATH or above it). Two mounts of one
# filesystem (a subPath or another bind mount nested in the claim) share
# st_dev, yet rename(2) between them fails with EXDEV and mv then copies and
# deletes: the move must stay within one mount, so the ids must match.
mount_of() {
	awk -v p="$1" '{
		mp = $5
		gsub(/\\040/, " ", mp); gsub(/\\011/, "\t", mp); gsub(/\\012/, "\n", mp); gsub(/\\134/, "\\", mp)
		if (mp == "/" || p == mp || index(p, mp "/") == 1) {
			if (length(mp) > best) { best = length(mp); id = $1 }
		}
	} END { printf "%s", id }' /proc/self/mountinfo
}
# one_mount PATH...: every PATH is on the mount of the volume root.
one_mount() {
	om_root=$(mount_of "$real_root") || om_root=''
	[ -n "$om_root" ] || refuse cross-filesystem "cannot read /proc/self/mountinfo: whether the move is one rename is unknown"
	for om_path in "$@"; do
		om_id=$(mount_of "$(readlink -f "$om_path")") || om_id=''
		[ "$om_id" = "$om_root" ] || refuse cross-filesystem "$om_path is on another mount (id ${om_id:-?}) than the volume root $ROOT (id $om_root), e.g. a subPath or nested mount: the move would not be one rename"
	done
}
one_mount "$SRC_PARENT" "$SRC"
[ -z "$COMP_SRC" ] || one_mount "$COMP_SRC"

[ -w "$SRC_PARENT" ] || refuse not-writable "$SRC_PARENT is not writable by uid $(id -u 2>/dev/null || echo '?'): check fsGroup"
[ -w "$ROOT" ] || [ -w "$ROOT/$BACKUP" ] || refuse not-writable "$ROOT is not writable by this pod: check fsGroup"

measure "$SRC"
if [ -n "$COMP_SRC" ]; then
	comp_bytes=$(stat -c %s "$COMP_SRC")
	BYTES=$((BYTES + comp_bytes)) FILES=$((FILES + 1))
fi

# The backup stays on this volume, so the move frees nothing; the broker then
# rebuilds what was moved (metadata log re-fetched from the controllers,
# index rebuilt from its segment) and needs that much room again.
set -- $(stat -f -c '%a %S' "$ROOT")
free_kib=$(($1 * $2 / 1024))
need_kib=$MARGIN_KIB
case $ACTION in
move-metadata-log | move-index-files) need_kib=$((need_kib + (BYTES + 1023) / 1024)) ;;
esac
[ "$free_kib" -ge "$need_kib" ] || refuse no-space "$ROOT has $free_kib KiB free, needs $need_kib KiB: the broker must re-create what is moved; grow the volume first"

if [ "$MODE" = check ]; then
	say "check passed: would move $SRC${COMP_SRC:+ and $COMP_SRC} ($BYTES bytes, $FILES files) to $DEST; $free_kib KiB free"
	result check-ok ''
	exit 0
fi

# The interlock: nothing changes until the bot says Kafka is stopped, and
# nothing moves after the window in which the bot knows it stays stopped.
# The go is "<KB_GO_WANT>.<deadline, unix seconds on this node's clock>";
# right before the first mv, after the last check, the script compares
# date +%s with the deadline. An expired go (the kubelet refreshed the file
# late, the broker's back-off may be over) is not a refusal: the script
# waits, within the same KB_GO_WAIT, for a newer go with a later deadline.
# kafka_lock_java LOCKFILE: prints free, held, or "unknown: <why>". It runs
# KafkabotLockProbe (internal/recovery/lockprobe), which asks for a shared
# fcntl lock on LOCKFILE without waiting and releases it at once, exiting
# 0 (free), 3 (held) or else (cannot tell). It is carried compiled (Java 8
# bytecode, base64) since JRE-only images have no compiler. The class goes
# to a fresh directory on the runtime's /dev/shm tmpfs (writable under a
# read-only root filesystem; $TMPDIR or /tmp when not), never to the broker's
# volume; the probe removes it once loaded. The JVM is kept small for the pod's 64Mi
# (about 35 MB resident, under a second) and leaves nothing behind: no
# hsperfdata, no error file (-XX:ErrorFile=/dev/null), the image's JVM option
# variables (agents, ports) cleared.
kafka_lock_java() {
	klj_java=''
	set +f # the JVM locations below are patterns
	for klj_c in "$(command -v java 2>/dev/null)" "${JAVA_HOME:+$JAVA_HOME/bin/java}" /opt/bitnami/java/bin/java \
		/opt/java/openjdk/bin/java /usr/lib/jvm/*/bin/java /usr/lib/jvm/*/jre/bin/java /usr/local/openjdk-*/bin/java; do
		if [ -n "$klj_c" ] && [ -f "$klj_c" ] && [ -x "$klj_c" ]; then
			klj_java=$klj_c
			break
		fi
	done
	set -f
	[ -n "$klj_java" ] || {
		printf '%s' 'unknown: no java in this image'
		return 0
	}
	command -v base64 >/dev/null 2>&1 || {
		printf '%s' 'unknown: no base64 to unpack the probe'
		return 0
	}
	klj_dir=''
	for klj_t in /dev/shm "${TMPDIR:-/tmp}"; do
		klj_dir=$(mktemp -d "$klj_t/kafkabot-lock.XXXXXX" 2>/dev/null) && break
		klj_dir=''
	done
	[ -n "$klj_dir" ] || {
		printf '%s' 'unknown: no writable /dev/shm or temporary directory for the probe'
		return 0
	}
	if ! printf '%s' "$KAFKABOT_LOCK_PROBE_CLASS" | base64 -d >"$klj_dir/KafkabotLockProbe.class" 2>/dev/null; then
		printf '%s' "unknown: could not write the probe to $klj_dir (left there, not on the broker's volume)"
		return 0
	fi
	klj_err=$(JAVA_TOOL_OPTIONS='' JDK_JAVA_OPTIONS='' _JAVA_OPTIONS='' "$klj_java" -XX:+IgnoreUnrecognizedVMOptions \
		-Xmx16m -Xms4m -Xss256k -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=8m \
		-Xshare:auto -XX:-UsePerfData -XX:ErrorFile=/dev/null \
		-cp "$klj_dir" KafkabotLockProbe "$1" 2>&1 >/dev/null)
	klj_rc=$?
	# The probe removes its class and this directory once loaded (this script
	# deletes nothing); a JVM that did not start leaves them, on the tmpfs.
	[ ! -e "$klj_dir" ] || say "the lock probe's $klj_dir was left behind (not on the broker's volume)" >&2
	case $klj_rc in
	0) printf '%s' free ;;
	3) printf '%s' held ;;
	*) printf '%s' "unknown: $klj_java exited $klj_rc: $(printf '%s' "$klj_err" | tr '\n' ' ')" ;;
	esac
	return 0
}
# The probe's class file, generated from lockprobe/KafkabotLockProbe.java
# (go test ./internal/recovery -run TestLockProbeClass -update-lockprobe).
KAFKABOT_LOCK_PROBE_CLASS=yv66vgAAADQAjwoAAgADBwAEDAAFAAYBABBqYXZhL2xhbmcvT2JqZWN0AQAGPGluaXQ+AQADKClWCgAIAAkHAAoMAAsABgEAEUthZmthYm90TG9ja1Byb2JlAQAKcmVtb3ZlU2VsZgkADQAOBwAPDAAQABEBABBqYXZhL2xhbmcvU3lzdGVtAQADZXJyAQAVTGphdmEvaW8vUHJpbnRTdHJlYW07CAATAQAkdXNhZ2U6IEthZmthYm90TG9ja1Byb2JlIDxsb2NrIGZpbGU+CgAVABYHABcMABgAGQEAE2phdmEvaW8vUHJpbnRTdHJlYW0BAAdwcmludGxuAQAVKExqYXZhL2xhbmcvU3RyaW5nOylWCgANABsMABwAHQEABGV4aXQBAAQoSSlWBwAfAQAQamF2YS9sYW5nL1N0cmluZwoAIQAiBwAjDAAkACUBABNqYXZhL25pby9maWxlL1BhdGhzAQADZ2V0AQA7KExqYXZhL2xhbmcvU3RyaW5nO1tMamF2YS9sYW5nL1N0cmluZzspTGphdmEvbmlvL2ZpbGUvUGF0aDsHACcBABhqYXZhL25pby9maWxlL09wZW5PcHRpb24JACkAKgcAKwwALAAtAQAgamF2YS9uaW8vZmlsZS9TdGFuZGFyZE9wZW5PcHRpb24BAARSRUFEAQAiTGphdmEvbmlvL2ZpbGUvU3RhbmRhcmRPcGVuT3B0aW9uOwoALwAwBwAxDAAyADMBAB1qYXZhL25pby9jaGFubmVscy9GaWxlQ2hhbm5lbAEABG9wZW4BAFAoTGphdmEvbmlvL2ZpbGUvUGF0aDtbTGphdmEvbmlvL2ZpbGUvT3Blbk9wdGlvbjspTGphdmEvbmlvL2NoYW5uZWxzL0ZpbGVDaGFubmVsOwcANQEADmphdmEvbGFuZy9Mb25nBX//////////CgAvADkMADoAOwEAB3RyeUxvY2sBACEoSkpaKUxqYXZhL25pby9jaGFubmVscy9GaWxlTG9jazsKAD0APgcAPwwAQAAGAQAaamF2YS9uaW8vY2hhbm5lbHMvRmlsZUxvY2sBAAdyZWxlYXNlCgAvAEIMAEMABgEABWNsb3NlBwBFAQATamF2YS9sYW5nL1Rocm93YWJsZQoARABHDABIAEkBAA1hZGRTdXBwcmVzc2VkAQAYKExqYXZhL2xhbmcvVGhyb3dhYmxlOylWCgAVAEsMABgATAEAFShMamF2YS9sYW5nL09iamVjdDspVgoATgBPBwBQDABRAFIBAA9qYXZhL2xhbmcvQ2xhc3MBABNnZXRQcm90ZWN0aW9uRG9tYWluAQAiKClMamF2YS9zZWN1cml0eS9Qcm90ZWN0aW9uRG9tYWluOwoAVABVBwBWDABXAFgBAB5qYXZhL3NlY3VyaXR5L1Byb3RlY3Rpb25Eb21haW4BAA1nZXRDb2RlU291cmNlAQAcKClMamF2YS9zZWN1cml0eS9Db2RlU291cmNlOwoAWgBbBwBcDABdAF4BABhqYXZhL3NlY3VyaXR5L0NvZGVTb3VyY2UBAAtnZXRMb2NhdGlvbgEAECgpTGphdmEvbmV0L1VSTDsKAGAAYQcAYgwAYwBkAQAMamF2YS9uZXQvVVJMAQAFdG9VUkkBABAoKUxqYXZhL25ldC9VUkk7CgAhAGYMACQAZwEAJChMamF2YS9uZXQvVVJJOylMamF2YS9uaW8vZmlsZS9QYXRoOwgAaQEAF0thZmthYm90TG9ja1Byb2JlLmNsYXNzCwBrAGwHAG0MAG4AbwEAEmphdmEvbmlvL2ZpbGUvUGF0aAEAB3Jlc29sdmUBACgoTGphdmEvbGFuZy9TdHJpbmc7KUxqYXZhL25pby9maWxlL1BhdGg7CgBxAHIHAHMMAHQAdQEAE2phdmEvbmlvL2ZpbGUvRmlsZXMBAA5kZWxldGVJZkV4aXN0cwEAFyhMamF2YS9uaW8vZmlsZS9QYXRoOylaBwB3AQAXamF2YS9sYW5nL1N0cmluZ0J1aWxkZXIKAHYAAwgAegEAJGNvdWxkIG5vdCByZW1vdmUgdGhlIHByb2JlJ3MgY2xhc3M6IAoAdgB8DAB9AH4BAAZhcHBlbmQBAC0oTGphdmEvbGFuZy9TdHJpbmc7KUxqYXZhL2xhbmcvU3RyaW5nQnVpbGRlcjsKAHYAgAwAfQCBAQAtKExqYXZhL2xhbmcvT2JqZWN0OylMamF2YS9sYW5nL1N0cmluZ0J1aWxkZXI7CgB2AIMMAIQAhQEACHRvU3RyaW5nAQAUKClMamF2YS9sYW5nL1N0cmluZzsBAARDb2RlAQAPTGluZU51bWJlclRhYmxlAQAEbWFpbgEAFihbTGphdmEvbGFuZy9TdHJpbmc7KVYBAA1TdGFja01hcFRhYmxlBwCMAQATW0xqYXZhL2xhbmcvU3RyaW5nOwEAClNvdXJjZUZpbGUBABZLYWZrYWJvdExvY2tQcm9iZS5qYXZhADEACAACAAAAAAADAAEABQAGAAEAhgAAAB0AAQABAAAABSq3AAGxAAAAAQCHAAAABgABAAAAFwAJAIgAiQABAIYAAAFQAAYABQAAAHm4AAcqvgSfAA+yAAwSErYAFAW4ABoqAzIDvQAeuAAgBL0AJlkDsgAoU7gALk0sCRQANgS2ADhOLccACAY8pwAJLbYAPAM8LMYAICy2AEGnABlOLMYAEiy2AEGnAAs6BC0ZBLYARi2/pwANTbIADCy2AEoFPBu4ABqxAAMALQBGAFEARABWAFoAXQBEABUAZwBqAEQAAgCHAAAASgASAAAAGQADABoACQAbABEAHAAVAB8ALQAgADcAIQA7ACIAQAAkAEQAJQBGACcAUQAfAGcAKgBqACcAawAoAHIAKQB0ACsAeAAsAIoAAABdAAkV/gAqAAcALwcAPf8ABQADBwCLAQcALwAA/wAKAAMHAIsABwAvAAEHAET/AAsABAcAiwAHAC8HAEQAAQcARAf/AAEAAgcAiwEAAP8AAgABBwCLAAEHAET8AAkBAAoACwAGAAEAhgAAAIYAAwABAAAAQRIItgBNtgBTtgBZtgBfuABlSyoSaLkAagIAuABwVyq4AHBXpwAdS7IADLsAdlm3AHgSebYAeyq2AH+2AIK2ABSxAAEAAAAjACYARAACAIcAAAAeAAcAAAAxABIAMgAeADMAIwA2ACYANAAnADUAQAA3AIoAAAAHAAJmBwBEGQABAI0AAAACAI4=

# kafka_running: whether a Kafka process holds this log dir. Kafka takes an
# exclusive POSIX (fcntl) lock on <log dir>/.lock for as long as it runs and
# exits when it cannot. That lock is invisible from another pod's PID
# namespace (/proc/locks hides it) and flock(1) does not see it (flock and
# fcntl locks are separate), so the script asks for a shared fcntl lock on
# the same file, which a running Kafka's exclusive lock denies, and releases
# it at once: with python when the image has it, else with the JVM every
# Kafka image has (kafka_lock_java). When neither can tell (no shell tool
# takes fcntl locks), it falls back to watching the metadata log, which a
# running KRaft node appends to every half second, for a second. Prints
# what it found when Kafka runs.
kafka_running() {
	kr_lock=$LOGDIR/.lock
	[ -e "$kr_lock" ] || return 1 # Kafka creates it when it starts
	for kr_py in python3 python; do
		command -v "$kr_py" >/dev/null 2>&1 || continue
		kr_out=$("$kr_py" -c 'import fcntl, sys
f = open(sys.argv[1], "rb")
try:
    fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
except OSError:
    print("held")
    sys.exit(0)
fcntl.lockf(f, fcntl.LOCK_UN)
print("free")' "$kr_lock" 2>&1) || kr_out="error: $kr_out"
		case $kr_out in
		free) return 1 ;;
		held)
			printf '%s' "another process (Kafka) holds the lock on $kr_lock"
			return 0
			;;
		*)
			printf '%s' "could not test the lock on $kr_lock ($kr_out)"
			return 0
			;;
		esac
	done
	kr_java=$(kafka_lock_java "$kr_lock")
	case $kr_java in
	free) return 1 ;;
	held)
		printf '%s' "another process (Kafka) holds the lock on $kr_lock (java probe)"
		return 0
		;;
	esac
	# To the log (stderr: stdout is this function's answer).
	say "java could not test the lock on $kr_lock (${kr_java#unknown: }): watching the metadata log instead" >&2
	kr_md=$LOGDIR/__cluster_metadata-0
	[ -d "$kr_md" ] || kr_md=$LOGDIR
	kr_before=$(find "$kr_md" "$LOGDIR/.lock" -maxdepth 1 -type f -exec stat -c '%n %s %y' {} +) || kr_before=unreadable
	sleep 1
	kr_after=$(find "$kr_md" "$LOGDIR/.lock" -maxdepth 1 -type f -exec stat -c '%n %s %y' {} +) || kr_after=unreadable
	if [ "$kr_before" != "$kr_after" ] || [ "$kr_before" = unreadable ]; then
		printf '%s' "files in $kr_md changed within 1s (neither python nor java could test the lock on $kr_lock)"
		return 0
	fi
	return 1
}

say "every check passed; waiting up to ${GO_WAIT}s for the bot's go signal (it first checks that Kafka is stopped)"
waited=0 spent=0
while :; do
	go_val='' go_deadline='' go_lines=0
	if [ -f "$GO_FILE" ]; then
		while IFS= read -r go_line || [ -n "$go_line" ]; do
			go_val=$go_line go_lines=$((go_lines + 1))
		done <"$GO_FILE" || :
	fi
	[ "$go_lines" -le 1 ] || go_val='' # one line, or it is not the bot's go
	case $go_val in
	"$GO_WANT".*)
		go_deadline=${go_val#"$GO_WANT".}
		is_digits "$go_deadline" || go_deadline=''
		;;
	esac
	if [ -n "$go_deadline" ] && [ "$go_deadline" -gt "$spent" ]; then
		say "go signal received after ${waited}s (deadline $go_deadline)"
		[ -e "$SRC" ] || refuse not-found "$SRC disappeared while waiting for the go signal"
		mkdir -p "$DEST_PARENT"
		no_links_below "$ROOT/$BACKUP" "$DEST_PARENT"
		[ "$(readlink -f "$DEST_PARENT")" = "$real_root${DEST_PARENT#"$ROOT"}" ] ||
			refuse destination-is-symlink "$DEST_PARENT resolves to $(readlink -f "$DEST_PARENT"), not inside the backup folder"
		[ "$(stat -c %d "$DEST_PARENT")" = "$src_dev" ] || refuse cross-filesystem "$DEST_PARENT is on another filesystem"
		now=$(date +%s)
		if ! is_digits "$now"; then
			say "date +%s printed '$now', not a time: cannot check the go's deadline; nothing was moved"
			exit 1
		fi
		[ "$now" -gt "$go_deadline" ] || break
		say "the go expired $((now - go_deadline))s ago (deadline $go_deadline, now $now): Kafka may be running again; nothing moved, waiting for a newer go"
		spent=$go_deadline
	fi
	[ "$waited" -lt "$GO_WAIT" ] || refuse no-go-signal "no valid go signal within ${GO_WAIT}s: the bot did not see Kafka stopped, or its go expired before it reached this pod; nothing was moved"
	sleep 1
	waited=$((waited + 1))
done
# Kafka's own lock, right before the rename: a Kafka started by a recreated
# pod or a restarted kubelet (which the back-off deadline does not cover)
# stops the move. The go's deadline is checked again after this test.
if kr_why=$(kafka_running); then
	refuse kafka-running "$kr_why: Kafka is running on this volume; nothing was moved"
fi
now=$(date +%s)
is_digits "$now" && [ "$now" -le "$go_deadline" ] ||
	refuse no-go-signal "the go expired (deadline $go_deadline, now $now) while checking Kafka's lock; nothing was moved"
say "go is valid until $go_deadline (now $now): moving"
mv "$SRC" "$DEST"
say "moved $SRC to $DEST"
if [ -n "$COMP_SRC" ]; then
	# The companion is moved under the same deadline: after it, a re-run with
	# a new go moves it (the idempotent path above).
	now=$(date +%s)
	if is_digits "$now" && [ "$now" -le "$go_deadline" ]; then
		mv "$COMP_SRC" "$COMP_DEST"
		say "moved $COMP_SRC to $COMP_DEST"
	else
		say "the go expired (deadline $go_deadline, now $now) after moving $SRC: $COMP_SRC stays; a new repair with a new go moves it"
		comp_bytes=$(stat -c %s "$COMP_SRC")
		BYTES=$((BYTES - comp_bytes)) FILES=$((FILES - 1))
		COMP_SRC='' COMP_DEST=''
	fi
fi
say "moved $BYTES bytes in $FILES files"

# A short manifest next to the data; appended, so nothing earlier is lost.
rel=${SRC#"$ROOT"/}
comp_undo=''
[ -z "$COMP_SRC" ] || comp_undo="           mv '$BACKUP/${COMP_SRC#"$ROOT"/}' '${COMP_SRC#"$ROOT"/}'"
# One printf with one redirect, not a { } group: a failing redirect on a
# simple command does not end the shell, so the warning below can run.
if ! printf '%s\n' "kafkabot repair backup" \
	"action:    $ACTION" \
	"moved:     $rel (relative to the volume root)" \
	"from:      $SRC" \
	"to:        $DEST" \
	"when:      $(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	"node id:   ${NODE_ID:-not checked}" \
	"size:      $BYTES bytes in $FILES files" \
	"why here:  Kafka reads every directory inside a log dir as a partition, so" \
	"           the backup lives at the volume root, outside every log dir." \
	"undo:      with the broker stopped, from the volume root:" \
	"           mv '$BACKUP/$rel' '$rel'" \
	${comp_undo:+"$comp_undo"} \
	"delete:    this folder, once the broker is healthy and you no longer need it." \
	"" >>"$ROOT/$BACKUP/README.txt"; then
	say "warning: could not write $ROOT/$BACKUP/README.txt (the move itself is done)"
fi

result moved ''
