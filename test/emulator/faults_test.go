package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linode/linodego"
)

func TestFaultSequence(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	e.InjectFault(Fault{Method: "GET", Route: "/regions", Sequence: []int{429, 0, 503}})

	wantStatus := []int{429, 0, 503, 0}
	for i, want := range wantStatus {
		_, err := c.ListRegions(ctx, nil)
		if want == 0 {
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			continue
		}
		wantAPIError(t, err, want)
	}
	if got := e.Counters()["GET /regions"]; got != 4 {
		t.Fatalf("counter %d", got)
	}
	if len(e.Faults()) != 0 {
		t.Fatal("spent fault still active")
	}
	// Other routes were never affected.
	if _, err := c.ListTypes(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

func TestFaultErrorRateIsSeeded(t *testing.T) {
	failures := func() int {
		e, c, _ := startEmulator(t, WithSeed(7))
		e.InjectFault(Fault{Route: "/linode/types/{typeId}", ErrorRate: 0.5, ErrorStatus: 500})
		n := 0
		for range 40 {
			if _, err := c.GetType(context.Background(), "g6-standard-1"); err != nil {
				wantAPIError(t, err, 500)
				n++
			}
		}
		return n
	}
	a, b := failures(), failures()
	if a != b || a < 8 || a > 32 {
		t.Fatalf("error rate 0.5 failed %d then %d of 40 requests", a, b)
	}
}

func TestFaultLatencyAndHang(t *testing.T) {
	e, c, _ := startEmulator(t)
	e.InjectFault(Fault{Route: "/lke/versions", Latency: 150 * time.Millisecond, Count: 1})
	start := time.Now()
	if _, err := c.ListLKEVersions(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 150*time.Millisecond {
		t.Fatal("latency not applied")
	}

	e.InjectFault(Fault{Route: "/lke/types", Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.ListLKETypes(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), context.DeadlineExceeded.Error()) {
		t.Fatalf("hang: want deadline exceeded, got %v", err)
	}
}

func TestFaultLostResponse(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	cluster, _ := e.AddLKECluster("lost", "us-east", "")

	e.InjectFault(Fault{Method: "POST", Route: "/lke/clusters/{clusterId}/pools", LoseResponse: LoseWith502, Count: 1})
	_, err := c.CreateLKENodePool(ctx, cluster, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2"})
	wantAPIError(t, err, 502)
	if len(e.Pools(cluster)) != 1 {
		t.Fatal("the lost request was not applied")
	}

	e.InjectFault(Fault{Method: "POST", Route: "/lke/clusters/{clusterId}/pools", LoseResponse: LoseByDroppingConnection, Count: 1})
	_, err = c.CreateLKENodePool(ctx, cluster, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2"})
	if le := apiErr(t, err, linodego.ErrorFromError); !strings.Contains(le.Message, "EOF") {
		t.Fatalf("dropped connection: want EOF, got %v", err)
	}
	if len(e.Pools(cluster)) != 2 {
		t.Fatal("the request with the dropped answer was not applied")
	}

	e.InjectFault(Fault{Method: "POST", Route: "/lke/clusters/{clusterId}/pools", LoseResponse: LoseByHanging, Count: 1})
	timeout, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = c.CreateLKENodePool(timeout, cluster, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2"})
	if err == nil || !strings.Contains(err.Error(), context.DeadlineExceeded.Error()) {
		t.Fatalf("hung answer: want the caller's deadline, got %v", err)
	}
	if len(e.Pools(cluster)) != 3 {
		t.Fatal("the request whose answer hung was not applied")
	}
}

func TestFaultUnreachable(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	cluster, _ := e.AddLKECluster("down", "us-east", "")

	id := e.InjectFault(Fault{Unreachable: true})
	_, err := c.CreateLKENodePool(ctx, cluster, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2"})
	if le := apiErr(t, err, linodego.ErrorFromError); !strings.Contains(le.Message, "EOF") {
		t.Fatalf("unreachable API: want EOF, got %v", err)
	}
	if _, err := c.ListRegions(ctx, nil); err == nil {
		t.Fatal("unreachable API answered a read")
	}
	if len(e.Pools(cluster)) != 0 {
		t.Fatal("a request to the unreachable API was applied")
	}

	e.RemoveFault(id)
	if _, err := c.CreateLKENodePool(ctx, cluster, linodego.LKENodePoolCreateOptions{Count: 1, Type: "g6-standard-2"}); err != nil {
		t.Fatalf("after the API came back: %v", err)
	}
}

func TestAdminEndpoints(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	post := func(method, path, body string) (*http.Response, map[string]any) {
		req, _ := http.NewRequest(method, e.URL()+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp, out
	}

	resp, out := post("POST", "/_emulator/faults", `{"method": "GET", "route": "/linode/instances", "sequence": [500], "latency": "10ms"}`)
	if resp.StatusCode != 200 || out["id"] == nil {
		t.Fatalf("add fault: %d %v", resp.StatusCode, out)
	}
	_, err := c.ListInstances(ctx, nil)
	wantAPIError(t, err, 500)

	if resp, _ := post("PUT", "/_emulator/capacity", `{"region": "us-east", "plan": "g6-standard-4", "count": 0}`); resp.StatusCode != 200 {
		t.Fatalf("set capacity: %d", resp.StatusCode)
	}
	_, err = c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-east", Type: "g6-standard-4"})
	wantAPIError(t, err, http.StatusForbidden)

	_, counters := post("GET", "/_emulator/counters", "")
	if counters["GET /linode/instances"] != 1.0 || counters["POST /linode/instances"] != 1.0 {
		t.Fatalf("counters: %v", counters)
	}
	post("DELETE", "/_emulator/counters", "")
	if len(e.Counters()) != 0 || len(e.Requests()) != 0 {
		t.Fatal("counters not reset")
	}
	if resp, _ := post("POST", "/_emulator/faults", `{"lose_response": "sometimes"}`); resp.StatusCode != 400 {
		t.Fatalf("invalid fault accepted: %d", resp.StatusCode)
	}
	if _, state := post("GET", "/_emulator/state", ""); state["instances"] == nil {
		t.Fatalf("state: %v", state)
	}
}

func TestRequestLog(t *testing.T) {
	e, c, _ := startEmulator(t, WithRequestLogSize(2))
	ctx := context.Background()
	_, _ = c.ListRegions(ctx, nil)
	_, _ = c.GetType(ctx, "nope")
	_, _ = c.ListImages(ctx, nil)
	log := e.Requests()
	if len(log) != 2 || log[0].Route != "GET /linode/types/{typeId}" || log[0].Status != 404 || log[1].Route != "GET /images" {
		t.Fatalf("request log: %+v", log)
	}
}

func TestRevokedTokenIsRefusedUntilRestored(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	admin := func(method, body string) {
		t.Helper()
		req, _ := http.NewRequest(method, e.URL()+"/_emulator/token", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s /_emulator/token: %d", method, resp.StatusCode)
		}
	}
	original := e.Token()
	admin(http.MethodDelete, "")
	for _, call := range []func() error{
		func() error { _, err := c.ListRegions(ctx, nil); return err },
		func() error { _, err := c.ListLKEClusters(ctx, nil); return err },
		func() error {
			_, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-east", Type: "g6-standard-1"})
			return err
		},
	} {
		wantAPIError(t, call(), http.StatusUnauthorized)
	}
	admin(http.MethodPut, `{"token": "rotated"}`)
	_, err := c.ListRegions(ctx, nil)
	wantAPIError(t, err, http.StatusUnauthorized)

	admin(http.MethodPut, `{"token": "`+original+`"}`)
	if _, err := c.ListRegions(ctx, nil); err != nil {
		t.Fatalf("restored token refused: %v", err)
	}
}
