"""The local engine: Pulumi and Kubernetes binaries built from the Go module proxy, a local cluster on
127.0.0.1, and kompi's program driven through Pulumi's Automation API."""
