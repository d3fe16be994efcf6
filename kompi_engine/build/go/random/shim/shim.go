// Package kompishim hands the Terraform random provider, which lives in an internal package, to the bridge.
package kompishim

import (
	"github.com/hashicorp/terraform-plugin-framework/provider"

	random "github.com/terraform-providers/terraform-provider-random/internal/provider"
)

// New returns the Terraform Plugin Framework provider.
func New() provider.Provider {
	return random.New()
}
