package emulator

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/linode/linodego"
)

// TestReservedIPLifecycle: a reserved address becomes the public address of the one Linode
// created with it, stays reserved when that Linode goes, and is refused to every other create.
func TestReservedIPLifecycle(t *testing.T) {
	_, c, _ := startEmulator(t)
	ctx := context.Background()

	if _, err := c.ReserveIPAddress(ctx, linodego.ReserveIPOptions{Region: "us"}); err == nil {
		t.Fatal("address reserved in an unknown region")
	} else {
		wantField(t, err, "region")
	}
	reserved, err := c.ReserveIPAddress(ctx, linodego.ReserveIPOptions{Region: "us-ord"})
	if err != nil || !reserved.Reserved || reserved.Region != "us-ord" || reserved.LinodeID != 0 {
		t.Fatalf("reserved: %+v, %v", reserved, err)
	}
	elsewhere, err := c.ReserveIPAddress(ctx, linodego.ReserveIPOptions{Region: "us-east"})
	if err != nil {
		t.Fatal(err)
	}

	create := func(ipv4 ...string) (*linodego.Instance, error) {
		return c.CreateInstance(ctx, linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-1", IPv4: ipv4})
	}
	in, err := create(reserved.Address)
	if err != nil || len(in.IPv4) != 1 || in.IPv4[0].String() != reserved.Address {
		t.Fatalf("Linode on the reserved address: %+v, %v", in, err)
	}
	if got, err := c.GetReservedIPAddress(ctx, reserved.Address); err != nil || got.LinodeID != in.ID {
		t.Fatalf("reserved address in use: %+v, %v", got, err)
	}
	for name, ipv4 := range map[string][]string{
		"in use":           {reserved.Address},
		"not reserved":     {"198.51.100.1"},
		"another region":   {elsewhere.Address},
		"two addresses":    {reserved.Address, elsewhere.Address},
		"an empty address": {""},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := create(ipv4...)
			wantField(t, err, "ipv4")
		})
	}

	// A reserved address can also be added to a Linode that runs.
	spare, err := c.ReserveIPAddress(ctx, linodego.ReserveIPOptions{Region: "us-ord"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.R(ctx).SetBody(map[string]any{"type": "ipv4", "public": true, "address": spare.Address}).SetResult(&linodego.InstanceIP{}).
		Post(fmt.Sprintf("linode/instances/%d/ips", in.ID))
	if err != nil || resp.IsError() || resp.Result().(*linodego.InstanceIP).LinodeID != in.ID {
		t.Fatalf("reserved address added to the Linode: %v %v", resp, err)
	}
	resp, err = c.R(ctx).SetBody(map[string]any{"type": "ipv4", "public": true, "address": elsewhere.Address}).Post(fmt.Sprintf("linode/instances/%d/ips", in.ID))
	if err != nil || resp.StatusCode() != http.StatusBadRequest {
		t.Fatalf("a reserved address of another region added: %v %v", resp, err)
	}
	if err := c.DeleteInstance(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := c.GetReservedIPAddress(ctx, reserved.Address); err != nil || got.LinodeID != 0 {
		t.Fatalf("reserved address after its Linode went: %+v, %v", got, err)
	}
	resp, err = c.R(ctx).SetBody(map[string][]string{"tags": {"lb"}}).SetResult(&linodego.InstanceIP{}).Put("networking/reserved/ips/" + reserved.Address)
	if err != nil || resp.IsError() {
		t.Fatalf("tagging the address: %v %v", resp, err)
	}
	if listed, err := c.ListReservedIPAddresses(ctx, nil); err != nil || len(listed) != 3 {
		t.Fatalf("listed: %+v, %v", listed, err)
	}
	var types struct {
		Data []struct {
			ID    string `json:"id"`
			Price struct {
				Hourly float64 `json:"hourly"`
			} `json:"price"`
		} `json:"data"`
	}
	if resp, err := c.R(ctx).SetResult(&types).Get("networking/reserved/ips/types"); err != nil || resp.IsError() || len(types.Data) != 1 || types.Data[0].Price.Hourly <= 0 {
		t.Fatalf("reserved IP types: %+v, %v %v", types, resp, err)
	}
	if err := c.DeleteReservedIPAddress(ctx, reserved.Address); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetReservedIPAddress(ctx, reserved.Address); !linodego.IsNotFound(err) {
		t.Fatalf("released address still found: %v", err)
	}
}
