package localcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/linode/karpenter-provider-linode/pkg/webhooks/conversion"
	"github.com/linode/karpenter-provider-linode/pkg/webhooks/node"
)

// Names the Helm chart gives the webhook's objects (a release called karpenter in kube-system).
const (
	webhookNamespace     = "kube-system"
	webhookService       = "karpenter-webhook"
	webhookConfiguration = "karpenter"
)

// registerWebhooks installs the controller's webhooks as the charts do: the LinodeNodeClass
// CRD's conversion webhook always, the Node webhook in LKE mode. Only where the apiserver finds
// them differs: with no Pods here, the Service has no selector and the cluster keeps its
// EndpointSlices itself (webhookEndpoint), one per controller replica, pointing at its webhook
// port on this machine and ready while its /readyz is, as the kubelet's readiness probe keeps a
// pod's endpoint. The apiserver checks the certificate against the Service's DNS name, so the
// controller's own certificate, and the caBundles it keeps, work unchanged.
func (c *Cluster) registerWebhooks(ctx context.Context, port int32, nodeWebhook bool) error {
	service := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: webhookService, Namespace: webhookNamespace},
		Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{Name: webhookPortName, Port: port, TargetPort: intstr.FromInt32(port)}},
		},
	}
	if err := c.Kube.Create(ctx, service); err != nil {
		return fmt.Errorf("creating the webhook's Service: %w", err)
	}
	for _, replica := range c.replicas {
		endpoint, err := newWebhookEndpoint(ctx, c.Kube, replica.endpointSliceName(), replica.webhookPort(), replica.readyzURL())
		if err != nil {
			return err
		}
		replica.webhook = endpoint
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Kube.Get(ctx, client.ObjectKey{Name: conversion.CustomResourceDefinitionName}, crd); err != nil {
		return err
	}
	stored := crd.DeepCopy()
	crd.Spec.Conversion = conversion.Conversion(apiextensionsv1.WebhookClientConfig{
		Service: &apiextensionsv1.ServiceReference{Namespace: webhookNamespace, Name: webhookService, Path: ptr.To(conversion.Path), Port: ptr.To(port)},
	})
	if err := c.Kube.Patch(ctx, crd, client.MergeFrom(stored)); err != nil {
		return fmt.Errorf("pointing the LinodeNodeClass CRD at the conversion webhook: %w", err)
	}
	if !nodeWebhook {
		return nil
	}
	configuration := node.Configuration(webhookConfiguration, admissionregistrationv1.WebhookClientConfig{
		Service: &admissionregistrationv1.ServiceReference{
			Namespace: webhookNamespace, Name: webhookService, Path: ptr.To(node.Path), Port: ptr.To(port),
		},
	})
	if err := c.Kube.Create(ctx, configuration); err != nil {
		return fmt.Errorf("creating the MutatingWebhookConfiguration: %w", err)
	}
	return nil
}

// webhookEnv configures the controller's webhook server as the chart does.
func webhookEnv(port int32) []string {
	return []string{
		fmt.Sprintf("WEBHOOK_PORT=%d", port),
		"WEBHOOK_SERVICE=" + webhookService,
		"WEBHOOK_CONFIGURATION=" + webhookConfiguration,
		"SYSTEM_NAMESPACE=" + webhookNamespace,
	}
}

// webhookPortName is the name of the Service's port, which the apiserver matches in the
// EndpointSlice.
const webhookPortName = "https-webhook"

// webhookEndpoint is a controller replica's endpoint of the webhook Service, in an EndpointSlice
// the cluster writes as kube-controller-manager would for a pod: ready while the replica's
// readiness probe passes. kube-apiserver runs with --enable-aggregator-routing, so it calls a
// ready endpoint of a webhook's Service, not the Service's cluster IP, which nothing routes here,
// and finds none while the controller is not ready.
type webhookEndpoint struct {
	kube   client.Client
	slice  *discoveryv1.EndpointSlice
	readyz string

	mu sync.Mutex
	// reachable is false while SetWebhookReachable(false) holds the endpoint not ready.
	reachable bool
	// ready is what the EndpointSlice says.
	ready bool
}

