"""StatefulSetRollout: a Pulumi resource that rolls a StatefulSet's pods at once and waits for them.

It is a dynamic resource: its provider is this module's Python, run by the Pulumi engine in a plugin
process (``pulumi-resource-pulumi-python``, part of every Pulumi CLI), and it reaches the cluster with
the Kubernetes provider's own settings. So ``pulumi up`` and ``bin/kompi up`` both get it. It changes
whenever the pod template or the replica count does, after the StatefulSet itself was updated. It is
deleted before its StatefulSet, and then releases the pods that a lost node holds (kube/release.py), so
that `destroy` ends.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pulumi
import pulumi.dynamic
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kompi_components.components.dynamic_provider import KompiProvider
from kompi_components.errors import KompiError
from kompi_components.kube.access import ClusterAccess
from kompi_components.kube.api import ApiNotAnswering, JsonApi
from kompi_components.kube.release import release_pods_on_lost_nodes
from kompi_components.kube.rollout import GIVE_UP_SECONDS, Rollout, hand_over
from kompi_components.manifests.meta import Manifest

# What a new value of makes the resource act (its other inputs only say where and how).
TRACKED = ("namespace", "statefulset", "replicas", "template")
# A one-shot run under kompi:queue: its Job (``launcherJob``) and that Job's uid (``run``), new whenever the Job is
# made again, by a changed run or by `pulumi up --replace` of an unchanged one. Kept only where the old outputs
# have it: state from before it is not rolled by an upgrade alone.
LAUNCHER, RUN = "launcherJob", "run"
# How it reaches the cluster: kept in its outputs (the kubeconfig as a secret, since the engine marks an
# output secret whose input was) because `destroy` gives a dynamic resource's delete only its outputs.
ACCESS = ("kubeconfig", "context", "cluster")
HANDOVER_SECONDS = 60.0  # the API server's answers to the handover's read and patch


def template_digest(template: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(template, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class _Provider(KompiProvider):
    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        return pulumi.dynamic.CreateResult(f"{props['namespace']}/{props['statefulset']}", _roll(props, new_run=True))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        changed = [key for key in TRACKED if olds.get(key) != news.get(key)]
        # new credentials are kept for the delete; state from an older kompi has none, and gets them at its
        # next roll (an upgrade alone changes nothing); so does a new run
        changed += [key for key in (*ACCESS, RUN) if key in olds and olds[key] != news.get(key)]
        return pulumi.dynamic.DiffResult(changes=bool(changed), replaces=[], delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.UpdateResult:
        return pulumi.dynamic.UpdateResult(_roll(news, new_run=RUN in olds and olds[RUN] != news.get(RUN)))

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """The StatefulSet and its pods are the Kubernetes provider's to delete; only the pods that a lost
        node holds are released first. (State from before kompi kept its access in the outputs: nothing.)"""
        if not all(key in props for key in ACCESS):
            return
        api = access_of(props).api_client()
        release_pods_on_lost_nodes(
            client.CoreV1Api(api), client.AppsV1Api(api), props["namespace"], props["statefulset"]
        )


def access_of(props: dict[str, Any]) -> ClusterAccess:
    """The cluster access a dynamic resource of kompi's kept in its outputs (``ACCESS``)."""
    return ClusterAccess(props.get("kubeconfig") or None, props.get("context") or None, props.get("cluster") or None)


def _roll(props: dict[str, Any], new_run: bool) -> dict[str, Any]:
    queue_timeout = props.get("queueTimeoutSeconds")
    launcher = props.get(LAUNCHER) or None
    rollout = Rollout(
        props["namespace"],
        props["statefulset"],
        float(props["timeoutSeconds"]),
        queue_timeout_seconds=None if queue_timeout is None else float(queue_timeout),
        restore_replicas=props.get("restoreReplicas"),
        give_up_seconds=float(props["stuckPodTimeoutSeconds"]),
        launcher_job=launcher,
        new_run=new_run and launcher is not None,
    )
    api = access_of(props).api_client()
    batch = client.BatchV1Api(api) if launcher else None
    deleted = rollout.run(client.AppsV1Api(api), client.CoreV1Api(api), client.CustomObjectsApi(api), batch)
    # The outputs are what the next diff compares, and what the delete needs.
    kept = [key for key in (LAUNCHER, RUN) if key in props]
    return {key: props[key] for key in TRACKED + ACCESS + tuple(kept)} | {"podsReplaced": deleted}


