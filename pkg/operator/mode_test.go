package operator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/operator"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
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

func TestInstanceModeHasNoNodeProviderInThisBuild(t *testing.T) {
	e := startEmulator(t)
	opts := &options.Options{Mode: mode.Instance, ClusterName: "self-managed", Region: "us-ord"}
	target, err := operator.CheckLinode(context.Background(), client(t, e, testToken), opts, operator.Instance{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = operator.NewLinode(options.ToContext(context.Background(), opts), nil, nil, nil, nil, client(t, e, testToken), nil, target)
	if err == nil || err.Error() != `KARPENTER_MODE "instance" has no node provider in this build` {
		t.Fatalf("building instance mode gave %v, want the error saying it has no node provider", err)
	}
}
