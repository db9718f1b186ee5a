package nodeclass_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/linode/linodego"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/karpenter/pkg/events"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	coretest "sigs.k8s.io/karpenter/pkg/test"
	. "sigs.k8s.io/karpenter/pkg/test/expectations"
	. "sigs.k8s.io/karpenter/pkg/utils/testing"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/controllers/nodeclass"
	"github.com/linode/karpenter-provider-linode/pkg/emulator"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
)

var (
	ctx          context.Context
	env          *environment.Environment
	emu          *emulator.Emulator
	linodeClient *linodego.Client
	recorder     *record.FakeRecorder
)

func TestNodeClass(t *testing.T) {
	ctx = TestContextWithLogger(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "NodeClass")
}

var _ = BeforeSuite(func() {
	var err error
	env, err = environment.New()
	Expect(err).ToNot(HaveOccurred())
	ctx = coreoptions.ToContext(ctx, coretest.Options())
})

var _ = AfterSuite(func() {
	Expect(env.Stop()).To(Succeed())
})

var _ = BeforeEach(func() {
	emu = emulator.New(emulator.WithClock(clocktesting.NewFakeClock(time.Now())), emulator.WithoutRateLimits(), emulator.WithDelayScale(0))
	Expect(emu.Start()).To(Succeed())
	linodeClient = emu.NewClient()
	recorder = record.NewFakeRecorder(100)
})

var _ = AfterEach(func() {
	ExpectCleanedUp(ctx, env.Client)
	ExpectFinalizersRemovedFromList(ctx, env.Client, &v1.LinodeNodeClassList{})
	Expect(env.Client.DeleteAllOf(ctx, &v1.LinodeNodeClass{})).To(Succeed())
	Expect(emu.Close()).To(Succeed())
})

// lkeCluster is an emulated LKE cluster of the tier, as discovery finds it.
func lkeCluster(tier lke.Tier, region string) *lke.Cluster {
	GinkgoHelper()
	label := "cluster-" + string(tier)
	_, err := emu.AddLKECluster(label, region, string(tier))
	Expect(err).ToNot(HaveOccurred())
	cluster, err := lke.Discover(ctx, linodeClient, label, "")
	Expect(err).ToNot(HaveOccurred())
	return cluster
}

func newController(cluster *lke.Cluster) *nodeclass.Controller {
	return nodeclass.NewController(env.Client, events.NewRecorder(recorder), linodeClient, mode.LKE, nil, []nodeclass.Validator{lke.NewTierRules(linodeClient, cluster)})
}

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

func recordedContaining(substring string) bool {
	for _, event := range recorded() {
		if strings.Contains(event, substring) {
			return true
		}
	}
	return false
}
