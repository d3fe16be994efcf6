"""Pulumi ComponentResources: one per concept, each creating the objects kompi.manifests builds.

Nothing is imported here: the engine's dynamic-provider process imports the rollout step and the data
guard alone (the public API is kompi_components.api)."""
