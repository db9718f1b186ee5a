package cloudprovider_test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/awslabs/operatorpkg/status"
	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/node/health"
	"sigs.k8s.io/karpenter/pkg/controllers/nodeclaim/lifecycle"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	linodecloudprovider "github.com/linode/karpenter-provider-linode/pkg/cloudprovider"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	linodeexpectations "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

const poolsRoute = "/lke/clusters/{clusterId}/pools"

// cheapestPlan is the cheapest plan of the catalogue that satisfies keep.
func cheapestPlan(keep func(linodego.LinodeType) bool) string {
	types, err := emu.Client.ListTypes(ctx, nil)
	Expect(err).ToNot(HaveOccurred())
	types = lo.Filter(types, func(t linodego.LinodeType, _ int) bool {
		return t.Price != nil && t.Class != linodego.ClassNanode && keep(t)
	})
	Expect(types).ToNot(BeEmpty())
	return lo.MinBy(types, func(a, b linodego.LinodeType) bool { return a.Price.Hourly < b.Price.Hourly }).ID
}

// standaloneNodeClaim is a NodeClaim of the default NodePool that may use the listed plans.
func standaloneNodeClaim(plans ...string) *karpv1.NodeClaim {
	return coretest.NodeClaim(karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{karpv1.NodePoolLabelKey: nodePool.Name}},
		Spec: karpv1.NodeClaimSpec{
			NodeClassRef: test.NodeClassRef(nodeClass.Name),
			Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
				{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: plans},
				{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{karpv1.CapacityTypeOnDemand}},
			},
		},
	})
}

