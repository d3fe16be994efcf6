// Command pulumi-tfgen-random writes the random provider's Pulumi schema and bridge metadata:
// pulumi-tfgen-random schema --out DIR (KOMPI_RANDOM_UPSTREAM: the Terraform module's directory, for its docs).
package main

import (
	"os"

	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfgen"

	"kompi.local/pulumi-random/provider"
)

func main() {
	tfgen.Main("random", provider.Info([]byte("{}"), os.Getenv("KOMPI_RANDOM_UPSTREAM")))
}
