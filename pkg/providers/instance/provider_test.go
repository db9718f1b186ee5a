package instance_test

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/events"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	corecloudprovider "github.com/linode/karpenter-provider-linode/pkg/cloudprovider"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstrap"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instance/bootstraptoken"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

const instancesRoute = "/linode/instances"

func itoa(i int) string { return strconv.Itoa(i) }

var _ = Describe("Create", func() {
	It("launches one Linode with the NodeClaim's plan and the NodeClass's settings, which joins with the NodeClaim's own token", func() {
		firewall := emu.AddFirewall("nodes")
		vpcID, err := emu.AddVPC("cluster", test.Region)
		Expect(err).ToNot(HaveOccurred())
		subnetID, err := emu.AddVPCSubnet(vpcID, "nodes", "10.0.0.0/24")
		Expect(err).ToNot(HaveOccurred())
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{
			Tags:              []v1.Tag{"team:payments"},
			FirewallID:        &firewall,
			DiskEncryption:    lo.ToPtr(v1.DiskEncryptionEnabled),
			AuthorizedKeys:    []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHk1ZXhhbXBsZWtleWZvcnRlc3RzMDAwMDAwMDAw admin@example.com"},
			VPC:               &v1.VPCConfiguration{VPCLabel: lo.ToPtr("cluster"), SubnetLabel: lo.ToPtr("nodes"), NAT1To1: lo.ToPtr(true)},
			PlacementGroup:    &v1.PlacementGroupSelector{Label: lo.ToPtr("karpenter-nodes")},
			UserData:          lo.ToPtr("#cloud-config\npackages: [containerd]\n"),
			MaintenancePolicy: new(v1.MaintenancePolicyPowerOffOn),
		})
		nodeClaim := nodeClaimOf(nodeClass, "g6-standard-2", "g6-standard-4")

		created := launched(nodeClaim)
		Expect(created.Labels).To(HaveKeyWithValue(corev1.LabelInstanceTypeStable, "g6-standard-2"), "the cheaper of the two plans")
		Expect(emu.Instances()).To(HaveLen(1))
		id, err := nodeprovider.ParseProviderID(created.Status.ProviderID)
		Expect(err).ToNot(HaveOccurred())
		linode, err := emu.Client.GetInstance(ctx, id)
		Expect(err).ToNot(HaveOccurred())
		Expect(linode.Region).To(Equal(test.Region))
		Expect(linode.Image).To(Equal("linode/ubuntu24.04"))
		Expect(linode.Label).To(Equal(nodeClaim.Name), "the Linode's label is its Node's name")
		Expect(linode.Tags).To(ConsistOf(cloud.Target.Cluster.OwnerTag(), nodeprovider.NodeClaimTag(nodeClaim.Name), nodeprovider.NodePoolTag("default"), "team:payments"))
		Expect(cloud.Target.Cluster.OwnerTag()).To(HavePrefix(nodeprovider.TagKeyCluster+"="+string(cloud.Target.Cluster.UID)[:8]), "ownership is the kube-system namespace's UID")
		Expect(linode.DiskEncryption).To(Equal(linodego.InstanceDiskEncryptionEnabled))
		Expect(linode.PlacementGroup).ToNot(BeNil())
		Expect(linode.PlacementGroup.ID).To(Equal(nodeClass.Status.PlacementGroup.ID))
		Expect(linode.HasUserData).To(BeTrue())
		Expect(linode.MaintenancePolicy).To(Equal(emulator.PolicyPowerOffOn))
		Expect(linodeOf(created.Status.ProviderID).FirewallID).To(Equal(firewall))
		configs, err := emu.Client.ListInstanceConfigs(ctx, id, nil)
		Expect(err).ToNot(HaveOccurred())
		Expect(configs).To(HaveLen(1))
		Expect(configs[0].Interfaces).To(ContainElement(And(
			HaveField("Purpose", linodego.InterfacePurposeVPC),
			HaveField("SubnetID", HaveValue(Equal(subnetID))),
		)))

		By("giving the Linode, through its Metadata service, the user's keys and user data that join the cluster")
		meta, err := emu.NewMetadataClient(ctx, id)
		Expect(err).ToNot(HaveOccurred())
		keys, err := meta.GetSSHKeys(ctx)
		Expect(err).ToNot(HaveOccurred())
		Expect(keys.Users["root"]).To(ConsistOf(nodeClass.Spec.AuthorizedKeys[0]))
		userData, err := meta.GetUserData(ctx)
		Expect(err).ToNot(HaveOccurred())
		Expect(string(userData)).To(And(
			ContainSubstring(env.Config.Host),
			ContainSubstring(string(cloud.TokenKey.Token(nodeClaim))),
			ContainSubstring(bootstrap.ProviderIDTemplate),
			ContainSubstring("packages: [containerd]"),
			ContainSubstring("--hostname-override="+nodeClaim.Name),
			ContainSubstring("team=payments"),
			ContainSubstring("example.com/agent-not-ready"),
			ContainSubstring(karpv1.UnregisteredTaintKey),
		))
	})

	It("sends no root password: without the class's keys or users, the Linode gets a key nobody holds", func() {
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{})
		created := launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		id, err := nodeprovider.ParseProviderID(created.Status.ProviderID)
		Expect(err).ToNot(HaveOccurred())
		meta, err := emu.NewMetadataClient(ctx, id)
		Expect(err).ToNot(HaveOccurred())
		keys, err := meta.GetSSHKeys(ctx)
		Expect(err).ToNot(HaveOccurred())
		Expect(keys.Users["root"]).To(ConsistOf(And(HavePrefix("ssh-ed25519 "), HaveSuffix(" karpenter-no-login"))))
	})

	It("finds the Linode of an earlier attempt instead of launching a second", func() {
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{})
		nodeClaim := nodeClaimOf(nodeClass, "g6-standard-2")
		emu.InjectFault(emulator.Fault{Method: http.MethodPost, Route: instancesRoute, LoseResponse: emulator.LoseWith502, Count: 1})
		_, err := cloud.CloudProvider.Create(ctx, nodeClaim)
		Expect(err).To(HaveOccurred(), "the answer was lost")
		Expect(emu.Instances()).To(HaveLen(1), "Linode created the Linode all the same")

		first := launched(nodeClaim)
		again := launched(nodeClaim)
		Expect(again.Status.ProviderID).To(Equal(first.Status.ProviderID))
		Expect(first.Status.ProviderID).To(Equal("linode://" + itoa(emu.Instances()[0].ID)))
		Expect(emu.Instances()).To(HaveLen(1))
		Expect(emu.Counters()["POST "+instancesRoute]).To(Equal(1))
	})

	It("leaves unsent a launch whose turn in the API's rate limit would come after core's launch timeout, and its retry costs no call", func() {
		// One create an hour, and a client that would wait a day for a turn: the NodeClaim's
		// launch timeout is the bound.
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{})
		paced := another(
			test.WithInstancePacer(linode.NewPacer(map[linode.RouteClass]linode.Budget{linode.ClassLinodeCreate: {Requests: 1, Window: time.Hour}}, 24*time.Hour, clock.RealClock{})),
			test.WithInstanceProviderOptions(instance.WithListingTTL(time.Minute)))
		_, err := paced.CloudProvider.Create(ctx, nodeClaimOf(nodeClass, "g6-standard-2"))
		Expect(err).ToNot(HaveOccurred())

		second := nodeClaimOf(nodeClass, "g6-standard-2")
		for range 2 {
			emu.ResetCounters()
			_, err = paced.CloudProvider.Create(ctx, second)
			var createErr *cloudprovider.CreateError
			Expect(errors.As(err, &createErr)).To(BeTrue(), fmt.Sprint(err))
			Expect(createErr.ConditionReason).To(Equal(corecloudprovider.AwaitingAPITurnReason))
			Expect(emu.Counters()).To(BeEmpty(), "a create never sent leaves the listing of Linodes fresh")
		}
		Expect(emu.Instances()).To(HaveLen(1))
	})

	It("sends Karpenter to another plan when the region has no capacity for one", func() {
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{})
		emu.SetCapacity(test.Region, "g6-standard-2", 0)
		_, err := cloud.CloudProvider.Create(ctx, nodeClaimOf(nodeClass, "g6-standard-2", "g6-standard-4"))
		Expect(cloudprovider.IsInsufficientCapacityError(err)).To(BeTrue(), "got %v", err)
		Expect(cloud.Unavailable.IsUnavailable("g6-standard-2", test.Region)).To(BeTrue())

		created := launched(nodeClaimOf(nodeClass, "g6-standard-2", "g6-standard-4"))
		Expect(created.Labels).To(HaveKeyWithValue(corev1.LabelInstanceTypeStable, "g6-standard-4"))
	})

	It("marks the class not Ready when Linode refuses its launch as invalid", func() {
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{})
		emu.InjectFault(emulator.Fault{Method: http.MethodPost, Route: instancesRoute, Sequence: []int{http.StatusBadRequest}})
		_, err := cloud.CloudProvider.Create(ctx, nodeClaimOf(nodeClass, "g6-standard-2"))
		var createErr *cloudprovider.CreateError
		Expect(errors.As(err, &createErr)).To(BeTrue(), "got %v", err)
		Expect(createErr.ConditionReason).To(Equal(corecloudprovider.LaunchRejectedReason))
		nodeClass = ExpectExists(ctx, env.Client, nodeClass)
		Expect(nodeClass.LaunchRejected()).To(BeTrue())
	})
})

