package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	metadata "github.com/linode/go-metadata"
)

// The Metadata service is what a Linode reaches at http://169.254.169.254 while it boots:
// cloud-init (on images with the cloud-init capability) reads its own instance data and user
// data there. Every Linode has its own view; since all the emulator's Linodes share one
// address, each view is served under its own prefix, MetadataURL(id):
//
//	PUT /v1/token         a token for the other endpoints, valid Metadata-Token-Expiry-Seconds
//	                      (1-86400, default 3600); plain text, or ["<token>"] with
//	                      Accept: application/json
//	GET /v1/instance      id, label, region, type, host_uuid, tags, specs, backups, image
//	GET /v1/network       interfaces, ipv4 and ipv6 addresses
//	GET /v1/ssh-keys      the authorized keys of root and of the authorized users
//	GET /v1/user-data     the user data as submitted (base64), always plain text
//
// Instance, network and SSH keys answer "key: value" lines (nested keys joined by dots, one line
// per list element) by default and JSON with Accept: application/json. Every endpoint but the
// token needs the Metadata-Token header; a missing, expired or other Linode's token is a 401.

// metadataToken is a Metadata service token of one Linode.
type metadataToken struct {
	instanceID int
	expires    time.Time
}

const (
	defaultMetadataTokenTTL = time.Hour
	maxMetadataTokenTTL     = 24 * time.Hour
	metadataPrefix          = "/_emulator/linodes/{linodeId}/metadata/v1"
)

// MetadataURL is the base URL of the Metadata service as the Linode sees it, the equivalent of
// http://169.254.169.254 (clients append /v1/...).
func (e *Emulator) MetadataURL(instanceID int) string {
	return fmt.Sprintf("%s/_emulator/linodes/%d/metadata", e.url, instanceID)
}

// NewMetadataClient returns Linode's Metadata service client (github.com/linode/go-metadata) as
// software on the Linode would use it, holding a fresh token. The client's base URL is set once
// it exists: go-metadata v0.3.1 cannot take one at construction.
func (e *Emulator) NewMetadataClient(ctx context.Context, instanceID int) (*metadata.Client, error) {
	client, err := metadata.NewClient(ctx, metadata.ClientWithoutManagedToken(),
		metadata.ClientWithHTTPClient(&http.Client{Timeout: 10 * time.Second}))
	if err != nil {
		return nil, err
	}
	client.SetBaseURL(e.MetadataURL(instanceID))
	if _, err := client.RefreshToken(ctx); err != nil {
		return nil, err
	}
	return client, nil
}

func (e *Emulator) registerMetadata(mux *http.ServeMux) {
	mux.HandleFunc("PUT "+metadataPrefix+"/token", e.metadataCreateToken)
	mux.HandleFunc("GET "+metadataPrefix+"/instance", e.metadataEndpoint(e.metadataInstance))
	mux.HandleFunc("GET "+metadataPrefix+"/network", e.metadataEndpoint(e.metadataNetwork))
	mux.HandleFunc("GET "+metadataPrefix+"/ssh-keys", e.metadataEndpoint(e.metadataSSHKeys))
	mux.HandleFunc("GET "+metadataPrefix+"/user-data", e.metadataEndpoint(func(in *instance) any { return metadataText(in.UserData) }))
}

// metadataText is an answer given verbatim as text/plain whatever the Accept header.
type metadataText string

func (e *Emulator) metadataCreateToken(w http.ResponseWriter, r *http.Request) {
	ttl := defaultMetadataTokenTTL
	if header := r.Header.Get("Metadata-Token-Expiry-Seconds"); header != "" {
		seconds, err := strconv.Atoi(header)
		if err != nil || seconds < 1 || time.Duration(seconds)*time.Second > maxMetadataTokenTTL {
			writeError(w, errInvalid("Metadata-Token-Expiry-Seconds", fmt.Sprintf("Must be a whole number of seconds from 1 to %d", int(maxMetadataTokenTTL.Seconds()))))
			return
		}
		ttl = time.Duration(seconds) * time.Second
	}
	created, apiErr := e.withLinode(r, true, func(in *instance) (any, *apiError) {
		token := e.st.hex(64)
		e.st.metadataTokens[token] = metadataToken{instanceID: in.ID, expires: e.clock.Now().Add(ttl)}
		return token, nil
	})
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	token := created.(string)
	if wantsJSON(r) {
		writeMetadata(w, r, []string{token})
		return
	}
	writeMetadata(w, r, metadataText(token))
}

// withLinode answers what fn answers for the Linode the request's path names, or 404, under the
// lock (exclusive when writes) after the transitions due, as the router runs API handlers.
func (e *Emulator) withLinode(r *http.Request, writes bool, fn func(*instance) (any, *apiError)) (any, *apiError) {
	e.sync()
	var answer any
	var apiErr *apiError
	e.locked(writes, func() {
		in, err := e.lookupInstance(r)
		if err != nil {
			apiErr = err
			return
		}
		answer, apiErr = fn(in)
	})
	return answer, apiErr
}

// metadataEndpoint serves one of a Linode's endpoints to a holder of its token.
func (e *Emulator) metadataEndpoint(answer func(*instance) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, apiErr := e.withLinode(r, false, func(in *instance) (any, *apiError) {
			token, ok := e.st.metadataTokens[r.Header.Get("Metadata-Token")]
			if !ok || token.instanceID != in.ID || !e.clock.Now().Before(token.expires) {
				return nil, errStatus(http.StatusUnauthorized, "Unauthorized")
			}
			return answer(in), nil
		})
		if apiErr != nil {
			writeError(w, apiErr)
			return
		}
		writeMetadata(w, r, body)
	}
}