var _ = Describe("Scheduling", func() {
	It("launches the cheapest plan that fits the pod's requests", func() {
		pod := coretest.UnschedulablePod(coretest.PodOptions{ResourceRequirements: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		}})
		ExpectProvisioned(ctx, env.Client, cluster, cloudProvider, prov, pod)
		node := ExpectScheduled(ctx, env.Client, pod)
		want := cheapestPlan(func(t linodego.LinodeType) bool { return t.VCPUs >= 3 })
		Expect(poolPlans()).To(Equal([]string{want}))
		Expect(node.Labels).To(HaveKeyWithValue(corev1.LabelInstanceTypeStable, want))
	})
	It("honours a nodeSelector on the plan class", func() {
		pod := coretest.UnschedulablePod(coretest.PodOptions{NodeSelector: map[string]string{v1.LabelInstanceClass: "dedicated"}})
		ExpectProvisioned(ctx, env.Client, cluster, cloudProvider, prov, pod)
		ExpectScheduled(ctx, env.Client, pod)
		Expect(poolPlans()).To(Equal([]string{cheapestPlan(func(t linodego.LinodeType) bool { return t.Class == linodego.ClassDedicated })}))
	})
	It("honours required node affinity on the plan's vCPUs", func() {
		pod := coretest.UnschedulablePod(coretest.PodOptions{NodeRequirements: []corev1.NodeSelectorRequirement{
			{Key: v1.LabelInstanceCPU, Operator: corev1.NodeSelectorOpGt, Values: []string{"15"}},
		}})
		ExpectProvisioned(ctx, env.Client, cluster, cloudProvider, prov, pod)
		ExpectScheduled(ctx, env.Client, pod)
		Expect(poolPlans()).To(Equal([]string{cheapestPlan(func(t linodego.LinodeType) bool { return t.VCPUs > 15 })}))
	})
	It("honours preferred node affinity when it can", func() {
		pod := coretest.UnschedulablePod(coretest.PodOptions{NodePreferences: []corev1.NodeSelectorRequirement{
			{Key: v1.LabelInstanceClass, Operator: corev1.NodeSelectorOpIn, Values: []string{"highmem"}},
		}})
		ExpectProvisioned(ctx, env.Client, cluster, cloudProvider, prov, pod)
		ExpectScheduled(ctx, env.Client, pod)
		Expect(poolPlans()).To(Equal([]string{cheapestPlan(func(t linodego.LinodeType) bool { return t.Class == linodego.ClassHighmem })}))
	})
	It("puts the NodePool's taints on the pool and launches only for pods that tolerate them", func() {
		taint := corev1.Taint{Key: "dedicated", Value: "payments", Effect: corev1.TaintEffectNoSchedule}
		nodePool.Spec.Template.Spec.Taints = []corev1.Taint{taint}
		ExpectApplied(ctx, env.Client, nodePool)

		intolerant := coretest.UnschedulablePod()
		ExpectProvisioned(ctx, env.Client, cluster, cloudProvider, prov, intolerant)
		ExpectNotScheduled(ctx, env.Client, intolerant)
		Expect(emu.Pools(lkeCluster.ID)).To(BeEmpty())

		tolerant := coretest.UnschedulablePod(coretest.PodOptions{Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "payments", Effect: corev1.TaintEffectNoSchedule}}})
		ExpectProvisioned(ctx, env.Client, cluster, cloudProvider, prov, tolerant)
		ExpectScheduled(ctx, env.Client, tolerant)
		pools := emu.Pools(lkeCluster.ID)
		Expect(pools).To(HaveLen(1))
		pool, err := emu.Client.GetLKENodePool(ctx, lkeCluster.ID, pools[0].ID)
		Expect(err).ToNot(HaveOccurred())
		Expect(pool.Taints).To(Equal([]linodego.LKENodePoolTaint{{Key: "dedicated", Value: "payments", Effect: linodego.LKENodePoolTaintEffectNoSchedule}}))
	})
	It("spreads pods over hostnames with one pool per node", func() {
		labels := map[string]string{"app": "spread"}
		spread := corev1.TopologySpreadConstraint{
			MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
		}
		pods := coretest.UnschedulablePods(coretest.PodOptions{
			ObjectMeta:                metav1.ObjectMeta{Labels: labels},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{spread},
		}, 3)
		ExpectProvisioned(ctx, env.Client, cluster, cloudProvider, prov, pods...)
		hosts := lo.Uniq(lo.Map(pods, func(pod *corev1.Pod, _ int) string { return ExpectScheduled(ctx, env.Client, pod).Name }))
		Expect(hosts).To(HaveLen(3))
		Expect(emu.Pools(lkeCluster.ID)).To(HaveLen(3))
		Expect(emu.Instances()).To(HaveLen(3))
	})
	It("fills the heavier NodePool up to its limits, then the next one", func() {
		heavy := test.NodePool(nodeClass, karpv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "heavy"}, Spec: karpv1.NodePoolSpec{
			Weight: lo.ToPtr[int32](100),
			Limits: karpv1.Limits{corev1.ResourceCPU: resource.MustParse("2")},
		}})
		ExpectApplied(ctx, env.Client, heavy)
		pods := coretest.UnschedulablePods(coretest.PodOptions{ResourceRequirements: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")},
		}}, 2)
		ExpectProvisioned(ctx, env.Client, cluster, cloudProvider, prov, pods...)
		ExpectScheduled(ctx, env.Client, pods[0])
		ExpectScheduled(ctx, env.Client, pods[1])
		var owners []string
		for _, pool := range emu.Pools(lkeCluster.ID) {
			owner, _ := nodeprovider.TagValue(pool.Tags, nodeprovider.TagKeyNodePool)
			owners = append(owners, owner)
		}
		slices.Sort(owners)
		Expect(owners).To(Equal([]string{"default", "heavy"}))
	})
})

