package lke_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/awslabs/operatorpkg/option"
	"github.com/linode/linodego"
	"github.com/samber/lo"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	coretest "sigs.k8s.io/karpenter/pkg/test"

	v1 "github.com/linode/karpenter-provider-linode/pkg/apis/v1"
	"github.com/linode/karpenter-provider-linode/pkg/cache"
	"github.com/linode/karpenter-provider-linode/pkg/operator/options"
	"github.com/linode/karpenter-provider-linode/pkg/providers/lke"
	"github.com/linode/karpenter-provider-linode/pkg/providers/nodeprovider"
	"github.com/linode/karpenter-provider-linode/test/emulator"
)

const poolsRoute = "/lke/clusters/{clusterId}/pools"

func TestDiscover(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	if f.cluster.Region != region || f.cluster.Tier != lke.TierStandard || f.cluster.K8sVersion == "" || f.cluster.ID == 0 {
		t.Fatalf("discovered %+v", f.cluster)
	}
	if _, err := f.emulator.AddLKECluster("twin", region, string(lke.TierStandard)); err != nil {
		t.Fatal(err)
	}
	twinID, err := f.emulator.AddLKECluster("twin", "us-east", string(lke.TierStandard))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.emulator.AddLKECluster("enterprise", "us-mia", string(lke.TierEnterprise)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, label, regionSetting string
		wantRegion                 string
		wantTier                   lke.Tier
		// wantConfigError is a fragment of the message the user reads; empty when the cluster is found.
		wantConfigError string
	}{
		{name: "the cluster's own region", label: clusterName, wantRegion: region, wantTier: lke.TierStandard},
		{name: "the cluster's region set explicitly", label: clusterName, regionSetting: region, wantRegion: region, wantTier: lke.TierStandard},
		{name: "another region is refused", label: clusterName, regionSetting: "us-sea",
			wantConfigError: `LINODE_REGION "us-sea" is not the region of LKE cluster "karpenter-test" (us-ord), where LKE launches all its nodes: unset LINODE_REGION in LKE mode (helm: region)`},
		{name: "the enterprise tier", label: "enterprise", wantRegion: "us-mia", wantTier: lke.TierEnterprise},
		{name: "an unknown label lists the clusters the token sees", label: "karpenter-tset",
			wantConfigError: `CLUSTER_NAME "karpenter-tset" matches no LKE cluster; clusters this token sees: "karpenter-test", "twin", "twin", "enterprise"`},
		{name: "a label two clusters carry names both", label: "twin",
			wantConfigError: fmt.Sprintf(`CLUSTER_NAME "twin" matches 2 LKE clusters (ids %d, %d)`, twinID-1, twinID)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster, err := lke.Discover(context.Background(), f.api, tc.label, tc.regionSetting)
			if tc.wantConfigError != "" {
				var configErr *options.ConfigError
				if !errors.As(err, &configErr) || !strings.Contains(configErr.Message, tc.wantConfigError) {
					t.Fatalf("Discover error = %v, want a ConfigError containing %q", err, tc.wantConfigError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cluster.Label != tc.label || cluster.Region != tc.wantRegion || cluster.Tier != tc.wantTier {
				t.Errorf("discovered %+v, want %s in %s on the %s tier", cluster, tc.label, tc.wantRegion, tc.wantTier)
			}
		})
	}
}

func TestDiscoverLeavesAPIFailuresToBeRetried(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.emulator.InjectFault(emulator.Fault{Method: http.MethodGet, Route: "/lke/clusters", Sequence: []int{http.StatusServiceUnavailable}})
	_, err := lke.Discover(context.Background(), f.api, clusterName, "")
	var configErr *options.ConfigError
	if err == nil || errors.As(err, &configErr) {
		t.Fatalf("Discover error = %v during an outage, want the API's error, not a ConfigError", err)
	}
}

func TestCreateLaunchesOneTaggedSingleNodePoolInThreeCalls(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	firewallID := f.emulator.AddFirewall("nodes")
	class := nodeClass()
	class.Spec.FirewallID = &firewallID
	f.emulator.ResetCounters()

	node, err := f.provider.Create(context.Background(), class, nodeClaim("default-abcde"), plans())
	if err != nil {
		t.Fatal(err)
	}
	if calls := f.emulator.Calls(); calls > 3 {
		t.Errorf("launching one node cost %d API calls, want at most 3: %v", calls, f.emulator.Counters())
	}
	pools := f.emulator.Pools(f.cluster.ID)
	if len(pools) != 1 || pools[0].Count != 1 || pools[0].Type != "g6-standard-2" {
		t.Fatalf("want one single-node pool of the cheapest plan g6-standard-2, got %+v", pools)
	}
	instances := f.emulator.Instances()
	if len(instances) != 1 || node.ProviderID() != nodeprovider.ProviderID(instances[0].ID) {
		t.Fatalf("node %q, instances %+v", node.ProviderID(), instances)
	}
	for _, tag := range []string{nodeprovider.LKEClusterTag(f.cluster.ID), nodeprovider.NodeClaimTag("default-abcde"), nodeprovider.NodePoolTag("default"), "team-payments"} {
		if !slices.Contains(pools[0].Tags, tag) {
			t.Errorf("pool tags %v lack %q", pools[0].Tags, tag)
		}
	}
	pool, err := f.client.GetLKENodePool(context.Background(), f.cluster.ID, pools[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := linodego.LKENodePoolLabels{"karpenter.sh/nodepool": "default", "team": "payments", "karpenter.sh/capacity-type": "on-demand", v1.LabelNodeClaim: "default-abcde"}
	if !maps.Equal(pool.Labels, wantLabels) {
		t.Errorf("pool labels %v, want %v (no kubernetes.io labels)", pool.Labels, wantLabels)
	}
	if len(pool.Taints) != 1 || pool.Taints[0].Key != "dedicated" {
		t.Errorf("pool taints %+v, want only the NodePool's taint, never a start-up taint", pool.Taints)
	}
	if pool.Autoscaler.Enabled || lo.FromPtr(pool.FirewallID) != firewallID || lo.FromPtr(pool.Label) != "default-abcde" {
		t.Errorf("pool autoscaler %+v, firewall %v, label %v", pool.Autoscaler, lo.FromPtr(pool.FirewallID), lo.FromPtr(pool.Label))
	}
	if node.NodeClaimName != "default-abcde" || node.NodePoolName != "default" || node.InstanceType != "g6-standard-2" || node.Region != region {
		t.Errorf("node %+v", node)
	}
}

func TestCreateIsIdempotent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault emulator.Fault
		// failsFirst: the first attempt returns an error that Karpenter retries.
		failsFirst bool
	}{
		{
			name:       "response lost after the pool was created",
			fault:      emulator.Fault{Method: http.MethodPost, Route: poolsRoute, LoseResponse: emulator.LoseWith502, Count: 1},
			failsFirst: true,
		},
		{
			name:       "connection dropped after the pool was created",
			fault:      emulator.Fault{Method: http.MethodPost, Route: poolsRoute, LoseResponse: emulator.LoseByDroppingConnection, Count: 1},
			failsFirst: true,
		},
		{
			name:       "server error before the pool was created",
			fault:      emulator.Fault{Method: http.MethodPost, Route: poolsRoute, Sequence: []int{http.StatusInternalServerError}},
			failsFirst: true,
		},
		{
			name:  "rate-limit storm, retried by the client honouring Retry-After",
			fault: emulator.Fault{Method: http.MethodPost, Route: poolsRoute, Sequence: []int{429, 429, 429}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{retries: 5})
			f.emulator.InjectFault(tc.fault)
			claim := nodeClaim("default-retry")

			node, err := f.provider.Create(context.Background(), nodeClass(), claim, plans())
			if tc.failsFirst {
				if err == nil {
					t.Fatal("the first attempt succeeded despite the fault")
				}
				if cloudprovider.IsInsufficientCapacityError(err) || nodeprovider.IsInvalidLaunch(err) {
					t.Fatalf("a transient failure was classified as capacity or invalid: %v", err)
				}
				node, err = f.provider.Create(context.Background(), nodeClass(), claim, plans())
			}
			if err != nil {
				t.Fatal(err)
			}
			pools, instances := f.emulator.Pools(f.cluster.ID), f.emulator.Instances()
			if len(pools) != 1 || len(instances) != 1 {
				t.Fatalf("want exactly one pool and one Linode for the NodeClaim, got %d pools, %d Linodes", len(pools), len(instances))
			}
			if node.ProviderID() != nodeprovider.ProviderID(instances[0].ID) {
				t.Fatalf("node %s is not the Linode %d", node.ProviderID(), instances[0].ID)
			}
		})
	}
}

func TestCreateWaitsBoundedForTheLinodeAndResumes(t *testing.T) {
	// LKE takes 10 s to create a pool node's Linode; the emulator's clock stands still until stepped.
	f := newFixture(t, fixtureOptions{
		emulator: []emulator.Option{emulator.WithDelays(emulator.DefaultDelays())},
		provider: []option.Function[lke.Options]{lke.WithLaunchTimeout(50 * time.Millisecond)},
	})
	claim := nodeClaim("default-slow")
	if _, err := f.provider.Create(context.Background(), nodeClass(), claim, plans()); err == nil {
		t.Fatal("Create returned a node before LKE created its Linode")
	}
	f.emulator.Clock.Step(10 * time.Second)
	node, err := f.provider.Create(context.Background(), nodeClass(), claim, plans())
	if err != nil {
		t.Fatal(err)
	}
	if pools := f.emulator.Pools(f.cluster.ID); len(pools) != 1 || node.InstanceID == 0 {
		t.Fatalf("want the first attempt's pool to carry the node, got %d pools and node %+v", len(pools), node)
	}
}

func TestCreateOnExhaustedCapacityMovesToTheNextPlan(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.emulator.SetCapacity(region, "g6-standard-2", 0)

	_, err := f.provider.Create(context.Background(), nodeClass(), nodeClaim("default-first"), plans())
	if !cloudprovider.IsInsufficientCapacityError(err) {
		t.Fatalf("want an InsufficientCapacityError, got %v", err)
	}
	if !f.unavailable.IsUnavailable("g6-standard-2", region) {
		t.Fatal("the exhausted plan was not marked unavailable")
	}
	node, err := f.provider.Create(context.Background(), nodeClass(), nodeClaim("default-second"), plans())
	if err != nil {
		t.Fatal(err)
	}
	if node.InstanceType != "g6-dedicated-2" {
		t.Fatalf("the next attempt launched %s, want the next cheapest plan g6-dedicated-2", node.InstanceType)
	}
	if pools := f.emulator.Pools(f.cluster.ID); len(pools) != 1 {
		t.Fatalf("want one pool, got %d", len(pools))
	}
}

// TestRefusedLaunchesAreClassified answers the launch of the cheapest plan with each kind of
// refusal, in Linode's words: only a refusal about the NodeClass's own fields blocks the class;
// every other one takes that plan out of the region for a while, says so on the NodeClass, and
// the next launch goes on with another plan; transient failures do neither.
func TestRefusedLaunchesAreClassified(t *testing.T) {
	const cheapest = "g6-standard-2"
	type outcome string
	const (
		blocksClass  outcome = "blocks the class"
		refusesPlan  outcome = "refuses the plan"
		retriedAsIs  outcome = "retried as is"
		noOfferingAt outcome = "no launchable offering"
	)
	for _, tc := range []struct {
		name          string
		instanceTypes []*cloudprovider.InstanceType
		fault         *emulator.Fault
		capacity      bool
		want          outcome
		wantTTL       time.Duration
		wantReason    string
	}{
		{name: "no capacity for the plan in the region", capacity: true, want: refusesPlan, wantTTL: cache.UnavailableOfferingsTTL, wantReason: "not currently available in the selected region"},
		{
			name:  "an account limit",
			fault: &emulator.Fault{Sequence: []int{http.StatusBadRequest}, Reason: "You’ve reached the limit for the number of active vCPUs in this Linode plan. Please contact Support to request an increase and specify the total number of resources you may need."},
			want:  refusesPlan, wantTTL: cache.AccountLimitTTL, wantReason: "reached the limit",
		},
		{
			name:  "a plan the account may not use",
			fault: &emulator.Fault{Sequence: []int{http.StatusBadRequest}, Field: "type", Reason: "This plan is not available to your account"},
			want:  refusesPlan, wantTTL: cache.RefusedPlanTTL, wantReason: "not available to your account",
		},
		{
			name:          "a plan LKE does not take",
			instanceTypes: []*cloudprovider.InstanceType{plan("g6-nanode-1", 0.0075), plan("g6-standard-4", 0.072)},
			want:          refusesPlan, wantTTL: cache.RefusedPlanTTL, wantReason: "not supported by LKE",
		},
		{
			name:  "an unknown 400",
			fault: &emulator.Fault{Sequence: []int{http.StatusBadRequest}, Reason: "Something nobody has seen before"},
			want:  refusesPlan, wantTTL: cache.UnexplainedRefusalTTL, wantReason: "nobody has seen",
		},
		{
			name:  "a refusal of the NodeClass's firewall",
			fault: &emulator.Fault{Sequence: []int{http.StatusBadRequest}, Field: "firewall_id", Reason: "Firewall is not in a usable state"},
			want:  blocksClass, wantReason: "Firewall is not in a usable state",
		},
		{name: "Linode busy.", fault: &emulator.Fault{Sequence: []int{http.StatusBadRequest}, Reason: "Linode busy."}, want: retriedAsIs},
		{name: "a server error", fault: &emulator.Fault{Sequence: []int{http.StatusServiceUnavailable}}, want: retriedAsIs},
		{name: "a rate limit", fault: &emulator.Fault{Sequence: []int{http.StatusTooManyRequests}}, want: retriedAsIs},
		{name: "no launchable offering", instanceTypes: []*cloudprovider.InstanceType{}, want: noOfferingAt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recorder := coretest.NewEventRecorder()
			f := newFixture(t, fixtureOptions{provider: []option.Function[lke.Options]{lke.WithRecorder(recorder)}})
			instanceTypes := plans()
			if tc.instanceTypes != nil {
				instanceTypes = tc.instanceTypes
			}
			refused := cheapest
			if len(instanceTypes) > 0 && instanceTypes[0].Name == "g6-nanode-1" {
				refused = "g6-nanode-1"
			}
			if tc.fault != nil {
				fault := *tc.fault
				fault.Method, fault.Route = http.MethodPost, poolsRoute
				f.emulator.InjectFault(fault)
			}
			if tc.capacity {
				f.emulator.SetCapacity(region, cheapest, 0)
			}
			_, err := f.provider.Create(context.Background(), nodeClass(), nodeClaim("default-first"), instanceTypes)
			var got outcome
			switch {
			case nodeprovider.IsInvalidLaunch(err):
				got = blocksClass
			case cloudprovider.IsInsufficientCapacityError(err) && f.unavailable.IsUnavailable(refused, region):
				got = refusesPlan
			case cloudprovider.IsInsufficientCapacityError(err):
				got = noOfferingAt
			case err != nil:
				got = retriedAsIs
			}
			if got != tc.want {
				t.Fatalf("%v: the launch %s, want it %s", err, got, tc.want)
			}
			if tc.wantReason != "" && !strings.Contains(err.Error(), tc.wantReason) {
				t.Fatalf("the error %q lost Linode's reason %q", err, tc.wantReason)
			}
			if tc.want != refusesPlan {
				if f.unavailable.IsUnavailable(refused, region) || recorder.Calls("OfferingUnavailable") != 0 {
					t.Fatal("the plan was taken out of the region")
				}
				return
			}
			events := recorder.Events()
			if len(events) != 1 || !strings.Contains(events[0].Message, refused) || !strings.Contains(events[0].Message, tc.wantTTL.String()) {
				t.Fatalf("want one OfferingUnavailable event naming %s and %s, got %+v", refused, tc.wantTTL, events)
			}
			node, err := f.provider.Create(context.Background(), nodeClass(), nodeClaim("default-second"), instanceTypes)
			if err != nil {
				t.Fatalf("the next launch did not go on with another plan: %v", err)
			}
			if node.InstanceType == refused {
				t.Fatalf("the next launch used the refused plan %s again", refused)
			}
		})
	}
}

