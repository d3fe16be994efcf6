// Package provider describes the bridged Terraform random provider to Pulumi.
package provider

import (
	pf "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfbridge"
	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge"
	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge/tokens"

	"github.com/terraform-providers/terraform-provider-random/kompishim"
)

// Version is the version the provider reports; the build sets it with -ldflags -X.
var Version = "0.0.0"

// Info maps every Terraform type to the pulumi_random SDK's token: random_bytes => random:index/randomBytes:RandomBytes.
// metadata is the bridge metadata (tfgen writes it); upstream, if set, is the Terraform module's directory (its docs).
func Info(metadata []byte, upstream string) tfbridge.ProviderInfo {
	info := tfbridge.ProviderInfo{
		P:                pf.ShimProvider(kompishim.New()),
		Name:             "random",
		Version:          Version,
		DisplayName:      "random",
		Description:      "A Pulumi package to safely use randomness in Pulumi programs.",
		Keywords:         []string{"pulumi", "random"},
		License:          "Apache-2.0",
		Publisher:        "kompi",
		UpstreamRepoPath: upstream,
		MetadataInfo:     tfbridge.NewProviderMetadata(metadata),
	}
	// no prefix is stripped, so the "random" of "random_bytes" stays in the name, as in pulumi_random
	info.MustComputeTokens(tokens.SingleModule("", "index", tokens.MakeStandard("random")))
	return info
}