var _ = Describe("Create", func() {
	It("returns the launched NodeClaim with the plan's labels, resources and the NodeClass hash", func() {
		plan := cheapestPlan(func(linodego.LinodeType) bool { return true })
		launched, err := cloudProvider.Create(ctx, standaloneNodeClaim(plan))
		Expect(err).ToNot(HaveOccurred())
		instances := emu.Instances()
		Expect(instances).To(HaveLen(1))
		Expect(launched.Status.ProviderID).To(Equal(nodeprovider.ProviderID(instances[0].ID)))
		Expect(launched.Labels).To(HaveKeyWithValue(corev1.LabelInstanceTypeStable, plan))
		Expect(launched.Labels).To(HaveKeyWithValue(corev1.LabelTopologyZone, region))
		Expect(launched.Labels).To(HaveKeyWithValue(corev1.LabelTopologyRegion, region))
		Expect(launched.Labels).To(HaveKeyWithValue(karpv1.CapacityTypeLabelKey, karpv1.CapacityTypeOnDemand))
		Expect(launched.Labels).To(HaveKeyWithValue(v1.LabelInstanceClass, "standard"))
		Expect(launched.Status.Capacity.Cpu().Value()).To(BeNumerically(">", 0))
		Expect(launched.Status.Allocatable.Memory().Value()).To(BeNumerically(">", 0))
		Expect(launched.Annotations).To(Equal(map[string]string{
			v1.AnnotationNodeClassHash:        nodeClass.Hash(mode.LKE),
			v1.AnnotationNodeClassHashVersion: v1.NodeClassHashVersion,
		}))
	})
	It("costs at most 3 Linode API calls for one node on the standard tier", func() {
		_, err := cloudProvider.Create(ctx, standaloneNodeClaim("g6-standard-2"))
		Expect(err).ToNot(HaveOccurred())
		Expect(emu.Calls()).To(BeNumerically("<=", 3), fmt.Sprint(emu.Counters()))
	})
	It("refuses to launch with a NodeClass that is not ready", func() {
		nodeClass.StatusConditions().SetFalse(v1.ConditionTypeFirewallReady, "FirewallNotFound", "firewall 7 does not exist")
		ExpectApplied(ctx, env.Client, nodeClass)
		_, err := cloudProvider.Create(ctx, standaloneNodeClaim("g6-standard-2"))
		Expect(cloudprovider.IsNodeClassNotReadyError(err)).To(BeTrue(), fmt.Sprint(err))
		Expect(emu.Pools(lkeCluster.ID)).To(BeEmpty())
	})
	It("reports a launch Linode refuses as a CreateError carrying Linode's reason", func() {
		nodeClass.Spec.FirewallID = lo.ToPtr(424242)
		ExpectApplied(ctx, env.Client, nodeClass)
		_, err := cloudProvider.Create(ctx, standaloneNodeClaim("g6-standard-2"))
		var createErr *cloudprovider.CreateError
		Expect(err).To(BeAssignableToTypeOf(createErr))
		createErr = err.(*cloudprovider.CreateError)
		Expect(createErr.ConditionReason).To(Equal(linodecloudprovider.LaunchRejectedReason))
		Expect(createErr.ConditionMessage).ToNot(BeEmpty())
		Expect(unavailable.IsUnavailable("g6-standard-2", region)).To(BeFalse())
		nodeClass = ExpectExists(ctx, env.Client, nodeClass)
		validation := nodeClass.StatusConditions().Get(v1.ConditionTypeValidationSucceeded)
		Expect(validation.IsFalse()).To(BeTrue())
		Expect(validation.Reason).To(Equal(v1.ReasonLaunchRejected))
		Expect(validation.Message).To(ContainSubstring(createErr.ConditionMessage))
	})
	It("hands back to core a NodeClaim whose create's turn comes after core would time it out, as many as replacements would find turns in time", func() {
		// One pool create every 2 minutes; the client alone would let a create wait a day.
		budgets := linode.DefaultBudgets()
		budgets[linode.ClassPoolCreate] = linode.Budget{Requests: 1, Window: 2 * time.Minute}
		paced := linodeexpectations.ExpectLKE(ctx, emu, env.Client, test.WithCluster("paced", lke.TierStandard, region),
			test.WithPacer(linode.NewPacer(budgets, 24*time.Hour, clock.RealClock{})))
		fresh := standaloneNodeClaim("g6-standard-2")
		fresh.CreationTimestamp = metav1.Now()
		_, err := paced.CloudProvider.Create(ctx, fresh)
		Expect(err).ToNot(HaveOccurred())

		// Core times these out within a minute of their turn's earliest leave (in 2 minutes); a
		// NodeClaim made now would take the next turn within its 4 minutes, so the first is
		// handed back for core to replace at once. The second's replacement would have to wait
		// behind the first's: it waits for core's retry, its Launched condition saying why.
		staleSince := metav1.NewTime(time.Now().Add(-lifecycle.LaunchTimeout + time.Minute))
		handedBack := standaloneNodeClaim("g6-standard-2")
		handedBack.CreationTimestamp = staleSince
		_, err = paced.CloudProvider.Create(ctx, handedBack)
		Expect(cloudprovider.IsInsufficientCapacityError(err)).To(BeTrue(), fmt.Sprint(err))
		Expect(err.Error()).To(ContainSubstring("a NodeClaim made now gets a turn in time"))

		waiting := standaloneNodeClaim("g6-standard-2")
		waiting.CreationTimestamp = staleSince
		_, err = paced.CloudProvider.Create(ctx, waiting)
		var createErr *cloudprovider.CreateError
		Expect(errors.As(err, &createErr)).To(BeTrue(), fmt.Sprint(err))
		Expect(createErr.ConditionReason).To(Equal(linodecloudprovider.AwaitingAPITurnReason))
		Expect(emu.Pools(paced.Cluster.ID)).To(HaveLen(1))
	})
	It("answers exhausted capacity with InsufficientCapacity, and the next attempt picks the next plan", func() {
		emu.SetCapacity(region, "g6-standard-1", 0)
		_, err := cloudProvider.Create(ctx, standaloneNodeClaim("g6-standard-1", "g6-standard-2"))
		Expect(cloudprovider.IsInsufficientCapacityError(err)).To(BeTrue(), fmt.Sprint(err))

		instanceTypes, err := cloudProvider.GetInstanceTypes(ctx, nodePool)
		Expect(err).ToNot(HaveOccurred())
		exhausted, _ := lo.Find(instanceTypes, func(it *cloudprovider.InstanceType) bool { return it.Name == "g6-standard-1" })
		Expect(exhausted.Offerings.Available()).To(BeEmpty())

		pod := coretest.UnschedulablePod()
		ExpectProvisioned(ctx, env.Client, cluster, cloudProvider, prov, pod)
		ExpectScheduled(ctx, env.Client, pod)
		Expect(poolPlans()).To(Equal([]string{"g6-standard-2"}))
	})
})

