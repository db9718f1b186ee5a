// Package instancetype describes the Linode plans Karpenter can launch as Karpenter instance types:
// their labels, capacity, allocatable resources after the kubelet's reservations, and one
// on-demand offering in the cluster's region with its price and availability.
//
// Everything comes from the live catalogue (GET /linode/types, /regions and
// /regions/availability), re-read by the refresh controller in
// pkg/controllers/providers/instancetype; nothing about a plan is hard-coded, so a new plan or
// plan class appears without a code change. Two rules are Linode's and live here: which plan
// classes a mode can launch (LKE refuses Nanodes), and which region capability a plan class
// needs ("GPU Linodes", "Premium Plans").
//
// Linode has no availability zones. The region is the smallest placement unit, so every offering
// uses the region as its topology.kubernetes.io/zone as well.
package instancetype