var _ = Describe("User data over Linode's limit", func() {
	It("fails the launch naming spec.userData, without asking Linode", func() {
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{UserData: lo.ToPtr("#cloud-config\nwrite_files: [{path: /etc/motd, content: '" + strings.Repeat("x", 16000) + "'}]\n")})
		// The cluster's CA bundle grew since the class was validated, as it does during a
		// rotation.
		largeCABundle(24000)
		_, err := cloud.CloudProvider.Create(ctx, nodeClaimOf(nodeClass, "g6-standard-2"))
		var createErr *cloudprovider.CreateError
		Expect(errors.As(err, &createErr)).To(BeTrue(), "got %v", err)
		Expect(createErr.ConditionReason).To(Equal(instance.ReasonUserDataTooLarge))
		Expect(createErr.ConditionMessage).To(ContainSubstring("shorten spec.userData"))
		Expect(emu.Instances()).To(BeEmpty())
	})
})

var _ = Describe("Get, List, Delete and Reboot", func() {
	var nodeClass *v1.LinodeNodeClass
	var node *nodeprovider.Node
	BeforeEach(func() {
		nodeClass = readyNodeClass(v1.LinodeNodeClassSpec{})
		created := launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		var err error
		node, err = cloud.Nodes.Get(ctx, created.Status.ProviderID)
		Expect(err).ToNot(HaveOccurred())
	})

	It("lists only this cluster's Linodes", func() {
		_, err := emu.Client.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: test.Region, Type: "g6-standard-2", Tags: []string{nodeprovider.ClusterTag("another-cluster")}})
		Expect(err).ToNot(HaveOccurred())
		nodes, err := cloud.Nodes.List(ctx)
		Expect(err).ToNot(HaveOccurred())
		Expect(nodes).To(ConsistOf(HaveField("InstanceID", node.InstanceID)))
		Expect(nodes[0].NodeClaimName).ToNot(BeEmpty())
		Expect(nodes[0].NodePoolName).To(Equal("default"))
		Expect(nodes[0].Created).ToNot(BeZero())
	})

	It("says a Linode is gone only when the API answers 404", func() {
		for _, route := range []string{instancesRoute, instancesRoute + "/{linodeId}"} {
			emu.InjectFault(emulator.Fault{Method: http.MethodGet, Route: route, Sequence: []int{http.StatusInternalServerError}})
			_, err := cloud.Nodes.Get(ctx, "linode://999999")
			Expect(err).To(HaveOccurred())
			Expect(cloudprovider.IsNodeClaimNotFoundError(err)).To(BeFalse(), "a 500 on %s proves nothing: %v", route, err)
		}
		_, err := cloud.Nodes.Get(ctx, "linode://999999")
		Expect(cloudprovider.IsNodeClaimNotFoundError(err)).To(BeTrue(), "got %v", err)

		emu.InjectFault(emulator.Fault{Method: http.MethodDelete, Sequence: []int{http.StatusServiceUnavailable}})
		err = cloud.Nodes.Delete(ctx, node)
		Expect(err).To(HaveOccurred())
		Expect(cloudprovider.IsNodeClaimNotFoundError(err)).To(BeFalse())
		Expect(cloud.Nodes.Delete(ctx, node)).To(Succeed())
		Expect(emu.Instances()).To(BeEmpty())
		Expect(cloudprovider.IsNodeClaimNotFoundError(cloud.Nodes.Delete(ctx, node))).To(BeTrue())
		_, err = cloud.Nodes.Get(ctx, node.ProviderID())
		Expect(cloudprovider.IsNodeClaimNotFoundError(err)).To(BeTrue())
	})

	It("takes a Linode with neither this cluster's tag nor a NodeClaim's for neither a node of its own nor gone", func() {
		for _, tags := range [][]string{nil, {nodeprovider.ClusterTag("another-cluster"), nodeprovider.NodeClaimTag("default-abcde")}} {
			stranger, err := emu.Client.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: test.Region, Type: "g6-standard-2", Tags: tags})
			Expect(err).ToNot(HaveOccurred())
			nodeClaim := &karpv1.NodeClaim{Status: karpv1.NodeClaimStatus{ProviderID: nodeprovider.ProviderID(stranger.ID)}}
			_, err = cloud.Nodes.Get(ctx, nodeClaim.Status.ProviderID)
			Expect(nodeprovider.IsForeignNode(err)).To(BeTrue(), "a Linode tagged %v gave %v", tags, err)
			Expect(cloudprovider.IsNodeClaimNotFoundError(err)).To(BeFalse(), "a Linode that answers is not gone")
			err = cloud.CloudProvider.Delete(ctx, nodeClaim)
			Expect(err).To(HaveOccurred())
			Expect(cloudprovider.IsNodeClaimNotFoundError(err)).To(BeFalse())
			Expect(emu.Client.GetInstance(ctx, stranger.ID)).ToNot(BeNil(), "a NodeClaim naming another Linode does not make the controller delete it")
		}
	})

	It("reboots the Linode in place", func() {
		Expect(cloud.Nodes.Reboot(ctx, node)).To(Succeed())
		Expect(emu.Counters()["POST /linode/instances/{linodeId}/reboot"]).To(Equal(1))
		Expect(cloud.Nodes.Delete(ctx, node)).To(Succeed())
		Expect(cloudprovider.IsNodeClaimNotFoundError(cloud.Nodes.Reboot(ctx, node))).To(BeTrue())
	})
})