// Core's consolidation asks a replacement for spot alone when its NodePool leaves the capacity
// type open; Linode sells on-demand only.
var _ = DescribeTable("A NodeClaim asking for spot alone",
	func(nodePoolCapacityTypes []string, launches bool) {
		if nodePoolCapacityTypes != nil {
			nodePool.Spec.Template.Spec.Requirements = append(nodePool.Spec.Template.Spec.Requirements, karpv1.NodeSelectorRequirementWithMinValues{
				Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: nodePoolCapacityTypes,
			})
			ExpectApplied(ctx, env.Client, nodePool)
		}
		replacement := standaloneNodeClaim("g6-standard-2")
		replacement.Spec.Requirements[1].Values = []string{karpv1.CapacityTypeSpot}

		launched, err := cloudProvider.Create(ctx, replacement)
		if !launches {
			Expect(cloudprovider.IsInsufficientCapacityError(err)).To(BeTrue(), fmt.Sprint(err))
			Expect(emu.Pools(lkeCluster.ID)).To(BeEmpty())
			return
		}
		Expect(err).ToNot(HaveOccurred())
		Expect(launched.Labels).To(HaveKeyWithValue(karpv1.CapacityTypeLabelKey, karpv1.CapacityTypeOnDemand))
		Expect(poolPlans()).To(Equal([]string{"g6-standard-2"}))
	},
	Entry("launches on-demand when its NodePool leaves the capacity type open", nil, true),
	Entry("launches on-demand when its NodePool allows spot and on-demand", []string{karpv1.CapacityTypeSpot, karpv1.CapacityTypeOnDemand}, true),
	Entry("launches nothing when its NodePool asks for spot alone", []string{karpv1.CapacityTypeSpot}, false),
)

