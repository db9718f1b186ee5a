package operator_test

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/operator"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	"github.com/linode/karpenter-provider-linode/test/emulator"
	"github.com/linode/karpenter-provider-linode/test/localcluster/component"
)

func TestEveryModeIsBuiltHere(t *testing.T) {
	for _, name := range mode.All {
		if _, err := operator.ModeNamed(name); err != nil {
			t.Errorf("mode %s: %v", name, err)
		}
	}
	if _, err := operator.ModeNamed("fargate"); err == nil || !strings.Contains(err.Error(), `KARPENTER_MODE "fargate"`) {
		t.Errorf("an unknown mode gave %v, want an error naming KARPENTER_MODE", err)
	}
}

func TestInstanceModeNeedsARegionWithTheMetadataService(t *testing.T) {
	e := test.StartEmulatorForTest(t, emulator.WithToken(testToken), emulator.WithoutRegionCapability("us-sea", instance.CapabilityMetadata))
	_, err := operator.CheckLinode(context.Background(), client(t, e, testToken), &options.Options{Mode: mode.Instance, Region: "us-sea"}, operator.Instance{})
	var configErr *options.ConfigError
	if !errors.As(err, &configErr) || !strings.Contains(configErr.Message, `LINODE_REGION "us-sea" has no Metadata service`) {
		t.Fatalf("got %v, want a ConfigError naming LINODE_REGION and the Metadata service", err)
	}
	if _, err := operator.CheckLinode(context.Background(), client(t, e, testToken), &options.Options{Mode: mode.Instance, Region: "us-ord"}, operator.Instance{}); err != nil {
		t.Fatalf("a region with the Metadata service: %v", err)
	}
}

// TestInstanceModeFindsTheClusterNodesJoin starts instance mode against a real API server, as the
// controller does once the Linode API checked out: the endpoint nodes join comes from
// CLUSTER_ENDPOINT or kube-public/cluster-info, must answer with the cluster's CA, and the
// cluster's identity is its kube-system namespace.
func TestInstanceModeFindsTheClusterNodesJoin(t *testing.T) {
	env, err := environment.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	ctx := context.Background()
	kubeSystem := &corev1.Namespace{}
	if err := env.Client.Get(ctx, types.NamespacedName{Name: metav1.NamespaceSystem}, kubeSystem); err != nil {
		t.Fatal(err)
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedEndpoint := "https://" + closed.Addr().String()
	closed.Close()
	stranger := httptest.NewTLSServer(nil)
	t.Cleanup(stranger.Close)

	for _, tt := range []struct {
		name        string
		endpoint    string
		clusterInfo bool
		// wantConfigError is a fragment of the one line the user reads; empty when the start-up passes.
		wantConfigError string
		wantSource      string
	}{
		{name: "no endpoint anywhere", wantConfigError: "CLUSTER_ENDPOINT is not set and the cluster publishes no kube-public/cluster-info"},
		{name: "an endpoint nothing answers at", endpoint: closedEndpoint, wantConfigError: "CLUSTER_ENDPOINT: the cluster endpoint \"" + closedEndpoint + "\" (from CLUSTER_ENDPOINT) does not answer"},
		{name: "an endpoint the cluster CA does not verify", endpoint: stranger.URL, wantConfigError: "does not prove itself with the cluster CA"},
		{name: "CLUSTER_ENDPOINT", endpoint: env.Config.Host, wantSource: "CLUSTER_ENDPOINT"},
		{name: "kube-public/cluster-info, as kubeadm publishes it", clusterInfo: true, wantSource: "kube-public/cluster-info"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.clusterInfo {
				if err := component.PublishClusterInfo(ctx, env.Client, env.Config.Host, env.Config.CAData); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					_ = env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: instance.ClusterInfo.Namespace, Name: instance.ClusterInfo.Name}})
				})
			}
			emu := test.StartEmulatorForTest(t)
			provider, err := test.NewInstance(ctx, emu, env.Client, env.Config, test.WithClusterEndpoint(tt.endpoint))
			if tt.wantConfigError != "" {
				var configErr *options.ConfigError
				if !errors.As(err, &configErr) || !strings.Contains(configErr.Message, tt.wantConfigError) || strings.Contains(configErr.Message, "\n") {
					t.Fatalf("got %v, want one line containing %q", err, tt.wantConfigError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cluster := provider.Target.Cluster
			if cluster.EndpointSource != tt.wantSource || cluster.Endpoint != env.Config.Host || cluster.UID != kubeSystem.UID {
				t.Errorf("found %s, want the API server %s from %s, identified by kube-system's UID %s", cluster, env.Config.Host, tt.wantSource, kubeSystem.UID)
			}
		})
	}
}
