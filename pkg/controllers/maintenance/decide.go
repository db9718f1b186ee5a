package maintenance

import (
	"fmt"
	"time"

	"github.com/linode/linodego"
)

// Decision is what the controller does about a node whose Linode Linode reported on.
type Decision string

const (
	// ReplaceBeforeWindow marks the NodeClaim drifted, so that core replaces the node before
	// maintenance takes it down: replacement first, then a drain under the NodePool's budgets and
	// the pods' PodDisruptionBudgets.
	ReplaceBeforeWindow Decision = "replace_before_window"
	// Wait leaves a node whose maintenance starts later than the lead time.
	Wait Decision = "wait"
	// NoAction records maintenance that keeps the node running.
	NoAction Decision = "no_action"
	// Withdrawn un-drifts a NodeClaim whose maintenance is no longer scheduled.
	Withdrawn Decision = "withdrawn"
	// ReplaceNow deletes the NodeClaim of a Linode that is down, with a termination time of now:
	// its pods cannot drain from a Linode that is off.
	ReplaceNow Decision = "replace_now"
	// ReplaceDraining deletes the NodeClaim of a Linode that went down unexpectedly and runs
	// again: its node is drained under PodDisruptionBudgets, then replaced.
	ReplaceDraining Decision = "replace_draining"
	// RepairBlocked leaves a node that ReplaceNow or ReplaceDraining would replace, because its
	// Node or NodeClaim carries karpenter.sh/do-not-repair: the operator's veto, which core's node
	// repair honours too.
	RepairBlocked Decision = "repair_blocked"
)

// Maintenance types that move a running Linode to another host without stopping it. Every other
// type, those Linode may add later included, is taken to stop the Linode: replacing a node
// needlessly costs less than losing it without a drain.
var liveTypes = map[string]bool{"live_migration": true, "migrate": true}

// Maintenance statuses under which the maintenance is under way.
var underWay = map[string]bool{"started": true, "in-progress": true, "in_progress": true}

// entry is one maintenance of one of our Linodes, as the controller reads it.
type entry struct {
	linodeID        int
	maintenanceType string
	status          string
	// start is when the maintenance begins: not_before, or the older when.
	start time.Time
}

// newEntry reads a maintenance of our Linode. Its start is not_before, or when: linodego marks
// when deprecated, but not_before is one of the fields the API documents as beta, and v4 answers
// may carry when alone. Maintenance that says neither is taken to start now.
func newEntry(m linodego.AccountMaintenance, linodeID int, now time.Time) entry {
	e := entry{linodeID: linodeID, maintenanceType: m.Type, status: m.Status, start: now}
	switch {
	case m.NotBefore != nil:
		e.start = *m.NotBefore
	case m.When != nil: //nolint:staticcheck // the v4 field; see above
		e.start = *m.When //nolint:staticcheck // the v4 field; see above
	case m.StartTime != nil:
		e.start = *m.StartTime
	}
	return e
}

// key identifies the maintenance across polls.
func (e entry) key() string {
	return fmt.Sprintf("%d/%s/%s", e.linodeID, e.maintenanceType, e.start.UTC().Format(time.RFC3339))
}

// decideMaintenance is what to do about the node of a Linode with this maintenance.
func decideMaintenance(e entry, now time.Time, leadTime time.Duration) Decision {
	switch {
	case liveTypes[e.maintenanceType]:
		return NoAction
	case underWay[e.status]:
		return ReplaceNow
	case e.start.Sub(now) <= leadTime:
		return ReplaceBeforeWindow
	default:
		return Wait
	}
}

// Event actions that tell a Linode went down without Karpenter asking: its host failed and Linode
// restarted it (host_reboot), it powered off and Linode's shutdown watchdog booted it
// (lassie_reboot), or someone powered it off (linode_shutdown).
var downActions = []linodego.EventAction{linodego.ActionHostReboot, linodego.ActionLassieReboot, linodego.ActionLinodeShutdown}

// decideDown is what to do about the node of a Linode that went down: at once, unless Linode has
// already restarted it and its node is Ready again, when a drain can still move its pods gently.
func decideDown(ev linodego.Event, nodeReady bool) Decision {
	restarted := ev.Status == linodego.EventFinished && ev.Action != linodego.ActionLinodeShutdown
	if restarted && nodeReady {
		return ReplaceDraining
	}
	return ReplaceNow
}

func downMessage(ev linodego.Event, decision Decision) string {
	var what string
	switch ev.Action {
	case linodego.ActionHostReboot:
		what = "its host failed and Linode restarts it elsewhere (host_reboot)"
	case linodego.ActionLassieReboot:
		what = "it powered off unexpectedly and Linode's shutdown watchdog restarted it (lassie_reboot)"
	default:
		what = fmt.Sprintf("it was powered off (%s)", ev.Action)
	}
	if decision == ReplaceDraining {
		return fmt.Sprintf("This node's Linode went down: %s. It runs again: replacing the node after a drain", what)
	}
	return fmt.Sprintf("This node's Linode went down: %s. Replacing the node now", what)
}