var _ = Describe("Launch through the NodeClaim lifecycle", func() {
	launch := func() *karpv1.NodeClaim {
		nodeClaim := standaloneNodeClaim("g6-standard-2")
		ExpectApplied(ctx, env.Client, nodeClaim)
		return nodeClaim
	}
	expectOnePoolBehind := func(nodeClaim *karpv1.NodeClaim) {
		nodeClaim = ExpectExists(ctx, env.Client, nodeClaim)
		Expect(nodeClaim.StatusConditions().Get(karpv1.ConditionTypeLaunched).IsTrue()).To(BeTrue())
		Expect(emu.Pools(lkeCluster.ID)).To(HaveLen(1))
		instances := emu.Instances()
		Expect(instances).To(HaveLen(1))
		Expect(nodeClaim.Status.ProviderID).To(Equal(nodeprovider.ProviderID(instances[0].ID)))
	}
	It("recovers from a lost create response without a second pool", func() {
		emu.InjectFault(emulator.Fault{Method: http.MethodPost, Route: poolsRoute, LoseResponse: emulator.LoseWith502, Count: 1})
		nodeClaim := launch()
		Expect(ExpectObjectReconcileFailed(ctx, env.Client, lifecycleCtrl, nodeClaim)).To(HaveOccurred())
		Expect(emu.Pools(lkeCluster.ID)).To(HaveLen(1))
		ExpectObjectReconciled(ctx, env.Client, lifecycleCtrl, nodeClaim)
		expectOnePoolBehind(nodeClaim)
	})
	It("rides out a rate-limit storm", func() {
		emu.InjectFault(emulator.Fault{Method: http.MethodPost, Route: poolsRoute, Sequence: []int{429, 429, 429}})
		nodeClaim := launch()
		ExpectObjectReconciled(ctx, env.Client, lifecycleCtrl, nodeClaim)
		expectOnePoolBehind(nodeClaim)
	})
	It("retries a delete that failed with a server error until the pool is gone", func() {
		nodeClaim := launch()
		ExpectObjectReconciled(ctx, env.Client, lifecycleCtrl, nodeClaim)
		nodeClaim = ExpectExists(ctx, env.Client, nodeClaim)
		emu.InjectFault(emulator.Fault{Method: http.MethodDelete, Route: poolsRoute + "/{poolId}", Sequence: []int{http.StatusInternalServerError}})

		err := cloudProvider.Delete(ctx, nodeClaim)
		Expect(err).To(HaveOccurred())
		Expect(cloudprovider.IsNodeClaimNotFoundError(err)).To(BeFalse())
		Expect(cloudProvider.Delete(ctx, nodeClaim)).To(Succeed())
		Expect(cloudprovider.IsNodeClaimNotFoundError(cloudProvider.Delete(ctx, nodeClaim))).To(BeTrue())
		Expect(emu.Pools(lkeCluster.ID)).To(BeEmpty())
		Expect(emu.Instances()).To(BeEmpty())
	})
})