var _ = Describe("A Linode whose ownership tag someone removed", func() {
	var nodeClass *v1.LinodeNodeClass
	var nodeClaim *karpv1.NodeClaim
	var id int
	BeforeEach(func() {
		nodeClass = readyNodeClass(v1.LinodeNodeClassSpec{})
		nodeClaim = nodeClaimOf(nodeClass, "g6-standard-2")
		var err error
		id, err = nodeprovider.ParseProviderID(launched(nodeClaim).Status.ProviderID)
		Expect(err).ToNot(HaveOccurred())
		Expect(cloud.Nodes.List(ctx)).To(HaveLen(1))
	})

	// untag removes the ownership tag, or replaces all the Linode's tags, as a user editing them
	// by hand would.
	untag := func(tags ...string) {
		GinkgoHelper()
		if tags == nil {
			tags = slices.DeleteFunc(slices.Clone(linodeOf(nodeprovider.ProviderID(id)).Tags), func(tag string) bool { return tag == cloud.Target.Cluster.OwnerTag() })
		}
		_, err := emu.Client.UpdateInstance(ctx, id, linodego.InstanceUpdateOptions{Tags: &tags})
		Expect(err).ToNot(HaveOccurred())
	}

	It("stays its NodeClaim's node, and deleting the NodeClaim deletes it", func() {
		untag()
		Expect(cloud.Nodes.List(ctx)).To(ConsistOf(HaveField("InstanceID", id)), "the controller that listed it keeps listing it")

		restarted := another()
		nodeClaim.Status.ProviderID = nodeprovider.ProviderID(id)
		found, err := restarted.CloudProvider.Get(ctx, nodeClaim.Status.ProviderID)
		Expect(err).ToNot(HaveOccurred(), "a controller that never saw it tagged")
		Expect(found.Status.ProviderID).To(Equal(nodeClaim.Status.ProviderID))
		Expect(restarted.CloudProvider.Delete(ctx, nodeClaim)).To(Succeed())
		Expect(emu.Instances()).To(BeEmpty(), "the untagged Linode was left running")
		_, err = restarted.CloudProvider.Get(ctx, nodeClaim.Status.ProviderID)
		Expect(cloudprovider.IsNodeClaimNotFoundError(err)).To(BeTrue(), "gone once the API answers 404: %v", err)
		Expect(cloud.Nodes.List(ctx)).To(BeEmpty())
	})

	It("is read alone only when a listing misses it", func() {
		emu.ResetCounters()
		for range 3 {
			Expect(cloud.Nodes.List(ctx)).To(HaveLen(1))
		}
		Expect(emu.Counters()).To(Equal(map[string]int{"GET " + instancesRoute: 3}), "listings of an unchanged cluster cost one call each")
		untag()
		emu.ResetCounters()
		Expect(cloud.Nodes.List(ctx)).To(HaveLen(1))
		Expect(emu.Counters()).To(Equal(map[string]int{"GET " + instancesRoute: 1, "GET " + instancesRoute + "/{linodeId}": 1}))
	})

	It("is found by a launch of its NodeClaim after a restart instead of a second Linode", func() {
		untag()
		restarted := another()
		again, err := restarted.CloudProvider.Create(ctx, nodeClaim)
		Expect(err).ToNot(HaveOccurred())
		Expect(again.Status.ProviderID).To(Equal(nodeprovider.ProviderID(id)))
		Expect(emu.Instances()).To(HaveLen(1))
		Expect(ExpectExists(ctx, env.Client, nodeClass).LaunchRejected()).To(BeFalse(), "the taken label is no fault of the NodeClass")
		Expect(restarted.Nodes.List(ctx)).To(ConsistOf(HaveField("InstanceID", id)))
	})

	It("stripped of all its tags, is neither gone nor taken for its NodeClaim's", func() {
		untag("team=payments")
		restarted := another()
		_, err := restarted.Nodes.Get(ctx, nodeprovider.ProviderID(id))
		Expect(nodeprovider.IsForeignNode(err)).To(BeTrue(), "got %v", err)
		_, err = restarted.CloudProvider.Create(ctx, nodeClaim)
		Expect(err).To(MatchError(ContainSubstring("taken by Linode [%d]", id)))
		Expect(emu.Instances()).To(HaveLen(1))
		Expect(ExpectExists(ctx, env.Client, nodeClass).LaunchRejected()).To(BeFalse())
	})
})

