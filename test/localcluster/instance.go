package localcluster

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/test/localcluster/component"
)

// setUpNodeBootstrap does for instance mode what kubeadm does when it sets a cluster up for
// `kubeadm join`: it publishes the API server's address and CA in kube-public/cluster-info, where
// the controller finds the cluster endpoint when CLUSTER_ENDPOINT is unset. What the provider's
// bootstrap token group may do comes from the chart, with the controller's RBAC.
func (c *Cluster) setUpNodeBootstrap(ctx context.Context, endpoint string, caPEM []byte) error {
	return component.PublishClusterInfo(ctx, c.Kube, endpoint, caPEM)
}

// CheckNoBootstrapTokens reports bootstrap token Secrets the provider issued that are left: once
// every node has registered, none should be.
func (c *Cluster) CheckNoBootstrapTokens(ctx context.Context) error {
	tokens := &corev1.SecretList{}
	if err := c.Kube.List(ctx, tokens, client.InNamespace(bootstraptoken.Namespace), client.MatchingLabels{bootstraptoken.LabelNodeClaimToken: "true"}); err != nil {
		return err
	}
	var problems []error
	for _, token := range tokens.Items {
		problems = append(problems, fmt.Errorf("bootstrap token %s of NodeClaim %s is left", token.Name, token.Annotations[bootstraptoken.AnnotationNodeClaim]))
	}
	return errors.Join(problems...)
}