class StatefulSetRollout(pulumi.dynamic.Resource):
    """Rolls ``statefulset`` (the resource created from ``manifest``) whenever its pod template changes. With
    ``restores_replicas`` (Pulumi leaves the replicas to a one-shot run's Job, which scales the workers to 0 when
    it succeeded) a roll first sets them back to the manifest's count: a new run gets its workers."""

    def __init__(
        self,
        name: str,
        manifest: Manifest,
        statefulset: pulumi.Resource,
        access: ClusterAccess,
        timeout_seconds: int,
        opts: pulumi.ResourceOptions,
        queue_timeout_seconds: int | None = None,
        restores_replicas: bool = False,
        stuck_pod_timeout_seconds: int = int(GIVE_UP_SECONDS),
        launcher: pulumi.CustomResource | None = None,
    ) -> None:
        spec = manifest["spec"]
        props: dict[str, Any] = {
            "namespace": manifest["metadata"]["namespace"],
            "statefulset": manifest["metadata"]["name"],
            "replicas": spec["replicas"],
            "template": pulumi.Output.from_input(spec["template"]).apply(template_digest),
            "timeoutSeconds": timeout_seconds,
            "stuckPodTimeoutSeconds": stuck_pod_timeout_seconds,
            "kubeconfig": pulumi.Output.secret(access.kubeconfig or ""),
            "context": access.context or "",
            "cluster": access.cluster or "",
        }
        if queue_timeout_seconds is not None:  # (absent without kompi:queue: state from before it is unchanged)
            props["queueTimeoutSeconds"] = queue_timeout_seconds
        if restores_replicas:
            props["restoreReplicas"] = spec["replicas"]
        needs = [statefulset]
        if launcher is not None:  # (after the Job: it is read, and a new one is a new run)
            props[LAUNCHER] = launcher.metadata.apply(lambda meta: _field(meta, "name"))  # type: ignore[attr-defined]
            props[RUN] = launcher.metadata.apply(lambda meta: _field(meta, "uid"))  # type: ignore[attr-defined]
            needs.append(launcher)
        depends = pulumi.ResourceOptions(depends_on=needs)
        super().__init__(_Provider(), name, props, pulumi.ResourceOptions.merge(opts, depends))


def _field(meta: Any, name: str) -> str:
    """A field of a Kubernetes object's metadata output (a dict where Pulumi's mocks give one)."""
    value = meta.get(name) if isinstance(meta, dict) else getattr(meta, name, None)
    return str(value or "")


class _HandoverProvider(KompiProvider):
    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        return pulumi.dynamic.CreateResult(f"{props['namespace']}/{props['statefulset']}", _hand_over(props))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        changed = any(olds.get(key) != news.get(key) for key in HANDED_OVER)
        return pulumi.dynamic.DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.UpdateResult:
        return pulumi.dynamic.UpdateResult(_hand_over(news))


# What makes the handover act again (the access is only how it reaches the cluster: not kept). Its output
# ``updateStrategy`` is ``wanted`` once it ran: an output of its own, so that it is unknown in the preview
# of an upgrade, and pulumi-kubernetes does not dry-run the StatefulSet's update against the old strategy.
HANDED_OVER = ("namespace", "statefulset", "wanted")


def _hand_over(props: dict[str, Any]) -> dict[str, Any]:
    api = access_of(props).api_client()
    calls = JsonApi.for_seconds(HANDOVER_SECONDS)
    try:
        hand_over(client.AppsV1Api(api), props["namespace"], props["statefulset"], props["wanted"], calls)
    except ApiException as error:
        raise KompiError(
            f"StatefulSet {props['namespace']}/{props['statefulset']}: cannot set its updateStrategy: "
            f"{error.status} {error.reason}"
        ) from None
    except ApiNotAnswering as error:
        raise KompiError(f"StatefulSet {props['namespace']}/{props['statefulset']}: {error}") from None
    return handover_outputs(props)


def handover_outputs(props: dict[str, Any]) -> dict[str, Any]:
    """A handover's outputs once it ran on ``props``."""
    return {key: props[key] for key in HANDED_OVER} | {"updateStrategy": props["wanted"]}


class RollHandover(pulumi.dynamic.Resource):
    """Runs before its StatefulSet is created or updated, and gives it kompi's ``updateStrategy`` (OnDelete) where
    a StatefulSet of that name is there already: one made by an earlier kompi, under the controller's
    RollingUpdate, which the apply alone cannot change (kube/rollout.hand_over). The StatefulSet takes its
    updateStrategy from this resource's output, so it waits for it, and Pulumi's dry run of the update
    (`preview`) does not meet the old strategy. After that it does nothing."""

    updateStrategy: pulumi.Output[dict[str, Any]]  # (named as the property)

    def __init__(self, name: str, manifest: Manifest, access: ClusterAccess, opts: pulumi.ResourceOptions) -> None:
        """``manifest``: the StatefulSet's resource inputs (its namespace may be an Output)."""
        spec = manifest["spec"]
        strategy = spec["updateStrategy"] if isinstance(spec, dict) else spec.apply(lambda real: real["updateStrategy"])
        props: dict[str, Any] = {
            "namespace": manifest["metadata"]["namespace"],
            "statefulset": manifest["metadata"]["name"],
            "wanted": strategy,
            "updateStrategy": None,  # (an output: see HANDED_OVER)
            "kubeconfig": pulumi.Output.secret(access.kubeconfig or ""),
            "context": access.context or "",
            "cluster": access.cluster or "",
        }
        super().__init__(_HandoverProvider(), name, props, opts)


def handed_over(manifest: Manifest, handover: RollHandover) -> Manifest:
    """``manifest`` (resource inputs) with its updateStrategy read from ``handover``: the StatefulSet waits for it."""
    spec = manifest["spec"]
    if isinstance(spec, dict):
        return manifest | {"spec": spec | {"updateStrategy": handover.updateStrategy}}
    joined = pulumi.Output.all(spec, handover.updateStrategy)
    return manifest | {"spec": joined.apply(lambda both: both[0] | {"updateStrategy": both[1]})}
