package emulator

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/linode/linodego"
)

// TestCatalogueAdd checks what the conformance replay relies on: a catalogue extended with the
// regions and versions of another day's API (a lab region, a retired Kubernetes version) serves
// them as its own, while what it had stays as it was.
func TestCatalogueAdd(t *testing.T) {
	e, c, _ := startEmulator(t)
	ctx := context.Background()
	labRegion := regionLike(t, e, "us-ord", "pl-labkrk-2", []string{"Linodes", "Kubernetes"})
	before, err := c.ListLKEVersions(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}

	recorded := catalogueFile{
		Regions:     []json.RawMessage{labRegion, regionLike(t, e, "us-east", "us-ord", []string{"Linodes"})},
		LKEVersions: map[string][]string{tierStandard: {before[0].ID, "1.29"}},
	}
	// Twice, as a replay meets the same region in every page of /regions it recorded.
	for range 2 {
		e.mu.Lock()
		err := e.cat.add(recorded)
		e.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}

	regions, err := c.ListRegions(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var labListed int
	for _, r := range regions {
		if r.ID == "pl-labkrk-2" {
			labListed++
		}
	}
	if labListed != 1 || regions[len(regions)-1].ID != "pl-labkrk-2" {
		t.Errorf("the lab region is listed %d times, last %q: want once, last", labListed, regions[len(regions)-1].ID)
	}
	if _, err := c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "pl-labkrk-2", Type: "g6-nanode-1", Booted: ptr(false)}); err != nil {
		t.Errorf("creating a Linode in the lab region: %v", err)
	}
	if ord, err := c.GetRegion(ctx, "us-ord"); err != nil || !contains(ord.Capabilities, "Kubernetes Enterprise") {
		t.Errorf("us-ord was replaced by the recorded one: %+v, %v", ord, err)
	}

	if _, err := c.GetLKEVersion(ctx, "1.29"); err != nil {
		t.Errorf("the retired version: %v", err)
	}
	after, err := c.ListLKEVersions(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+1 || after[0].ID != before[0].ID || after[len(after)-1].ID != "1.29" {
		t.Errorf("versions %+v after adding 1.29 to %+v: want it once, after the others", after, before)
	}
}

// regionLike is the catalogue's region from, with another id and capabilities.
func regionLike(t *testing.T, e *Emulator, from, id string, capabilities []string) json.RawMessage {
	t.Helper()
	var fields map[string]any
	if err := json.Unmarshal(e.cat.regionRaw[from], &fields); err != nil {
		t.Fatal(err)
	}
	fields["id"], fields["capabilities"] = id, capabilities
	raw, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
