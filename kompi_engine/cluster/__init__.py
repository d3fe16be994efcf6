"""Running the engine's builds as a local cluster on 127.0.0.1: the control plane (etcd, the API server, the
controllers, kwok's fake nodes, the gang scheduler, Kueue) started as recorded steps by LocalCluster
(local.py), real nodes (real_node/) joined by one link (fabric.py), their certificates, ports and
processes."""
