// CoreDNS with only what the local real node serves: cluster names from the API server. The stock
// plugin set would compile in every cloud SDK; none of them is useful on one node.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() {
	// A Corefile's plugins run in this order whatever order the file lists them in (CoreDNS' plugin.cfg order).
	dnsserver.Directives = []string{"bind", "ready", "health", "errors", "cache", "kubernetes"}
	coremain.Run()
}
