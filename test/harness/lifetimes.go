package harness

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/linode/karpenter-provider-linode/test/localcluster/nodesim"
)

// Lifetimes notes the whole life of every pod and NodeClaim of a cluster, on this process's clock,
// for scenarios that measure over time (what a fleet cost while it ran, how long pods waited, which
// were evicted) rather than to one state. Unlike Recorder it follows every pod, keyed by UID, so a
// StatefulSet's pod recreated under the same name is a pod of its own.
type Lifetimes struct {
	mu     sync.Mutex
	pods   map[string]*PodLife
	claims map[string]*ClaimLife
}

// PodLife is what was seen of one pod. Times are zero until seen.
type PodLife struct {
	// Pod is the pod as first seen: its labels, owner and spec.
	Pod *corev1.Pod
	// Created is when the pod was first seen, Running when it was first seen running and ready,
	// Ended when it was first seen finished, being deleted or gone.
	Created, Running, Ended time.Time
	// Node is the node it first ran on.
	Node string
	// Disrupted is the reason of the DisruptionTarget condition the API server or a controller
	// set before deleting the pod (EvictionByEvictionAPI, DeletionByPodGC, ...); empty if none.
	Disrupted string
}

// ClaimLife is what was seen of one NodeClaim.
type ClaimLife struct {
	Name, NodePool string
	// InstanceType is the instance type it launched, Node the node it registered as.
	InstanceType, Node string
	// Created is when it was first seen, Launched when first seen launched, Gone when it was
	// deleted from the API server (its finalizer done: the instance is gone).
	Created, Launched, Gone time.Time
	// DisruptionReason is the reason of its DisruptionReason condition (Underutilized, Empty,
	// Drifted...) as last seen: why core disrupted it, empty if core did not.
	DisruptionReason string
}

// StartLifetimes watches the cluster's pods and NodeClaims until ctx is done.
func StartLifetimes(ctx context.Context, kubeconfig string) (*Lifetimes, error) {
	informers, err := NewInformers(kubeconfig)
	if err != nil {
		return nil, err
	}
	l := &Lifetimes{pods: map[string]*PodLife{}, claims: map[string]*ClaimLife{}}
	for obj, handler := range map[client.Object]toolscache.ResourceEventHandlerFuncs{
		&corev1.Pod{}: {
			AddFunc:    func(obj any) { l.observePod(obj, false) },
			UpdateFunc: func(_, obj any) { l.observePod(obj, false) },
			DeleteFunc: func(obj any) { l.observePod(obj, true) },
		},
		&karpv1.NodeClaim{}: {
			AddFunc:    func(obj any) { l.observeClaim(obj, false) },
			UpdateFunc: func(_, obj any) { l.observeClaim(obj, false) },
			DeleteFunc: func(obj any) { l.observeClaim(obj, true) },
		},
	} {
		informer, err := informers.GetInformer(ctx, obj)
		if err != nil {
			return nil, err
		}
		if _, err := informer.AddEventHandler(handler); err != nil {
			return nil, err
		}
	}
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("watching the cluster: caches did not sync")
	}
	return l, nil
}

// deleted is the object of a delete event, whose final state the informer may have missed.
func deleted(obj any) any {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		return tombstone.Obj
	}
	return obj
}

func (l *Lifetimes) observePod(obj any, gone bool) {
	pod, ok := deleted(obj).(*corev1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.pods[string(pod.UID)]
	if p == nil {
		p = &PodLife{Pod: pod.DeepCopy(), Created: now}
		l.pods[string(pod.UID)] = p
	}
	if p.Running.IsZero() && p.Ended.IsZero() && pod.Status.Phase == corev1.PodRunning && nodesim.PodReady(pod) {
		p.Running, p.Node = now, pod.Spec.NodeName
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && p.Disrupted == "" {
			p.Disrupted = c.Reason
		}
	}
	finished := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	if p.Ended.IsZero() && (gone || finished || !pod.DeletionTimestamp.IsZero()) {
		p.Ended = now
	}
}

func (l *Lifetimes) observeClaim(obj any, gone bool) {
	claim, ok := deleted(obj).(*karpv1.NodeClaim)
	if !ok {
		return
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.claims[string(claim.UID)]
	if c == nil {
		c = &ClaimLife{Name: claim.Name, NodePool: claim.Labels[karpv1.NodePoolLabelKey], Created: now}
		l.claims[string(claim.UID)] = c
	}
	if plan := claim.Labels[corev1.LabelInstanceTypeStable]; plan != "" {
		c.InstanceType = plan
	}
	if c.Launched.IsZero() && claim.StatusConditions().IsTrue(karpv1.ConditionTypeLaunched) {
		c.Launched = now
	}
	if claim.Status.NodeName != "" {
		c.Node = claim.Status.NodeName
	}
	// Core clears the condition when a disruption it decided on no longer holds: the last state
	// seen is the one the NodeClaim was deleted in.
	c.DisruptionReason = ""
	if reason := claim.StatusConditions().Get(karpv1.ConditionTypeDisruptionReason); reason != nil && reason.IsTrue() {
		c.DisruptionReason = reason.Reason
	}
	if gone && c.Gone.IsZero() {
		c.Gone = now
	}
}

// Pods are copies of what was seen of every pod, oldest first.
func (l *Lifetimes) Pods() []PodLife {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]PodLife, 0, len(l.pods))
	for _, p := range l.pods {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b PodLife) int { return a.Created.Compare(b.Created) })
	return out
}

// Claims are copies of what was seen of every NodeClaim, oldest first.
func (l *Lifetimes) Claims() []ClaimLife {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ClaimLife, 0, len(l.claims))
	for _, c := range l.claims {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b ClaimLife) int { return a.Created.Compare(b.Created) })
	return out
}
