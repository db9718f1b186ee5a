package emulator

import "net/http"

// accountSettingsWire is GET /account/settings. interfaces_for_new_linodes is the account's
// default interface generation and what it allows: by default legacy configuration profile
// interfaces, Linode interfaces allowed with "interface_generation": "linode", as the
// recordings show it.
type accountSettingsWire struct {
	Managed                 bool    `json:"managed"`
	NetworkHelper           bool    `json:"network_helper"`
	LongviewSubscription    *string `json:"longview_subscription"`
	BackupsEnabled          bool    `json:"backups_enabled"`
	ObjectStorage           string  `json:"object_storage"`
	InterfacesForNewLinodes string  `json:"interfaces_for_new_linodes"`
	MaintenancePolicy       string  `json:"maintenance_policy"`
}

func (e *Emulator) getAccountSettings(*http.Request) (any, *apiError) {
	return accountSettingsWire{
		ObjectStorage:           "disabled",
		InterfacesForNewLinodes: e.cfg.interfacesForNewLinodes,
		MaintenancePolicy:       "linode/migrate",
	}, nil
}

// WithInterfacesForNewLinodes sets the account's interfaces_for_new_linodes: legacy_config_only,
// legacy_config_default_but_linode_allowed, linode_default_but_legacy_config_allowed or
// linode_only.
func WithInterfacesForNewLinodes(setting string) Option {
	return func(c *config) { c.interfacesForNewLinodes = setting }
}
