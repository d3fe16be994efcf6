// Command pulumi-resource-random is the Pulumi random provider plugin, bridged from Terraform's.
package main

import (
	"context"
	_ "embed"

	pf "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfbridge"

	"kompi.local/pulumi-random/provider"
)

// written by pulumi-tfgen-random (the schema with its version set) before this command is built
var (
	//go:embed schema.json
	schema []byte
	//go:embed bridge-metadata.json
	metadata []byte
)

func main() {
	pf.Main(context.Background(), "random", provider.Info(metadata, ""), pf.ProviderMetadata{PackageSchema: schema})
}
