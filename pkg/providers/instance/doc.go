// Package instance is instance mode: plain Linodes that join a self-managed cluster. This build
// has the mode's NodeClass resolvers (the image, the maintenance policy the region must offer,
// and the VPC subnet and placement group it refuses) and the maintenance policy a Linode create
// carries, but no node provider, so the controller refuses to start in instance mode
// (pkg/operator's instance mode says so).
package instance