// TestRefusedPlanReturnsAfterItsTTL: a refused plan is tried again once its TTL has passed.
func TestRefusedPlanReturnsAfterItsTTL(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.unavailable = cache.NewUnavailableOfferings(cache.UnavailableOfferingsTTL)
	f.unavailable.MarkUnavailableFor(context.Background(), "refused", 30*time.Millisecond, "g6-standard-2", region)
	provider := lke.NewProvider(f.api, f.cluster, clusterName, f.unavailable, lke.WithPollInterval(time.Millisecond))
	deadline := time.Now().Add(5 * time.Second)
	for f.unavailable.IsUnavailable("g6-standard-2", region) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	node, err := provider.Create(context.Background(), nodeClass(), nodeClaim("default-again"), plans())
	if err != nil || node.InstanceType != "g6-standard-2" {
		t.Fatalf("after its TTL the cheapest plan is not launched again: %v, %+v", err, node)
	}
}

func TestDeleteRetriesUntilTheAPISaysGone(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	node, err := f.provider.Create(context.Background(), nodeClass(), nodeClaim("default-del"), plans())
	if err != nil {
		t.Fatal(err)
	}
	f.emulator.InjectFault(emulator.Fault{Method: http.MethodDelete, Route: poolsRoute + "/{poolId}", Sequence: []int{http.StatusInternalServerError}})
	if err := f.provider.Delete(context.Background(), node); err == nil || cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("a 500 on delete gave %v, want an error to retry", err)
	}
	if got, err := f.provider.Get(context.Background(), node.ProviderID()); err != nil || got.InstanceID != node.InstanceID {
		t.Fatalf("after a failed delete the node must still be found: %v", err)
	}
	if err := f.provider.Delete(context.Background(), node); err != nil {
		t.Fatalf("the retried delete failed: %v", err)
	}
	if _, err := f.provider.Get(context.Background(), node.ProviderID()); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("Get after delete gave %v, want NodeClaimNotFound", err)
	}
	if err := f.provider.Delete(context.Background(), node); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("deleting again gave %v, want NodeClaimNotFound", err)
	}
	if pools, instances := f.emulator.Pools(f.cluster.ID), f.emulator.Instances(); len(pools) != 0 || len(instances) != 0 {
		t.Fatalf("leaked %d pools and %d Linodes", len(pools), len(instances))
	}
}

