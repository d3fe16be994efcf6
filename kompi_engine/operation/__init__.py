"""Operating a stack: `bin/kompi up|preview|destroy|refresh` through Pulumi's Automation API (command.py: the
checks around one operation; automation.py: the stack and its workspace), with the watches while it runs
(the API server, the gang's placement), the readiness of jobs after `up`, the repair of what a killed CLI
left, and the choice of a real or kwok node for `--local` (first_node.py)."""
