package nodeclass

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// RecordLaunchRejection marks the class not Ready because Linode refused a launch with it as
// invalid, quoting the API's reason. Launches stop until the spec changes: the controller keeps
// the rejection for as long as the class's generation is the one that was refused.
func RecordLaunchRejection(ctx context.Context, kubeClient client.Client, nodeClass *v1.LinodeNodeClass, apiReason string) error {
	stored := nodeClass.DeepCopy()
	nodeClass.StatusConditions().SetFalse(v1.ConditionTypeValidationSucceeded, ReasonLaunchRejected, fmt.Sprintf("Linode refused to launch a node: %s", apiReason))
	explainReadiness(nodeClass)
	if err := kubeClient.Status().Patch(ctx, nodeClass, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("recording the launch rejection on LinodeNodeClass %s: %w", nodeClass.Name, err)
	}
	return nil
}
