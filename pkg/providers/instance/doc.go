// Package instance is instance mode: each NodeClaim becomes a plain Linode that joins a
// self-managed cluster (kubeadm's, Cluster API's, ...) through cloud-init and the kubelet's TLS
// bootstrap.
//
// The Linode is created with the NodeClaim's plan in the region, the NodeClass's image (named, or
// the newest match of its selector, which must have the cloud-init capability), firewall, VPC
// interface, placement group, disk encryption, SSH access and maintenance policy (which the region
// must offer: MaintenancePolicyResolver), and user data (package bootstrap)
// that Linode's Metadata service hands to cloud-init at first boot: the cluster's endpoint and CA,
// the NodeClaim's own bootstrap token (package bootstraptoken), and the kubelet's configuration.
// No root password is ever sent: a NodeClass without keys or users gets the public half of a key
// nobody holds. Every Linode carries the cluster's ownership tag, made from the kube-system
// namespace's UID (a cluster's identity that no rename changes), and its NodeClaim's tag, so that
// a retried launch finds the Linode an interrupted one created, and garbage collection finds
// Linodes whose NodeClaim is gone.
//
// Reads go through one filtered, paginated listing of the cluster's Linodes, shared for a few
// seconds by every caller; only the API's 404 makes a node gone.
package instance
