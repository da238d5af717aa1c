// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The words of an approval's decision: what the clicker of Approve or
// Reject is told when the click changes nothing, what the thread and the
// diagnosis message say as votes are counted, and the plan a repair
// starts with. internal/handlers decides which applies.

// Refused is a refusal as the clicker sees it: why, after a no-entry sign.
func Refused(why string) string { return "🚫 " + why }

// Why a click on an approval's buttons changed nothing (for Refused).
const (
	// RefuseExpired: the token's TTL has passed.
	RefuseExpired = "This approval has expired. Nothing was changed. Run the diagnosis again to get fresh buttons."
	// RefuseNotYetValid: the token was issued in the future (clock skew).
	RefuseNotYetValid = "This approval is not valid yet (clock skew?). Nothing was changed."
	// RefuseInvalidToken: the token does not verify.
	RefuseInvalidToken = "This button is not valid (it was not issued by this bot, or was altered). Nothing was changed."
	// RefuseNoCluster: the token names no cluster and the bot serves several.
	RefuseNoCluster = "This button does not say which Kubernetes cluster it is for (it predates multi-cluster support), and I serve several. Nothing was changed. Run the diagnosis again to get fresh buttons."
	// RefuseWrongOrigin: the click came from another channel or workspace
	// than the diagnosis.
	RefuseWrongOrigin = "This approval belongs to another channel. Nothing was changed."
	// RefuseAlreadyDecided: the message has no buttons left.
	RefuseAlreadyDecided = "This repair was already decided. Nothing was changed."
	// RefuseSelfApproval: the requester clicked Approve and self-approval
	// is forbidden.
	RefuseSelfApproval = "You asked for this diagnosis, so someone else has to approve its repair. Nothing was changed."
	// RefuseReject: someone neither an approver nor the requester clicked
	// Reject.
	RefuseReject = "Only approvers or the person who asked for the diagnosis can reject it. Nothing was changed."
	// RefuseNotRecorded: the decision record could not be written.
	RefuseNotRecorded = "Your decision could not be recorded in the cluster, so nothing was done. " +
		"Nothing was changed. Try again in a moment."
)

// RefuseUnknownCluster: the token names a cluster the bot does not serve.
func RefuseUnknownCluster(cluster string) string {
	return "This button is for cluster " + InlineCode(cluster, 80) + ", which I do not serve. Nothing was changed."
}

// RefuseChannel: Approve was clicked outside the approval channels
// (channels, from ApprovalChannels). ofCluster is OfCluster's phrase.
func RefuseChannel(ofCluster, channels string) string {
	return "Repairs " + ofCluster + "are approved only in " + channels + ", not here. Nothing was changed."
}

// RefuseNotApprover: Approve was clicked by someone not among approvers
// (ApproverList's phrase). ofCluster is OfCluster's phrase.
func RefuseNotApprover(ofCluster, approvers string) string {
	return "You are not allowed to approve repairs " + ofCluster + "Approvers: " + approvers + ". Nothing was changed."
}

// OfCluster is "of cluster `name` ", the phrase that names the cluster of
// a repair on a bot serving several, or "" for name "" (one cluster).
func OfCluster(name string) string {
	if name == "" {
		return ""
	}
	return "of cluster " + InlineCode(name, 80) + " "
}

// ApprovalChannels lists channel IDs as channel links, sorted, or says
// that there is none and how to set one.
func ApprovalChannels(ids []string) string {
	out := make([]string, 0, len(ids))
	for _, c := range ids {
		out = append(out, "<#"+c+">")
	}
	slices.Sort(out)
	if len(out) == 0 {
		return "no channel (set APPROVAL_CHANNELS or ALERT_CHANNEL)"
	}
	return strings.Join(out, ", ")
}

// ApproverList lists approvers as sorted mentions, at most 10, or says
// that there is none.
func ApproverList(users []string) string {
	var out []string
	for _, a := range users {
		out = append(out, Mention(a))
	}
	slices.Sort(out)
	if len(out) == 0 {
		return "nobody (APPROVERS is empty)"
	}
	if len(out) > 10 {
		out = append(out[:10], "…")
	}
	return strings.Join(out, ", ")
}

// Mentions is a list of users as mentions, in the order given.
func Mentions(users []string) string {
	out := make([]string, len(users))
	for i, u := range users {
		out[i] = Mention(u)
	}
	return strings.Join(out, ", ")
}

// MoreApprovers says how many more approvers are needed, in words.
func MoreApprovers(n int) string {
	if n == 1 {
		return "one more approver"
	}
	return fmt.Sprintf("%d more approvers", n)
}

// AlreadyRejected: a click on an approval rejected by by at at.
func AlreadyRejected(by string, at time.Time) string {
	return fmt.Sprintf("This repair was already rejected by %s at %s. Nothing was changed.", Mention(by), Date(at, DateTime))
}