type metadataSpecs struct {
	VCPUs    int `json:"vcpus"`
	Memory   int `json:"memory"`
	GPUs     int `json:"gpus"`
	Transfer int `json:"transfer"`
	Disk     int `json:"disk"`
}

type metadataBackups struct {
	Enabled bool    `json:"enabled"`
	Status  *string `json:"status"`
}

type metadataImage struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

type metadataInstanceWire struct {
	ID       int             `json:"id"`
	Label    string          `json:"label"`
	Region   string          `json:"region"`
	Type     string          `json:"type"`
	HostUUID string          `json:"host_uuid"`
	Tags     []string        `json:"tags"`
	Specs    metadataSpecs   `json:"specs"`
	Backups  metadataBackups `json:"backups"`
	Image    metadataImage   `json:"image"`
}

func (e *Emulator) metadataInstance(in *instance) any {
	p := e.cat.typeByID[in.Type]
	img, _ := e.imageByID(in.Image)
	return metadataInstanceWire{
		ID: in.ID, Label: in.Label, Region: in.Region, Type: in.Type, HostUUID: in.HostUUID,
		Tags:    nonNil(slices.Clone(in.Tags)),
		Specs:   metadataSpecs{VCPUs: p.VCPUs, Memory: p.Memory, GPUs: p.GPUs, Transfer: p.Transfer, Disk: p.Disk},
		Backups: metadataBackups{Enabled: in.Deployment.BackupsEnabled},
		Image:   metadataImage{ID: img.ID, Label: img.Label},
	}
}

type metadataInterface struct {
	Label       string  `json:"label"`
	Purpose     string  `json:"purpose"`
	IPAMAddress *string `json:"ipam_address"`
}

type metadataIPv4 struct {
	Public  []string `json:"public"`
	Private []string `json:"private"`
	Shared  []string `json:"shared"`
}

type metadataIPv6 struct {
	SLAAC        string   `json:"slaac"`
	LinkLocal    string   `json:"link_local"`
	Ranges       []string `json:"ranges"`
	SharedRanges []string `json:"shared_ranges"`
}

type metadataNetworkWire struct {
	Interfaces []metadataInterface `json:"interfaces"`
	IPv4       metadataIPv4        `json:"ipv4"`
	IPv6       metadataIPv6        `json:"ipv6"`
}

// metadataNetwork lists the Linode's addresses and the VLAN and VPC interfaces of its boot
// profile; like the service, it leaves out a lone public interface.
func (e *Emulator) metadataNetwork(in *instance) any {
	w := metadataNetworkWire{
		Interfaces: []metadataInterface{},
		IPv4:       metadataIPv4{Public: []string{}, Private: []string{}, Shared: []string{}},
		IPv6:       metadataIPv6{SLAAC: in.IPv6, LinkLocal: fmt.Sprintf("fe80::%x:%x/64", in.ID>>16, in.ID&0xffff), Ranges: []string{}, SharedRanges: []string{}},
	}
	for _, addr := range in.IPv4 {
		if strings.HasPrefix(addr, "192.168.") {
			w.IPv4.Private = append(w.IPv4.Private, addr+"/17")
		} else {
			w.IPv4.Public = append(w.IPv4.Public, addr+"/32")
		}
	}
	if cfg := in.bootConfig(); cfg != nil {
		for _, iface := range cfg.Interfaces {
			switch iface.Purpose {
			case purposeVLAN:
				w.Interfaces = append(w.Interfaces, metadataInterface{Label: iface.Label, Purpose: iface.Purpose, IPAMAddress: nonEmpty(iface.IPAMAddress)})
			case purposeVPC:
				w.Interfaces = append(w.Interfaces, metadataInterface{Purpose: iface.Purpose, IPAMAddress: ptrTo(iface.VPCAddress + "/32")})
			}
		}
	}
	return w
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (e *Emulator) metadataSSHKeys(in *instance) any {
	users := map[string][]string{"root": nonNil(slices.Clone(in.Deployment.AuthorizedKeys))}
	for _, user := range in.Deployment.AuthorizedUsers {
		users[user] = []string{}
	}
	return map[string]any{"users": users}
}

func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

// writeMetadata answers JSON when asked for it, and the text rendering otherwise.
func writeMetadata(w http.ResponseWriter, r *http.Request, answer any) {
	if text, ok := answer.(metadataText); ok {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(text))
		return
	}
	raw, err := json.Marshal(answer)
	if err != nil {
		writeError(w, errStatus(http.StatusInternalServerError, err.Error()))
		return
	}
	if wantsJSON(r) {
		writeBody(w, http.StatusOK, raw)
		return
	}
	var tree any
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	_ = decoder.Decode(&tree)
	var lines []string
	flattenMetadata("", tree, &lines)
	slices.Sort(lines)
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(strings.Join(lines, "\n") + "\n"))
}

// flattenMetadata renders a JSON value as "key: value" lines: nested keys joined by dots, one
// line per list element, nulls and empty lists left out.
func flattenMetadata(key string, v any, lines *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			child := k
			if key != "" {
				child = key + "." + k
			}
			flattenMetadata(child, x[k], lines)
		}
	case []any:
		for _, item := range x {
			flattenMetadata(key, item, lines)
		}
	case nil:
	default:
		*lines = append(*lines, fmt.Sprintf("%s: %v", key, x))
	}
}
