// Package emulator is a stateful, in-process Linode API v4 server for tests,
// demos and benchmarks. It speaks the real wire format, so the real linodego
// client (and anything built on it) runs against it unchanged:
//
//	e := emulator.New(emulator.WithClock(fakeClock), emulator.WithoutRateLimits())
//	_ = e.Start()            // 127.0.0.1:<random port>
//	defer e.Close()
//	client := e.NewClient()  // linodego, no retries, no cache
//
// # Routes
//
// Under both /v4 and /v4beta (one shared state): regions (+ /{id},
// /availability, /{id}/availability, /vpc-availability,
// /{id}/vpc-availability), linode/types (+ /{id}), images (list, capture
// from a disk, upload, get, update, delete, replicate to regions),
// lke/versions (+ /{version}), lke/tiers/{tier}/versions, lke/types,
// lke/clusters (list, create, get, update, delete, recycle; api-endpoints;
// kubeconfig, get and delete; control_plane_acl, get, update and delete),
// lke/clusters/{id}/pools (list, create, get, update, delete, recycle),
// lke/clusters/{id}/nodes/{nodeId} (get, delete, recycle), linode/instances
// (list, create, get, update, delete, reboot, boot, shutdown, clone) with
// their configs (list, create, get, update; their interfaces, list, append,
// get, delete), Linode interfaces (list, create, get, update, delete; settings,
// get and update; an interface's firewalls), disks (list, create, get,
// rename) and ips (get,
// add, remove), networking/firewalls (list, create, get, delete; devices,
// list, add, get and remove; settings, get and update; templates, list and
// get; rulesets, list, create, get, update and delete), networking/ips (list,
// allocate, assign, get, update), networking/ipv6/ranges (list, create, get,
// delete),
// networking/reserved/ips (list, reserve, get, update, release; types),
// vpcs (list, create, get, update, delete; default-ranges; ips) and their
// subnets (list, create, get, update) and ips, placement/groups (list, create, get, update,
// delete), account/settings (get), account/events (list, get),
// account/maintenance (list) and
// maintenance/policies (list). Every route exists in Linode's OpenAPI
// description and uses its parameter names, or is newer than it and named
// as linodego names it (openapi_test.go lists those, with the linodego
// version and recording that show them); counters, the request log and
// faults name routes the same way, e.g. "GET /lke/clusters/{clusterId}/pools".
//
// routes.go lists them, those the controller and the test harnesses call apart from those served
// only so that the recordings replay. Each route declares whether it reads or writes; the router
// runs its handler under the emulator's lock, shared or exclusive, after faults and latency are
// injected, and handlers never lock. The list, get and delete handlers of every kind of object
// (Linodes, clusters, pools, firewalls, VPCs, subnets, ...) are made from its lookup and wire
// form by collection.go, which also decodes the body of updates before the lookup.
//
// # Request rules
//
// Before routing, the body of every POST and PUT with the right token is
// checked against Linode's request rules (package requestrules: the OpenAPI
// description, corrected where the recordings of the real API show it out of
// date, and @linode/validation's schemas where it is silent). A body they
// refuse is answered 400 naming the field, as the API would, and kept in
// RefusedRequests.
//
// # Wire format
//
// Lists are pages: {"data": [...], "page": p, "pages": n, "results": total},
// page_size 25-500 (default 100). X-Filter supports field equality, +and,
// +or, +eq, +neq, +contains, +gt, +gte, +lt, +lte, +order_by and +order; a
// filter that does not parse, uses an unknown operator or names an unknown
// field is a 400 on field "X-Filter" (never "match everything"). Errors are
// {"errors": [{"reason": "...", "field": "..."}]} with Content-Type exactly
// application/json; a missing object is 404 {"errors": [{"reason": "Not
// found"}]}; a missing or wrong "Authorization: Bearer <token>" is 401.
// Timestamps have no zone ("2006-01-02T15:04:05").
//
// # Validation
//
// Creates answer 400 with the offending field for: unknown region or plan;
// a region lacking the capability needed ("Kubernetes", "Kubernetes
// Enterprise" for enterprise clusters, "GPU Linodes" for gpu plans,
// "Premium Plans" for premium plans, "VPCs", "Placement Group", "Metadata"
// for user data); pool count outside 1-100; tags longer than 50 characters;
// an unknown firewall_id; an unsupported LKE version; a Linode label already
// in use; an image deployed without root_pass, authorized_keys or
// authorized_users (as linodego documents), or a root_pass outside 7-128
// characters; user data on an image without the "cloud-init" capability;
// interfaces beyond three, a second public or VPC interface, a VPC interface
// without subnet_id or on a subnet of another region's VPC, a VLAN interface
// without a label, a 1:1 NAT on an interface that is not a VPC one. Linode
// interfaces ("interface_generation": "linode") refuse the same, plus a VLAN
// label used twice, a firewall_id that does not exist or is on a VLAN
// interface, the Linode's own firewall_id (firewalls apply to each
// interface), interfaces in the legacy form, and configuration profile
// interfaces on such a Linode; they change only while the Linode is off. The root password is never kept. LKE refuses Nanode
// plans with the API's own wording, "The Linode type g6-nanode-1 is
// currently not supported by LKE", on field "type".
//
// # Capacity
//
// SetCapacity(region, plan, n) says how many more Linodes of the plan the
// region can launch (pool nodes included; deletes do not give capacity
// back). Plans the seeded /regions/availability lists as unavailable start
// at zero; everything else is unlimited. A create that needs more answers
// as Linode does (its wording, seen in Linode's client libraries):
//
//	403 {"errors": [{"reason": "The Linode plan you chose is not currently available in the selected region. Please select another region or plan type, or contact Support for assistance."}]}
//
// (CapacityReason), for a cluster create as for a pool or Linode create.
//
// # State machines
//
// State changes are scheduled on the emulator's clock (k8s.io/utils/clock)
// and applied, in due order and stamped with their due time, by the next
// request or Tick once the clock passes them; with a fake clock the emulator
// is fully deterministic. Defaults (DefaultDelays; scale them with
// WithDelayScale, 0 for instant):
//
//   - An LKE pool node starts "not_ready" with "instance_id": null; after
//     NodeInstance (10 s) its Linode exists, labelled lke<clusterID>-<nodeID>
//     where nodeID is <poolID>-<hex>.
//   - A Linode is "provisioning" for Provisioning (60 s), then "booting" for
//     Booting (90 s), then "running" (its node turns "ready"); with
//     "booted": false it ends "offline". A reboot is "rebooting" for Booting;
//     a shutdown "shutting_down" for ShuttingDown (25 s), then "offline"; a
//     boot of an offline Linode "booting" for Booting.
//   - A Linode deployed from an image gets the configuration profile the API
//     creates ("My <image label> Disk Profile"), booting GRUB 2 or the create's
//     "kernel", with the requested interfaces; a VPC interface takes the next free address of its subnet
//     (the first two are reserved) and, with nat_1_1 "any", the Linode's
//     public address. Interfaces are active while the Linode is up with that
//     profile, and subnets list the Linodes on them.
//   - A Linode created with "interface_generation": "linode" has its own
//     interfaces instead (a public one if it asks for none): a public
//     interface has the Linode's address ("auto") or a reserved one, its
//     SLAAC address and IPv6 ranges it asks for ("/64", "/56"), routed to
//     the SLAAC address and listed by /networking/ipv6/ranges; a VPC
//     interface the subnet's next free address or the one it names, a 1:1
//     NAT ("nat_1_1_address": "auto") that is the Linode's public IPv4
//     address (in its "ipv4", its /ips "public" with vpc_nat_1_1, and "vpc"
//     with nat_1_1), and ranges ("/28" or a CIDR of the subnet); a Linode
//     with no public interface and no NAT has no public IPv4 and "ipv6":
//     null. Without a default route asked for, the public interface takes
//     both, else the VPC interface IPv4's. A firewall_id puts the interface
//     behind the firewall as a device of type linode_interface.
//   - Standard tier: node Linodes carry lke_cluster_id and none of the pool's
//     tags. Enterprise tier: they carry the pool's tags plus
//     "nodepool=<poolID>" and "lke<clusterID>", and new nodes are missing from
//     the pool's "nodes" for EnterpriseNodeListing (45 s; the API documents
//     30-60 s) while the pool's count already includes them.
//   - DELETE .../nodes/{nodeId} answers {} and removes exactly that node and
//     its Linode, shrinking the pool's count; a pool update of count adds
//     nodes or removes the newest; deleting a pool or cluster deletes its
//     Linodes. Deleting a node's Linode directly makes LKE give the node a
//     new one.
//   - Recycling a node, a pool or the whole cluster replaces the nodes on a
//     rolling basis, one at a time per cluster: LKE drains the node (an
//     InstanceDraining event; a simulated cluster evicts its pods and calls
//     FinishDrain), deletes it and its Linode once drained or after
//     RecycleDrainTimeout (5 min), and adds a new node (new id, new Linode,
//     new name); the next node's turn comes when the replacement runs.
//   - PUT /lke/clusters/{id} renames a cluster or upgrades it to a newer
//     version (ReleaseLKEVersion adds one); existing nodes keep the version
//     they installed: standard-tier nodes until recycled, enterprise pools
//     until their own k8s_version changes, which with update_strategy
//     "rolling_update" recycles the pool. New and recycled nodes install the
//     cluster's version (standard) or their pool's (enterprise), which
//     instance events carry as K8sVersion.
//
// OnInstanceEvent reports a Linode's first "running", the start of its drain
// in a recycle, and its deletion, with its id, label, plan, region, tags, LKE
// cluster, pool and node and Kubernetes version, so a simulated cluster can
// start, drain and stop kubelets; and when a Linode that ran stops (shutdown,
// reboot, host failure, maintenance) and runs again. With the
// real clock a background ticker applies due transitions every 200 ms.
//
// # Events, maintenance and host failures
//
// /account/events lists what happened to Linodes, newest first: linode_create,
// linode_boot, linode_shutdown, linode_reboot and linode_delete for API calls
// (username "emulator"), and the platform's own events (no username):
// host_reboot for a host failure, linode_poweroff_on, linode_reboot or
// linode_migrate for maintenance. An event is "started" (maintenance:
// "scheduled" first) until the Linode reaches the state the action leads to.
//
// ScheduleMaintenance (POST /_emulator/maintenance) has Linode schedule host
// maintenance on a Linode, listed by /account/maintenance: "pending", then
// "started" at its start, when power_off_on, reboot and cold_migration power
// the Linode off, then "completed" after its duration, when the Linode boots
// again; live_migration and migrate move it to a new host while it runs.
// FailHost (POST /_emulator/host-failures) powers off every Linode of a
// Linode's host at once, with a host_reboot event, and optionally boots them
// on another host later. SetPlacementGroupCompliance (PUT
// /_emulator/placement-groups/{groupId}/compliance) makes a placement group
// report is_compliant false, as Linode does for a flexible group that had to
// break its anti-affinity. Both take durations on the emulator's clock: tests
// that scale the emulator's delays scale them too. maintenance_policy on
// Linodes accepts the slugs /maintenance/policies lists (linode/migrate, the
// default, and linode/power_off_on).
//
// # Addresses
//
// A Linode's public IPv4 address comes first in its "ipv4", then addresses
// allocated to it or assigned from another Linode, then its private address
// ("private_ip"). Reserved addresses belong to the account whether or not a
// Linode has them: a Linode created with "ipv4": [address] takes one that is
// reserved in its region and unused; deleting the Linode keeps the address
// reserved; giving it back (DELETE, or "reserved": false) leaves a Linode
// that has it its address, and an unused one disappears.
//
// # Images
//
// Public images come from the catalogue; AddImage creates private ones
// ("private/<n>", no vendor, not public) with a creation time and,
// optionally, the cloud-init capability, for image selection and drift. The
// API makes them too: an upload is "pending_upload" until the disk image is
// PUT to the URL it answered (the emulator's own, under /_emulator), a
// capture of a Linode's disk "creating" for Provisioning; replication stores
// an image in the regions named. Deploying an image makes its disk and a
// swap disk (512 MiB unless swap_size says otherwise), which together fill
// the plan's disk unless boot_size gives the image's disk a smaller size; a
// clone copies them. Blank disks (any filesystem) can be added, once the
// Linode has provisioned, in the space left free, and put in a profile's
// device slots (sda to sdh) by updating the profile.
//
// # Metadata service
//
// What a Linode sees at http://169.254.169.254 is served, per Linode, under
// MetadataURL(id) (see metadata.go): tokens, instance data, network, SSH keys
// and user data, as text or JSON. NewMetadataClient returns Linode's own
// client (go-metadata) for it.
//
// # Rate limits
//
// Per token, over fixed windows on the emulator's clock (DefaultRateLimits,
// Linode's published figures): 200 paginated GETs per minute, 20 Linode
// creates per 15 s, 1600 other requests per minute; RateLimits.LKEPoolCreates
// gives LKE pool creates a budget of their own, which Linode does not publish,
// for tests of pacing them. Answers carry
// X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset; over budget
// is 429 with Retry-After. WithoutRateLimits disables them.
//
// # Faults and observability
//
// InjectFault (or POST /_emulator/faults) makes matching requests fail with
// a sequence of statuses or at a seeded error rate (429s carry Retry-After),
// adds latency, hangs them until the client gives up, or applies them and
// then loses the answer (502, a dropped connection, or no answer until the
// client gives up), or closes the connection without applying them, as an
// API that is down. Counters and
// Requests report per-route counts and a bounded request log; the admin
// endpoints under /_emulator (see registerAdmin) expose the same, capacity
// and a state snapshot, without a token. Instances, Pools and Clusters
// snapshot state for leak checks.
//
// # Catalogue
//
// Regions, plans (with region_prices and add-ons), availability, LKE types
// and versions and public images come from pkg/catalogue's catalogue.json, embedded in the
// package and derived from real API answers (Linode-recorded fixtures of the
// linodego project); the emulator needs no files at run time. The conformance
// test replays each cassette in the catalogue it was recorded against: it adds
// the regions, plans and LKE versions the cassette's API listed or read that
// catalogue.json lacks (lab regions, retired versions).
package emulator