var _ = Describe("Get and List", func() {
	It("list 500 nodes with one paginated pool listing", func() {
		for i := range 500 {
			_, err := emu.Client.CreateLKENodePool(ctx, lkeCluster.ID, linodego.LKENodePoolCreateOptions{
				Count: 1, Type: "g6-standard-2",
				Tags: []string{nodeprovider.LKEClusterTag(lkeCluster.ID), nodeprovider.NodeClaimTag(fmt.Sprintf("default-%05d", i)), nodeprovider.NodePoolTag("default")},
			})
			Expect(err).ToNot(HaveOccurred())
		}
		emu.Tick()
		emu.ResetCounters()
		listed, err := cloudProvider.List(ctx)
		Expect(err).ToNot(HaveOccurred())
		Expect(listed).To(HaveLen(500))
		for _, nodeClaim := range listed[:50] {
			got, err := cloudProvider.Get(ctx, nodeClaim.Status.ProviderID)
			Expect(err).ToNot(HaveOccurred())
			Expect(got.Name).To(Equal(nodeClaim.Name))
		}
		Expect(emu.Counters()["GET "+poolsRoute]).To(BeNumerically("<=", 2))
		Expect(emu.Calls()).To(Equal(emu.Counters()["GET "+poolsRoute]), fmt.Sprint(emu.Counters()))
	})
	It("describes a node by its provider ID, NodeClaim, NodePool, plan and region", func() {
		launched, err := cloudProvider.Create(ctx, standaloneNodeClaim("g6-standard-2"))
		Expect(err).ToNot(HaveOccurred())
		got, err := cloudProvider.Get(ctx, launched.Status.ProviderID)
		Expect(err).ToNot(HaveOccurred())
		Expect(got.Status.ProviderID).To(Equal(launched.Status.ProviderID))
		Expect(got.Labels).To(HaveKeyWithValue(karpv1.NodePoolLabelKey, nodePool.Name))
		Expect(got.Labels).To(HaveKeyWithValue(corev1.LabelInstanceTypeStable, "g6-standard-2"))
		Expect(got.Labels).To(HaveKeyWithValue(corev1.LabelTopologyZone, region))
		_, err = cloudProvider.Get(ctx, "linode://987654")
		Expect(cloudprovider.IsNodeClaimNotFoundError(err)).To(BeTrue())
	})
})