func TestGetNeverTreatsAnAPIErrorAsGone(t *testing.T) {
	f := newFixture(t, fixtureOptions{provider: []option.Function[lke.Options]{lke.WithListingTTL(0)}})
	node, err := f.provider.Create(context.Background(), nodeClass(), nodeClaim("default-get"), plans())
	if err != nil {
		t.Fatal(err)
	}
	for _, status := range []int{http.StatusInternalServerError, http.StatusUnauthorized, http.StatusNotFound} {
		f.emulator.InjectFault(emulator.Fault{Method: http.MethodGet, Route: poolsRoute, Sequence: []int{status}})
		if _, err := f.provider.Get(context.Background(), node.ProviderID()); err == nil || cloudprovider.IsNodeClaimNotFoundError(err) {
			t.Errorf("a %d listing gave %v, want an error that is not NodeClaimNotFound", status, err)
		}
	}
}

func TestListingCostsOneCallPerPageOf500Pools(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	createPools(t, f, 500)
	f.emulator.ResetCounters()

	nodes, err := f.provider.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 500 {
		t.Fatalf("listed %d nodes, want 500", len(nodes))
	}
	for _, node := range nodes {
		if _, err := f.provider.Get(context.Background(), node.ProviderID()); err != nil {
			t.Fatal(err)
		}
	}
	if calls := f.emulator.Counters()["GET "+poolsRoute]; calls > 2 || f.emulator.Calls() != calls {
		t.Fatalf("listing 500 nodes and getting each cost %v, want at most 2 pool listings and nothing else", f.emulator.Counters())
	}
}