// AlreadyApprovedByYou: an approver clicked Approve again while n of
// required approvals are in.
func AlreadyApprovedByYou(n, required int) string {
	return fmt.Sprintf("You already approved this repair (%d of %d approvals); %s must approve too. Nothing more was done.",
		n, required, MoreApprovers(required-n))
}

// AlreadyApproved: a click on an approval that approvers completed, the
// last at at.
func AlreadyApproved(approvers []string, at time.Time) string {
	return fmt.Sprintf("This repair was already approved by %s at %s. Nothing more was done.", Mentions(approvers), Date(at, DateTime))
}

// VotesDropped tells the thread that the votes of dropped no longer count
// (they are no longer approvers, or, unless selfApproval, one of them
// asked for the diagnosis). ofCluster is OfCluster's phrase.
func VotesDropped(dropped []string, ofCluster string, selfApproval bool) string {
	return fmt.Sprintf("⚠️ Earlier approval(s) by %s no longer count: %s not an approver %snow%s. They were removed from the decision record.",
		Mentions(dropped), map[bool]string{true: "they are", false: "that person is"}[len(dropped) > 1], ofCluster,
		map[bool]string{true: "", false: ", or asked for this diagnosis and self-approval is forbidden"}[selfApproval])
}

// RejectedLine is the decision line of a message rejected by user at at.
func RejectedLine(user string, at time.Time) string {
	return fmt.Sprintf("❌ Rejected by %s at %s", Mention(user), Date(at, DateTime))
}

// RejectedStatus is the status line of a rejected repair.
const RejectedStatus = "Rejected — nothing was changed"

// RejectedReply is the thread's reply to user's Reject of pod's repair.
func RejectedReply(user, pod string) string {
	return fmt.Sprintf("❌ %s rejected the repair of %s. Nothing was changed.", Mention(user), InlineCode(pod, 200))
}

// CountedStatus is the status line while n of required approvals, by
// approvers, are in.
func CountedStatus(n, required int, approvers []string) string {
	return fmt.Sprintf("⏳ %d of %d approvals: approved by %s; waiting for %s", n, required, Mentions(approvers), MoreApprovers(required-n))
}

// CountedReply is the thread's reply to user's Approve, the n-th of
// required.
func CountedReply(user string, n, required int) string {
	return fmt.Sprintf("✅ %s approved (%d of %d). The repair starts when %s approve%s. Nothing was changed yet.",
		Mention(user), n, required, MoreApprovers(required-n), map[bool]string{true: "s", false: ""}[required-n == 1])
}

// ApprovedLine is the decision line of a message approved by approvers,
// the last at at.
func ApprovedLine(approvers []string, at time.Time) string {
	return fmt.Sprintf("✅ Approved by %s at %s", Mentions(approvers), Date(at, DateTime))
}

// ApprovedStatus is the status line of an approved repair before its
// first step.
const ApprovedStatus = "⏳ Repair approved, starting…"

// Plan describes an approved repair's plan in mrkdwn words (not a
// command): the action on its target in pod (namespace/pod, with its
// cluster on a multi-cluster bot) of UID podUID, for finding rule.
func Plan(action, target, pod, podUID, rule string) string {
	return fmt.Sprintf("%s of %s on pod %s (UID %s), for finding %s.",
		InlineCode(action, 80), InlineCode(orDash(target), 200), InlineCode(pod, 200),
		InlineCode(orDash(podUID), 80), InlineCode(rule, 120))
}

// StartingHead is the repair checklist's head line: who approved, and the
// plan (Plan's words).
func StartingHead(approvers []string, plan string) string {
	return fmt.Sprintf("✅ %s approved. Starting: %s", Mentions(approvers), plan)
}

// NoExecutorReply tells the thread that user's approval changed nothing
// because this build has no repair executor; plan is Plan's words.
func NoExecutorReply(user, plan string) string {
	return fmt.Sprintf("✅ %s approved: %s\n\n"+
		"⚠️ Automated execution is not available in this build of the bot, so *nothing was changed*. "+
		"Follow the steps in the message above by hand, or run a build with the repair executor.",
		Mention(user), plan)
}

// NoExecutorStatus is the status line of an approval without an executor.
const NoExecutorStatus = "🛑 Approved, but automated execution is not available in this build — nothing was changed"

// UnsignedRecord tells the thread and the clicker that approval id's
// decision record in namespace does not carry the bot's MAC.
func UnsignedRecord(id, namespace string) string {
	return fmt.Sprintf("🛑 The decision record of this approval (the kafkabot-decision Lease of approval %s) does not carry this bot's signature: "+
		"someone who can write Leases in namespace %s wrote or changed it (or it was written by a bot with another "+
		"APPROVAL_SECRET, or by a version that did not sign decision records). No vote was counted and *nothing was run*. "+
		"Check who wrote it (the API server's audit log), delete it, and run the diagnosis again for fresh buttons.",
		InlineCode(id, 80), InlineCode(namespace, 80))
}