var _ = Describe("Drift", func() {
	var nodeClaim *karpv1.NodeClaim
	BeforeEach(func() {
		firewallID := emu.AddFirewall("nodes")
		nodeClass.Spec.FirewallID = &firewallID
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClaim = standaloneNodeClaim("g6-standard-2")
		launched, err := cloudProvider.Create(ctx, nodeClaim)
		Expect(err).ToNot(HaveOccurred())
		nodeClaim.Annotations = launched.Annotations
		nodeClaim.Status.ProviderID = launched.Status.ProviderID
	})
	It("is not drifted while nothing changed", func() {
		Expect(cloudProvider.IsDrifted(ctx, nodeClaim)).To(BeEmpty())
	})
	DescribeTable("drifts when a field LKE mode uses changes",
		func(change func(*v1.LinodeNodeClassSpec)) {
			change(&nodeClass.Spec)
			ExpectApplied(ctx, env.Client, nodeClass)
			Expect(cloudProvider.IsDrifted(ctx, nodeClaim)).To(Equal(linodecloudprovider.DriftReasonNodeClass))
		},
		Entry("tags", func(spec *v1.LinodeNodeClassSpec) { spec.Tags = []v1.Tag{"team-payments"} }),
		Entry("disk encryption", func(spec *v1.LinodeNodeClassSpec) { spec.DiskEncryption = lo.ToPtr(v1.DiskEncryptionEnabled) }),
		Entry("kubelet", func(spec *v1.LinodeNodeClassSpec) {
			spec.Kubelet = &v1.KubeletConfiguration{MaxPods: lo.ToPtr[int32](50)}
		}),
	)
	It("drifts while Linode maintenance that takes the node down is recorded on the NodeClaim", func() {
		nodeClaim.Annotations[v1.AnnotationMaintenanceWindow] = "2026-01-02T04:04:05Z"
		nodeClaim.Annotations[v1.AnnotationMaintenanceType] = "power_off_on"
		Expect(cloudProvider.IsDrifted(ctx, nodeClaim)).To(Equal(linodecloudprovider.DriftReasonMaintenance))
		delete(nodeClaim.Annotations, v1.AnnotationMaintenanceWindow)
		Expect(cloudProvider.IsDrifted(ctx, nodeClaim)).To(BeEmpty())
	})
	DescribeTable("does not drift when a field only instance mode uses changes",
		func(change func(*v1.LinodeNodeClassSpec)) {
			change(&nodeClass.Spec)
			ExpectApplied(ctx, env.Client, nodeClass)
			Expect(cloudProvider.IsDrifted(ctx, nodeClaim)).To(BeEmpty())
		},
		Entry("user data", func(spec *v1.LinodeNodeClassSpec) { spec.UserData = lo.ToPtr("#cloud-config\nruncmd: [echo hi]\n") }),
		Entry("image", func(spec *v1.LinodeNodeClassSpec) { spec.Image = lo.ToPtr("linode/debian12") }),
		Entry("authorized keys", func(spec *v1.LinodeNodeClassSpec) {
			spec.AuthorizedKeys = []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI test"}
		}),
		Entry("maintenance policy", func(spec *v1.LinodeNodeClassSpec) { spec.MaintenancePolicy = lo.ToPtr(v1.MaintenancePolicyPowerOffOn) }),
	)
	It("does not compare hashes of another hash version", func() {
		nodeClaim.Annotations[v1.AnnotationNodeClassHashVersion] = "v0"
		nodeClass.Spec.Tags = []v1.Tag{"team-payments"}
		ExpectApplied(ctx, env.Client, nodeClass)
		Expect(cloudProvider.IsDrifted(ctx, nodeClaim)).To(BeEmpty())
	})
	It("drifts when the kubelet of a standard-tier node runs another version than the class records", func() {
		minor := strings.Join(strings.SplitN(strings.TrimPrefix(lkeCluster.K8sVersion, "v"), ".", 3)[:2], ".")
		node := coretest.Node(coretest.NodeOptions{ProviderID: nodeClaim.Status.ProviderID})
		node.Status.NodeInfo.KubeletVersion = "v" + minor + ".4"
		ExpectApplied(ctx, env.Client, node)
		nodeClass.Status.KubernetesVersion = minor
		ExpectApplied(ctx, env.Client, nodeClass)
		nodeClaim.Status.NodeName = node.Name
		Expect(cloudProvider.IsDrifted(ctx, nodeClaim)).To(BeEmpty())

		// The NodeClass controller records the cluster's upgrade.
		nodeClass.Status.KubernetesVersion = "1.99"
		ExpectApplied(ctx, env.Client, nodeClass)
		Expect(cloudProvider.IsDrifted(ctx, nodeClaim)).To(Equal(lke.DriftReasonKubernetesVersion))
		nodeClaim.Status.NodeName = ""
		Expect(cloudProvider.IsDrifted(ctx, nodeClaim)).To(BeEmpty(), "a node whose kubelet has not registered has no version to compare")
		ExpectDeleted(ctx, env.Client, node)
	})
	It("drifts when the pool's firewall was changed behind Karpenter's back", func() {
		other := emu.AddFirewall("other")
		pool := emu.Pools(lkeCluster.ID)[0]
		_, err := emu.Client.UpdateLKENodePool(ctx, lkeCluster.ID, pool.ID, linodego.LKENodePoolUpdateOptions{FirewallID: &other})
		Expect(err).ToNot(HaveOccurred())
		// A drift check reads the shared listing, which sees the change once a reader that wants
		// one no older than the TTL (here a Get) lists again.
		Eventually(func() cloudprovider.DriftReason {
			_, err := cloudProvider.Get(ctx, nodeClaim.Status.ProviderID)
			Expect(err).ToNot(HaveOccurred())
			reason, err := cloudProvider.IsDrifted(ctx, nodeClaim)
			Expect(err).ToNot(HaveOccurred())
			return reason
		}).WithTimeout(2 * lke.DefaultListingTTL).Should(Equal(lke.DriftReasonFirewall))
	})
})