func TestOnlyPoolsWithTheClusterTagCount(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	if _, err := f.client.CreateLKENodePool(context.Background(), f.cluster.ID, linodego.LKENodePoolCreateOptions{
		Count: 1, Type: "g6-standard-2", Tags: []string{nodeprovider.ClusterTag("another-cluster"), nodeprovider.NodeClaimTag("default-abcde")},
	}); err != nil {
		t.Fatal(err)
	}
	nodes, err := f.provider.List(context.Background())
	if err != nil || len(nodes) != 0 {
		t.Fatalf("listed %d nodes (%v), want none: the pool belongs to another cluster's Karpenter", len(nodes), err)
	}
	if _, err := f.provider.Create(context.Background(), nodeClass(), nodeClaim("default-abcde"), plans()); err != nil {
		t.Fatal(err)
	}
	if pools := f.emulator.Pools(f.cluster.ID); len(pools) != 2 {
		t.Fatalf("want our own pool next to the foreign one, got %d pools", len(pools))
	}
}

func TestDrift(t *testing.T) {
	f := newFixture(t, fixtureOptions{tier: lke.TierEnterprise})
	first, second := f.emulator.AddFirewall("first"), f.emulator.AddFirewall("second")
	class := nodeClass()
	class.Spec.FirewallID = &first
	class.Spec.LKEK8sVersion = lo.ToPtr(strings.Join(strings.SplitN(strings.TrimPrefix(f.cluster.K8sVersion, "v"), ".", 3)[:2], "."))
	class.Spec.UpdateStrategy = lo.ToPtr(v1.UpdateStrategyOnRecycle)
	node, err := f.provider.Create(context.Background(), class, nodeClaim("default-drift"), plans())
	if err != nil {
		t.Fatal(err)
	}
	pool, err := f.client.GetLKENodePool(context.Background(), f.cluster.ID, node.LKE.PoolID)
	if err != nil || lo.FromPtr(pool.UpdateStrategy) != linodego.LKENodePoolOnRecycle {
		t.Fatalf("enterprise pool %+v, %v: want the NodeClass's update strategy", pool, err)
	}
	drifted := func() string {
		t.Helper()
		current, err := f.provider.Get(context.Background(), node.ProviderID())
		if err != nil {
			t.Fatal(err)
		}
		reason, err := f.provider.IsDrifted(context.Background(), class, current)
		if err != nil {
			t.Fatal(err)
		}
		return string(reason)
	}
	if reason := drifted(); reason != "" {
		t.Fatalf("a fresh node drifted: %s", reason)
	}
	class.Spec.LKEK8sVersion = lo.ToPtr("1.99")
	if reason := drifted(); reason != string(lke.DriftReasonKubernetesVersion) {
		t.Fatalf("a pinned version change gave %q", reason)
	}
	class.Spec.LKEK8sVersion = nil
	if _, err := f.client.UpdateLKENodePool(context.Background(), f.cluster.ID, node.LKE.PoolID, linodego.LKENodePoolUpdateOptions{FirewallID: &second}); err != nil {
		t.Fatal(err)
	}
	f.provider = lke.NewProvider(f.api, f.cluster, clusterName, f.unavailable)
	if reason := drifted(); reason != string(lke.DriftReasonFirewall) {
		t.Fatalf("a firewall changed behind Karpenter's back gave %q", reason)
	}
}

