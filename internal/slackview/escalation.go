// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The kafkabot Authors

package slackview

import (
	"fmt"

	"github.com/slack-go/slack"
)

// The words of an escalated Kafka cluster: the repair thread's notice and
// its Clear escalation button, why a click on it changed nothing (for
// Refused, with RefuseEscalationNothing after it), and the thread's reply
// once cleared. internal/handlers decides which applies.

// Escalated says that Kafka cluster kafkaCluster (named in full: cluster)
// is escalated and how to clear it.
func Escalated(cluster, kafkaCluster string) string {
	return fmt.Sprintf("🛑 Cluster %s is *escalated*: the bot runs no automated repair of any of its brokers until a person clears this. "+
		"Find the cause first (the controllers' snapshot, the disks); then an approver clears it here, or anyone with cluster access runs %s.",
		InlineCode(cluster, 260), InlineCode("bot escalation clear "+kafkaCluster, 260))
}

// ClearEscalationButton is the Clear escalation button's text.
const ClearEscalationButton = "Clear escalation"

// ClearEscalationConfirm asks before allowing repairs of Kafka cluster
// kafkaCluster again.
func ClearEscalationConfirm(kafkaCluster string) *slack.ConfirmationBlockObject {
	return slack.NewConfirmationBlockObject(Plain("Allow automated repairs again?"),
		Plain("The bot will again offer automated repairs of "+kafkaCluster+"."), Plain(ClearEscalationButton), Plain("Cancel"))
}

// Why a click on a Clear escalation button changed nothing; every refusal
// ends with RefuseEscalationNothing.
const (
	RefuseEscalationNothing      = " Nothing was changed."
	RefuseEscalationInvalidToken = "This button is not valid (it was not issued by this bot, or was altered)."
	RefuseEscalationWrongOrigin  = "This button belongs to another channel."
	RefuseEscalationNoStore      = "This bot cannot reach the escalation records."
)

// RefuseEscalationExpired: the button expired; the terminal clears
// kafkaCluster's escalation instead.
func RefuseEscalationExpired(kafkaCluster string) string {
	return "This button has expired; run `bot escalation clear " + kafkaCluster + "` instead."
}

// RefuseEscalationUnknownCluster: the button names a Kubernetes cluster
// the bot does not serve.
func RefuseEscalationUnknownCluster(cluster string) string {
	return "This button is for a Kubernetes cluster I do not serve (" + InlineCode(cluster, 80) + ")."
}

// RefuseEscalationNotApprover: the clicker is not among approvers
// (ApproverList's phrase). ofCluster is OfCluster's phrase.
func RefuseEscalationNotApprover(ofCluster, approvers string) string {
	return "Only approvers " + ofCluster + "may allow automated repairs again. Approvers: " + approvers + "."
}

// ClearEscalationFailed tells the clicker the escalation of kafkaCluster
// was not cleared, and why.
func ClearEscalationFailed(kafkaCluster, err string) string {
	return "⚠️ I did not clear the escalation of " + InlineCode(kafkaCluster, 200) + ": " +
		EscapeTruncate(err, 500) + ". `bot escalation list` shows the records."
}

// EscalationCleared is the thread's reply: user cleared the escalation of
// cluster (named in full).
func EscalationCleared(user, cluster string) string {
	return fmt.Sprintf("🔓 %s cleared the escalation of %s. The bot offers automated repairs of its brokers again.",
		Mention(user), InlineCode(cluster, 260))
}
