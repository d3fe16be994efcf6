"""image.*, kubectlImage.* and gitSyncImage.*: which images the pods run."""

from __future__ import annotations

import re
from typing import Any

from kompi_components import contract
from kompi_components.config.schema import KompiConfig
from kompi_components.migrate.keys import get
from kompi_components.migrate.scalars import text
from kompi_components.migrate.translation import Translation

KUBE_OPENMPI_IMAGE = "everpeace/kube-openmpi"
CHART_IMAGE_TAG = "0.7.0"
# git-sync v4 takes the flags kompi passes; kube-openmpi configured v2 through environment variables.
_GIT_SYNC_V4_OR_LATER = re.compile(r"^v?([4-9]|[1-9][0-9]+)\.")


def _kompi_image() -> str:
    fields = KompiConfig.model_fields
    return f"{fields['image'].default}:{fields['image_tag'].default}"


def _is_kube_openmpi_image(repository: str) -> bool:
    return repository == KUBE_OPENMPI_IMAGE or repository.endswith(f"/{KUBE_OPENMPI_IMAGE}")


def _image(values: dict[str, Any], result: Translation) -> None:
    repository, tag = get(values, "image.repository"), get(values, "image.tag")
    if repository is None or _is_kube_openmpi_image(text(repository, "image.repository")):
        path = "image.repository" if repository is not None else ("image.tag" if tag is not None else "image")
        given = f"{repository or KUBE_OPENMPI_IMAGE}:{tag or CHART_IMAGE_TAG}"
        prefix = "" if repository is not None else "not set: the chart's default "
        result.warn(
            path,
            f"{prefix}{given} is a kube-openmpi image and cannot run kompi's pods (kompi entrypoints, sshd on "
            f"{contract.SSH_PORT}): not imported; the stack uses kompi's image {_kompi_image()} "
            "(set kompi:image and kompi:imageTag)",
        )
        if tag is not None:
            result.accept("image.tag")
        return
    result.set("image", text(repository, "image.repository"), "image.repository")
    if tag is None:
        result.set("imageTag", CHART_IMAGE_TAG, f"image.tag (not set: the chart's default {CHART_IMAGE_TAG})")
    else:
        result.set("imageTag", text(tag, "image.tag"), "image.tag")
    result.warn(
        "image.repository",
        f"kept {repository}:{result.config['imageTag']}: it must be a kompi-compatible image (kompi-master and "
        f"kompi-worker entrypoints, sshd on port {contract.SSH_PORT}, user uid {contract.MPI_UID}); "
        f"images built FROM {KUBE_OPENMPI_IMAGE} need rebuilding on a kompi image",
    )


def _pull(values: dict[str, Any], result: Translation) -> None:
    policy = get(values, "image.pullPolicy")
    if policy is not None:
        result.set("imagePullPolicy", policy, "image.pullPolicy")
    secrets = get(values, "image.pullSecrets")
    if not secrets:
        return
    names = []
    for index, secret in enumerate(secrets):
        name = secret.get("name")
        if name in (None, ""):
            result.warn(f"image.pullSecrets[{index}].name", "empty: skipped")
            continue
        names.append(text(name, f"image.pullSecrets[{index}].name"))
    if names:
        result.set("imagePullSecrets", names, "image.pullSecrets[].name")


def _kubectl_image(values: dict[str, Any], result: Translation) -> None:
    if values.get("kubectlImage") is not None:
        result.warn(
            "kubectlImage",
            "not used: kompi runs no kubectl (no hostfile updater, no Kubernetes API access from the pods)",
        )


def _git_sync_image(values: dict[str, Any], result: Translation) -> None:
    """kompi fetches app code with kompi-fetch-code from its own image; a git-sync v4 image that a values file
    names (kube-openmpi drove v2 through environment variables, which kompi cannot) keeps git-sync."""
    if values.get("gitSyncImage") is None:
        return
    repository = get(values, "gitSyncImage.repository")
    tag = get(values, "gitSyncImage.tag")
    if repository is None or tag is None or not _GIT_SYNC_V4_OR_LATER.match(text(tag, "gitSyncImage.tag")):
        result.warn(
            "gitSyncImage",
            f"not imported: kompi fetches appCode with kompi-fetch-code from its own image, not git-sync v2 "
            f"({repository}:{tag}); kompi:appCodeFetcher git-sync and kompi:gitSyncImage take a git-sync v4",
        )
        return
    result.set("appCodeFetcher", "git-sync", "gitSyncImage")
    result.set("gitSyncImage", f"{text(repository, 'gitSyncImage.repository')}:{tag}", "gitSyncImage")
    if get(values, "gitSyncImage.pullPolicy") is not None:
        result.warn("gitSyncImage.pullPolicy", "not imported: kompi's git-sync uses kompi:imagePullPolicy")


def translate_images(values: dict[str, Any], result: Translation) -> None:
    _image(values, result)
    _pull(values, result)
    _kubectl_image(values, result)
    _git_sync_image(values, result)