func TestReboot(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	node, err := f.provider.Create(context.Background(), nodeClass(), nodeClaim("default-reboot"), plans())
	if err != nil {
		t.Fatal(err)
	}
	f.emulator.ResetCounters()
	if err := f.provider.Reboot(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	if n := f.emulator.Counters()["POST /linode/instances/{linodeId}/reboot"]; n != 1 {
		t.Fatalf("want one reboot request, got %v", f.emulator.Counters())
	}
	gone := *node
	gone.InstanceID = 999999
	if err := f.provider.Reboot(context.Background(), &gone); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("rebooting a missing Linode gave %v, want NodeClaimNotFound", err)
	}
}

// createPools makes n single-node pools as the provider would, straight through the API.
func createPools(t testing.TB, f *fixture, n int) {
	t.Helper()
	for i := range n {
		if _, err := f.client.CreateLKENodePool(context.Background(), f.cluster.ID, linodego.LKENodePoolCreateOptions{
			Count: 1, Type: "g6-standard-2",
			Tags: []string{nodeprovider.LKEClusterTag(f.cluster.ID), nodeprovider.NodeClaimTag(fmt.Sprintf("default-%05d", i)), nodeprovider.NodePoolTag("default")},
		}); err != nil {
			t.Fatal(err)
		}
	}
	f.emulator.Tick()
}

// TestDeleteNeverTakesAPoolsOtherNodes: a node of a pool of several nodes whose node id LKE does
// not list yet is not deleted with its pool.
func TestDeleteNeverTakesAPoolsOtherNodes(t *testing.T) {
	f := newFixture(t, fixtureOptions{tier: lke.TierEnterprise, emulator: []emulator.Option{emulator.WithDelays(emulator.Delays{EnterpriseNodeListing: time.Minute})}})
	pool, err := f.client.CreateLKENodePool(context.Background(), f.cluster.ID, linodego.LKENodePoolCreateOptions{
		Count: 2, Type: "g6-standard-2", Tags: []string{nodeprovider.LKEClusterTag(f.cluster.ID), nodeprovider.NodeClaimTag("grown-by-hand")},
	})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := f.provider.List(context.Background())
	if err != nil || len(nodes) != 1 || nodes[0].LKE.NodeID != "" {
		t.Fatalf("want the pool as one node LKE does not list yet, got %+v, %v", nodes, err)
	}
	if err := f.provider.Delete(context.Background(), nodes[0]); err == nil || cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("deleting a node of a two-node pool without its node id gave %v, want an error to retry", err)
	}
	if pools := f.emulator.Pools(f.cluster.ID); len(pools) != 1 || pools[0].ID != pool.ID || pools[0].Count != 2 {
		t.Fatalf("the pool and its nodes must stay: %+v", pools)
	}
}

