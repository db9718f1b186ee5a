package instance

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// KubeletConfigMap is where kubeadm keeps the cluster's kubelet configuration, which `kubeadm
// join` gives every node, under the key "kubelet".
var KubeletConfigMap = types.NamespacedName{Namespace: metav1.NamespaceSystem, Name: "kubelet-config"}

// kubeletConfigTTL is how long one reading of the cluster's kubelet configuration is used.
const kubeletConfigTTL = 5 * time.Minute

// ClusterKubeletConfig reads the cluster's kubelet configuration, so that Karpenter's nodes run
// with the settings the cluster's other nodes have (cgroup driver, cluster DNS, ...). A cluster
// without one gets bootstrap.DefaultKubeletConfiguration.
type ClusterKubeletConfig struct {
	reader client.Reader
	clock  clock.PassiveClock

	mu     sync.Mutex
	config *kubeletv1beta1.KubeletConfiguration
	readAt time.Time
}

// NewClusterKubeletConfig reads with reader, uncached: the controller keeps no cache of ConfigMaps.
func NewClusterKubeletConfig(reader client.Reader, clk clock.PassiveClock) *ClusterKubeletConfig {
	return &ClusterKubeletConfig{reader: reader, clock: clk}
}

// Get returns the cluster's kubelet configuration, nil when it publishes none.
func (c *ClusterKubeletConfig) Get(ctx context.Context) (*kubeletv1beta1.KubeletConfiguration, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.readAt.IsZero() && c.clock.Since(c.readAt) < kubeletConfigTTL {
		return c.config, nil
	}
	configMap := &corev1.ConfigMap{}
	if err := c.reader.Get(ctx, KubeletConfigMap, configMap); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading the cluster's kubelet configuration %s: %w", KubeletConfigMap, err)
		}
		c.config, c.readAt = nil, c.clock.Now()
		return nil, nil
	}
	config := &kubeletv1beta1.KubeletConfiguration{}
	if err := yaml.Unmarshal([]byte(configMap.Data["kubelet"]), config); err != nil {
		return nil, fmt.Errorf("the cluster's kubelet configuration %s is not a KubeletConfiguration: %w", KubeletConfigMap, err)
	}
	c.config, c.readAt = config, c.clock.Now()
	return config, nil
}