var _ = Describe("Drift", func() {
	It("replaces nodes when a newer image matches the class's imageSelector", func() {
		older := emu.AddImage(emulator.ImageSpec{Label: "k8s-node 1.36", Created: emu.Clock.Now().Add(-48 * 3600e9), CloudInit: true})
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{ImageSelector: &v1.ImageSelector{Label: lo.ToPtr("k8s-node")}})
		Expect(nodeClass.Status.Image.ID).To(Equal(older))
		nodeClaim := launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		nodeClaim.Spec.NodeClassRef = test.NodeClassRef(nodeClass.Name)
		Expect(cloud.CloudProvider.IsDrifted(ctx, nodeClaim)).To(BeEmpty())

		newer := emu.AddImage(emulator.ImageSpec{Label: "k8s-node 1.36.1", Created: emu.Clock.Now(), CloudInit: true})
		nodeClass = resolved(nodeClass)
		Expect(nodeClass.Status.Image.ID).To(Equal(newer))
		Expect(cloud.CloudProvider.IsDrifted(ctx, nodeClaim)).To(Equal(instance.DriftReasonImage))
	})

	It("replaces nodes when the class's userData changes", func() {
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{UserData: lo.ToPtr("#cloud-config\npackages: [containerd]\n")})
		nodeClaim := launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		nodeClaim.Spec.NodeClassRef = test.NodeClassRef(nodeClass.Name)
		Expect(cloud.CloudProvider.IsDrifted(ctx, nodeClaim)).To(BeEmpty())
		nodeClass.Spec.UserData = lo.ToPtr("#cloud-config\npackages: [containerd, htop]\n")
		ExpectApplied(ctx, env.Client, nodeClass)
		Expect(cloud.CloudProvider.IsDrifted(ctx, nodeClaim)).To(Equal(corecloudprovider.DriftReasonNodeClass))
	})

	It("replaces nodes whose subnet or placement group is no longer the one the class resolves to", func() {
		vpcID, err := emu.AddVPC("cluster", test.Region)
		Expect(err).ToNot(HaveOccurred())
		_, err = emu.AddVPCSubnet(vpcID, "nodes", "10.0.0.0/24")
		Expect(err).ToNot(HaveOccurred())
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{
			VPC:            &v1.VPCConfiguration{VPCLabel: lo.ToPtr("cluster"), SubnetLabel: lo.ToPtr("nodes")},
			PlacementGroup: &v1.PlacementGroupSelector{Label: lo.ToPtr("spread")},
		})
		nodeClaim := launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		nodeClaim.Spec.NodeClassRef = test.NodeClassRef(nodeClass.Name)
		Expect(cloud.CloudProvider.IsDrifted(ctx, nodeClaim)).To(BeEmpty())

		By("resolving the class's placement group to another one: the group was renamed, and the class's label names a new one")
		group := nodeClass.Status.PlacementGroup.ID
		_, err = emu.Client.UpdatePlacementGroup(ctx, group, linodego.PlacementGroupUpdateOptions{Label: "retired"})
		Expect(err).ToNot(HaveOccurred())
		nodeClass = resolved(nodeClass)
		Expect(nodeClass.Status.PlacementGroup.ID).ToNot(Equal(group))
		Expect(cloud.CloudProvider.IsDrifted(ctx, nodeClaim)).To(Equal(instance.DriftReasonPlacementGroup))
		replacement := nodeClass.Status.PlacementGroup.ID
		_, err = emu.Client.UpdatePlacementGroup(ctx, replacement, linodego.PlacementGroupUpdateOptions{Label: "spare"})
		Expect(err).ToNot(HaveOccurred())
		_, err = emu.Client.UpdatePlacementGroup(ctx, group, linodego.PlacementGroupUpdateOptions{Label: "spread"})
		Expect(err).ToNot(HaveOccurred())
		nodeClass = resolved(nodeClass)
		Expect(cloud.CloudProvider.IsDrifted(ctx, nodeClaim)).To(BeEmpty())

		By("resolving the class's subnet to another one: a new subnet took the label")
		relabelSubnet(vpcID, nodeClass.Status.Subnet.ID, "retired")
		_, err = emu.AddVPCSubnet(vpcID, "nodes", "10.0.1.0/24")
		Expect(err).ToNot(HaveOccurred())
		resolved(nodeClass)
		Expect(cloud.CloudProvider.IsDrifted(ctx, nodeClaim)).To(Equal(instance.DriftReasonSubnet))
	})
})