// TestAdoptHandsAPoolToAnotherNodeClaim: once adopted, a pool is the launch of the new NodeClaim,
// which finds it instead of creating another, and its nodes carry the new NodeClaim's label.
func TestAdoptHandsAPoolToAnotherNodeClaim(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	node, err := f.provider.Create(context.Background(), nodeClass(), nodeClaim("default-old"), plans())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.provider.Adopt(context.Background(), node, "default-new"); err != nil {
		t.Fatal(err)
	}
	pools, err := f.client.ListLKENodePools(context.Background(), f.cluster.ID, nil)
	if err != nil || len(pools) != 1 {
		t.Fatalf("pools: %+v, %v", pools, err)
	}
	if !slices.Contains(pools[0].Tags, nodeprovider.NodeClaimTag("default-new")) || slices.Contains(pools[0].Tags, nodeprovider.NodeClaimTag("default-old")) ||
		!slices.Contains(pools[0].Tags, nodeprovider.LKEClusterTag(f.cluster.ID)) || pools[0].Labels[v1.LabelNodeClaim] != "default-new" {
		t.Fatalf("the adopted pool: tags %v, labels %v", pools[0].Tags, pools[0].Labels)
	}
	adopted, err := f.provider.Create(context.Background(), nodeClass(), nodeClaim("default-new"), plans())
	if err != nil || adopted.InstanceID != node.InstanceID || adopted.NodeClaimName != "default-new" {
		t.Fatalf("the new NodeClaim's launch: %+v, %v", adopted, err)
	}
	if pools := f.emulator.Pools(f.cluster.ID); len(pools) != 1 {
		t.Fatalf("the launch of the adopting NodeClaim created a pool: %+v", pools)
	}
}

// TestARenamedClusterKeepsItsPools: pools carry the cluster's id, so a controller started with
// the cluster's new label (CLUSTER_NAME follows the rename) finds them all.
func TestARenamedClusterKeepsItsPools(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	node, err := f.provider.Create(context.Background(), nodeClass(), nodeClaim("default-before"), plans())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.UpdateLKECluster(context.Background(), f.cluster.ID, linodego.LKEClusterUpdateOptions{Label: "renamed"}); err != nil {
		t.Fatal(err)
	}
	renamed, err := lke.Discover(context.Background(), f.api, "renamed", "")
	if err != nil {
		t.Fatal(err)
	}
	provider := lke.NewProvider(f.api, renamed, "renamed", f.unavailable)
	nodes, err := provider.List(context.Background())
	if err != nil || len(nodes) != 1 || nodes[0].InstanceID != node.InstanceID {
		t.Fatalf("after the rename the provider lists %+v (%v), want the node launched before", nodes, err)
	}
	if _, err := provider.Get(context.Background(), node.ProviderID()); err != nil {
		t.Fatalf("after the rename the node is not found: %v", err)
	}
}

