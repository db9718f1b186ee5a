package lke

import (
	"context"
	"time"

	"github.com/awslabs/operatorpkg/reconciler"
	"github.com/awslabs/operatorpkg/singleton"
	controllerruntime "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// ownershipMigrationInterval is how often the pools are looked at again for a name tag: only a
// replica of an earlier version, during an upgrade, can still write one.
const ownershipMigrationInterval = time.Hour

// OwnershipMigration moves the pools an earlier version tagged with the cluster's name to the
// cluster's id, at start and now and then after (Provider.MigrateOwnership).
type OwnershipMigration struct {
	provider *Provider
}

// NewOwnershipMigration returns the controller for the provider's pools.
func NewOwnershipMigration(provider *Provider) *OwnershipMigration {
	return &OwnershipMigration{provider: provider}
}

// Reconcile retags the pools still tagged with the cluster's name.
func (m *OwnershipMigration) Reconcile(ctx context.Context) (reconciler.Result, error) {
	_, err := m.provider.MigrateOwnership(ctx)
	return reconciler.Result{RequeueAfter: ownershipMigrationInterval}, err
}

// Register runs the migration as a singleton.
func (m *OwnershipMigration) Register(_ context.Context, mgr manager.Manager) error {
	return controllerruntime.NewControllerManagedBy(mgr).
		Named("lke.ownership").
		WatchesRawSource(singleton.Source()).
		Complete(singleton.AsReconciler(m))
}
