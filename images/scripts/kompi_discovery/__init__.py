"""kompi's worker discovery from cluster DNS alone (no Kubernetes API, no credentials), and one-shot mode's
one Kubernetes API call (scale.py, apart).

Installed as two commands, symlinks to the launcher images/scripts/kompi-discover (the program looks at the
name it was called by):
  kompi-discover [watch]       keep $KOMPI_HOSTFILE equal to the ready workers (a sweep every ~1 s)
  kompi-discover once          print the hostfile the ready workers give, once
  kompi-discover scale N       set the worker StatefulSet's replicas (one-shot mode: the pod's own
                               service account may patch that one scale subresource, nothing else)
  kompi-wait N [--timeout S]   block until workers 0..N-1 are in DNS, answer with an SSH banner and
                               are in the hostfile; exit 1 naming the missing ones after S seconds

Ready workers come from cluster DNS. Kubernetes DNS publishes, for each ready endpoint of the headless
Service, an SRV record of its named port (_ssh._tcp.<service domain>, target = the pod's
<hostname>.<service domain>) and the pod's own name; a pod that is not ready has neither.

One SRV answer lists every ready worker while it fits in a DNS message (65,535 bytes over TCP: about
800 to 1,100 workers from CoreDNS, which then drops the rest and sets the TC bit). A cut answer is never
taken as the cluster: its records count as ready, and every other worker is looked up by its own name (one
small query each, many in flight at once), every ordinal kompi allows (0 to 4,095), so that no block of
workers that are not ready yet hides the ready ones above it; past that, block by block of 64 while the
last block held a ready worker (a StatefulSet scaled by hand). A worker
leaves the hostfile only when DNS has denied it in 3 sweeps in a row (the SRV answer and a lookup of
its own name each time), so that a stray NXDOMAIN for a ready pod (coredns/coredns#6518, #6658) does not
drop it; a query that times out is no answer at all and changes nothing (an SRV query that UDP leaves
unanswered is asked over TCP first: docs/one-shot.md, "No answer"). docs/scale.md has the sizes.
Only the Python standard library is used (a minimal DNS client).

Modules: dns_client (the DNS client), cluster (worker names, the hostfile), sweep (a sweep and the list kept
from sweep to sweep), watcher (kompi-discover watch and once), wait (kompi-wait), scale (kompi-discover
scale), cli (the command line), log (the commands' stderr lines).
"""
