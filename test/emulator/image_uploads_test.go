package emulator

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/linode/linodego"
)

// TestImageUploadLifecycle: an uploaded image waits for its upload, then is available in its
// region with the upload's size; it can be renamed, replicated and deleted.
func TestImageUploadLifecycle(t *testing.T) {
	_, c, clk := startEmulator(t)
	ctx := context.Background()

	img, uploadURL, err := c.CreateImageUpload(ctx, linodego.ImageCreateUploadOptions{Region: "us-ord", Label: "k8s-node", CloudInit: true, Tags: &[]string{"bbb", "aaa"}})
	if err != nil || img.Status != linodego.ImageStatusPendingUpload || !strings.Contains(uploadURL, imageUploadPath) {
		t.Fatalf("upload created: %+v %q, %v", img, uploadURL, err)
	}
	if err := c.UploadImageToURL(ctx, uploadURL, strings.NewReader(strings.Repeat("x", 3<<20))); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetImage(ctx, img.ID)
	if err != nil || got.Status != linodego.ImageStatusAvailable || got.Size != 3 || len(got.Regions) != 1 || got.Regions[0].Status != linodego.ImageRegionStatusAvailable ||
		len(got.Capabilities) != 1 || strings.Join(got.Tags, ",") != "aaa,bbb" {
		t.Fatalf("uploaded image: %+v, %v", got, err)
	}
	// linodego does not report a refused upload (its request has no error type), so over HTTP.
	again, err := http.NewRequest(http.MethodPut, uploadURL, strings.NewReader("again"))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := http.DefaultClient.Do(again); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a second upload to the URL: %v, %v", resp, err)
	} else {
		_ = resp.Body.Close()
	}

	description := "node image"
	if got, err := c.UpdateImage(ctx, img.ID, linodego.ImageUpdateOptions{Label: "k8s-node-2", Description: &description}); err != nil || got.Label != "k8s-node-2" || got.Description != description {
		t.Fatalf("renamed: %+v, %v", got, err)
	}
	if _, err := c.ReplicateImage(ctx, img.ID, linodego.ImageReplicateOptions{Regions: []string{"us-ord", "xx-nowhere"}}); err == nil {
		t.Fatal("replicated to an unknown region")
	} else {
		wantField(t, err, "regions")
	}
	replicated, err := c.ReplicateImage(ctx, img.ID, linodego.ImageReplicateOptions{Regions: []string{"us-ord", "us-iad"}})
	if err != nil || len(replicated.Regions) != 2 || replicated.Regions[1].Status != linodego.ImageRegionStatusPendingReplication {
		t.Fatalf("replicating: %+v, %v", replicated, err)
	}
	clk.Step(DefaultDelays().Provisioning)
	if got, err := c.GetImage(ctx, img.ID); err != nil || got.Regions[1].Status != linodego.ImageRegionStatusAvailable {
		t.Fatalf("replicated: %+v, %v", got, err)
	}
	if err := c.DeleteImage(ctx, img.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetImage(ctx, img.ID); !linodego.IsNotFound(err) {
		t.Fatalf("deleted image still found: %v", err)
	}
	if err := c.DeleteImage(ctx, "linode/debian12"); !linodego.IsNotFound(err) {
		t.Fatalf("a public image deleted: %v", err)
	}
}
