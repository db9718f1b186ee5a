package nodeclass_test

import (
	"fmt"

	"github.com/mitchellh/hashstructure/v2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cloudprovider"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/nodeclass"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
)

// hashV1 is the hash the previous release stamped: the whole spec, whatever the mode.
func hashV1(nodeClass *v1.LinodeNodeClass) string {
	return fmt.Sprint(lo.Must(hashstructure.Hash(nodeClass.Spec, hashstructure.FormatV2, &hashstructure.HashOptions{
		SlicesAsSets: true, IgnoreZeroValue: true, ZeroNil: true,
	})))
}

var _ = Describe("Re-stamping after the hash version changed", func() {
	var nodeClass *v1.LinodeNodeClass
	var cloudProvider *cloudprovider.CloudProvider
	var controller *nodeclass.HashController
	BeforeEach(func() {
		cloud := ExpectLKE(ctx, emu, env.Client)
		cloudProvider, controller = cloud.CloudProvider, test.ControllerOf[*nodeclass.HashController](cloud.Linode)
		// userData applies in instance mode only: the previous release hashed it, this one does
		// not, so the two hashes of this class differ in LKE mode.
		nodeClass = test.ReadyLinodeNodeClass(v1.LinodeNodeClass{Spec: v1.LinodeNodeClassSpec{
			Tags:     []v1.Tag{"team-a"},
			UserData: lo.ToPtr("#cloud-config\n"),
		}})
		ExpectApplied(ctx, env.Client, nodeClass)
		Expect(hashV1(nodeClass)).ToNot(Equal(nodeClass.Hash(mode.LKE)))
	})

	It("replaces no node after the upgrade, and notices the class's next change", func() {
		nodeClaim := launched(cloudProvider, nodeClass)
		nodeClaim.Annotations = map[string]string{v1.AnnotationNodeClassHashVersion: "v1", v1.AnnotationNodeClassHash: hashV1(nodeClass)}
		ExpectApplied(ctx, env.Client, nodeClaim)

		ExpectObjectReconciled(ctx, env.Client, controller, nodeClass)
		nodeClaim = ExpectExists(ctx, env.Client, nodeClaim)
		Expect(nodeClaim.Annotations).To(HaveKeyWithValue(v1.AnnotationNodeClassHashVersion, v1.NodeClassHashVersion))
		Expect(nodeClaim.Annotations).To(HaveKeyWithValue(v1.AnnotationNodeClassHash, nodeClass.Hash(mode.LKE)))
		Expect(cloudProvider.IsDrifted(ctx, nodeClaim)).To(BeEmpty())

		nodeClass.Spec.Tags = []v1.Tag{"team-b"}
		ExpectApplied(ctx, env.Client, nodeClass)
		Expect(cloudProvider.IsDrifted(ctx, nodeClaim)).To(Equal(cloudprovider.DriftReasonNodeClass))
	})

	It("keeps the old hash of a NodeClaim that had drifted already", func() {
		nodeClaim := nodeClaimHashed(nodeClass, "v1", "an-old-hash")
		nodeClaim.StatusConditions().SetTrue(karpv1.ConditionTypeDrifted)
		ExpectApplied(ctx, env.Client, nodeClaim)

		ExpectObjectReconciled(ctx, env.Client, controller, nodeClass)
		nodeClaim = ExpectExists(ctx, env.Client, nodeClaim)
		Expect(nodeClaim.Annotations).To(HaveKeyWithValue(v1.AnnotationNodeClassHashVersion, v1.NodeClassHashVersion))
		Expect(nodeClaim.Annotations).To(HaveKeyWithValue(v1.AnnotationNodeClassHash, "an-old-hash"))
		Expect(cloudProvider.IsDrifted(ctx, nodeClaim)).To(Equal(cloudprovider.DriftReasonNodeClass))
	})

	It("leaves NodeClaims not launched yet, of the current version, or of other classes alone", func() {
		other := test.ReadyLinodeNodeClass()
		ExpectApplied(ctx, env.Client, other)
		notLaunched := coretest.NodeClaim(karpv1.NodeClaim{Spec: karpv1.NodeClaimSpec{NodeClassRef: test.NodeClassRef(nodeClass.Name)}})
		current := nodeClaimHashed(nodeClass, v1.NodeClassHashVersion, "hash-of-an-earlier-spec")
		otherClass := nodeClaimHashed(other, "v1", "an-old-hash")
		ExpectApplied(ctx, env.Client, notLaunched, current, otherClass)

		ExpectObjectReconciled(ctx, env.Client, controller, nodeClass)
		Expect(ExpectExists(ctx, env.Client, notLaunched).Annotations).ToNot(HaveKey(v1.AnnotationNodeClassHashVersion))
		Expect(ExpectExists(ctx, env.Client, current).Annotations).To(HaveKeyWithValue(v1.AnnotationNodeClassHash, "hash-of-an-earlier-spec"))
		Expect(ExpectExists(ctx, env.Client, otherClass).Annotations).To(HaveKeyWithValue(v1.AnnotationNodeClassHashVersion, "v1"))
	})
})

// nodeClaimHashed is a launched NodeClaim of the class carrying the hash a release of the hash
// version stamped.
func nodeClaimHashed(nodeClass *v1.LinodeNodeClass, version, hash string) *karpv1.NodeClaim {
	nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{Spec: karpv1.NodeClaimSpec{NodeClassRef: test.NodeClassRef(nodeClass.Name)}})
	nodeClaim.Annotations = map[string]string{v1.AnnotationNodeClassHashVersion: version, v1.AnnotationNodeClassHash: hash}
	return nodeClaim
}

// launched is a NodeClaim of the class with the node the cloud provider launched for it.
func launched(cloudProvider *cloudprovider.CloudProvider, nodeClass *v1.LinodeNodeClass) *karpv1.NodeClaim {
	GinkgoHelper()
	nodeClaim := coretest.NodeClaim(karpv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{karpv1.NodePoolLabelKey: "default"}},
		Spec: karpv1.NodeClaimSpec{
			NodeClassRef: test.NodeClassRef(nodeClass.Name),
			Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
				{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"g6-standard-2"}},
			},
		},
	})
	node, err := cloudProvider.Create(ctx, nodeClaim)
	Expect(err).ToNot(HaveOccurred())
	nodeClaim.Status.ProviderID = node.Status.ProviderID
	return nodeClaim
}
