package emulator

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// sendJSON sends body as JSON to path (under /v4) with the emulator's token, and returns the
// answer's status and the field its first error names.
func sendJSON(t *testing.T, e *Emulator, method, path string, body any) (int, string) {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, e.URL()+"/v4"+path, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct {
		Errors []struct {
			Field  string `json:"field"`
			Reason string `json:"reason"`
		} `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatalf("%s %s: answer is not JSON: %v", method, path, err)
	}
	if len(answer.Errors) == 0 {
		return resp.StatusCode, ""
	}
	if resp.StatusCode == http.StatusBadRequest && answer.Errors[0].Reason == "" {
		t.Errorf("%s %s: refused without a reason", method, path)
	}
	return resp.StatusCode, answer.Errors[0].Field
}

// TestRequestRulesRefuseTheBodiesOfIssue46 sends the request bodies the controller sent before
// issue 46 was fixed, each of which Linode's request rules refuse, and their fixed forms. The
// rules run before the routes, so a fixed body sent for a Linode or cluster that does not exist
// gets the route's 404: the rules let it through.
func TestRequestRulesRefuseTheBodiesOfIssue46(t *testing.T) {
	e, _, _ := startEmulator(t)
	vpcID, err := e.AddVPC("nodes", "us-ord")
	if err != nil {
		t.Fatal(err)
	}
	subnetID, err := e.AddVPCSubnet(vpcID, "nodes", "10.0.0.0/24")
	if err != nil {
		t.Fatal(err)
	}
	const (
		pools   = "/lke/clusters/999999/pools"
		pool    = "/lke/clusters/999999/pools/1"
		configs = "/linode/instances/999999/configs/1"
	)
	vpcLinode := func(iface map[string]any) map[string]any {
		return map[string]any{"region": "us-ord", "type": "g6-standard-2", "label": "node-legacy", "image": "linode/ubuntu24.04", "root_pass": "aComplexP@ssword1",
			"interface_generation": "legacy_config", "interfaces": []any{map[string]any{"purpose": "public"}, iface}}
	}
	linodeInterfaces := func(vpc map[string]any) map[string]any {
		return map[string]any{"region": "us-ord", "type": "g6-standard-2", "label": "node-linode", "image": "linode/ubuntu24.04", "root_pass": "aComplexP@ssword1",
			"interface_generation": "linode", "interfaces": []any{map[string]any{"vpc": vpc}}}
	}
	for _, tc := range []struct {
		name, method, path string
		body               map[string]any
		// field is what the refusal names; empty, the rules accept the body (and the route answers).
		field string
	}{
		{"pool create with a kubernetes.io label", http.MethodPost, pools, map[string]any{"type": "g6-standard-2", "count": 1,
			"labels": map[string]string{"node.kubernetes.io/instance-type": "g6-standard-2", "karpenter.sh/nodepool": "default"}}, "labels"},
		{"pool update with a kubernetes.io label", http.MethodPut, pool, map[string]any{"count": 1,
			"labels": map[string]string{"node.kubernetes.io/instance-type": "g6-standard-2"}}, "labels"},
		{"pool create with a linode.com label", http.MethodPost, pools, map[string]any{"type": "g6-standard-2", "count": 1,
			"labels": map[string]string{"lke.linode.com/pool": "x"}}, "labels"},
		{"pool create with labels a user may set", http.MethodPost, pools, map[string]any{"type": "g6-standard-2", "count": 1,
			"labels": map[string]string{"karpenter.sh/nodepool": "default", "team": "web"}}, ""},

		{"legacy VPC interface with a prefix-only SLAAC range", http.MethodPost, "/linode/instances", vpcLinode(map[string]any{
			"purpose": "vpc", "subnet_id": subnetID, "vpc_id": vpcID, "ipv4": map[string]any{},
			"ipv6": map[string]any{"slaac": []any{map[string]any{"range": "/64"}}}}), "interfaces[1].ipv6.slaac[0].range"},
		{"legacy VPC interface with a prefix-only IPv6 range", http.MethodPost, "/linode/instances", vpcLinode(map[string]any{
			"purpose": "vpc", "subnet_id": subnetID, "vpc_id": vpcID, "ipv4": map[string]any{},
			"ipv6": map[string]any{"ranges": []any{map[string]any{"range": "/64"}}}}), "interfaces[1].ipv6.ranges[0].range"},
		{"Linode VPC interface with a prefix-only IPv6 range", http.MethodPost, "/linode/instances", linodeInterfaces(map[string]any{
			"subnet_id": subnetID, "ipv6": map[string]any{"slaac": []any{map[string]any{"range": "auto"}}, "ranges": []any{map[string]any{"range": "/64"}}}}),
			"interfaces[0].vpc.ipv6.ranges[0].range"},
		{"Linode VPC interface with auto and /64 IPv6 ranges", http.MethodPost, "/linode/instances", linodeInterfaces(map[string]any{
			"subnet_id": subnetID, "ipv6": map[string]any{"slaac": []any{map[string]any{"range": "auto"}}, "ranges": []any{map[string]any{"range": "2600:3c11:e8a1:1::/64"}}}}),
			""},

		{"legacy VPC interface with a prefix-only IPv4 range", http.MethodPost, "/linode/instances", vpcLinode(map[string]any{
			"purpose": "vpc", "subnet_id": subnetID, "ip_ranges": []string{"/28"}}), "interfaces[1].ip_ranges[0]"},
		{"legacy VPC interface with a CIDR range, its VPC and ipv4", http.MethodPost, "/linode/instances", vpcLinode(map[string]any{
			"purpose": "vpc", "subnet_id": subnetID, "vpc_id": vpcID, "ipv4": map[string]any{"nat_1_1": "any"}, "ip_ranges": []string{"10.0.0.16/28"}}),
			""},

		{"config update with interfaces null", http.MethodPut, configs, map[string]any{
			"devices": map[string]any{"sda": map[string]any{"disk_id": 1}}, "interfaces": nil, "init_rd": nil, "comments": "", "memory_limit": 0}, "interfaces"},
		{"config update of the devices alone", http.MethodPut, configs, map[string]any{
			"devices": map[string]any{"sda": map[string]any{"disk_id": 1}}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, field := sendJSON(t, e, tc.method, tc.path, tc.body)
			switch {
			case tc.field == "" && status == http.StatusBadRequest:
				t.Errorf("refused (field %q); want it through the rules", field)
			case tc.field != "" && (status != http.StatusBadRequest || field != tc.field):
				t.Errorf("answer %d naming %q; want 400 naming %q", status, field, tc.field)
			}
		})
	}
	refused := e.RefusedRequests()
	if len(refused) == 0 {
		t.Fatal("no refused request recorded")
	}
	first := refused[0]
	if first.Method != http.MethodPost || first.Path != "/v4"+pools || first.Field != "labels" || first.Source == "" {
		t.Errorf("first refused request recorded as %+v", first)
	}
}

// TestRequestRulesLeaveAWrongTokenToTheRoute checks that a body the rules refuse, sent with a
// wrong token, is answered 401, as the API authenticates before it reads the body.
func TestRequestRulesLeaveAWrongTokenToTheRoute(t *testing.T) {
	e, _, _ := startEmulator(t)
	req, err := http.NewRequest(http.MethodPut, e.URL()+"/v4/linode/instances/1/configs/1", bytes.NewReader([]byte(`{"interfaces":null}`)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer not-"+e.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || len(e.RefusedRequests()) != 0 {
		t.Errorf("answer %d, %d refused requests recorded; want 401 and none", resp.StatusCode, len(e.RefusedRequests()))
	}
}
