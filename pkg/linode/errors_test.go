package linode_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

// TestRefusalsOfAPoolCreate answers a pool create, through the real client, with each refusal
// Linode is known to give (the texts come from Linode's own client libraries, Cloud Manager and
// documentation) and with failures that are not refusals, and checks how each is classified.
func TestRefusalsOfAPoolCreate(t *testing.T) {
	emu := emulator.New(emulator.WithoutRateLimits())
	if err := emu.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	clusterID, err := emu.AddLKECluster("refusals", "us-ord", "standard")
	if err != nil {
		t.Fatal(err)
	}
	client := linode.Wrap(emu.NewClient())

	type want struct {
		refused      bool
		kind         linode.RefusalKind
		fields       []string
		unauthorized bool
		retryable    bool
	}
	for _, tc := range []struct {
		name          string
		status        int
		reason, field string
		want          want
	}{
		{
			name: "plan not available in the region (Linode's current wording)", status: http.StatusForbidden,
			reason: emulator.CapacityReason,
			want:   want{refused: true, kind: linode.RefusalCapacity},
		},
		{
			name: "no availability for the plan (Linode's earlier wording)", status: http.StatusForbidden,
			reason: "There is no availability for the selected plan in the selected region",
			want:   want{refused: true, kind: linode.RefusalCapacity},
		},
		{
			name: "vCPU limit of a plan class", status: http.StatusBadRequest,
			reason: "You’ve reached the limit for the number of active vCPUs in this Linode plan. Please contact Support to request an increase and specify the total number of resources you may need.",
			want:   want{refused: true, kind: linode.RefusalAccountLimit},
		},
		{
			name: "account limit", status: http.StatusBadRequest,
			reason: "Account Limit Reached. Please open a support ticket.",
			want:   want{refused: true, kind: linode.RefusalAccountLimit},
		},
		{
			name: "plan LKE does not take", status: http.StatusBadRequest,
			reason: "The Linode type g6-nanode-1 is currently not supported by LKE", field: "type",
			want: want{refused: true, kind: linode.RefusalInvalid, fields: []string{"type"}},
		},
		{
			name: "firewall that does not exist", status: http.StatusBadRequest,
			reason: "Firewall not found", field: "firewall_id",
			want: want{refused: true, kind: linode.RefusalInvalid, fields: []string{"firewall_id"}},
		},
		{
			name: "an unknown 400", status: http.StatusBadRequest,
			reason: "Something nobody has seen before",
			want:   want{refused: true, kind: linode.RefusalInvalid},
		},
		{
			name: "Linode busy.", status: http.StatusBadRequest,
			reason: "Linode busy.",
			want:   want{retryable: true},
		},
		{
			name: "revoked token", status: http.StatusUnauthorized,
			reason: "Invalid Token",
			want:   want{unauthorized: true},
		},
		{
			name: "token without the scope", status: http.StatusForbidden,
			reason: "Unauthorized",
			want:   want{unauthorized: true},
		},
		{name: "rate limited", status: http.StatusTooManyRequests, want: want{retryable: true}},
		{name: "server error", status: http.StatusInternalServerError, want: want{retryable: true}},
		{name: "bad gateway", status: http.StatusBadGateway, want: want{retryable: true}},
		{name: "unavailable", status: http.StatusServiceUnavailable, want: want{retryable: true}},
		{name: "gateway timeout", status: http.StatusGatewayTimeout, want: want{retryable: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			emu.InjectFault(emulator.Fault{
				Method: http.MethodPost, Route: "/lke/clusters/{clusterId}/pools",
				Sequence: []int{tc.status}, Reason: tc.reason, Field: tc.field,
			})
			_, err := client.CreateLKENodePool(context.Background(), clusterID, linode.NodePoolCreateOptions{Count: 1, Type: "g6-standard-2"})
			if err == nil {
				t.Fatal("the refused create succeeded")
			}
			refusal, refused := linode.AsRefusal(err)
			got := want{
				refused: refused, kind: refusal.Kind, fields: refusal.Fields,
				unauthorized: linode.IsUnauthorized(err), retryable: linode.IsRetryable(err),
			}
			if got.refused != tc.want.refused || got.kind != tc.want.kind || !slices.Equal(got.fields, tc.want.fields) ||
				got.unauthorized != tc.want.unauthorized || got.retryable != tc.want.retryable {
				t.Fatalf("%v classified as %+v, want %+v", err, got, tc.want)
			}
			if refused && refusal.Reason == "" {
				t.Fatal("the refusal lost Linode's reason")
			}
			if tc.reason != "" && linode.Reason(err) == "" {
				t.Fatal("no reason for the user")
			}
		})
	}
	if pools := emu.Pools(clusterID); len(pools) != 0 {
		t.Fatalf("refused creates left pools: %+v", pools)
	}
}
