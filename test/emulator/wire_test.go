package emulator

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/linode/linodego"
)

// do sends a raw request to the emulator with the token.
func do(t *testing.T, e *Emulator, method, path string, header map[string]string, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.Token())
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}

type page struct {
	Data    []json.RawMessage `json:"data"`
	Page    int               `json:"page"`
	Pages   int               `json:"pages"`
	Results int               `json:"results"`
}

func TestPagination(t *testing.T) {
	e, _, _ := startEmulator(t)
	tests := []struct {
		query               string
		status              int
		page, pages, length int
	}{
		{"", 200, 1, 4, 100},
		{"?page=4", 200, 4, 4, 51},
		{"?page_size=25&page=2", 200, 2, 15, 25},
		{"?page_size=500", 200, 1, 1, 351},
		{"?page_size=24", 400, 0, 0, 0},
		{"?page_size=501", 400, 0, 0, 0},
		{"?page=0", 400, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			resp, raw := do(t, e, "GET", "/v4/regions/availability"+tt.query, nil, "")
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d: %s", resp.StatusCode, raw)
			}
			if tt.status != 200 {
				return
			}
			var p page
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatal(err)
			}
			if p.Page != tt.page || p.Pages != tt.pages || len(p.Data) != tt.length || p.Results != 351 {
				t.Fatalf("page %d/%d with %d of %d items", p.Page, p.Pages, len(p.Data), p.Results)
			}
		})
	}
	resp, raw := do(t, e, "GET", "/v4/lke/clusters", nil, "")
	var p page
	_ = json.Unmarshal(raw, &p)
	if resp.StatusCode != 200 || p.Pages != 1 || p.Results != 0 || p.Data == nil {
		t.Fatalf("empty list: %s", raw)
	}
}

func TestErrorsAndAuth(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()

	req, _ := http.NewRequest("GET", e.URL()+"/v4/regions", nil)
	req.Header.Set("Authorization", "Bearer wrong")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("wrong token: %d", resp.StatusCode)
	}
	bad := e.NewClient()
	bad.SetToken("")
	if _, err := bad.ListRegions(ctx, nil); err == nil {
		t.Fatal("missing token accepted")
	} else {
		wantAPIError(t, err, 401)
	}

	resp, raw := do(t, e, "GET", "/v4/lke/clusters/0", nil, "")
	if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "application/json" ||
		string(raw) != `{"errors":[{"reason":"Not found"}]}` {
		t.Fatalf("404: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	if _, err := c.GetLKECluster(ctx, 0); !linodego.IsNotFound(err) {
		t.Fatalf("linodego does not see a 404: %v", err)
	}
	resp, raw = do(t, e, "POST", "/v4/linode/instances", nil, "{not json")
	if resp.StatusCode != 400 || !strings.Contains(string(raw), `"errors"`) {
		t.Fatalf("malformed body: %d %s", resp.StatusCode, raw)
	}
	resp, _ = do(t, e, "GET", "/v4/no/such/route", nil, "")
	if resp.StatusCode != 404 {
		t.Fatalf("unknown route: %d", resp.StatusCode)
	}
}

func TestTimestampsHaveNoZone(t *testing.T) {
	e, _, _ := startEmulator(t)
	if _, err := e.AddLKECluster("ts", "us-east", ""); err != nil {
		t.Fatal(err)
	}
	_, raw := do(t, e, "GET", "/v4beta/lke/clusters", nil, "")
	if !regexp.MustCompile(`"created":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"`).Match(raw) {
		t.Fatalf("timestamp format: %s", raw)
	}
}

func TestFilter(t *testing.T) {
	e, _, _ := startEmulator(t)
	ids := func(filter string) (int, []string) {
		resp, raw := do(t, e, "GET", "/v4/linode/types?page_size=500", map[string]string{"X-Filter": filter}, "")
		if resp.StatusCode != 200 {
			return resp.StatusCode, nil
		}
		var p struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range p.Data {
			out = append(out, d.ID)
		}
		return 200, out
	}
	tests := []struct {
		name   string
		filter string
		status int
		want   []string
	}{
		{"equality", `{"id": "g6-standard-2"}`, 200, []string{"g6-standard-2"}},
		{"eq operator", `{"id": {"+eq": "g6-standard-2"}}`, 200, []string{"g6-standard-2"}},
		{"and with numbers", `{"class": "gpu", "vcpus": {"+gte": 20}}`, 200, []string{"g1-gpu-rtx6000-3", "g1-gpu-rtx6000-4"}},
		{"or", `{"+or": [{"id": "g6-nanode-1"}, {"id": "g6-standard-1"}]}`, 200, []string{"g6-nanode-1", "g6-standard-1"}},
		{"and operator", `{"+and": [{"class": "premium"}, {"vcpus": {"+lt": 4}}]}`, 200, []string{"g7-premium-2"}},
		{"contains", `{"class": "highmem", "id": {"+contains": "-16"}}`, 200, []string{"g7-highmem-16"}},
		{"neq and lte", `{"class": "gpu", "vcpus": {"+lte": 16}, "id": {"+neq": "g1-gpu-rtx6000-1"}}`, 200, []string{"g1-gpu-rtx6000-2"}},
		{"gt with order", `{"class": "gpu", "vcpus": {"+gt": 8}, "+order_by": "vcpus", "+order": "desc"}`, 200, []string{"g1-gpu-rtx6000-4", "g1-gpu-rtx6000-3", "g1-gpu-rtx6000-2"}},
		{"no match", `{"id": "nothing"}`, 200, nil},
		{"unknown operator", `{"id": {"+like": "g6"}}`, 400, nil},
		{"unknown top-level operator", `{"+xor": [{"id": "a"}]}`, 400, nil},
		{"unknown field", `{"colour": "red"}`, 400, nil},
		{"not JSON", `{id: 1`, 400, nil},
		{"not an object", `["id"]`, 400, nil},
		{"bad order", `{"+order_by": "id", "+order": "sideways"}`, 400, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, got := ids(tt.filter)
			if status != tt.status {
				t.Fatalf("status %d, want %d", status, tt.status)
			}
			if status == 200 && strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}
