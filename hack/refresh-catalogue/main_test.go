package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/linode/karpenter-provider-linode/pkg/catalogue"
	"github.com/linode/karpenter-provider-linode/pkg/test"
)

// The emulator serves the snapshot; reading it back must give the snapshot again, object for
// object, so that a refresh from the real API differs only where Linode's catalogue did.
func TestAReadOfTheSnapshotGivesTheSnapshot(t *testing.T) {
	emulator := test.StartEmulatorForTest(t)
	committed := catalogue.JSON()
	asOf, err := time.Parse(time.DateOnly, string(bytes.Split(bytes.Split(committed, []byte(`"as_of": "`))[1], []byte(`"`))[0]))
	if err != nil {
		t.Fatal(err)
	}
	api := &reader{root: emulator.URL(), token: emulator.Token(), http: http.DefaultClient}
	got, summary, err := read(t.Context(), api, asOf)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(summary)
	if !bytes.Equal(got, committed) {
		gotLines, wantLines := strings.Split(string(got), "\n"), strings.Split(string(committed), "\n")
		for i := range min(len(gotLines), len(wantLines)) {
			if gotLines[i] != wantLines[i] {
				t.Fatalf("line %d differs:\n got %.300s\nwant %.300s", i+1, gotLines[i], wantLines[i])
			}
		}
		t.Fatalf("got %d lines, want %d", len(gotLines), len(wantLines))
	}
}
