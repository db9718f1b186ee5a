package instancetype_test

import (
	"context"
	"testing"

	"github.com/awslabs/operatorpkg/option"
	"github.com/linode/linodego"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/providers/instancetype"
	"github.com/linode/karpenter-provider-linode/pkg/test"
)

// catalogue is a provider aimed at a fresh emulator, with its catalogue read once.
type catalogue struct {
	emulator    *test.Emulator
	client      *linodego.Client
	unavailable *cache.UnavailableOfferings
	provider    *instancetype.DefaultProvider
}

func newCatalogue(t testing.TB, region string, mode mode.Mode, opts ...option.Function[instancetype.Options]) *catalogue {
	t.Helper()
	e := test.StartEmulatorForTest(t)
	unavailable := cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL)
	provider := instancetype.NewDefaultProvider(e.Client, region, mode, unavailable, opts...)
	if err := provider.UpdateCatalogue(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &catalogue{emulator: e, client: e.Client, unavailable: unavailable, provider: provider}
}

// plans are the plans the emulator serves, straight from the API, each once.
func (c *catalogue) plans(t testing.TB) []linodego.LinodeType {
	t.Helper()
	types, err := c.client.ListTypes(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var plans []linodego.LinodeType
	for _, plan := range types {
		if !seen[plan.ID] {
			seen[plan.ID] = true
			plans = append(plans, plan)
		}
	}
	return plans
}

func defaultNodeClass() *v1.LinodeNodeClass {
	nodeClass := &v1.LinodeNodeClass{}
	nodeClass.Name = "default"
	return nodeClass
}

func cacheForTest() *cache.UnavailableOfferings {
	return cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL)
}
