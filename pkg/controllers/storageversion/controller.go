// Package storageversion finishes an upgrade of a CRD's storage version, such as the move of
// LinodeNodeClass from the alpha provider's v1alpha1 to v1: it rewrites every object, which
// kube-apiserver stores in the current storage version whatever version it was stored in, and
// then trims the CRD's status.storedVersions to that version alone. Until the list is trimmed a
// later release could not stop serving v1alpha1: kube-apiserver refuses a CRD that drops a version
// still listed there.
//
// The leader does it once the conversion webhook serves (an object stored as v1alpha1 cannot be
// read as v1 without it), and again whenever storedVersions lists another version.
package storageversion

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/awslabs/operatorpkg/reconciler"
	"github.com/awslabs/operatorpkg/singleton"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Intervals: how often the CRD is looked at once migrated (a reinstalled alpha CRD would list
// v1alpha1 again), and how soon to look again while the conversion webhook is not serving yet.
const (
	recheckInterval    = time.Hour
	waitForWebhookPoll = 2 * time.Second
)

// pageSize bounds each list of the CRD's objects.
const pageSize = 100

// Controller migrates the objects of one CRD to its storage version.
type Controller struct {
	kubeClient client.Client
	apiReader  client.Reader
	crdName    string
	serving    func() error
}

// NewController returns the controller of the CRD named crdName. apiReader reads around the
// cache, so that no informer caches every CRD and object. serving returns nil once the
// conversion webhook answers.
func NewController(kubeClient client.Client, apiReader client.Reader, crdName string, serving func() error) *Controller {
	return &Controller{kubeClient: kubeClient, apiReader: apiReader, crdName: crdName, serving: serving}
}

// Register runs the controller on the leader.
func (c *Controller) Register(_ context.Context, m manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(m).
		Named("storageversion").
		WatchesRawSource(singleton.Source()).
		Complete(singleton.AsReconciler(c))
}

// Reconcile rewrites the CRD's objects and trims its storedVersions, if it lists more than the
// storage version.
func (c *Controller) Reconcile(ctx context.Context) (reconciler.Result, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.apiReader.Get(ctx, client.ObjectKey{Name: c.crdName}, crd); err != nil {
		return reconciler.Result{}, fmt.Errorf("reading CustomResourceDefinition %s: %w", c.crdName, err)
	}
	storage := storageVersion(crd)
	if storage == "" || slices.Equal(crd.Status.StoredVersions, []string{storage}) {
		return reconciler.Result{RequeueAfter: recheckInterval}, nil
	}
	if err := c.serving(); err != nil {
		log.FromContext(ctx).V(1).Info("waiting for the conversion webhook before migrating", "CustomResourceDefinition", c.crdName, "reason", err.Error())
		return reconciler.Result{RequeueAfter: waitForWebhookPoll}, nil
	}
	listKind := schema.GroupVersionKind{Group: crd.Spec.Group, Version: storage, Kind: crd.Spec.Names.ListKind}
	rewritten, err := c.rewriteAll(ctx, listKind)
	if err != nil {
		return reconciler.Result{}, err
	}
	stored := crd.DeepCopy()
	crd.Status.StoredVersions = []string{storage}
	if err := c.kubeClient.Status().Patch(ctx, crd, client.MergeFromWithOptions(stored, client.MergeFromWithOptimisticLock{})); err != nil {
		return reconciler.Result{}, fmt.Errorf("trimming status.storedVersions of CustomResourceDefinition %s: %w", c.crdName, err)
	}
	log.FromContext(ctx).Info("migrated objects to the storage version", "CustomResourceDefinition", c.crdName,
		"version", storage, "rewritten", rewritten, "previousStoredVersions", stored.Status.StoredVersions)
	return reconciler.Result{RequeueAfter: recheckInterval}, nil
}

// rewriteAll writes every object back unchanged, which stores it in the storage version. An
// object changed or deleted meanwhile needs nothing: that write stored it in the storage version
// already. Objects are handled as unstructured, so that fields this build does not know survive.
func (c *Controller) rewriteAll(ctx context.Context, listKind schema.GroupVersionKind) (int, error) {
	rewritten := 0
	continueToken := ""
	for {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(listKind)
		if err := c.apiReader.List(ctx, list, client.Limit(pageSize), client.Continue(continueToken)); err != nil {
			return rewritten, fmt.Errorf("listing %s: %w", listKind.Kind, err)
		}
		for i := range list.Items {
			err := c.kubeClient.Update(ctx, &list.Items[i])
			if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
				return rewritten, fmt.Errorf("rewriting %s %s: %w", list.Items[i].GetKind(), list.Items[i].GetName(), err)
			}
			rewritten++
		}
		if continueToken = list.GetContinue(); continueToken == "" {
			return rewritten, nil
		}
	}
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, version := range crd.Spec.Versions {
		if version.Storage {
			return version.Name
		}
	}
	return ""
}
