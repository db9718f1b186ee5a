// Command refresh-catalogue reads Linode's catalogue from the API again into the snapshot that
// `karpenter-linode plan` and the test bench's emulator build in (pkg/catalogue/catalogue.json):
// regions, plans with their region prices, plan availability by region, LKE types, LKE versions of
// both tiers and public images, dated today. Every call is a read: a token with read-only scopes
// is enough, and the catalogue's routes answer without one.
//
//	LINODE_TOKEN=... go run ./hack/refresh-catalogue [-out pkg/catalogue/catalogue.json]
//
// LINODE_URL changes the API's root (https://api.linode.com), as for the controller. It prints
// the date it wrote and what it read; review the diff before committing it (prices, new plans,
// regions gaining or losing a capability).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"time"
)

func main() {
	out := flag.String("out", "pkg/catalogue/catalogue.json", "file to write")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	api := &reader{root: envOr("LINODE_URL", "https://api.linode.com"), token: os.Getenv("LINODE_TOKEN"), http: &http.Client{Timeout: time.Minute}}
	snapshot, summary, err := read(ctx, api, time.Now().UTC())
	if err == nil {
		err = os.WriteFile(*out, snapshot, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "refresh-catalogue: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s: %s\n", *out, summary)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// read lists the catalogue and renders the snapshot file, dated asOf, as the project keeps it:
// one API object a line, so that a refresh's diff shows what changed object by object.
func read(ctx context.Context, api *reader, asOf time.Time) (snapshot []byte, summary string, err error) {
	lists := []struct {
		key, path, filter string
	}{
		{key: "regions", path: "/v4/regions"},
		{key: "types", path: "/v4/linode/types"},
		{key: "availability", path: "/v4/regions/availability"},
		{key: "lke_types", path: "/v4/lke/types"},
		{key: "images", path: "/v4/images", filter: `{"is_public": true}`},
	}
	read := map[string][]json.RawMessage{}
	for _, list := range lists {
		if read[list.key], err = api.list(ctx, list.path, list.filter); err != nil {
			return nil, "", err
		}
	}
	tiers := []struct{ name, path string }{
		{"standard", "/v4/lke/versions"},
		{"enterprise", "/v4beta/lke/tiers/enterprise/versions"},
	}
	versions := map[string][]string{}
	for _, tier := range tiers {
		path := tier.path
		objects, err := api.list(ctx, path, "")
		if err != nil {
			return nil, "", err
		}
		for _, raw := range objects {
			var version struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(raw, &version); err != nil {
				return nil, "", fmt.Errorf("%s: %w", path, err)
			}
			versions[tier.name] = append(versions[tier.name], version.ID)
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "{\n \"as_of\": %q,\n", asOf.Format(time.DateOnly))
	for _, list := range lists {
		fmt.Fprintf(&b, " %q: [\n", list.key)
		for i, raw := range read[list.key] {
			compact, err := compactJSON(raw)
			if err != nil {
				return nil, "", fmt.Errorf("%s: %w", list.path, err)
			}
			b.WriteString("  " + compact)
			if i < len(read[list.key])-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(" ],\n")
	}
	b.WriteString(` "lke_versions": {`)
	for i, tier := range tiers {
		ids, err := json.Marshal(versions[tier.name])
		if err != nil {
			return nil, "", err
		}
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q:%s", tier.name, ids)
	}
	b.WriteString("}\n}\n")

	summary = fmt.Sprintf("as of %s: %d regions, %d plans, %d availability entries, %d LKE types, %d public images, LKE versions %v",
		asOf.Format(time.DateOnly), len(read["regions"]), len(read["types"]), len(read["availability"]), len(read["lke_types"]), len(read["images"]), versions)
	return []byte(b.String()), summary, nil
}

// compactJSON is the object on one line, its fields in the API's order.
func compactJSON(raw json.RawMessage) (string, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", err
	}
	return b.String(), nil
}

// reader lists the API's collections, page by page.
type reader struct {
	root, token string
	http        *http.Client
}

// list reads every page of a collection; filter, when set, is the X-Filter header.
func (r *reader) list(ctx context.Context, path, filter string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	for page := 1; ; page++ {
		u, err := url.Parse(strings.TrimSuffix(r.root, "/") + path)
		if err != nil {
			return nil, err
		}
		u.RawQuery = url.Values{"page": {fmt.Sprint(page)}, "page_size": {"500"}}.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, err
		}
		if r.token != "" {
			req.Header.Set("Authorization", "Bearer "+r.token)
		}
		if filter != "" {
			req.Header.Set("X-Filter", filter)
		}
		resp, err := r.http.Do(req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
		}
		var result struct {
			Data  []json.RawMessage `json:"data"`
			Pages int               `json:"pages"`
		}
		if err := json.Unmarshal(body, &result); err != nil {
			return nil, fmt.Errorf("GET %s: %w", path, err)
		}
		out = append(out, result.Data...)
		if page >= result.Pages {
			return out, nil
		}
	}
}
