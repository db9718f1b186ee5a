package sizing_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	coretest "sigs.k8s.io/karpenter/pkg/test"

	"github.com/linode/karpenter-provider-linode/pkg/apis"
	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
)

// BenchmarkInstanceTypes is what core pays each time it asks for a NodePool's instance types
// while 500 pods are pending and none changed since the last answer: the pending pods read
// from an informer cache over kube-apiserver, as the controller's manager serves them, grouped
// by shape and found unchanged.
func BenchmarkInstanceTypes(b *testing.B) {
	env, err := environment.New()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	kubeClient, informers, err := env.CachedClientAndInformers(ctx, environment.PodNodeNameIndex)
	if err != nil {
		b.Fatal(err)
	}
	nodeClass := &v1.LinodeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if err := kubeClient.Create(ctx, nodeClass); err != nil {
		b.Fatal(err)
	}
	const pods = 500
	for i := range pods {
		cpu := []string{"250m", "500m", "1"}[i%3]
		pod := coretest.UnschedulablePod(coretest.PodOptions{
			ObjectMeta:           metav1.ObjectMeta{Name: fmt.Sprintf("web-%03d", i), Namespace: "default"},
			ResourceRequirements: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
		})
		status := pod.Status
		if err := kubeClient.Create(ctx, pod); err != nil {
			b.Fatal(err)
		}
		pod.Status = status
		if err := kubeClient.Status().Update(ctx, pod); err != nil {
			b.Fatal(err)
		}
	}

	e := test.StartEmulatorForTest(b)
	cloud, err := test.NewLKE(ctx, e, kubeClient, test.WithCluster(clusterName, lke.TierStandard, test.Region))
	if err != nil {
		b.Fatal(err)
	}
	cloud.Sizing.Track(state.NewCluster(clocktesting.NewFakeClock(time.Now()), kubeClient, cloud.CloudProvider))
	// As the controller's policy reads pending pods from its manager's cache.
	if err := cloud.Sizing.ReadFromInformers(ctx, informers); err != nil {
		b.Fatal(err)
	}
	nodePool := coretest.NodePool(karpv1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: karpv1.NodePoolSpec{Template: karpv1.NodeClaimTemplate{Spec: karpv1.NodeClaimTemplateSpec{
			NodeClassRef: &karpv1.NodeClassReference{Group: apis.Group, Kind: "LinodeNodeClass", Name: nodeClass.Name},
		}}},
	})

	// Until the cache holds every pending pod, the answer keeps changing.
	deadline := time.Now().Add(time.Minute)
	for {
		var list corev1.PodList
		if err := kubeClient.List(ctx, &list); err == nil && len(list.Items) == pods {
			if _, err := cloud.CloudProvider.GetInstanceTypes(ctx, nodePool); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			b.Fatal("the cache did not hold the pods within a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if its, err := cloud.CloudProvider.GetInstanceTypes(ctx, nodePool); err != nil || len(its) == 0 {
			b.Fatalf("%d instance types, %v", len(its), err)
		}
	}
}
