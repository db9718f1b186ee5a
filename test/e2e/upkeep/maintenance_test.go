package upkeep_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/test/e2e/framework"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

var _ = Describe("Linode maintenance and host failures", func() {
	It("replaces a node before maintenance powers it off, through a drain its PodDisruptionBudget allows; live migrations and other Linodes' maintenance change nothing", func(ctx SpecContext) {
		f := newFixture("maintenance")
		// 4-vCPU nodes: the three one-CPU web pods share one.
		f.NodePool.Spec.Template.Spec.Requirements = append(f.NodePool.Spec.Template.Spec.Requirements, karpv1.NodeSelectorRequirementWithMinValues{
			Key: v1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpIn, Values: []string{"4"},
		})
		f.Create(ctx)
		// steady keeps web off its node: Kubernetes applies required anti-affinity both ways.
		steady := f.Deployment("steady", 1, "1")
		steady.Spec.Template.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "e2e": f.Name}},
				TopologyKey:   corev1.LabelHostname,
			}},
		}}
		Expect(kube.Create(ctx, steady)).To(Succeed())
		f.ExpectRunning(ctx, "steady", 1)
		web := f.Deployment("web", 3, "1")
		Expect(kube.Create(ctx, web)).To(Succeed())
		budget := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: f.Name, Namespace: framework.Namespace},
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: new(intstr.FromInt32(2)), Selector: web.Spec.Selector},
		}
		Expect(kube.Create(ctx, budget)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(kube.Delete(ctx, budget))).To(Succeed()) })
		f.ExpectRunning(ctx, "web", 3)
		target := f.NodeClaimOf(ctx, f.Pods(ctx, "web")[0])
		migrating := f.NodeClaimOf(ctx, f.Pods(ctx, "steady")[0])
		for _, pod := range f.Pods(ctx, "web") {
			Expect(pod.Spec.NodeName).To(Equal(target.Status.NodeName), "the web pods share a node")
		}
		targetID, err := nodeprovider.ParseProviderID(target.Status.ProviderID)
		Expect(err).NotTo(HaveOccurred())
		migratingID, err := nodeprovider.ParseProviderID(migrating.Status.ProviderID)
		Expect(err).NotTo(HaveOccurred())
		foreignID := foreignLinode(ctx)

		running := watchRunning(ctx, f, "web")
		powerOff, err := cluster.Emulator.ScheduleMaintenance(targetID, emulator.Maintenance{Type: emulator.MaintenancePowerOffOn, StartsIn: framework.Scaled(time.Hour)})
		Expect(err).NotTo(HaveOccurred())
		for id, maintenanceType := range map[int]string{migratingID: emulator.MaintenanceLiveMigration, foreignID: emulator.MaintenancePowerOffOn} {
			_, err := cluster.Emulator.ScheduleMaintenance(id, emulator.Maintenance{Type: maintenanceType, StartsIn: framework.Scaled(time.Hour)})
			Expect(err).NotTo(HaveOccurred())
		}

		By("replacing the node whose Linode is powered off, before the window")
		Eventually(func(g Gomega) {
			g.Expect(cluster.Emulator.Instances()).NotTo(ContainElement(HaveField("ID", targetID)), "the node's Linode is deleted")
			g.Expect(f.NodeClaims(ctx)).NotTo(ContainElement(HaveField("Name", target.Name)))
		}).WithContext(ctx).WithTimeout(framework.Scaled(time.Hour)).Should(Succeed())
		Expect(time.Now()).To(BeTemporally("<", powerOff.When), "the Linode is gone before Linode powers it off at %s", powerOff.When)
		fmt.Fprintf(GinkgoWriter, "node replaced %v before its maintenance window\n", time.Until(powerOff.When).Round(time.Second))
		f.ExpectRunning(ctx, "web", 3)
		Expect(running.minimum()).To(BeNumerically(">=", 2), "the drain keeps the PodDisruptionBudget's two web pods running throughout")
		Expect(kindsOfEvents(ctx, target.Name)).To(ContainElement("LinodeMaintenanceScheduled"))

		By("leaving the live-migrating node and the Linode that is not ours alone")
		current := &karpv1.NodeClaim{}
		Expect(kube.Get(ctx, client.ObjectKeyFromObject(migrating), current)).To(Succeed())
		Expect(current.Annotations).NotTo(HaveKey(v1.AnnotationMaintenanceWindow))
		Expect(current.StatusConditions().Get(karpv1.ConditionTypeDrifted)).To(BeNil())
		Expect(kindsOfEvents(ctx, migrating.Name)).To(ContainElement("LinodeLiveMigrationScheduled"))
		Expect(cluster.Emulator.Instances()).To(ContainElement(HaveField("ID", foreignID)))
	})

	It("replaces a node whose host fails within 2 minutes", func(ctx SpecContext) {
		f := newFixture("host-failure")
		f.Create(ctx)
		Expect(kube.Create(ctx, f.Deployment("web", 1, "1"))).To(Succeed())
		f.ExpectRunning(ctx, "web", 1)
		failed := f.NodeClaims(ctx)[0]
		id, err := nodeprovider.ParseProviderID(failed.Status.ProviderID)
		Expect(err).NotTo(HaveOccurred())

		start := time.Now()
		down, err := cluster.Emulator.FailHost(id, emulator.HostFailure{})
		Expect(err).NotTo(HaveOccurred())
		Expect(down).To(ConsistOf(id))
		Eventually(func(g Gomega) {
			g.Expect(f.NodeClaims(ctx)).NotTo(ContainElement(HaveField("Name", failed.Name)), "the failed node's NodeClaim is gone")
			g.Expect(cluster.Emulator.Instances()).NotTo(ContainElement(HaveField("ID", id)), "its Linode is deleted")
			pods := f.Pods(ctx, "web")
			g.Expect(pods).To(HaveLen(1))
			g.Expect(pods[0].Status.Phase).To(Equal(corev1.PodRunning))
			g.Expect(pods[0].Spec.NodeName).NotTo(Equal(failed.Status.NodeName))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		fmt.Fprintf(GinkgoWriter, "node replaced %v after its host failed\n", time.Since(start).Round(time.Second))
		Expect(kindsOfEvents(ctx, failed.Name)).To(ContainElement("LinodeDown"))
	})
})