// webhookEndpointInterval is how often the controller's readiness is probed.
const webhookEndpointInterval = 250 * time.Millisecond

// newWebhookEndpoint creates the EndpointSlice name, not ready, pointing at port on this
// machine's address. The apiserver refuses loopback addresses in an EndpointSlice; the
// controller's webhook server listens on every interface. Each replica has a slice of its own,
// as its port is its own: the apiserver takes the port from the slice, matched by the port's name.
func newWebhookEndpoint(ctx context.Context, kube client.Client, name string, port int32, readyz string) (*webhookEndpoint, error) {
	address, addressType, err := machineAddress()
	if err != nil {
		return nil, err
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: webhookNamespace, Labels: map[string]string{
			discoveryv1.LabelServiceName: webhookService,
			discoveryv1.LabelManagedBy:   "localcluster.karpenter.k8s.linode",
		}},
		AddressType: addressType,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{address}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(webhookPortName), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if err := kube.Create(ctx, slice); err != nil {
		return nil, fmt.Errorf("creating the webhook's EndpointSlice: %w", err)
	}
	return &webhookEndpoint{kube: kube, slice: slice, readyz: readyz, reachable: true}, nil
}

// machineAddress is an address of this machine other than loopback and link-local.
func machineAddress() (string, discoveryv1.AddressType, error) {
	addresses, err := net.InterfaceAddrs()
	if err != nil {
		return "", "", err
	}
	var v6 string
	for _, a := range addresses {
		prefix, ok := a.(*net.IPNet)
		if !ok || !prefix.IP.IsGlobalUnicast() {
			continue
		}
		if prefix.IP.To4() != nil {
			return prefix.IP.String(), discoveryv1.AddressTypeIPv4, nil
		}
		if v6 == "" {
			v6 = prefix.IP.String()
		}
	}
	if v6 != "" {
		return v6, discoveryv1.AddressTypeIPv6, nil
	}
	return "", "", errors.New("this machine has no address other than loopback and link-local, which the webhook's EndpointSlice needs: the apiserver refuses those")
}

// run keeps the EndpointSlice's ready condition on the controller's readiness until ctx is done.
func (w *webhookEndpoint) run(ctx context.Context) {
	probe := &http.Client{Timeout: time.Second}
	for {
		resp, err := probe.Get(w.readyz)
		ready := err == nil && resp.StatusCode == http.StatusOK
		if err == nil {
			resp.Body.Close()
		}
		if err := w.publish(ctx, ready); err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "updating the webhook's EndpointSlice")
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(webhookEndpointInterval):
		}
	}
}

// publish writes the endpoint's readiness, held false while the webhook is made unreachable.
func (w *webhookEndpoint) publish(ctx context.Context, controllerReady bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	ready := controllerReady && w.reachable
	if ready == w.ready {
		return nil
	}
	stored := w.slice.DeepCopy()
	w.slice.Endpoints[0].Conditions.Ready = ptr.To(ready)
	if err := w.kube.Patch(ctx, w.slice, client.MergeFrom(stored)); err != nil {
		w.slice = stored
		return err
	}
	w.ready = ready
	return nil
}

// isReady reports whether the EndpointSlice says the controller is ready.
func (w *webhookEndpoint) isReady() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ready
}

// SetWebhookReachable makes the webhook's Service end at the controller's replicas while they
// are ready (true) or at nothing (false), so that kube-apiserver cannot reach the webhooks while
// the controller itself runs on, as when its Service or network path is broken.
func (c *Cluster) SetWebhookReachable(ctx context.Context, reachable bool) error {
	var errs []error
	for _, replica := range c.replicas {
		endpoint := replica.webhook
		endpoint.mu.Lock()
		endpoint.reachable = reachable
		endpoint.mu.Unlock()
		if !reachable {
			errs = append(errs, endpoint.publish(ctx, false))
		}
	}
	return errors.Join(errs...)
}
