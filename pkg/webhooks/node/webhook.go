package node

import (
	"context"
	"fmt"
	"net/http"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
)

// Path is where the webhook server serves the webhook; the MutatingWebhookConfiguration calls it.
const Path = "/mutate-node"

// nodeClaimProviderIDIndex is the field index Karpenter core's operator registers on NodeClaims.
const nodeClaimProviderIDIndex = "status.providerID"

// Webhook adds Karpenter's registration taints to the Nodes of the pools Karpenter launched. It
// decides from the Kubernetes cache alone, never calling the Linode API: admission has a few
// seconds, a slow or rate-limited API would time it out, and the apiserver would then admit the
// node without the taints (failurePolicy Ignore).
//
// It serves before the controller has found its LKE cluster through the Linode API, so it does
// not know the cluster's ID: the NodeClaim the node is found for is what makes it one of ours,
// and only a node of this cluster registers in it.
type Webhook struct {
	kubeClient client.Reader
	decoder    admission.Decoder
}

// NewWebhook returns the webhook. kubeClient should read from the manager's cache, with core's
// status.providerID index on NodeClaims.
func NewWebhook(kubeClient client.Reader) *Webhook {
	return &Webhook{kubeClient: kubeClient, decoder: admission.NewDecoder(scheme.Scheme)}
}

// Register serves the webhook at Path.
func (w *Webhook) Register(server webhook.Server) {
	server.Register(Path, &admission.Webhook{Handler: w})
}

// Handle admits a Node, with the registration taints added when it joins from one of our pools.
func (w *Webhook) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create {
		return admission.Allowed("")
	}
	node := &corev1.Node{}
	if err := w.decoder.Decode(req, node); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if _, ok := ParseLKENodeName(node.Name); !ok {
		return admission.Allowed("")
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("Node", node.Name))
	nodeClaim, err := w.nodeClaimFor(ctx, node)
	if err != nil {
		// Admitting the Node untouched only costs core's race protection; refusing it would keep
		// the node out of the cluster.
		log.FromContext(ctx).Error(err, "admitting node without registration taints")
		return admission.Allowed("")
	}
	if nodeClaim == nil {
		return admission.Allowed("")
	}
	taints := TaintsToAdd(node, nodeClaim)
	if len(taints) == 0 {
		return admission.Allowed("")
	}
	log.FromContext(ctx).V(1).Info("adding registration taints", "NodeClaim", nodeClaim.Name, "taints", len(taints))
	return admission.Patched("", TaintPatch(node, taints)...)
}

// nodeClaimFor finds the NodeClaim that launched the node: by the NodeClaim label its pool put on
// it, or by provider ID once the NodeClaim records it. It returns nil when no NodeClaim owns the
// node.
func (w *Webhook) nodeClaimFor(ctx context.Context, node *corev1.Node) (*karpv1.NodeClaim, error) {
	if name := node.Labels[v1.LabelNodeClaim]; name != "" {
		nodeClaim := &karpv1.NodeClaim{}
		err := w.kubeClient.Get(ctx, client.ObjectKey{Name: name}, nodeClaim)
		if err == nil {
			return nodeClaim, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading NodeClaim %s: %w", name, err)
		}
	}
	if node.Spec.ProviderID == "" {
		return nil, nil
	}
	nodeClaims := &karpv1.NodeClaimList{}
	if err := w.kubeClient.List(ctx, nodeClaims, client.MatchingFields{nodeClaimProviderIDIndex: node.Spec.ProviderID}); err != nil {
		return nil, fmt.Errorf("listing NodeClaims by provider ID: %w", err)
	}
	if len(nodeClaims.Items) != 1 {
		return nil, nil
	}
	return &nodeClaims.Items[0], nil
}

// TaintPatch is the JSON patch that appends taints to the Node's.
func TaintPatch(node *corev1.Node, taints []corev1.Taint) []jsonpatch.JsonPatchOperation {
	if len(node.Spec.Taints) == 0 {
		return []jsonpatch.JsonPatchOperation{{Operation: "add", Path: "/spec/taints", Value: taints}}
	}
	patch := make([]jsonpatch.JsonPatchOperation, len(taints))
	for i, taint := range taints {
		patch[i] = jsonpatch.JsonPatchOperation{Operation: "add", Path: "/spec/taints/-", Value: taint}
	}
	return patch
}
