// Package expectations are pkg/test's fixtures for Ginkgo suites, in the style of Karpenter
// core's expectations: each starts what it names, fails the node it runs in when it cannot, and
// stops it when that node's suite or spec ends.
package expectations

import (
	"context"
	"testing"

	"github.com/awslabs/operatorpkg/option"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	coreexpectations "sigs.k8s.io/karpenter/pkg/test/expectations"
	coretesting "sigs.k8s.io/karpenter/pkg/utils/testing"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// ExpectEnvironment starts kube-apiserver and etcd (and what opts add) until the suite ends;
// call it in BeforeSuite.
func ExpectEnvironment(opts ...option.Function[environment.Options]) *environment.Environment {
	ginkgo.GinkgoHelper()
	env, err := environment.New(opts...)
	gomega.Expect(err).ToNot(gomega.HaveOccurred())
	ginkgo.DeferCleanup(env.Stop)
	return env
}

// ExpectEmulator starts the Linode API emulator as test.StartEmulator does, until the suite or
// spec that started it ends, and then fails it if the emulator refused a request body by Linode's
// request rules.
func ExpectEmulator(opts ...emulator.Option) *test.Emulator {
	ginkgo.GinkgoHelper()
	emu, err := test.StartEmulator(opts...)
	gomega.Expect(err).ToNot(gomega.HaveOccurred())
	ginkgo.DeferCleanup(func() error {
		gomega.Expect(emu.RefusedBodies()).To(gomega.BeEmpty(), "Linode's request rules refused request bodies")
		return emu.Close()
	})
	return emu
}

// ExpectLKE builds the provider in LKE mode over a new LKE cluster in emu, as test.NewLKE does.
func ExpectLKE(ctx context.Context, emu *test.Emulator, kubeClient client.Client, opts ...option.Function[test.LKEOptions]) *test.LKE {
	ginkgo.GinkgoHelper()
	lke, err := test.NewLKE(ctx, emu, kubeClient, opts...)
	gomega.Expect(err).ToNot(gomega.HaveOccurred())
	return lke
}

// RunSuite runs the package's Ginkgo specs; before any runs, it sets *ctx to a context carrying
// a logger for the test and Karpenter core's test options, which core's code reads.
func RunSuite(t *testing.T, description string, ctx *context.Context) {
	*ctx = coreoptions.ToContext(coretesting.TestContextWithLogger(t), coretest.Options())
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, description)
}

// ExpectInstance builds the provider in instance mode over emu for the API server restConfig
// connects to, as test.NewInstance does.
func ExpectInstance(ctx context.Context, emu *test.Emulator, kubeClient client.Client, restConfig *rest.Config, opts ...option.Function[test.InstanceOptions]) *test.Instance {
	ginkgo.GinkgoHelper()
	instance, err := test.NewInstance(ctx, emu, kubeClient, restConfig, append([]option.Function[test.InstanceOptions]{test.WithBootstrapTokenKeyDir(ginkgo.GinkgoT().TempDir())}, opts...)...)
	gomega.Expect(err).ToNot(gomega.HaveOccurred())
	return instance
}

// ExpectAllCleanedUp is core's ExpectCleanedUp with the LinodeNodeClasses too, for an AfterEach.
// It returns once the client no longer shows a NodePool or a LinodeNodeClass: a client that
// reads from an informer cache would otherwise show the next spec the objects just deleted, and
// applying its own of the same name would update one that is gone.
func ExpectAllCleanedUp(ctx context.Context, c client.Client) {
	ginkgo.GinkgoHelper()
	coreexpectations.ExpectCleanedUp(ctx, c)
	coreexpectations.ExpectFinalizersRemovedFromList(ctx, c, &v1.LinodeNodeClassList{})
	gomega.Expect(c.DeleteAllOf(ctx, &v1.LinodeNodeClass{})).To(gomega.Succeed())
	gomega.Eventually(func(g gomega.Gomega) {
		nodePools, nodeClasses := &karpv1.NodePoolList{}, &v1.LinodeNodeClassList{}
		g.Expect(c.List(ctx, nodePools)).To(gomega.Succeed())
		g.Expect(c.List(ctx, nodeClasses)).To(gomega.Succeed())
		g.Expect(nodePools.Items).To(gomega.BeEmpty())
		g.Expect(nodeClasses.Items).To(gomega.BeEmpty())
	}).WithContext(ctx).Should(gomega.Succeed())
}
