package nodeclass_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/karpenter/pkg/events"

	"github.com/linode/karpenter-provider-linode/pkg/controllers/nodeclass"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/test"
	"github.com/linode/karpenter-provider-linode/pkg/test/environment"
	. "github.com/linode/karpenter-provider-linode/pkg/test/expectations"
)

var (
	ctx      context.Context
	env      *environment.Environment
	emu      *test.Emulator
	recorder *record.FakeRecorder
)

func TestNodeClass(t *testing.T) { RunSuite(t, "NodeClass", &ctx) }

var _ = BeforeSuite(func() { env = ExpectEnvironment() })

var _ = BeforeEach(func() {
	emu = ExpectEmulator()
	recorder = record.NewFakeRecorder(100)
})

var _ = AfterEach(func() {
	ExpectAllCleanedUp(ctx, env.Client)
})

// lkeController is the NodeClass controller as LKE mode builds it, for an LKE cluster of the
// tier in the region.
func lkeController(tier lke.Tier, region string) *nodeclass.Controller {
	GinkgoHelper()
	cloud := ExpectLKE(ctx, emu, env.Client, test.WithCluster("cluster-"+string(tier), tier, region), test.WithRecorder(events.NewRecorder(recorder)))
	return test.ControllerOf[*nodeclass.Controller](cloud.Linode)
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
