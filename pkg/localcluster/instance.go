package localcluster

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/linode/karpenter-provider-linode/pkg/localcluster/component"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
)

// setUpNodeBootstrap does for instance mode what kubeadm does when it sets a cluster up for
// `kubeadm join`: it publishes the API server's address and CA in kube-public/cluster-info (where
// the controller finds the cluster endpoint when CLUSTER_ENDPOINT is unset), lets nodes renew
// their own client certificates, and grants the provider's bootstrap token group what the Helm
// chart grants it in instance mode.
func (c *Cluster) setUpNodeBootstrap(ctx context.Context, endpoint string, caPEM []byte) error {
	if err := component.PublishClusterInfo(ctx, c.Kube, endpoint, caPEM); err != nil {
		return err
	}
	for _, binding := range append(bootstraptoken.ClusterRoleBindings(), bootstraptoken.NodeCertificateRenewalBinding()) {
		if err := c.Kube.Create(ctx, binding); err != nil {
			return fmt.Errorf("granting the bootstrap group %s: %w", binding.RoleRef.Name, err)
		}
	}
	return nil
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