var _ = Describe("What a LinodeNodeClass's status says", func() {
	// The status is written with the controller's ServiceAccount; whoever stole its token can
	// rewrite it as the controller does.
	rewriteStatus := func(nodeClass *v1.LinodeNodeClass, change func(*v1.LinodeNodeClassStatus)) {
		GinkgoHelper()
		stored := nodeClass.DeepCopy()
		change(&nodeClass.Status)
		Expect(env.Client.Status().Patch(ctx, nodeClass, client.MergeFrom(stored))).To(Succeed())
	}

	It("is not what a launch boots, joins or is placed in: the controller's own resolution of the spec is", func() {
		vpcID, subnetID := subnetNodes()
		other, err := emu.AddVPCSubnet(vpcID, "databases", "10.0.9.0/24")
		Expect(err).ToNot(HaveOccurred())
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{VPC: &vpcNodes, PlacementGroup: &v1.PlacementGroupSelector{Label: lo.ToPtr("spread")}})
		group := nodeClass.Status.PlacementGroup.ID
		elsewhere, err := emu.Client.CreatePlacementGroup(ctx, linodego.PlacementGroupCreateOptions{Label: "elsewhere", Region: test.Region,
			PlacementGroupType: linodego.PlacementGroupTypeAntiAffinityLocal, PlacementGroupPolicy: linodego.PlacementGroupPolicyFlexible})
		Expect(err).ToNot(HaveOccurred())
		// Another image of the account, one with a way in for whoever made it.
		backdoored := emu.AddImage(emulator.ImageSpec{Label: "Ubuntu 24.04 LTS", Created: emu.Clock.Now(), CloudInit: true})
		rewriteStatus(nodeClass, func(status *v1.LinodeNodeClassStatus) {
			status.Image = &v1.ResolvedImage{ID: backdoored, Label: "Ubuntu 24.04 LTS"}
			status.Subnet = &v1.ResolvedSubnet{ID: other, VPCID: vpcID, Label: "databases"}
			status.PlacementGroup = &v1.ResolvedPlacementGroup{ID: elsewhere.ID, Label: "elsewhere"}
		})

		created := launched(nodeClaimOf(nodeClass, "g6-standard-2"))
		linode, err := emu.Client.GetInstance(ctx, linodeIDOf(created.Status.ProviderID))
		Expect(err).ToNot(HaveOccurred())
		Expect(linode.Image).To(Equal("linode/ubuntu24.04"))
		Expect(linode.PlacementGroup).ToNot(BeNil())
		Expect(linode.PlacementGroup.ID).To(Equal(group))
		configs, err := emu.Client.ListInstanceConfigs(ctx, linode.ID, nil)
		Expect(err).ToNot(HaveOccurred())
		Expect(configs[0].Interfaces).To(ContainElement(HaveField("SubnetID", HaveValue(Equal(subnetID)))))

		By("nor what a running node is compared with")
		created.Spec.NodeClassRef = test.NodeClassRef(nodeClass.Name)
		Expect(cloud.CloudProvider.IsDrifted(ctx, created)).To(BeEmpty())

		By("and the controller writes back what it resolved")
		Expect(resolved(nodeClass).Status.Image.ID).To(Equal("linode/ubuntu24.04"))
	})

	It("launches nothing for a spec the controller has not resolved yet, and keeps the NodeClaim for a retry", func() {
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{})
		next := emu.AddImage(emulator.ImageSpec{Label: "k8s-node 1.36.1", Created: emu.Clock.Now(), CloudInit: true})
		nodeClass.Spec.Image = lo.ToPtr(next)
		ExpectApplied(ctx, env.Client, nodeClass)
		_, err := cloud.CloudProvider.Create(ctx, nodeClaimOf(nodeClass, "g6-standard-2"))
		// Core deletes a NodeClaim on NodeClassNotReady, and retries one on a CreateError: a
		// restarted controller meets its predecessor's launches before it has resolved the class.
		Expect(cloudprovider.IsNodeClassNotReadyError(err)).To(BeFalse(), "got %v", err)
		var createError *cloudprovider.CreateError
		Expect(errors.As(err, &createError)).To(BeTrue(), "got %v", err)
		Expect(createError.ConditionReason).To(Equal("NodeClassNotResolved"))
		Expect(emu.Instances()).To(BeEmpty())
		resolved(nodeClass)
		linode, err := emu.Client.GetInstance(ctx, linodeIDOf(launched(nodeClaimOf(nodeClass, "g6-standard-2")).Status.ProviderID))
		Expect(err).ToNot(HaveOccurred())
		Expect(linode.Image).To(Equal(next))
	})
})