var _ = Describe("Drift checks at rest", func() {
	It("read the listing garbage collection keeps, not a listing each", func() {
		clk := clocktesting.NewFakeClock(time.Now())
		cloud := linodeexpectations.ExpectLKE(ctx, emu, env.Client,
			test.WithCluster("at-rest", lke.TierStandard, region), test.WithNodeProviderOptions(lke.WithClock(clk)))
		// The pools are made here: the provider's launch waits on its clock, which only the
		// spec moves.
		for i := range 3 {
			_, err := emu.Client.CreateLKENodePool(ctx, cloud.Cluster.ID, linodego.LKENodePoolCreateOptions{
				Count: 1, Type: "g6-standard-2",
				Tags: []string{nodeprovider.LKEClusterTag(cloud.Cluster.ID), nodeprovider.NodeClaimTag(fmt.Sprintf("at-rest-%d", i)), nodeprovider.NodePoolTag(nodePool.Name)},
			})
			Expect(err).ToNot(HaveOccurred())
		}
		emu.Tick()
		listed, err := cloud.CloudProvider.List(ctx)
		Expect(err).ToNot(HaveOccurred())
		Expect(listed).To(HaveLen(3))
		nodeClaims := lo.Map(listed, func(launched *karpv1.NodeClaim, _ int) *karpv1.NodeClaim {
			nodeClaim := standaloneNodeClaim("g6-standard-2")
			nodeClaim.Status.ProviderID = launched.Status.ProviderID
			return nodeClaim
		})
		// That listing stands for core's garbage collection's, every two minutes.
		emu.ResetCounters()

		clk.Step(2 * time.Minute)
		for _, nodeClaim := range nodeClaims {
			Expect(cloud.CloudProvider.IsDrifted(ctx, nodeClaim)).To(BeEmpty())
		}
		Expect(emu.Calls()).To(BeZero(), fmt.Sprint(emu.Counters()))
		_, err = cloud.CloudProvider.Get(ctx, nodeClaims[0].Status.ProviderID)
		Expect(err).ToNot(HaveOccurred())
		Expect(emu.Counters()).To(HaveKeyWithValue("GET "+poolsRoute, 1), "a Get wants a listing of seconds")

		clk.Step(4 * time.Minute)
		emu.ResetCounters()
		for _, nodeClaim := range nodeClaims {
			Expect(cloud.CloudProvider.IsDrifted(ctx, nodeClaim)).To(BeEmpty())
		}
		Expect(emu.Counters()).To(HaveKeyWithValue("GET "+poolsRoute, 1), "without garbage collection, one listing serves every check")
	})
})

var _ = Describe("Repair and reboot", func() {
	It("offers repair policies that core's matcher accepts", func() {
		repairCtx := coreoptions.ToContext(ctx, coretest.Options(coretest.OptionsFields{FeatureGates: coretest.FeatureGates{NodeRepair: lo.ToPtr(true)}}))
		matcher, err := health.NewRepairPolicyMatcher(repairCtx, cloudProvider)
		Expect(err).ToNot(HaveOccurred())
		Expect(matcher).ToNot(BeNil())
	})
	It("reboots the node's Linode", func() {
		launched, err := cloudProvider.Create(ctx, standaloneNodeClaim("g6-standard-2"))
		Expect(err).ToNot(HaveOccurred())
		emu.ResetCounters()
		Expect(cloudProvider.Reboot(ctx, launched, "op-1")).To(Succeed())
		Expect(emu.Counters()).To(HaveKeyWithValue("POST /linode/instances/{linodeId}/reboot", 1))
	})
	It("names itself and its NodeClass", func() {
		Expect(cloudProvider.Name()).To(Equal("linode"))
		Expect(cloudProvider.GetSupportedNodeClasses()).To(Equal([]status.Object{&v1.LinodeNodeClass{}}))
	})
})
