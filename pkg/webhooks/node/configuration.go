package node

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// WebhookName is the name of the webhook inside its MutatingWebhookConfiguration.
const WebhookName = "node.karpenter.k8s.linode"

// timeoutSeconds keeps a slow webhook from delaying a kubelet's registration for long; a timeout
// admits the Node unchanged.
const timeoutSeconds = 5

// Configuration is the MutatingWebhookConfiguration that sends Node creations to the webhook,
// as the Helm chart installs it; clientConfig says where the webhook is served, and its caBundle
// is left to the certificate manager.
//
// Failures admit the Node: a node that joins without the taints is what LKE registers anyway.
// Only Nodes labelled with a Karpenter NodePool are sent, the label every pool Karpenter launches
// puts on its nodes at registration.
func Configuration(name string, clientConfig admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.MutatingWebhookConfiguration {
	failurePolicy := admissionregistrationv1.Ignore
	sideEffects := admissionregistrationv1.SideEffectClassNone
	scope := admissionregistrationv1.ClusterScope
	timeout := int32(timeoutSeconds)
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    WebhookName,
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &sideEffects,
			FailurePolicy:           &failurePolicy,
			TimeoutSeconds:          &timeout,
			ClientConfig:            clientConfig,
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{corev1.GroupName},
					APIVersions: []string{"v1"},
					Resources:   []string{"nodes"},
					Scope:       &scope,
				},
			}},
			ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key:      karpv1.NodePoolLabelKey,
				Operator: metav1.LabelSelectorOpExists,
			}}},
		}},
	}
}