// TestPoolsOfEarlierVersionsAreAdopted: pools an earlier version tagged with the cluster's name
// stay the provider's, are retagged with the cluster's id, and then survive a rename; a pool of
// another cluster's name is left alone.
func TestPoolsOfEarlierVersionsAreAdopted(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := context.Background()
	legacy, err := f.client.CreateLKENodePool(ctx, f.cluster.ID, linodego.LKENodePoolCreateOptions{
		Count: 1, Type: "g6-standard-2", Tags: []string{nodeprovider.ClusterTag(clusterName), nodeprovider.NodeClaimTag("default-old"), nodeprovider.NodePoolTag("default"), "team-payments"},
	})
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := f.client.CreateLKENodePool(ctx, f.cluster.ID, linodego.LKENodePoolCreateOptions{
		Count: 1, Type: "g6-standard-2", Tags: []string{nodeprovider.ClusterTag("another-cluster"), nodeprovider.NodeClaimTag("theirs")},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.emulator.Tick()
	if nodes, err := f.provider.List(ctx); err != nil || len(nodes) != 1 || nodes[0].LKE.PoolID != legacy.ID {
		t.Fatalf("before the migration the provider lists %+v (%v), want the pool of the earlier version", nodes, err)
	}
	if migrated, err := f.provider.MigrateOwnership(ctx); err != nil || migrated != 1 {
		t.Fatalf("MigrateOwnership = %d, %v; want the one pool retagged", migrated, err)
	}
	if migrated, err := f.provider.MigrateOwnership(ctx); err != nil || migrated != 0 {
		t.Fatalf("a second MigrateOwnership = %d, %v; want nothing left to do", migrated, err)
	}
	pools := f.emulator.Pools(f.cluster.ID)
	for _, pool := range pools {
		switch pool.ID {
		case legacy.ID:
			if !slices.Contains(pool.Tags, nodeprovider.LKEClusterTag(f.cluster.ID)) || slices.Contains(pool.Tags, nodeprovider.ClusterTag(clusterName)) ||
				!slices.Contains(pool.Tags, "team-payments") || !slices.Contains(pool.Tags, nodeprovider.NodeClaimTag("default-old")) {
				t.Fatalf("the migrated pool's tags: %v", pool.Tags)
			}
		case foreign.ID:
			if slices.Contains(pool.Tags, nodeprovider.LKEClusterTag(f.cluster.ID)) {
				t.Fatalf("another cluster's pool was taken over: %v", pool.Tags)
			}
		}
	}
	if _, err := f.client.UpdateLKECluster(ctx, f.cluster.ID, linodego.LKEClusterUpdateOptions{Label: "renamed"}); err != nil {
		t.Fatal(err)
	}
	renamed, err := lke.Discover(ctx, f.api, "renamed", "")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := lke.NewProvider(f.api, renamed, "renamed", f.unavailable).List(ctx)
	if err != nil || len(nodes) != 1 || nodes[0].LKE.PoolID != legacy.ID {
		t.Fatalf("after the rename the provider lists %+v (%v), want the migrated pool", nodes, err)
	}
}

// untag removes the cluster's ownership tag from the node's pool, as a user editing the pool's
// tags by hand would.
func untag(t *testing.T, f *fixture, node *nodeprovider.Node) {
	t.Helper()
	tags := slices.DeleteFunc(slices.Clone(node.Tags), func(tag string) bool { return tag == nodeprovider.LKEClusterTag(f.cluster.ID) })
	if _, err := f.client.UpdateLKENodePool(context.Background(), f.cluster.ID, node.LKE.PoolID, linodego.LKENodePoolUpdateOptions{Tags: &tags}); err != nil {
		t.Fatal(err)
	}
}

// TestAPoolMissingFromTheListingIsNotGone: a pool whose ownership tag a user removed is missing
// from the listing but answers 200: its NodeClaim keeps it (Get finds it, List still shows it to
// the controller that saw it before), and deleting the NodeClaim deletes the pool instead of
// leaving it running.
func TestAPoolMissingFromTheListingIsNotGone(t *testing.T) {
	f := newFixture(t, fixtureOptions{provider: []option.Function[lke.Options]{lke.WithListingTTL(0)}})
	ctx := context.Background()
	node, err := f.provider.Create(ctx, nodeClass(), nodeClaim("default-untagged"), plans())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.provider.List(ctx); err != nil {
		t.Fatal(err)
	}
	untag(t, f, node)

	nodes, err := f.provider.List(ctx)
	if err != nil || len(nodes) != 1 || nodes[0].InstanceID != node.InstanceID {
		t.Fatalf("after its tag was removed the pool is listed as %+v (%v), want it still", nodes, err)
	}
	restarted := lke.NewProvider(f.api, f.cluster, clusterName, f.unavailable, lke.WithListingTTL(0))
	f.emulator.ResetCounters()
	found, err := restarted.Get(ctx, node.ProviderID())
	if err != nil || found.LKE.PoolID != node.LKE.PoolID {
		t.Fatalf("a controller that never listed the pool gets %+v, %v; want the node of the untagged pool", found, err)
	}
	if calls := f.emulator.Calls(); calls > 3 {
		t.Errorf("finding a node missing from the listing cost %d calls, want the listing and a GET of its Linode and its pool: %v", calls, f.emulator.Counters())
	}
	if err := restarted.Delete(ctx, found); err != nil {
		t.Fatalf("deleting the node of the untagged pool: %v", err)
	}
	if pools := f.emulator.Pools(f.cluster.ID); len(pools) != 0 {
		t.Fatalf("the untagged pool was left running: %+v", pools)
	}
	if _, err := restarted.Get(ctx, node.ProviderID()); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Fatalf("Get after the pool's deletion gave %v, want NodeClaimNotFound", err)
	}
	if nodes, err := f.provider.List(ctx); err != nil || len(nodes) != 0 {
		t.Fatalf("after the pool's deletion the provider that kept it lists %+v (%v), want nothing", nodes, err)
	}
}

// TestOnlyA404IsGone: a node is gone when its Linode or its pool answers 404, and not when
// either read fails otherwise.
func TestOnlyA404IsGone(t *testing.T) {
	f := newFixture(t, fixtureOptions{provider: []option.Function[lke.Options]{lke.WithListingTTL(0)}})
	ctx := context.Background()
	node, err := f.provider.Create(ctx, nodeClass(), nodeClaim("default-404"), plans())
	if err != nil {
		t.Fatal(err)
	}
	untag(t, f, node)
	provider := lke.NewProvider(f.api, f.cluster, clusterName, f.unavailable, lke.WithListingTTL(0))
	for _, fault := range []emulator.Fault{
		{Method: http.MethodGet, Route: "/linode/instances/{linodeId}", Sequence: []int{http.StatusInternalServerError}},
		{Method: http.MethodGet, Route: poolsRoute + "/{poolId}", Sequence: []int{http.StatusServiceUnavailable}},
	} {
		f.emulator.InjectFault(fault)
		if _, err := provider.Get(ctx, node.ProviderID()); err == nil || cloudprovider.IsNodeClaimNotFoundError(err) {
			t.Errorf("a %d on %s gave %v, want an error that is not NodeClaimNotFound", fault.Sequence[0], fault.Route, err)
		}
	}
	f.emulator.InjectFault(emulator.Fault{Method: http.MethodGet, Route: poolsRoute + "/{poolId}", Sequence: []int{http.StatusNotFound}})
	if _, err := provider.Get(ctx, node.ProviderID()); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("a pool answering 404 gave %v, want NodeClaimNotFound", err)
	}
	if err := f.client.DeleteLKENodePool(ctx, f.cluster.ID, node.LKE.PoolID); err != nil {
		t.Fatal(err)
	}
	f.emulator.Tick()
	if _, err := provider.Get(ctx, node.ProviderID()); !cloudprovider.IsNodeClaimNotFoundError(err) {
		t.Errorf("a pool deleted behind the provider's back gave %v, want NodeClaimNotFound", err)
	}
}