// foreignLinode is a Linode on the account that is no node of the cluster; it is deleted when the
// spec ends, before the spec's consistency checks. It is never booted, so no kubelet registers.
func foreignLinode(ctx context.Context) int {
	GinkgoHelper()
	linode := cluster.Emulator.NewClient()
	created, err := linode.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: cluster.Region(), Type: "g6-standard-2", Label: "not-a-node", Booted: new(false)})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) { Expect(linode.DeleteInstance(ctx, created.ID)).To(Succeed()) })
	return created.ID
}

// runningWatch samples an app's running pods while a spec disrupts its nodes.
type runningWatch struct {
	mu     sync.Mutex
	fewest int
}

// watchRunning samples the app's running pods every 100 ms until the spec ends, keeping the
// fewest seen running at once. Pods being deleted do not count.
func watchRunning(ctx context.Context, f *framework.Fixture, app string) *runningWatch {
	w := &runningWatch{fewest: -1}
	ctx, stop := context.WithCancel(ctx)
	DeferCleanup(stop)
	go func() {
		defer GinkgoRecover()
		for ctx.Err() == nil {
			var pods corev1.PodList
			if err := kube.List(ctx, &pods, client.InNamespace(framework.Namespace), client.MatchingLabels{"app": app, "e2e": f.Name}); err == nil {
				running := 0
				for _, pod := range pods.Items {
					if pod.DeletionTimestamp.IsZero() && pod.Status.Phase == corev1.PodRunning {
						running++
					}
				}
				w.mu.Lock()
				if w.fewest < 0 || running < w.fewest {
					w.fewest = running
				}
				w.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *runningWatch) minimum() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fewest
}

// kindsOfEvents are the reasons of the Kubernetes events about a NodeClaim.
func kindsOfEvents(ctx context.Context, nodeClaim string) []string {
	GinkgoHelper()
	var events corev1.EventList
	Expect(kube.List(ctx, &events)).To(Succeed())
	var reasons []string
	for _, event := range events.Items {
		if event.InvolvedObject.Kind == "NodeClaim" && event.InvolvedObject.Name == nodeClaim {
			reasons = append(reasons, event.Reason)
		}
	}
	return reasons
}
