package v1

import (
	"fmt"
	"strings"

	"github.com/awslabs/operatorpkg/status"
	"github.com/samber/lo"
)

// ReasonLaunchRejected is the reason of a failed ValidationSucceeded condition when Linode
// refused a launch with the class as invalid.
const ReasonLaunchRejected = "LaunchRejected"

// RejectLaunch marks the class not Ready because Linode refused a launch with it as invalid,
// quoting the API's reason. Launches stop until the spec changes: the rejection stands for as
// long as the class's generation is the one that was refused (LaunchRejected).
func (in *LinodeNodeClass) RejectLaunch(apiReason string) {
	in.StatusConditions().SetFalse(ConditionTypeValidationSucceeded, ReasonLaunchRejected, fmt.Sprintf("Linode refused to launch a node: %s", apiReason))
	in.ExplainReadiness()
}

// LaunchRejected reports whether Linode refused a launch with this generation of the spec.
func (in *LinodeNodeClass) LaunchRejected() bool {
	current := in.StatusConditions().Get(ConditionTypeValidationSucceeded)
	return current != nil && current.Reason == ReasonLaunchRejected && current.ObservedGeneration == in.Generation
}

// ExplainReadiness makes a class that is not Ready say why in the words of the conditions that
// fail, rather than listing their types, since core and the cloud provider quote Ready's message.
func (in *LinodeNodeClass) ExplainReadiness() {
	failed := lo.Filter(in.Status.Conditions, func(condition status.Condition, _ int) bool {
		return condition.Type != status.ConditionReady && condition.IsFalse()
	})
	if len(failed) == 0 {
		return
	}
	in.StatusConditions().SetFalse(status.ConditionReady, failed[0].Reason, strings.Join(lo.Map(failed, func(condition status.Condition, _ int) string {
		return condition.Message
	}), "; "))
}