// TestListingAtRestReadsNoPoolAlone: a pool is read alone only when a listing misses it; listings
// of an unchanged cluster cost one call each.
func TestListingAtRestReadsNoPoolAlone(t *testing.T) {
	f := newFixture(t, fixtureOptions{provider: []option.Function[lke.Options]{lke.WithListingTTL(0)}})
	ctx := context.Background()
	createPools(t, f, 3)
	f.emulator.ResetCounters()
	for range 5 {
		if nodes, err := f.provider.List(ctx); err != nil || len(nodes) != 3 {
			t.Fatalf("listed %d nodes (%v), want 3", len(nodes), err)
		}
	}
	if calls := f.emulator.Calls(); calls != 5 {
		t.Fatalf("five listings of an unchanged cluster cost %v, want five pool listings", f.emulator.Counters())
	}
}

// TestALaunchWhosePoolLostItsTagResumesAfterARestart: a launch under way whose pool loses its
// ownership tag, or all its tags, is resumed by a controller that never saw the pool tagged
// (restarted) instead of launching a second pool and leaving the first one running untagged; the
// launch tags the pool back as this cluster's and the NodeClaim's.
func TestALaunchWhosePoolLostItsTagResumesAfterARestart(t *testing.T) {
	for _, tc := range []struct {
		name string
		tags func(f *fixture, tags []string) []string
	}{
		{name: "ownership tag removed", tags: func(f *fixture, tags []string) []string {
			return slices.DeleteFunc(tags, func(tag string) bool { return tag == nodeprovider.LKEClusterTag(f.cluster.ID) })
		}},
		{name: "all tags replaced", tags: func(*fixture, []string) []string { return []string{"team=payments"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slow := []option.Function[lke.Options]{lke.WithListingTTL(0), lke.WithLaunchTimeout(50 * time.Millisecond)}
			f := newFixture(t, fixtureOptions{emulator: []emulator.Option{emulator.WithDelays(emulator.DefaultDelays())}, provider: slow})
			ctx := context.Background()
			claim := nodeClaim("default-in-flight")
			if _, err := f.provider.Create(ctx, nodeClass(), claim, plans()); err == nil {
				t.Fatal("Create returned a node before LKE created its Linode")
			}
			pools := f.emulator.Pools(f.cluster.ID)
			if len(pools) != 1 {
				t.Fatalf("the first attempt left %d pools, want 1", len(pools))
			}
			pool, err := f.client.GetLKENodePool(ctx, f.cluster.ID, pools[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			tags := tc.tags(f, slices.Clone(pool.Tags))
			if _, err := f.client.UpdateLKENodePool(ctx, f.cluster.ID, pool.ID, linodego.LKENodePoolUpdateOptions{Tags: &tags}); err != nil {
				t.Fatal(err)
			}
			f.emulator.Clock.Step(10 * time.Second)

			restarted := lke.NewProvider(f.api, f.cluster, clusterName, f.unavailable, slow...)
			node, err := restarted.Create(ctx, nodeClass(), claim, plans())
			if err != nil {
				t.Fatalf("the restarted controller's launch: %v", err)
			}
			if pools := f.emulator.Pools(f.cluster.ID); len(pools) != 1 || node.LKE.PoolID != pool.ID || node.InstanceID == 0 {
				t.Fatalf("the restarted controller launched %+v with %d pools, want the first pool's node alone", node, len(pools))
			}
			retagged, err := f.client.GetLKENodePool(ctx, f.cluster.ID, pool.ID)
			if err != nil || !slices.Contains(retagged.Tags, nodeprovider.LKEClusterTag(f.cluster.ID)) || !slices.Contains(retagged.Tags, nodeprovider.NodeClaimTag(claim.Name)) {
				t.Fatalf("the resumed pool carries %v (%v), want the ownership tag and the NodeClaim's back", retagged.Tags, err)
			}
			if migrated, err := restarted.MigrateOwnership(ctx); err != nil || migrated != 0 {
				t.Fatalf("the ownership migration retagged %d pools (%v), want none left to retag", migrated, err)
			}
			if err := restarted.Delete(ctx, node); err != nil {
				t.Fatalf("deleting the resumed launch's node: %v", err)
			}
		})
	}
}