var _ = Describe("Bootstrap tokens", func() {
	It("writes no Secret: the node identity component issues the token the launch derives from the mounted key", func() {
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{})
		nodeClaim := nodeClaimOf(nodeClass, "g6-standard-2")
		launched(nodeClaim)
		tokens := &corev1.SecretList{}
		Expect(env.Client.List(ctx, tokens, client.InNamespace(bootstraptoken.Namespace))).To(Succeed())
		Expect(tokens.Items).To(BeEmpty())
	})

	It("refuses a launch, saying why, while the key is not mounted", func() {
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{})
		keyDir := GinkgoT().TempDir()
		unkeyed := another(test.WithBootstrapTokenKeyDir(keyDir))
		Expect(os.Remove(filepath.Join(keyDir, bootstraptoken.KeySecretKey))).To(Succeed())
		nodeClaim := nodeClaimOf(nodeClass, "g6-standard-2")
		_, err := unkeyed.CloudProvider.Create(ctx, nodeClaim)
		Expect(err).To(MatchError(ContainSubstring("no bootstrap token key at")))
		Expect(emu.Client.ListInstances(ctx, nil)).To(BeEmpty())
	})
})

var _ = Describe("Offline Linodes", func() {
	// The check reads the listing the provider's readers share, aged on the emulator's clock.
	var nodes *instance.Provider
	BeforeEach(func() {
		nodes = ExpectInstance(ctx, emu, env.Client, env.Config, test.WithInstanceProviderOptions(instance.WithClock(emu.Clock))).Nodes.(*instance.Provider)
	})

	It("replaces a node whose Linode stays powered off", func() {
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{})
		nodeClaim := nodeClaimOf(nodeClass, "g6-standard-2")
		created := launched(nodeClaim)
		nodeClaim.Status.ProviderID = created.Status.ProviderID
		ExpectApplied(ctx, env.Client, nodeClaim)
		id, err := nodeprovider.ParseProviderID(created.Status.ProviderID)
		Expect(err).ToNot(HaveOccurred())
		controller := instance.NewOfflineController(env.Client, nodes, events.NewRecorder(recorder), emu.Clock, instance.OfflineToleration)

		ExpectSingletonReconciled(ctx, controller)
		ExpectExists(ctx, env.Client, nodeClaim)
		Expect(emu.Client.ShutdownInstance(ctx, id)).To(Succeed())
		emu.Tick()
		// It sees the Linode offline once the shared listing is renewed.
		ExpectSingletonReconciled(ctx, controller)
		ExpectExists(ctx, env.Client, nodeClaim)
		emu.Clock.Step(nodeprovider.PollingListingAge)
		ExpectSingletonReconciled(ctx, controller)
		emu.Clock.Step(instance.OfflineToleration - 1)
		ExpectSingletonReconciled(ctx, controller)
		ExpectExists(ctx, env.Client, nodeClaim)

		emu.Clock.Step(1)
		ExpectSingletonReconciled(ctx, controller)
		ExpectNotFound(ctx, env.Client, nodeClaim)
		Expect(recorded()).To(ContainElement(ContainSubstring("LinodeOffline")))
	})

	It("leaves a node whose Linode came back in time", func() {
		nodeClass := readyNodeClass(v1.LinodeNodeClassSpec{})
		nodeClaim := nodeClaimOf(nodeClass, "g6-standard-2")
		created := launched(nodeClaim)
		nodeClaim.Status.ProviderID = created.Status.ProviderID
		ExpectApplied(ctx, env.Client, nodeClaim)
		id, err := nodeprovider.ParseProviderID(created.Status.ProviderID)
		Expect(err).ToNot(HaveOccurred())
		controller := instance.NewOfflineController(env.Client, nodes, events.NewRecorder(recorder), emu.Clock, instance.OfflineToleration)

		Expect(emu.Client.ShutdownInstance(ctx, id)).To(Succeed())
		emu.Tick()
		emu.Clock.Step(nodeprovider.PollingListingAge)
		ExpectSingletonReconciled(ctx, controller)
		Expect(emu.Client.BootInstance(ctx, id, 0)).To(Succeed())
		emu.Tick()
		emu.Clock.Step(nodeprovider.PollingListingAge)
		ExpectSingletonReconciled(ctx, controller)
		emu.Clock.Step(instance.OfflineToleration)
		ExpectSingletonReconciled(ctx, controller)
		ExpectExists(ctx, env.Client, nodeClaim)
	})
})

// recorded are the events published since the last call, as "<type> <reason> <message>".
func recorded() []string {
	var out []string
	for {
		select {
		case event := <-recorder.Events:
			out = append(out, event)
		default:
			return out
		}
	}
}
